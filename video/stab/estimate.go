package stab

import (
	"math"
	"math/bits"
	"math/cmplx"
)

// Tuning of the estimator. A block is a (2*blockHalf+1)^2 patch of the
// previous frame's level; it is looked for in the current frame's level
// around where the motion found so far puts it.
const (
	blockHalf   = 6
	topSearch   = 6   // search radius at the coarsest level, in its samples
	fineSearch  = 1   // at the finer ones, around the coarser estimate
	maxBlocks   = 400 // grid sites tried per level
	minTexture  = 4.0 // weakest gradient energy per sample a block needs
	lkIters     = 10
	ransacIters = 160
	minMatches  = 6
	minLevelW   = 96 // the coarsest level is the last at least this big
	minLevelH   = 64
)

// pyramid holds a luma plane (level 0, not copied) and its halvings.
type pyramid struct {
	levels []Plane
	mem    [][]byte
}

// levelsFor returns how many levels a w x h plane gets: it is halved
// while the half is at least minLevelW x minLevelH.
func levelsFor(w, h int) int {
	n := 1
	for w/2 >= minLevelW && h/2 >= minLevelH {
		w, h = w/2, h/2
		n++
	}
	return n
}

// build makes y level 0 and computes the others into memory kept from
// the last build, so a pyramid of the same size allocates nothing.
func (p *pyramid) build(y Plane) {
	n := levelsFor(y.W, y.H)
	p.levels = append(p.levels[:0], y)
	for k := 1; k < n; k++ {
		src := p.levels[k-1]
		w, h := src.W/2, src.H/2
		if len(p.mem) < k {
			p.mem = append(p.mem, nil)
		}
		if cap(p.mem[k-1]) < w*h {
			p.mem[k-1] = make([]byte, w*h)
		}
		dst := Plane{Pix: p.mem[k-1][:w*h], W: w, H: h, Stride: w}
		halve(dst, src)
		p.levels = append(p.levels, dst)
	}
}

// halve averages each 2x2 square of src into one sample of dst. Sample x
// of dst covers samples 2x and 2x+1 of src, so its centre is at
// 2x+0.5 in src's coordinates.
func halve(dst, src Plane) {
	for y := range dst.H {
		r0 := src.Pix[2*y*src.Stride:]
		r1 := src.Pix[(2*y+1)*src.Stride:]
		d := dst.Pix[y*dst.Stride : y*dst.Stride+dst.W]
		for x := range d {
			d[x] = byte((int(r0[2*x]) + int(r0[2*x+1]) + int(r1[2*x]) + int(r1[2*x+1]) + 2) >> 2)
		}
	}
}

// match is one block: its centre p in the previous frame and where it was
// found, q, in the current one, both in centred luma coordinates; cell is
// the part of the frame it lies in, one of cellsX x cellsY.
type match struct {
	p, q complex128
	cell uint8
}

// The frame is cut into cellsX x cellsY cells so that the fit can prefer
// the motion that holds across most of the frame: the camera's moves
// everything, a moving object only the few cells it covers, however
// textured it is (and a bright, busy object often offers more blocks than
// a plain background).
const cellsX, cellsY = 8, 8

// An Estimator measures global motion between frames. Its scratch memory
// is kept from one call to the next, so after the first call of a given
// size it allocates nothing. The zero Estimator is ready to use. An
// Estimator is not safe for concurrent use.
type Estimator struct {
	prev, cur pyramid
	matches   []match
	sites     []site    // the grid of the level being matched
	lvl       level     // the level being matched
	trackers  []tracker // one per part of the grid
	// gang, when set, tracks the parts of the grid at once; trackPart
	// is e.trackPart, bound once.
	gang         *gang
	trackPart    func(i, n int)
	lastInliers  int
	lastAccepted bool
}

// site is a block of the grid: its centre (bx, by) in the previous
// level, the same in centred luma coordinates, and where the motion so
// far puts it in the current level.
type site struct {
	bx, by int
	p      complex128
	qx, qy float64
	cell   uint8
}

// level is what the tracking of one level's sites needs.
type level struct {
	P, C   Plane
	f      float64 // luma pixels per sample of the level
	r      int     // search radius
	cx, cy float64 // the luma plane's centre
}

// tracker is the scratch of one part of the grid, and its matches in
// grid order.
type tracker struct {
	tpl, gx, gy [(2*blockHalf + 1) * (2*blockHalf + 1)]float32
	matches     []match
}

// parallel has e track each level's grid in g.n parts on g's goroutines.
// The matches are joined in grid order, so the motion is the same as
// without.
func (e *Estimator) parallel(g *gang) {
	e.gang = g
	e.trackers = make([]tracker, g.n)
	e.trackPart = e.track
}

// Estimate returns the motion from prev to cur: a point of prev is at
// Estimate(prev, cur) applied to it in cur. prev and cur are luma planes
// of the same size; on a pair with too little texture to match (a blank
// frame, a cut) it returns Identity. It allocates its scratch memory on
// each call; an Estimator reuses it.
func Estimate(prev, cur Plane) Similarity {
	var e Estimator
	return e.Estimate(prev, cur)
}

// Estimate is the package's Estimate with e's scratch memory. The planes
// are only read, and not retained after the call.
func (e *Estimator) Estimate(prev, cur Plane) Similarity {
	if prev.W != cur.W || prev.H != cur.H {
		panic("stab: Estimate on planes of different sizes")
	}
	e.prev.build(prev)
	e.cur.build(cur)
	m, _ := e.estimate(&e.prev, &e.cur)
	e.prev.levels[0], e.cur.levels[0] = Plane{}, Plane{}
	return m.similarity()
}

// estimate goes from the coarsest level to the finest: at each it matches
// blocks around where the motion so far predicts them, and fits a new
// motion to the matches. ok is false when no level had enough matches.
func (e *Estimator) estimate(a, b *pyramid) (m motion, ok bool) {
	w0, h0 := a.levels[0].W, a.levels[0].H
	cx, cy := float64(w0-1)/2, float64(h0-1)/2
	m = still
	top := len(a.levels) - 1
	for k := top; k >= 0; k-- {
		P, C := a.levels[k], b.levels[k]
		f := float64(int(1) << k)
		r := fineSearch
		if k == top {
			r = topSearch
		}
		margin := blockHalf + 1
		step := blockStep(P.W, P.H, margin)
		// Centre the grid so both edges get the same margin.
		x0 := margin + (P.W-2*margin-1)%step/2
		y0 := margin + (P.H-2*margin-1)%step/2
		e.sites = e.sites[:0]
		for by := y0; by < P.H-margin; by += step {
			for bx := x0; bx < P.W-margin; bx += step {
				pf := complex((float64(bx)+0.5)*f-0.5-cx, (float64(by)+0.5)*f-0.5-cy)
				qf := m.apply(pf)
				qx := (real(qf)+cx+0.5)/f - 0.5
				qy := (imag(qf)+cy+0.5)/f - 0.5
				cell := uint8(bx*cellsX/P.W + by*cellsY/P.H*cellsX)
				e.sites = append(e.sites, site{bx: bx, by: by, p: pf, qx: qx, qy: qy, cell: cell})
			}
		}
		e.lvl = level{P: P, C: C, f: f, r: r, cx: cx, cy: cy}
		parts := 1
		if e.gang != nil && len(e.sites) >= minSitesPerPart*e.gang.n {
			parts = e.gang.n
			e.gang.run(e.trackPart)
		} else {
			if len(e.trackers) == 0 {
				e.trackers = make([]tracker, 1)
			}
			e.track(0, 1)
		}
		e.matches = e.matches[:0]
		for _, t := range e.trackers[:parts] {
			e.matches = append(e.matches, t.matches...)
		}
		e.lvl = level{}
		if fit, n := fitRobust(e.matches, f, 4*f); n >= minMatches {
			m, ok = fit, true
			e.lastInliers = n
		}
	}
	e.lastAccepted = ok
	return m, ok
}

// blockStep spaces the grid of a w x h level so that at most about
// maxBlocks blocks are tried.
func blockStep(w, h, margin int) int {
	area := float64(max(w-2*margin, 1) * max(h-2*margin, 1))
	return max(int(math.Ceil(math.Sqrt(area/maxBlocks))), 3)
}

// minSitesPerPart is the fewest grid sites worth a part of their own: a
// coarse level's few blocks take less time than handing them out.
const minSitesPerPart = 32

// track tracks part i of n of the grid of e.lvl into e.trackers[i].
func (e *Estimator) track(i, n int) {
	t := &e.trackers[i]
	t.matches = t.matches[:0]
	l := &e.lvl
	for _, s := range e.sites[i*len(e.sites)/n : (i+1)*len(e.sites)/n] {
		x, y, good := t.track(l.P, l.C, s.bx, s.by, s.qx, s.qy, l.r)
		if good {
			q := complex((x+0.5)*l.f-0.5-l.cx, (y+0.5)*l.f-0.5-l.cy)
			t.matches = append(t.matches, match{p: s.p, q: q, cell: s.cell})
		}
	}
}

// track finds the block of P centred at (bx, by) in C near (qx, qy): the
// best whole-sample offset within r, then Lucas-Kanade steps (Gauss-Newton
// on the squared difference, with the block's own gradients) to a
// fraction of a sample. It gives up on a block too flat to place (the
// weaker eigenvalue of its gradient matrix is small: an edge or a blank)
// or one that runs off C.
func (e *tracker) track(P, C Plane, bx, by int, qx, qy float64, r int) (x, y float64, ok bool) {
	const n = 2*blockHalf + 1
	var sxx, sxy, syy float64
	i := 0
	for j := -blockHalf; j <= blockHalf; j++ {
		o := (by+j)*P.Stride + bx - blockHalf
		row := P.Pix[o-P.Stride-1 : o+P.Stride+n+1]
		s := P.Stride
		for c := range n {
			// row starts one sample left of the block, one row up.
			gx := (float32(row[s+c+2]) - float32(row[s+c])) / 2
			gy := (float32(row[2*s+c+1]) - float32(row[c+1])) / 2
			e.tpl[i], e.gx[i], e.gy[i] = float32(row[s+c+1]), gx, gy
			sxx += float64(gx * gx)
			sxy += float64(gx * gy)
			syy += float64(gy * gy)
			i++
		}
	}
	half := (sxx - syy) / 2
	lmin := (sxx+syy)/2 - math.Sqrt(half*half+sxy*sxy)
	if lmin/(n*n) < minTexture {
		return 0, 0, false
	}
	ix, iy := int(math.Round(qx)), int(math.Round(qy))
	lim := blockHalf + r + 2
	if ix-lim < 0 || ix+lim >= C.W || iy-lim < 0 || iy+lim >= C.H {
		return 0, 0, false
	}
	best, bdx, bdy := math.MaxInt, 0, 0
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			ssd := 0
			i := 0
			for j := -blockHalf; j <= blockHalf && ssd < best; j++ {
				o := (iy+dy+j)*C.Stride + ix + dx - blockHalf
				row := C.Pix[o : o+n]
				for c, v := range row {
					d := int(v) - int(e.tpl[i+c])
					ssd += d * d
				}
				i += n
			}
			if ssd < best {
				best, bdx, bdy = ssd, dx, dy
			}
		}
	}
	x, y = float64(ix+bdx), float64(iy+bdy)
	det := sxx*syy - sxy*sxy
	for range lkIters {
		// Every sample of the block has the same fraction, so the
		// bilinear weights are the same for all of them.
		fx, fy := math.Floor(x), math.Floor(y)
		ax, ay := float32(x-fx), float32(y-fy)
		x0, y0 := int(fx)-blockHalf, int(fy)-blockHalf
		if x0 < 0 || y0 < 0 || x0+n >= C.W || y0+n >= C.H {
			return 0, 0, false
		}
		w00, w01 := (1-ax)*(1-ay), ax*(1-ay)
		w10, w11 := (1-ax)*ay, ax*ay
		var b1, b2 float64
		i := 0
		for j := range n {
			o := (y0+j)*C.Stride + x0
			r0 := C.Pix[o : o+n+1]
			r1 := C.Pix[o+C.Stride : o+C.Stride+n+1]
			var s1, s2 float32
			for c := range n {
				v := w00*float32(r0[c]) + w01*float32(r0[c+1]) + w10*float32(r1[c]) + w11*float32(r1[c+1])
				d := e.tpl[i+c] - v
				s1 += e.gx[i+c] * d
				s2 += e.gy[i+c] * d
			}
			b1 += float64(s1)
			b2 += float64(s2)
			i += n
		}
		dx := (syy*b1 - sxy*b2) / det
		dy := (sxx*b2 - sxy*b1) / det
		x += dx
		y += dy
		if dx*dx+dy*dy < 1e-6 {
			break
		}
	}
	if math.Abs(x-qx) > float64(r)+2 || math.Abs(y-qy) > float64(r)+2 {
		return 0, 0, false
	}
	return x, y, true
}

// fitRobust fits a motion to the matches with RANSAC: motions through two
// matches at a time (at least minSpan apart), the one that matches agree
// with within tol in the most cells of the frame (then the most matches),
// then least squares on those that agree, twice. It returns the motion and
// how many matches agree with it. The random pairs come from a fixed seed,
// so the same matches give the same motion.
func fitRobust(ms []match, tol, minSpan float64) (motion, int) {
	n := len(ms)
	if n < 2 {
		return still, 0
	}
	tol2 := tol * tol
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	best, bestCells, bm := 0, 0, still
	for range ransacIters {
		i, j := next(), next()
		dp := ms[i].p - ms[j].p
		if i == j || cmplx.Abs(dp) < minSpan {
			continue
		}
		c := (ms[i].q - ms[j].q) / dp
		if s := cmplx.Abs(c); s < 0.5 || s > 2 {
			continue
		}
		m := motion{c: c, t: ms[i].q - c*ms[i].p}
		if k, cells := agreeCells(ms, m, tol2); cells > bestCells || cells == bestCells && k > best {
			best, bestCells, bm = k, cells, m
		}
	}
	if best < 2 {
		return still, 0
	}
	for range 2 {
		if m, ok := leastSquares(ms, bm, tol2); ok {
			bm = m
		}
	}
	return bm, agree(ms, bm, tol2)
}

// agreeCells is agree, and how many cells of the frame hold a match that
// agrees.
func agreeCells(ms []match, m motion, tol2 float64) (k, cells int) {
	var seen [cellsX * cellsY / 64]uint64
	for _, x := range ms {
		d := m.apply(x.p) - x.q
		if real(d)*real(d)+imag(d)*imag(d) <= tol2 {
			k++
			seen[x.cell/64] |= 1 << (x.cell % 64)
		}
	}
	for _, w := range seen {
		cells += bits.OnesCount64(w)
	}
	return k, cells
}

func agree(ms []match, m motion, tol2 float64) int {
	k := 0
	for _, x := range ms {
		d := m.apply(x.p) - x.q
		if real(d)*real(d)+imag(d)*imag(d) <= tol2 {
			k++
		}
	}
	return k
}

// leastSquares fits a motion to the matches that m places within tol of
// where they were found. For a similarity the fit has a closed form: with
// both point sets centred on their means, c = sum (q-q̄) conj(p-p̄) /
// sum |p-p̄|^2 and t = q̄ - c p̄.
func leastSquares(ms []match, m motion, tol2 float64) (motion, bool) {
	var sp, sq complex128
	k := 0
	for _, x := range ms {
		d := m.apply(x.p) - x.q
		if real(d)*real(d)+imag(d)*imag(d) <= tol2 {
			sp += x.p
			sq += x.q
			k++
		}
	}
	if k < 2 {
		return m, false
	}
	pm, qm := sp/complex(float64(k), 0), sq/complex(float64(k), 0)
	var num complex128
	var den float64
	for _, x := range ms {
		d := m.apply(x.p) - x.q
		if real(d)*real(d)+imag(d)*imag(d) <= tol2 {
			dp, dq := x.p-pm, x.q-qm
			num += dq * cmplx.Conj(dp)
			den += real(dp)*real(dp) + imag(dp)*imag(dp)
		}
	}
	if den == 0 {
		return m, false
	}
	c := num / complex(den, 0)
	return motion{c: c, t: qm - c*pm}, true
}
