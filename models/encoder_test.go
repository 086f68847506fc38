package models

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestNormalizeAndCosine(t *testing.T) {
	tests := []struct {
		name   string
		a, b   []float32
		cosine float32
	}{
		{"same direction", []float32{3, 4}, []float32{6, 8}, 1},
		{"orthogonal", []float32{1, 0}, []float32{0, 2}, 0},
		{"opposite", []float32{1, 1}, []float32{-2, -2}, -1},
		{"zero vector", []float32{0, 0}, []float32{1, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cosine(tc.a, tc.b); math.Abs(float64(got-tc.cosine)) > 1e-6 {
				t.Errorf("Cosine = %v, want %v", got, tc.cosine)
			}
			v := append([]float32(nil), tc.a...)
			Normalize(v)
			var n float64
			for _, x := range v {
				n += float64(x * x)
			}
			want := 1.0
			if tc.name == "zero vector" {
				want = 0
			}
			if math.Abs(n-want) > 1e-6 {
				t.Errorf("|Normalize(a)|^2 = %v, want %v", n, want)
			}
		})
	}
}

type constEncoder struct{ dim int }

func (c constEncoder) Name() string { return "const" }
func (c constEncoder) Dim() int     { return c.dim }
func (c constEncoder) Encode(_ context.Context, texts []string, dst []float32) error {
	if err := CheckDst(c.Name(), len(texts), c.dim, dst); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = float32(i)
	}
	return nil
}

func TestEncodeAllAndCheckDst(t *testing.T) {
	got, err := EncodeAll(context.Background(), constEncoder{2}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[3] != 3 {
		t.Errorf("EncodeAll = %v", got)
	}
	err = constEncoder{2}.Encode(context.Background(), []string{"a"}, make([]float32, 3))
	if err == nil || !strings.Contains(err.Error(), "holds 3 values, want 1 texts x 2 dims = 2") {
		t.Errorf("CheckDst error = %v", err)
	}
}
