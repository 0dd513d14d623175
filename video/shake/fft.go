package shake

import (
	"math"
	"math/bits"
	"math/cmplx"
)

// fft is an in-place radix-2 transform of one size, with its twiddle
// factors computed once.
type fft struct {
	n    int
	logn int
	tw   []complex128 // exp(-2 pi i k / n), k < n/2
}

func newFFT(n int) *fft {
	if n < 2 || n&(n-1) != 0 {
		panic("shake: fft size not a power of two")
	}
	f := &fft{n: n, logn: bits.TrailingZeros(uint(n)), tw: make([]complex128, n/2)}
	for k := range f.tw {
		f.tw[k] = cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n))
	}
	return f
}

// transform replaces x[0], x[s], ..., x[(n-1)s] by their discrete Fourier
// transform, or with inverse set by the inverse transform times n.
func (f *fft) transform(x []complex128, s int, inverse bool) {
	n := f.n
	shift := 64 - f.logn
	for i := range n {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if i < j {
			x[i*s], x[j*s] = x[j*s], x[i*s]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := range half {
				w := f.tw[k*step]
				if inverse {
					w = cmplx.Conj(w)
				}
				a, b := start+k, start+k+half
				t := w * x[b*s]
				x[b*s] = x[a*s] - t
				x[a*s] += t
			}
		}
	}
}

// fft2 transforms a w x h array (row-major) in place: rows, then columns.
type fft2 struct{ rows, cols *fft }

func newFFT2(w, h int) fft2 { return fft2{rows: newFFT(w), cols: newFFT(h)} }

func (f fft2) transform(x []complex128, inverse bool) {
	w, h := f.rows.n, f.cols.n
	for y := range h {
		f.rows.transform(x[y*w:(y+1)*w], 1, inverse)
	}
	for c := range w {
		f.cols.transform(x[c:], w, inverse)
	}
}
