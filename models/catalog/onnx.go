//go:build gomlx

package catalog

import (
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/onnxenc"
)

// haveONNX says whether this build holds the ONNX encoder.
const haveONNX = true

// errNoONNX is never returned in a build with the ONNX encoder.
var errNoONNX error

func openONNX(s EncoderSettings) (models.Encoder, error) {
	pool := onnxenc.PoolMean
	if s.Pooling == "cls" {
		pool = onnxenc.PoolCLS
	}
	return onnxenc.New(s.ModelDir, onnxenc.Options{Pooling: pool})
}
