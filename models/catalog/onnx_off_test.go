//go:build !gomlx

package catalog

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// A default build has no ONNX encoder: asking for one fails at the
// settings check, before any work, and names the build that has it.
func TestONNXNeedsTheGoMLXBuild(t *testing.T) {
	s := DefaultEncoderSettings()
	s.Encoder, s.ModelDir = ONNX, t.TempDir()
	err := s.Check()
	if !errors.Is(err, errNoONNX) || !strings.Contains(err.Error(), "-tags gomlx") {
		t.Fatalf("Check: got %v, want the build-tag error", err)
	}
	if _, _, err := OpenEncoder(context.Background(), s, io.Discard); !errors.Is(err, errNoONNX) {
		t.Fatalf("OpenEncoder: got %v, want the build-tag error", err)
	}
	s.ModelDir = ""
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "--model-dir") {
		t.Fatalf("without --model-dir: got %v, want the --model-dir error first", err)
	}
}
