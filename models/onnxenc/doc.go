// Package onnxenc runs a transformer sentence encoder (BERT, MiniLM, bge and
// their kin, exported to ONNX) in pure Go, so that stem can embed text with
// a real sentence model without cgo or a Python server.
//
// The graph is executed by GoMLX's pure-Go backend through onnx-gomlx, and
// the text is tokenised with go-huggingface's pure-Go reader of a
// HuggingFace tokenizer.json. A model directory holds exactly those two
// files:
//
//	model.onnx       inputs input_ids, attention_mask [, token_type_ids]
//	                 (int64, [batch, sequence]); output last_hidden_state
//	                 (float, [batch, sequence, hidden])
//	tokenizer.json   the "fast" tokenizer file saved next to the model
//
// GoMLX compiles one program per input shape (tens of milliseconds each, the
// first time a shape is met). Build with GOEXPERIMENT=simd for its
// vectorised kernels: 1.7x faster on the tiny test model, more on real
// ones, whose matrix products dominate; without it the package still builds
// and gives the same vectors.
//
// The package is compiled only with the build tag gomlx (go build -tags
// gomlx ./cmd/stem): GoMLX and onnx-gomlx are most of what a first build
// of stem compiles, and the default encoder does not need them. Without
// the tag this file is all there is, and stem's --encoder onnx says how to
// get a build with it.
package onnxenc
