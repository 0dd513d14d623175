package stab_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/stab"
)

func deg(d float64) float64 { return d * math.Pi / 180 }

func plane(w, h int) stab.Plane {
	return stab.Plane{Pix: make([]byte, w*h), W: w, H: h, Stride: w}
}

// The accuracy: a known shift within 0.25 px, a known rotation
// within 0.1 degree, on a textured picture.
func TestEstimateRecoversKnownMotion(t *testing.T) {
	tex := synth.NewTexture(7)
	cases := []struct {
		name  string
		w, h  int
		m     stab.Similarity
		noise float64
		blob  bool // a patch of another texture moving on its own
	}{
		{"shift", 320, 240, stab.Similarity{Dx: 3.3, Dy: -1.7, Scale: 1}, 0, false},
		{"subpixel", 320, 240, stab.Similarity{Dx: 0.4, Dy: 0.25, Scale: 1}, 0, false},
		{"large shift", 640, 360, stab.Similarity{Dx: -27.6, Dy: 18.2, Scale: 1}, 0, false},
		{"rotation", 320, 240, stab.Similarity{Angle: deg(1.5), Scale: 1}, 0, false},
		{"shift and rotation", 640, 360, stab.Similarity{Dx: 9.6, Dy: 5.2, Angle: deg(-2), Scale: 1}, 0, false},
		{"zoom", 320, 240, stab.Similarity{Dx: 1, Angle: deg(0.3), Scale: 1.02}, 0, false},
		{"noise", 320, 240, stab.Similarity{Dx: -4.45, Dy: 2.1, Angle: deg(0.7), Scale: 1}, 4, false},
		{"moving object", 320, 240, stab.Similarity{Dx: 2.2, Dy: -3.1, Angle: deg(-0.5), Scale: 1}, 2, true},
		{"1280x720", 1280, 720, stab.Similarity{Dx: -13.3, Dy: 6.8, Angle: deg(1.2), Scale: 1}, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev, cur := plane(c.w, c.h), plane(c.w, c.h)
			tex.Render(prev, stab.Identity, 1, 1)
			tex.Render(cur, c.m, 1, 1)
			if c.blob {
				other := synth.NewTexture(99)
				a, b := plane(c.w/3, c.h/3), plane(c.w/3, c.h/3)
				other.Render(a, stab.Identity, 1, 1)
				other.Render(b, stab.Similarity{Dx: -6, Dy: 4, Scale: 1}, 1, 1)
				paste(prev, a, c.w/2, c.h/2)
				paste(cur, b, c.w/2+5, c.h/2-3)
			}
			if c.noise > 0 {
				r := rand.New(rand.NewPCG(1, 2))
				synth.Noise(prev, c.noise, r)
				synth.Noise(cur, c.noise, r)
			}
			got := stab.Estimate(prev, cur)
			if e := shiftError(got, c.m); e > 0.25 {
				t.Errorf("got %v, want %v: shift off by %.3f px", got, c.m, e)
			}
			if e := math.Abs(got.Angle-c.m.Angle) * 180 / math.Pi; e > 0.1 {
				t.Errorf("got %v, want %v: angle off by %.3f deg", got, c.m, e)
			}
			if e := math.Abs(got.Scale - c.m.Scale); e > 0.002 {
				t.Errorf("got %v, want %v: scale off by %.4f", got, c.m, e)
			}
			t.Logf("%v (want %v): shift error %.3f px, angle error %.4f deg", got, c.m, shiftError(got, c.m), math.Abs(got.Angle-c.m.Angle)*180/math.Pi)
		})
	}
}

// shiftError is how far apart a and b put the frame's centre.
func shiftError(a, b stab.Similarity) float64 { return math.Hypot(a.Dx-b.Dx, a.Dy-b.Dy) }

func paste(dst, src stab.Plane, x0, y0 int) {
	for y := range src.H {
		copy(dst.Pix[(y0+y)*dst.Stride+x0:], src.Pix[y*src.Stride:y*src.Stride+src.W])
	}
}

func TestEstimateBlankIsIdentity(t *testing.T) {
	a, b := plane(200, 150), plane(200, 150)
	if got := stab.Estimate(a, b); got != stab.Identity {
		t.Errorf("blank frames: got %v, want the identity", got)
	}
}

func TestEstimatorAllocatesNothingOnceWarm(t *testing.T) {
	tex := synth.NewTexture(3)
	a, b := plane(320, 240), plane(320, 240)
	tex.Render(a, stab.Identity, 1, 1)
	tex.Render(b, stab.Similarity{Dx: 2, Scale: 1}, 1, 1)
	var e stab.Estimator
	e.Estimate(a, b)
	if n := testing.AllocsPerRun(5, func() { e.Estimate(a, b) }); n != 0 {
		t.Errorf("Estimate allocates %v times per call", n)
	}
}

// A still camera on a plain scene with twelve small textured spots, and a
// busy object that moves: the object offers more blocks than the spots,
// so a fit that counts matches follows it, but the spots lie in more cells
// of the frame. (A still frame of ffmpeg's testsrc2, flat colour bars for
// the most part, with a moving testsrc pasted on it, made the count's
// choice jump 3.9 px on a still camera.)
func TestEstimateIgnoresABusyMovingObject(t *testing.T) {
	const w, h = 320, 240
	prev, cur := plane(w, h), plane(w, h)
	for i := range prev.Pix {
		prev.Pix[i], cur.Pix[i] = 100, 100
	}
	spots := synth.NewTexture(5)
	spot := plane(18, 18)
	for j := range 3 {
		for i := range 4 {
			spots.Render(spot, stab.Similarity{Dx: float64(37 * (i + 4*j)), Scale: 1}, 1, 1)
			x, y := 12+i*(w-42)/3, 12+j*(h-42)/2
			paste(prev, spot, x, y)
			paste(cur, spot, x, y)
		}
	}
	busy := synth.NewTexture(99)
	obj := plane(84, 64)
	busy.Render(obj, stab.Identity, 1, 1)
	paste(prev, obj, 110, 80)
	paste(cur, obj, 115, 82)
	got := stab.Estimate(prev, cur)
	if e := shiftError(got, stab.Identity); e > 0.25 || math.Abs(got.Angle)*180/math.Pi > 0.1 || math.Abs(got.Scale-1) > 0.002 {
		t.Errorf("got %v for a still camera: fooled by the moving object", got)
	}
}
