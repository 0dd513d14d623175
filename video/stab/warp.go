package stab

import (
	"runtime"
	"sync"
)

// Border says what a warped frame shows where its source has no picture.
type Border int

const (
	// Zoom is for a Stabilizer: the picture is enlarged until no border
	// shows. Warp treats it as Fill (a sample that rounds off the edge
	// takes the edge's value).
	Zoom Border = iota
	// Black shows black: luma 16, chroma 128 (BT.601 limited range),
	// alpha opaque.
	Black
	// Fill repeats the source's edge samples outwards.
	Fill
)

func (b Border) String() string {
	switch b {
	case Zoom:
		return "zoom"
	case Black:
		return "black"
	case Fill:
		return "fill"
	}
	return "Border(?)"
}

// Warp writes into dst the frame src resampled under s: the sample of dst
// at point p (luma coordinates) is src's at s(p), interpolated
// bilinearly. Chroma planes are resampled at their own resolution, their
// samples taken as centred on the luma samples they cover. dst and src are
// frames of layout l and must not overlap. Warp starts GOMAXPROCS
// goroutines for the call; a Warper keeps them.
func Warp(dst, src []byte, l Layout, s Similarity, b Border) {
	w := NewWarper(0)
	defer w.Close()
	w.Warp(dst, src, l, s, b)
}

// A Warper warps frames on a fixed set of goroutines, each doing a band of
// rows of every plane; the caller's goroutine does one band itself. The
// goroutines start in NewWarper and end in Close, which must be called. A
// Warper is not safe for concurrent use.
type Warper struct {
	g    *gang
	job  warpJob
	band func(i, n int) // job.band, bound once so that Warp allocates nothing
}

type warpJob struct {
	dst, src []byte
	l        Layout
	m        motion
	b        Border
}

// NewWarper starts a Warper that splits a frame into n bands; n <= 0
// means runtime.GOMAXPROCS(0).
func NewWarper(n int) *Warper {
	w := &Warper{g: newGang(n)}
	w.band = w.job.band
	return w
}

// Warp is the package's Warp on w's goroutines. It allocates nothing.
func (w *Warper) Warp(dst, src []byte, l Layout, s Similarity, b Border) {
	w.warp(dst, src, l, s.motion(), b)
}

func (w *Warper) warp(dst, src []byte, l Layout, m motion, b Border) {
	n := l.FrameSize()
	if len(dst) < n || len(src) < n {
		panic("stab: Warp on a frame shorter than its layout")
	}
	w.job = warpJob{dst: dst, src: src, l: l, m: m, b: b}
	w.g.run(w.band)
	w.job = warpJob{}
}

// Close stops w's goroutines and waits for them.
func (w *Warper) Close() { w.g.close() }

// A gang runs a function split n ways, fn(i, n) for i from 0 to n-1, on
// n-1 goroutines of its own and the caller's. The goroutines start in
// newGang and end in close. A gang is not safe for concurrent use: one
// run at a time.
type gang struct {
	n    int
	work chan part
	done sync.WaitGroup // parts of the current run
	all  sync.WaitGroup // the goroutines
}

// newGang starts a gang of n; n <= 0 means runtime.GOMAXPROCS(0).
func newGang(n int) *gang {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	g := &gang{n: n, work: make(chan part)}
	for range n - 1 {
		g.all.Go(func() {
			for p := range g.work {
				p.fn(p.i, g.n)
				g.done.Done()
			}
		})
	}
	return g
}

// part is one part of a run: which goroutine takes it does not matter.
type part struct {
	fn func(i, n int)
	i  int
}

// run calls fn(i, n) for every part i, part 0 on the caller's goroutine,
// and returns when all have returned. It allocates nothing.
func (g *gang) run(fn func(i, n int)) {
	g.done.Add(g.n - 1)
	for i := 1; i < g.n; i++ {
		g.work <- part{fn, i}
	}
	fn(0, g.n)
	g.done.Wait()
}

// close stops the goroutines and waits for them; a second close does
// nothing.
func (g *gang) close() {
	if g.work != nil {
		close(g.work)
		g.all.Wait()
		g.work = nil
	}
}

// band warps rows [i*h/n, (i+1)*h/n) of every plane.
func (j *warpJob) band(i, n int) {
	for p := range j.l.NumPlanes() {
		d, s := j.l.Plane(j.dst, p), j.l.Plane(j.src, p)
		a := planeMap(j.l, p, j.m)
		var black byte = 128 // chroma
		switch {
		case p == 0:
			black = 16
		case !j.l.IsChroma(p):
			black = 255 // alpha: the border is shown, opaque
		}
		warpRows(d, s, a, i*d.H/n, (i+1)*d.H/n, j.b == Black, black)
	}
}

// planeMap returns m, a motion on centred luma coordinates, as an affine
// map on plane p's sample coordinates: x' = a[0]x + a[1]y + a[2],
// y' = a[3]x + a[4]y + a[5]. Chroma sample u covers luma samples from
// u*sx, so its centre is at luma (u+0.5)*sx - 0.5.
func planeMap(l Layout, p int, m motion) [6]float64 {
	sx, sy := 1.0, 1.0
	if l.IsChroma(p) {
		a, b := l.Chroma.Subsampling()
		sx, sy = float64(a), float64(b)
	}
	cx, cy := float64(l.W-1)/2, float64(l.H-1)/2
	f := func(u, v float64) (float64, float64) {
		z := m.apply(complex((u+0.5)*sx-0.5-cx, (v+0.5)*sy-0.5-cy))
		return (real(z)+cx+0.5)/sx - 0.5, (imag(z)+cy+0.5)/sy - 0.5
	}
	x0, y0 := f(0, 0)
	x1, y1 := f(1, 0)
	x2, y2 := f(0, 1)
	return [6]float64{x1 - x0, x2 - x0, x0, y1 - y0, y2 - y0, y0}
}

// warpRows resamples rows [y0, y1) of dst from src under a. Positions are
// 16.16 fixed point, stepped along a row; weights are 8 bits. A sample
// whose 2x2 neighbourhood leaves src takes the nearest edge samples
// (Fill), or, with black set and the point more than half a sample
// outside, the value black.
func warpRows(dst, src Plane, a [6]float64, y0, y1 int, black bool, blackValue byte) {
	const one = 1 << 16
	w, h, st := src.W, src.H, src.Stride
	dx, dy := int64(a[0]*one), int64(a[3]*one)
	for y := y0; y < y1; y++ {
		X := int64((a[1]*float64(y) + a[2]) * one)
		Y := int64((a[4]*float64(y) + a[5]) * one)
		row := dst.Pix[y*dst.Stride : y*dst.Stride+dst.W]
		for x := range row {
			xi, yi := int(X>>16), int(Y>>16)
			fx, fy := int32(X>>8)&255, int32(Y>>8)&255
			if uint(xi) < uint(w-1) && uint(yi) < uint(h-1) {
				o := yi*st + xi
				p00, p01 := int32(src.Pix[o]), int32(src.Pix[o+1])
				p10, p11 := int32(src.Pix[o+st]), int32(src.Pix[o+st+1])
				top := p00<<8 + (p01-p00)*fx
				bot := p10<<8 + (p11-p10)*fx
				row[x] = byte((top<<8 + (bot-top)*fy + 1<<15) >> 16)
			} else {
				row[x] = edgeSample(src, X, Y, black, blackValue)
			}
			X += dx
			Y += dy
		}
	}
}

// edgeSample is warpRows' slow path, for a point near or past src's edge.
func edgeSample(src Plane, X, Y int64, black bool, blackValue byte) byte {
	const half = 1 << 15
	w, h := int64(src.W), int64(src.H)
	if black && (X < -half || Y < -half || X > (w-1)<<16+half || Y > (h-1)<<16+half) {
		return blackValue
	}
	xi, yi := int(X>>16), int(Y>>16)
	fx, fy := int32(X>>8)&255, int32(Y>>8)&255
	cl := func(v, n int) int { return min(max(v, 0), n-1) }
	x0, x1 := cl(xi, src.W), cl(xi+1, src.W)
	y0, y1 := cl(yi, src.H), cl(yi+1, src.H)
	p00, p01 := int32(src.At(x0, y0)), int32(src.At(x1, y0))
	p10, p11 := int32(src.At(x0, y1)), int32(src.At(x1, y1))
	top := p00<<8 + (p01-p00)*fx
	bot := p10<<8 + (p11-p10)*fx
	return byte((top<<8 + (bot-top)*fy + 1<<15) >> 16)
}
