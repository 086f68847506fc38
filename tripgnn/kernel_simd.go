//go:build goexperiment.simd && amd64

package tripgnn

import "simd/archsimd"

// hasAVX512 is read once: the kernels choose their path per call.
var hasAVX512 = archsimd.X86.AVX512()

// rowsKernel computes rows [lo, hi) of c [., n] = A b, where A's element
// (i, p), p < k, is a[i*ars+p*aps] and b is [k, n] row-major; with acc
// the product is added to c. On AVX-512 it works in blocks of 4 rows x 32
// columns held in eight registers across the whole k loop, so c is read
// and written once per block and each b row chunk is loaded once for four
// rows.
func rowsKernel(c, a, b []float32, lo, hi, k, n, ars, aps int, acc bool) {
	if !hasAVX512 {
		rowsAxpy(c, a, b, lo, hi, k, n, ars, aps, acc)
		return
	}
	i := lo
	for ; i+4 <= hi; i += 4 {
		j := 0
		for ; j+32 <= n; j += 32 {
			block4x32(c, a, b, i, j, k, n, ars, aps, acc)
		}
		if j < n {
			colsScalar(c, a, b, i, i+4, k, n, j, ars, aps, acc)
		}
	}
	if i < hi {
		rowsAxpy(c, a, b, i, hi, k, n, ars, aps, acc)
	}
}

// colsScalar computes columns [j0, n) of rows [lo, hi).
func colsScalar(c, a, b []float32, lo, hi, k, n, j0, ars, aps int, acc bool) {
	for i := lo; i < hi; i++ {
		crow := c[i*n+j0 : (i+1)*n]
		if !acc {
			clear(crow)
		}
		for p := range k {
			x := a[i*ars+p*aps]
			brow := b[p*n+j0 : (p+1)*n]
			for j := range crow {
				crow[j] += x * brow[j]
			}
		}
	}
}

// axpy adds a x to dst (len(x) >= len(dst)).
func axpy(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	j := 0
	if hasAVX512 {
		va := archsimd.BroadcastFloat32x16(a)
		for ; j+16 <= len(dst); j += 16 {
			d := archsimd.LoadFloat32x16Slice(dst[j:])
			va.MulAdd(archsimd.LoadFloat32x16Slice(x[j:]), d).StoreSlice(dst[j:])
		}
	}
	for ; j < len(dst); j++ {
		dst[j] += a * x[j]
	}
}

// mulAcc adds x ⊙ y to dst element-wise.
func mulAcc(dst, x, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	j := 0
	if hasAVX512 {
		for ; j+16 <= len(dst); j += 16 {
			d := archsimd.LoadFloat32x16Slice(dst[j:])
			vx := archsimd.LoadFloat32x16Slice(x[j:])
			vx.MulAdd(archsimd.LoadFloat32x16Slice(y[j:]), d).StoreSlice(dst[j:])
		}
	}
	for ; j < len(dst); j++ {
		dst[j] += x[j] * y[j]
	}
}

// addTo adds x to dst element-wise.
func addTo(dst, x []float32) {
	x = x[:len(dst)]
	j := 0
	if hasAVX512 {
		for ; j+16 <= len(dst); j += 16 {
			d := archsimd.LoadFloat32x16Slice(dst[j:])
			d.Add(archsimd.LoadFloat32x16Slice(x[j:])).StoreSlice(dst[j:])
		}
	}
	for ; j < len(dst); j++ {
		dst[j] += x[j]
	}
}

// dot returns the inner product of x and y.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	j := 0
	var s float32
	if hasAVX512 && len(x) >= 16 {
		var acc archsimd.Float32x16
		for ; j+16 <= len(x); j += 16 {
			acc = archsimd.LoadFloat32x16Slice(x[j:]).MulAdd(archsimd.LoadFloat32x16Slice(y[j:]), acc)
		}
		var buf [16]float32
		acc.Store(&buf)
		for _, v := range buf {
			s += v
		}
	}
	for ; j < len(x); j++ {
		s += x[j] * y[j]
	}
	return s
}

// block4x32 computes c[i:i+4, j:j+32] in eight registers.
func block4x32(c, a, b []float32, i, j, k, n, ars, aps int, acc bool) {
	var c00, c01, c10, c11, c20, c21, c30, c31 archsimd.Float32x16
	if acc {
		c00 = archsimd.LoadFloat32x16Slice(c[i*n+j:])
		c01 = archsimd.LoadFloat32x16Slice(c[i*n+j+16:])
		c10 = archsimd.LoadFloat32x16Slice(c[(i+1)*n+j:])
		c11 = archsimd.LoadFloat32x16Slice(c[(i+1)*n+j+16:])
		c20 = archsimd.LoadFloat32x16Slice(c[(i+2)*n+j:])
		c21 = archsimd.LoadFloat32x16Slice(c[(i+2)*n+j+16:])
		c30 = archsimd.LoadFloat32x16Slice(c[(i+3)*n+j:])
		c31 = archsimd.LoadFloat32x16Slice(c[(i+3)*n+j+16:])
	}
	a0, a1, a2, a3 := i*ars, (i+1)*ars, (i+2)*ars, (i+3)*ars
	for p := range k {
		bp := b[p*n+j : p*n+j+32]
		b0 := archsimd.LoadFloat32x16Slice(bp)
		b1 := archsimd.LoadFloat32x16Slice(bp[16:])
		q := p * aps
		x0 := archsimd.BroadcastFloat32x16(a[a0+q])
		x1 := archsimd.BroadcastFloat32x16(a[a1+q])
		x2 := archsimd.BroadcastFloat32x16(a[a2+q])
		x3 := archsimd.BroadcastFloat32x16(a[a3+q])
		c00 = x0.MulAdd(b0, c00)
		c01 = x0.MulAdd(b1, c01)
		c10 = x1.MulAdd(b0, c10)
		c11 = x1.MulAdd(b1, c11)
		c20 = x2.MulAdd(b0, c20)
		c21 = x2.MulAdd(b1, c21)
		c30 = x3.MulAdd(b0, c30)
		c31 = x3.MulAdd(b1, c31)
	}
	c00.StoreSlice(c[i*n+j:])
	c01.StoreSlice(c[i*n+j+16:])
	c10.StoreSlice(c[(i+1)*n+j:])
	c11.StoreSlice(c[(i+1)*n+j+16:])
	c20.StoreSlice(c[(i+2)*n+j:])
	c21.StoreSlice(c[(i+2)*n+j+16:])
	c30.StoreSlice(c[(i+3)*n+j:])
	c31.StoreSlice(c[(i+3)*n+j+16:])
}
