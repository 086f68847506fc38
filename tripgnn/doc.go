// Package tripgnn is STEM's Triple-Dependent GNN (paper section 3.3 and
// appendix A): a GFM-RAG-style query-dependent message-passing network
// whose query is the mean of the question's schema triples. It scores every
// entity of a question's subgraph with the probability that the entity lies
// on the gold reasoning chain; the top K = 4 x |schema triples| entities and
// the KG triples among them form the Guidance Graph (see TopK, Guidance).
//
// # Model
//
// With d the GNN width and d_enc the text encoder's dimension:
//
//	E_t  = W2 [E_h; E_r; E_t'] + b2        one linear map 3 d_enc -> d (paper eq. 19, "a linear transformation")
//	E_Q  = mean_t E_t                       computed as W2 mean_t[...] + b2, which is the same thing
//	h0_e = E_Q if e is a question entity, 0 otherwise
//	z_r  = W4 Encoder(text of r) + b4       shared for all layers; inverse relations are their own ids
//	                                        R..2R-1 with their own text ("inverse of ...", as gfm-rag)
//	per layer l:
//	  r_l   = MLP_l(z_r)                    2-layer MLP with ReLU (gfm-rag's relation projection)
//	  m_e'e = h_e' * r_l                    DistMult message along every edge e' -r-> e, inverse edges included
//	  agg_e = (sum m + h0_e) / (deg_e + 1)  mean over incoming messages plus gfm-rag's boundary self-loop;
//	                                        with Config.NoBoundary: sum m / max(deg_e, 1), the paper's plain mean
//	  h_e   = h_e + ReLU(LayerNorm(W_l [h_e; agg_e] + b_l))
//	logit_e = w1 . h_e + b1, p_e = sigmoid(logit_e)   (paper eq. 6: a linear projection, 512 weights at d=512)
//
// The placeholder side of a schema triple (an unknown "[ENTx]") is whatever
// vector the caller puts there; stem encodes the placeholder text itself,
// so that "?x" and a named entity differ in the input. A zero vector works
// too: the linear map then ignores that third.
//
// # Training
//
// TrainStep takes a mini-batch of graphs, joins them into one disjoint graph
// (ids offset per graph), and runs forward, backward and one AdamW update.
// The loss is, per graph, binary cross-entropy with logits averaged over the
// graph's entities (paper eq. 37; 1 = gold-chain entity), averaged over the
// graphs; Config.LossMix > 0 mixes in gfm-rag's listwise loss ListCE as
// (1-LossMix) BCE + LossMix ListCE (gfm-rag uses 0.7).
//
// # Shapes
//
// The GoMLX engine compiles one program per input shape. Entity and edge counts are
// therefore padded up to buckets of at most 1/8 above the real size (8
// buckets per doubling), relation counts and graphs per batch to powers of
// two; padded edges only connect a padding entity to itself and padded
// entities are masked out of degrees and losses, so results do not depend on the padding. Each new bucket costs one
// compilation; compiled programs are cached per Model, up to 256 per graph
// function, after which the cache is emptied and refilled as shapes recur,
// so callers need not bound the shapes they send.
//
// # Implementation
//
// Parameters live in Go as plain float32 slices with explicit shapes, and
// the AdamW update runs in Go. This keeps initialisation and updates
// bit-for-bit deterministic for a seed and makes checkpoints a flat file.
//
// Two engines compute the passes (Model.SetEngine). Native, the default,
// runs hand-written kernels: matrix products in AVX-512 blocks of 4 rows x
// 32 columns (archsimd, with GOEXPERIMENT=simd on amd64; a portable loop
// otherwise), messages summed by walking the destination-sorted edge list,
// and a hand-written backward pass. GoMLX builds the same model as a GoMLX
// graph with automatic differentiation, run by its pure-Go backend; it is
// the reference the tests hold the native engine to (logits, loss and
// every gradient, both losses; TestNativeMatchesGoMLX). GoMLX's backend
// moves gathered and scattered rows one element at a time, so its graph
// reads entity rows as int64 pairs, relation rows through one-hot
// products, and sums messages with one-hot products over chunks of 16
// edges (segSum), with a hand-written gradient for that block. The GoMLX
// engine is compiled only with the build tag gomlx (gomlx.go): stem's
// default build never runs it, and leaving GoMLX out keeps a first build
// short. CI runs this package's tests with and without the tag.
//
// At 2,000 entities, 18,000 edges, width 256 and 6 layers on two cores
// (BenchmarkPredict, BenchmarkTrainStep) the native engine predicts
// in 0.06-0.08 s and trains a step in 0.30-0.34 s, against 0.37 s and 1.3 s
// through GoMLX.
//
// Build with GOEXPERIMENT=simd for the vectorised kernels (several times
// faster); without it the package builds and computes the same model.
package tripgnn
