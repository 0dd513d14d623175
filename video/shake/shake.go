// Package shake measures how much a clip shakes: the frame-to-frame
// motion of its picture, found by phase correlation, with the smooth part
// (a pan, a slow drift) taken out. It knows nothing of how package stab
// estimates motion, so it can judge stab's output.
package shake

import (
	"math"
	"math/cmplx"
	"slices"

	"github.com/tpipe/tpipe/video/stab"
)

// Smoothing is the standard deviation, in frames, of the Gaussian that
// gives the smooth path; what is left is jitter.
const Smoothing = 8

// Correlator measures the shift between two luma planes of one size by
// phase correlation: the normalised cross-power spectrum of two pictures
// one shift apart is a pure phase ramp, whose inverse transform is a peak
// at the shift. It works on a centred window whose sides are powers of
// two, on the picture averaged down (by Factor) until the window covers
// most of it, tapered by a Hann window so that the picture's edges do not
// make a peak of their own. A Correlator keeps the last plane's spectrum,
// so each plane is transformed once. It is not safe for concurrent use.
type Correlator struct {
	w, h   int // plane size
	factor int
	nx, ny int
	ox, oy int // window origin, in averaged samples
	f      fft2
	hann   []float64
	prev   []complex128
	cur    []complex128
	cross  []complex128
	have   bool
}

// NewCorrelator returns a Correlator for w x h planes, or nil if the
// plane is too small to correlate (under 16 samples on a side).
func NewCorrelator(w, h int) *Correlator {
	if w < 16 || h < 16 {
		return nil
	}
	c := &Correlator{w: w, h: h, factor: 1}
	for min(w, h)/c.factor > 512 {
		c.factor *= 2
	}
	c.nx = pow2Below(min(w/c.factor, 512))
	c.ny = pow2Below(min(h/c.factor, 512))
	c.ox, c.oy = (w/c.factor-c.nx)/2, (h/c.factor-c.ny)/2
	c.f = newFFT2(c.nx, c.ny)
	c.hann = make([]float64, c.nx*c.ny)
	for y := range c.ny {
		hy := 0.5 - 0.5*math.Cos(2*math.Pi*(float64(y)+0.5)/float64(c.ny))
		for x := range c.nx {
			hx := 0.5 - 0.5*math.Cos(2*math.Pi*(float64(x)+0.5)/float64(c.nx))
			c.hann[y*c.nx+x] = hx * hy
		}
	}
	n := c.nx * c.ny
	c.prev, c.cur, c.cross = make([]complex128, n), make([]complex128, n), make([]complex128, n)
	return c
}

func pow2Below(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return p
}

// Next takes the next plane and returns the shift of its picture from the
// previous plane's, in samples of the plane: a picture that moved right
// has dx > 0. For the first plane it returns ok false.
func (c *Correlator) Next(p stab.Plane) (dx, dy float64, ok bool) {
	c.load(p, c.cur)
	c.f.transform(c.cur, false)
	if c.have {
		dx, dy = c.correlate()
		ok = true
	}
	c.prev, c.cur = c.cur, c.prev
	c.have = true
	return dx * float64(c.factor), dy * float64(c.factor), ok
}

// load averages the window of p into x, less its mean, tapered.
func (c *Correlator) load(p stab.Plane, x []complex128) {
	f := c.factor
	sum := 0.0
	for y := range c.ny {
		for xx := range c.nx {
			v := 0
			for j := range f {
				row := p.Pix[((c.oy+y)*f+j)*p.Stride+(c.ox+xx)*f:]
				for i := range f {
					v += int(row[i])
				}
			}
			fv := float64(v) / float64(f*f)
			x[y*c.nx+xx] = complex(fv, 0)
			sum += fv
		}
	}
	mean := sum / float64(c.nx*c.ny)
	for i := range x {
		x[i] = complex((real(x[i])-mean)*c.hann[i], 0)
	}
}

// correlate finds the peak of the phase correlation of prev and cur. The
// cross-power spectrum is weighted by a Gaussian (the transform of a
// Gaussian blur of two samples, which keeps the noisy top of the spectrum
// from jittering the peak), which makes the peak a smooth bump
// whose top a parabola through the log of three values finds to a small
// fraction of a sample.
func (c *Correlator) correlate() (float64, float64) {
	nx, ny := c.nx, c.ny
	const sigma = 2.0
	for y := range ny {
		ky := float64(y)
		if y > ny/2 {
			ky -= float64(ny)
		}
		ky *= 2 * math.Pi / float64(ny)
		for x := range nx {
			kx := float64(x)
			if x > nx/2 {
				kx -= float64(nx)
			}
			kx *= 2 * math.Pi / float64(nx)
			i := y*nx + x
			v := cmplx.Conj(c.prev[i]) * c.cur[i]
			if a := cmplx.Abs(v); a > 1e-9 {
				v /= complex(a, 0)
			} else {
				v = 0
			}
			g := math.Exp(-(kx*kx + ky*ky) * sigma * sigma / 2)
			c.cross[i] = v * complex(g, 0)
		}
	}
	c.f.transform(c.cross, true)
	best, bx, by := math.Inf(-1), 0, 0
	for i, v := range c.cross {
		if r := real(v); r > best {
			best, bx, by = r, i%nx, i/nx
		}
	}
	at := func(x, y int) float64 {
		return real(c.cross[((y+ny)%ny)*nx+(x+nx)%nx])
	}
	fx := peak(at(bx-1, by), best, at(bx+1, by))
	fy := peak(at(bx, by-1), best, at(bx, by+1))
	dx, dy := float64(bx)+fx, float64(by)+fy
	if dx > float64(nx)/2 {
		dx -= float64(nx)
	}
	if dy > float64(ny)/2 {
		dy -= float64(ny)
	}
	return dx, dy
}

// peak returns where, from -0.5 to 0.5 about the middle value, a parabola
// through the logs of three values peaks (exact for a Gaussian bump).
func peak(l, m, r float64) float64 {
	if l <= 0 || m <= 0 || r <= 0 {
		// Not a bump: fall back to a parabola through the values.
		d := l - 2*m + r
		if d >= 0 {
			return 0
		}
		return math.Max(-0.5, math.Min(0.5, (l-r)/(2*d)))
	}
	a, b, cc := math.Log(l), math.Log(m), math.Log(r)
	d := a - 2*b + cc
	if d >= 0 {
		return 0
	}
	return math.Max(-0.5, math.Min(0.5, (a-cc)/(2*d)))
}

// Result is a clip's shake.
type Result struct {
	Frames int
	// Mean and P95 are the mean and 95th percentile, over consecutive
	// pairs of frames, of the jitter: the length of the frame-to-frame
	// motion that the smooth path does not explain, in luma pixels.
	Mean, P95 float64
}

// Meter measures a clip fed to it a frame at a time. Its memory is the
// Correlator's plus a few numbers per frame. It is not safe for concurrent
// use.
type Meter struct {
	c     *Correlator
	path  []complex128 // the picture's position, frame by frame
	small bool
}

// NewMeter returns a Meter for luma planes of w x h.
func NewMeter(w, h int) *Meter {
	c := NewCorrelator(w, h)
	return &Meter{c: c, small: c == nil}
}

// Add measures the next frame's luma plane; p is not retained.
func (m *Meter) Add(p stab.Plane) {
	if m.small {
		m.path = append(m.path, 0)
		return
	}
	dx, dy, ok := m.c.Next(p)
	pos := complex(0, 0)
	if ok {
		pos = m.path[len(m.path)-1] + complex(dx, dy)
	}
	m.path = append(m.path, pos)
}

// Result returns the shake of the frames added so far.
func (m *Meter) Result() Result { return Measure(m.path) }

// Measure returns the shake of a path: path[i] is where the picture is
// in frame i (any origin), x + iy in pixels. The smooth path is the path
// averaged by a Gaussian of Smoothing frames, continued past the ends by
// reflecting the path through its end points; the jitter of frames i-1 to
// i is how much more the path moved than the smooth path did.
func Measure(path []complex128) Result {
	n := len(path)
	r := Result{Frames: n}
	if n < 2 {
		return r
	}
	const radius = 3 * Smoothing
	k := make([]float64, 2*radius+1)
	sum := 0.0
	for i := range k {
		d := float64(i - radius)
		k[i] = math.Exp(-d * d / (2 * Smoothing * Smoothing))
		sum += k[i]
	}
	at := func(j int) complex128 {
		switch {
		case j < 0:
			return 2*path[0] - path[min(-j, n-1)]
		case j >= n:
			return 2*path[n-1] - path[max(2*(n-1)-j, 0)]
		}
		return path[j]
	}
	resid := make([]complex128, n)
	for i := range n {
		var s complex128
		for t, w := range k {
			s += complex(w/sum, 0) * at(i+t-radius)
		}
		resid[i] = path[i] - s
	}
	jit := make([]float64, n-1)
	for i := 1; i < n; i++ {
		jit[i-1] = cmplx.Abs(resid[i] - resid[i-1])
		r.Mean += jit[i-1]
	}
	r.Mean /= float64(n - 1)
	slices.Sort(jit)
	r.P95 = jit[min(int(math.Ceil(0.95*float64(len(jit))))-1, len(jit)-1)]
	return r
}
