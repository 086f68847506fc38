//go:build !gomlx

package catalog

import (
	"errors"

	"github.com/stem-kgqa/stem/models"
)

// haveONNX says whether this build holds the ONNX encoder.
const haveONNX = false

// errNoONNX says how to get the ONNX encoder. It runs on GoMLX, which the
// default build leaves out because it is most of what a first build
// compiles.
var errNoONNX = errors.New("--encoder onnx needs a stem built with the gomlx tag: go build -tags gomlx ./cmd/stem (or go run -tags gomlx ./cmd/stem ...)")

func openONNX(EncoderSettings) (models.Encoder, error) { return nil, errNoONNX }
