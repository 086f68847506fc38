//go:build !(goexperiment.simd && amd64)

package tripgnn

// rowsKernel computes rows [lo, hi) of c [., n] = A b, where A's element
// (i, p), p < k, is a[i*ars+p*aps] and b is [k, n] row-major; with acc
// the product is added to c. This is the portable version; kernel_simd.go
// has the AVX-512 one.
func rowsKernel(c, a, b []float32, lo, hi, k, n, ars, aps int, acc bool) {
	rowsAxpy(c, a, b, lo, hi, k, n, ars, aps, acc)
}

// axpy adds a x to dst (len(x) >= len(dst)).
func axpy(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for j := range dst {
		dst[j] += a * x[j]
	}
}

// mulAcc adds x ⊙ y to dst element-wise.
func mulAcc(dst, x, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	for j := range dst {
		dst[j] += x[j] * y[j]
	}
}

// addTo adds x to dst element-wise.
func addTo(dst, x []float32) {
	x = x[:len(dst)]
	for j := range dst {
		dst[j] += x[j]
	}
}

// dot returns the inner product of x and y.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s float32
	for j := range x {
		s += x[j] * y[j]
	}
	return s
}
