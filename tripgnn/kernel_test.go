package tripgnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveMatMul is the textbook triple loop in float64, the reference.
func naiveMatMul(a, b []float32, m, k, n int) []float32 {
	c := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			c[i*n+j] = float32(s)
		}
	}
	return c
}

func transposed(a []float32, m, n int) []float32 {
	t := make([]float32, m*n)
	for i := range m {
		for j := range n {
			t[j*m+i] = a[i*n+j]
		}
	}
	return t
}

func TestMatMulKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ m, k, n int }{
		{1, 1, 1}, {3, 5, 7}, {4, 8, 32}, {9, 17, 33}, {64, 64, 64}, {130, 70, 97}, {600, 300, 256},
	} {
		a := randVecs(rng, s.m, s.k)
		b := randVecs(rng, s.k, s.n)
		want := naiveMatMul(a, b, s.m, s.k, s.n)
		check := func(name string, got []float32) {
			t.Helper()
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s %v: element %d = %v, want %v", name, s, i, got[i], want[i])
				}
			}
		}
		c := randVecs(rng, s.m, s.n) // garbage: must be overwritten
		matMul(c, a, b, s.m, s.k, s.n, false)
		check("matMul", c)
		// acc adds: start from the product, add it again, halve.
		matMul(c, a, b, s.m, s.k, s.n, true)
		for i := range c {
			c[i] /= 2
		}
		check("matMul acc", c)
		at := transposed(a, s.m, s.k) // [k, m]
		c2 := make([]float32, s.m*s.n)
		matMulTN(c2, at, b, s.k, s.m, s.n, false)
		check("matMulTN", c2)
		bt := transposed(b, s.k, s.n) // [n, k]
		c3 := make([]float32, s.m*s.n)
		matMulNT(c3, a, bt, make([]float32, s.k*s.n), s.m, s.k, s.n, false)
		check("matMulNT", c3)
	}
}

func TestVectorOps(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 17, 40} {
		x, y, d := make([]float32, n), make([]float32, n), make([]float32, n)
		var want float32
		for i := range n {
			x[i], y[i], d[i] = float32(i), float32(2*i+1), 1
			want += x[i] * y[i]
		}
		if got := dot(x, y); got != want {
			t.Errorf("dot n=%d: %v, want %v", n, got, want)
		}
		mulAcc(d, x, y)
		axpy(d, 2, x)
		addTo(d, y)
		for i := range n {
			w := 1 + x[i]*y[i] + 2*x[i] + y[i]
			if d[i] != w {
				t.Fatalf("n=%d element %d: %v, want %v", n, i, d[i], w)
			}
		}
	}
}

func BenchmarkMatMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ m, k, n int }{{2048, 512, 256}, {2048, 1024, 512}} {
		b.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(b *testing.B) {
			a, w, c := randVecs(rng, s.m, s.k), randVecs(rng, s.k, s.n), make([]float32, s.m*s.n)
			for b.Loop() {
				matMul(c, a, w, s.m, s.k, s.n, false)
			}
			b.ReportMetric(2*float64(s.m*s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
