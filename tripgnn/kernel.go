package tripgnn

import (
	"runtime"
	"sync"
)

// The kernels below are the native engine's numeric core: row-major
// float32 matrices as plain slices with explicit shapes, gonum style.
// rowsKernel (kernel_simd.go with GOEXPERIMENT=simd on amd64, otherwise
// kernel_generic.go) does the multiply-adds; these wrappers split rows
// between cores.

// parallelMin is the multiply-add count below which a product runs on
// the calling goroutine: starting workers costs microseconds.
const parallelMin = 1 << 18

// workers returns how many goroutines a job of work multiply-adds over
// rows rows should use.
func workers(work, rows int) int {
	if work < parallelMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), rows/4))
}

// split runs fn over [0, n) cut into w contiguous ranges, the first on
// the calling goroutine, and waits.
func split(n, w int, fn func(lo, hi int)) {
	if w <= 1 || n < 2 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	// Ranges start at multiples of 4 so that the kernels' 4-row blocks
	// are the same whatever the worker count: results do not depend on
	// GOMAXPROCS.
	step = (step + 3) / 4 * 4
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+step, n))
	}
	fn(0, min(step, n))
	wg.Wait()
}

// matMul sets c [m, n] to a [m, k] x b [k, n], or adds the product to c
// when acc is set.
func matMul(c, a, b []float32, m, k, n int, acc bool) {
	split(m, workers(m*k*n, m), func(lo, hi int) {
		rowsKernel(c, a, b, lo, hi, k, n, k, 1, acc)
	})
}

// matMulTN sets c [k, n] to aᵀ b for a [m, k] and b [m, n]: the weight
// gradient xᵀ dy of a dense layer, without materialising xᵀ.
func matMulTN(c, a, b []float32, m, k, n int, acc bool) {
	split(k, workers(m*k*n, k), func(lo, hi int) {
		// Row p of c reads column p of a: element (p, i) at a[i*k+p].
		rowsKernel(c, a, b, lo, hi, m, n, 1, k, acc)
	})
}

// matMulNT sets c [m, n] to a [m, k] x bᵀ for b [n, k]: the input gradient
// dy wᵀ of a dense layer. bᵀ is small (a weight matrix), so it is
// transposed into tmp (len >= k n) and the plain product runs.
func matMulNT(c, a, b, tmp []float32, m, k, n int, acc bool) {
	t := tmp[:k*n]
	for i := range n {
		row := b[i*k : (i+1)*k]
		for j, v := range row {
			t[j*n+i] = v
		}
	}
	matMul(c, a, t, m, k, n, acc)
}

// rowsAxpy is rowsKernel one row at a time: each row of c accumulates
// axpy(a[i,p], b[p,:]) over p, skipping zeros of a (ReLU outputs are about
// half zeros).
func rowsAxpy(c, a, b []float32, lo, hi, k, n, ars, aps int, acc bool) {
	for i := lo; i < hi; i++ {
		crow := c[i*n : (i+1)*n]
		if !acc {
			clear(crow)
		}
		for p := range k {
			x := a[i*ars+p*aps]
			if x == 0 {
				continue
			}
			axpy(crow, x, b[p*n:(p+1)*n])
		}
	}
}

// addBias adds bias [n] to every row of x [m, n].
func addBias(x, bias []float32, m, n int) {
	for i := range m {
		addTo(x[i*n:(i+1)*n], bias)
	}
}

// colSum adds the column sums of x [m, n] to dst [n].
func colSum(dst, x []float32, m, n int) {
	for i := range m {
		addTo(dst, x[i*n:(i+1)*n])
	}
}
