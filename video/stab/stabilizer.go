package stab

import (
	"fmt"
	"math"
	"math/cmplx"
)

// Options tune a Stabilizer. DefaultOptions is a good start; the zero
// Options is not valid (its window is 0).
type Options struct {
	// Window is the lookahead in frames: a frame is given back once the
	// Window frames after it have arrived, and the smoothing sees that
	// many frames on either side. Window+1 frames are in flight: the
	// caller's (Track, Correct) or the Stabilizer's (Push).
	Window int
	// Sigma is the standard deviation of the Gaussian that smooths the
	// camera path, in frames; larger is steadier. At most Window.
	Sigma float64
	// MaxShift is the largest shift a correction may make, as a fraction
	// of the frame's width (horizontally) and height (vertically), and
	// MaxAngle the largest turn, in radians. A correction beyond them is
	// scaled back, which lets through some shake but never a border.
	MaxShift, MaxAngle float64
	// Zoom enlarges every frame by this factor (at least 1) about its
	// centre; 0 means, with Borders set to Zoom, the smallest zoom that
	// hides the border of any correction within MaxShift and MaxAngle, and
	// with other borders 1. With Borders set to Zoom, corrections are also
	// scaled back until Zoom hides their border.
	Zoom float64
	// Borders is what shows where a corrected frame has no picture.
	Borders Border
	// Workers is how many goroutines track the blocks of a frame and
	// warp it; 0 means GOMAXPROCS. The result does not depend on it.
	Workers int
}

// DefaultOptions are the settings of the stabilize command: 40 frames of
// lookahead (1.6 s at 25 frames/s) and a Gaussian of half that, and
// corrections up to 4% of the frame and one degree, hidden by a zoom of
// about 12%.
//
// The Gaussian's response to a motion of period P frames is
// exp(-2 pi^2 Sigma^2 / P^2): what it lets through of the shake stays in
// the output. At Sigma 10 (the first default, over 30 frames) a sway of
// 47 frames kept 41% of its amplitude, and the slow-sine clip of the
// video benchmark came out with a third of its jitter; at Sigma 20, 3%.
// The kernel is cut at two deviations, not three, so that the lookahead,
// which the task keeps as frames, grows by 10 frames and not 30: on the
// benchmark's six 360p clips the cut kernel left 0.015 to 0.073 px of
// jitter where the uncut one (60 frames) left 0.016 to 0.067.
var DefaultOptions = Options{Window: 40, Sigma: 20, MaxShift: 0.04, MaxAngle: math.Pi / 180, Borders: Zoom}

// Check reports an option out of its range.
func (o Options) Check() error {
	switch {
	case o.Window < 1 || o.Window > MaxWindow:
		return fmt.Errorf("window %d frames: want 1 to %d", o.Window, MaxWindow)
	case !(o.Sigma > 0 && o.Sigma <= float64(o.Window)):
		return fmt.Errorf("smoothing %g frames: want more than 0, at most the window (%d)", o.Sigma, o.Window)
	case !(o.MaxShift >= 0 && o.MaxShift < 0.5):
		return fmt.Errorf("largest shift %g: want a fraction of the frame from 0 to under 0.5", o.MaxShift)
	case !(o.MaxAngle >= 0 && o.MaxAngle <= math.Pi/4):
		return fmt.Errorf("largest angle %g rad: want 0 to 45 degrees", o.MaxAngle)
	case o.Zoom != 0 && !(o.Zoom >= 1 && o.Zoom <= 4):
		return fmt.Errorf("zoom %g: want 1 to 4, or 0 for automatic", o.Zoom)
	case o.Borders < Zoom || o.Borders > Fill:
		return fmt.Errorf("borders %v: want zoom, black or fill", o.Borders)
	}
	return nil
}

// MaxWindow is the longest lookahead a Stabilizer takes.
const MaxWindow = 1000

// A Stabilizer corrects a stream of frames of one layout, in one of two
// ways.
//
//   - The caller keeps the frames (stabilize keeps them in their pool
//     buffers): Track measures each frame as it comes and says when the
//     frame Window frames before is due; Correct then writes that frame,
//     corrected, from the caller's copy. At the end, Correct is called for
//     each of the Pending frames. The Stabilizer keeps no frame.
//   - The Stabilizer keeps them: Push gives it a frame and returns the
//     frame Window frames earlier, corrected; at the end, Flush returns
//     the frames still held, one a call. It copies each frame into a ring
//     of Window+1 frames, allocated on the first Push (Push and Flush add
//     one for their result; PushInto and FlushInto write into the
//     caller's memory).
//
// After the first frames it allocates nothing. Close stops its
// goroutines. A Stabilizer is not safe for concurrent use.
type Stabilizer struct {
	l      Layout
	o      Options
	zoom   float64
	kernel []float64
	ring   [][]byte
	size   int    // bytes of a frame
	out    []byte // Push's and Flush's frame, allocated on their first use
	pyr    [2]pyramid
	est    Estimator
	warper *Warper
	// poses holds the path of frames first..in-1: at most 2*Window+1,
	// enough for the smoothing of frame in-1-Window.
	poses []Pose
	first int
	in    int // frames pushed
	done  int // frames given back
	last  Correction
}

// Correction is what a Stabilizer did to one frame.
type Correction struct {
	Frame   int        // its number, from 0
	Motion  Similarity // the motion estimated from the frame before (Identity for frame 0)
	Found   bool       // whether Motion was measured; false for a frame too flat to match
	Warp    Similarity // the map applied: output point p shows input point Warp(p)
	Limited bool       // whether the correction was scaled back to its limits
}

// New returns a Stabilizer for frames of layout l.
func New(l Layout, o Options) (*Stabilizer, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("stab: %w", err)
	}
	s := &Stabilizer{l: l, o: o, zoom: o.Zoom, kernel: Kernel(o.Sigma, o.Window)}
	if s.zoom == 0 {
		s.zoom = 1
		if o.Borders == Zoom {
			s.zoom = limitZoom(l, o.MaxShift, o.MaxAngle)
		}
		if s.zoom > 4 {
			return nil, fmt.Errorf("stab: hiding corrections of %g of the frame and %.3g degrees needs a zoom of %.3g; allow less or show borders",
				o.MaxShift, o.MaxAngle*180/math.Pi, s.zoom)
		}
	}
	s.size = l.FrameSize()
	s.poses = make([]Pose, 0, 2*o.Window+1)
	s.warper = NewWarper(o.Workers)
	s.est.parallel(s.warper.g)
	return s, nil
}

// Zoom returns the zoom applied to every frame.
func (s *Stabilizer) Zoom() float64 { return s.zoom }

// Held returns how many frames s holds: none when the caller keeps them
// (Track and Correct), Window+1 once PushInto has been called, and one
// more once Push or Flush has.
func (s *Stabilizer) Held() int {
	if s.out != nil {
		return len(s.ring) + 1
	}
	return len(s.ring)
}

// Last returns what was done to the frame last given back.
func (s *Stabilizer) Last() Correction { return s.last }

// Push copies frame, which is l.FrameSize() bytes, and returns the
// corrected frame Window frames before it, or nil while the lookahead is
// filling. The frame returned is s's, valid until the next call of Push or
// Flush.
func (s *Stabilizer) Push(frame []byte) []byte {
	if s.out == nil {
		s.out = make([]byte, s.size)
	}
	if s.PushInto(s.out, frame) {
		return s.out
	}
	return nil
}

// PushInto is Push writing the corrected frame into dst, which is
// l.FrameSize() bytes and not retained; it reports whether it did.
func (s *Stabilizer) PushInto(dst, frame []byte) bool {
	if len(frame) != s.size || len(dst) != s.size {
		panic(fmt.Sprintf("stab: Push of %d bytes into %d, want %d", len(frame), len(dst), s.size))
	}
	if s.ring == nil {
		n := s.size
		mem := make([]byte, (s.o.Window+1)*n)
		for i := range s.o.Window + 1 {
			s.ring = append(s.ring, mem[i*n:(i+1)*n:(i+1)*n])
		}
	}
	slot := s.ring[s.in%len(s.ring)]
	copy(slot, frame)
	if s.Track(slot) {
		s.Correct(dst, s.ring[s.done%len(s.ring)])
		return true
	}
	return false
}

// Track measures the motion of the next frame, l.FrameSize() bytes,
// which s does not keep, and reports whether a frame is now due: the one
// Window frames before, which the caller then gives to Correct. The
// caller keeps each frame until Correct has been given it.
func (s *Stabilizer) Track(frame []byte) bool {
	if len(frame) != s.size {
		panic(fmt.Sprintf("stab: Track of %d bytes, want %d", len(frame), s.size))
	}
	cur := &s.pyr[s.in%2]
	cur.build(s.l.Plane(frame, 0))
	pose := Pose{}
	if s.in > 0 {
		m, _ := s.est.estimate(&s.pyr[(s.in-1)%2], cur)
		pose = s.poses[len(s.poses)-1].Then(m.similarity())
	}
	if len(s.poses) == cap(s.poses) {
		copy(s.poses, s.poses[1:])
		s.poses = s.poses[:len(s.poses)-1]
		s.first++
	}
	s.poses = append(s.poses, pose)
	s.in++
	return s.in > s.o.Window
}

// Pending returns how many frames were tracked and not yet corrected: at
// the end of the stream, the frames the caller still gives to Correct.
func (s *Stabilizer) Pending() int { return s.in - s.done }

// Flush returns the next frame still held, corrected, or nil when all
// have been given back. The frame is s's, valid until the next call.
func (s *Stabilizer) Flush() []byte {
	if s.out == nil {
		s.out = make([]byte, s.size)
	}
	if s.FlushInto(s.out) {
		return s.out
	}
	return nil
}

// FlushInto is Flush writing into dst; it reports whether there was a
// frame left.
func (s *Stabilizer) FlushInto(dst []byte) bool {
	if s.done == s.in {
		return false
	}
	if len(dst) != s.size {
		panic(fmt.Sprintf("stab: Flush into %d bytes, want %d", len(dst), s.size))
	}
	s.Correct(dst, s.ring[s.done%len(s.ring)])
	return true
}

// Close stops s's goroutines. s must not be used after.
func (s *Stabilizer) Close() { s.warper.Close() }

// Correct writes into dst the next frame due, corrected: src is that
// frame as given to Track (frames are due in the order they were
// tracked). It may be called once Track has reported the frame due, or
// at the end for each Pending frame. Both are l.FrameSize() bytes.
func (s *Stabilizer) Correct(dst, src []byte) {
	if s.done == s.in {
		panic("stab: Correct with no frame pending")
	}
	if len(dst) != s.size || len(src) != s.size {
		panic(fmt.Sprintf("stab: Correct of %d bytes into %d, want %d", len(src), len(dst), s.size))
	}
	i := s.done
	s.done++
	k := i - s.first
	raw := s.poses[k]
	smooth := smoothAt(s.poses, k, s.kernel)
	m, limited := s.correction(raw, smooth)
	s.warper.warp(dst, src, s.l, m, s.o.Borders)
	var motion Similarity = Identity
	if k > 0 {
		motion = s.poses[k-1].motion().inverse().then(raw.motion()).similarity()
	}
	s.last = Correction{Frame: i, Motion: motion, Warp: m.similarity(), Limited: limited}
}

// correction returns the map from an output frame to its input: the
// smoothed pose undone, the frame's pose done, and the zoom. When that
// breaks a limit, the smoothed pose is moved towards the raw one (where
// the correction is nothing) just as far as the limits allow.
func (s *Stabilizer) correction(raw, smooth Pose) (motion, bool) {
	unzoom := motion{c: complex(1/s.zoom, 0)}
	at := func(f float64) motion {
		p := raw.lerp(smooth, f)
		return unzoom.then(p.motion().inverse().then(raw.motion()))
	}
	if s.fits(raw, raw.lerp(smooth, 1), at(1)) {
		return at(1), false
	}
	lo, hi := 0.0, 1.0
	for range 24 {
		mid := (lo + hi) / 2
		if s.fits(raw, raw.lerp(smooth, mid), at(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return at(lo), true
}

// fits reports whether the correction from raw to smooth is within the
// limits, and with Borders set to Zoom whether m, the whole map, shows no
// border.
func (s *Stabilizer) fits(raw, smooth Pose, m motion) bool {
	c := smooth.motion().inverse().then(raw.motion())
	if math.Abs(real(c.t)) > s.o.MaxShift*float64(s.l.W)+1e-9 ||
		math.Abs(imag(c.t)) > s.o.MaxShift*float64(s.l.H)+1e-9 ||
		math.Abs(cmplx.Phase(c.c)) > s.o.MaxAngle+1e-12 {
		return false
	}
	return s.o.Borders != Zoom || covers(s.l, m)
}

// covers reports whether m maps every corner of the frame (and so, the
// frame being convex, all of it) into the frame.
func covers(l Layout, m motion) bool {
	cx, cy := float64(l.W-1)/2, float64(l.H-1)/2
	for _, u := range [4]complex128{complex(-cx, -cy), complex(cx, -cy), complex(-cx, cy), complex(cx, cy)} {
		z := m.apply(u)
		if math.Abs(real(z)) > cx+1e-6 || math.Abs(imag(z)) > cy+1e-6 {
			return false
		}
	}
	return true
}

// needZoom returns the smallest zoom z >= 1 for which m after a zoom by z
// covers the frame: for every corner u, m(u/z) = c u/z + t must stay
// within the frame, which bounds 1/z on each axis. It is +Inf when m's
// shift alone leaves the frame.
func needZoom(l Layout, m motion) float64 {
	cx, cy := float64(l.W-1)/2, float64(l.H-1)/2
	z := 1.0
	for _, u := range [4]complex128{complex(-cx, -cy), complex(cx, -cy), complex(-cx, cy), complex(cx, cy)} {
		v := m.c * u
		for _, ax := range [2]struct{ v, t, half float64 }{{real(v), real(m.t), cx}, {imag(v), imag(m.t), cy}} {
			room := ax.half - ax.t
			if ax.v < 0 {
				room = ax.half + ax.t
			}
			if room <= 0 {
				return math.Inf(1)
			}
			z = max(z, math.Abs(ax.v)/room)
		}
	}
	return z
}

// limitZoom is the zoom that hides the border of any correction with a
// shift of at most maxShift of the frame and a turn of at most maxAngle.
// The worst cases are at the extremes.
func limitZoom(l Layout, maxShift, maxAngle float64) float64 {
	z := 1.0
	for _, sx := range [2]float64{-1, 1} {
		for _, sy := range [2]float64{-1, 1} {
			for _, sa := range [2]float64{-1, 1} {
				m := motion{c: cmplx.Rect(1, sa*maxAngle), t: complex(sx*maxShift*float64(l.W), sy*maxShift*float64(l.H))}
				z = max(z, needZoom(l, m))
			}
		}
	}
	return z
}
