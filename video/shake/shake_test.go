package shake_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/stab"
)

func plane(w, h int) stab.Plane {
	return stab.Plane{Pix: make([]byte, w*h), W: w, H: h, Stride: w}
}

func TestCorrelatorFindsShift(t *testing.T) {
	tex := synth.NewTexture(5)
	for _, c := range []struct {
		w, h   int
		dx, dy float64
	}{
		{320, 240, 3.3, -1.7},
		{320, 240, 0.5, 0.25},
		{320, 240, -12.8, 7.1},
		{1280, 720, 21.4, -9.6},
		{200, 100, -2.5, 1.5},
	} {
		a, b := plane(c.w, c.h), plane(c.w, c.h)
		tex.Render(a, stab.Identity, 1, 1)
		tex.Render(b, stab.Similarity{Dx: c.dx, Dy: c.dy, Scale: 1}, 1, 1)
		r := rand.New(rand.NewPCG(3, 4))
		synth.Noise(a, 2, r)
		synth.Noise(b, 2, r)
		cr := shake.NewCorrelator(c.w, c.h)
		cr.Next(a)
		dx, dy, ok := cr.Next(b)
		if e := math.Hypot(dx-c.dx, dy-c.dy); !ok || e > 0.1 {
			t.Errorf("%dx%d shift (%g, %g): got (%.3f, %.3f), off by %.3f", c.w, c.h, c.dx, c.dy, dx, dy, e)
		}
	}
}

// A clip whose jitter is known: the meter's figures against the same
// figures computed from the path the clip was made with.
func TestMeterOnKnownJitter(t *testing.T) {
	l := stab.Layout{W: 256, H: 192, Chroma: stab.Mono}
	for _, j := range []float64{0, 1, 3} {
		clip := synth.NewShaky(l, 60, 1.5, j, 0, 1, 11)
		m := shake.NewMeter(l.W, l.H)
		path := make([]complex128, len(clip.Path))
		for i, f := range clip.Frames {
			m.Add(l.Plane(f, 0))
			path[i] = complex(clip.Path[i].Dx, clip.Path[i].Dy)
		}
		got, want := m.Result(), shake.Measure(path)
		if got.Frames != 60 {
			t.Errorf("jitter %g: %d frames, want 60", j, got.Frames)
		}
		if math.Abs(got.Mean-want.Mean) > 0.05+0.05*want.Mean || math.Abs(got.P95-want.P95) > 0.1+0.05*want.P95 {
			t.Errorf("jitter %g: measured %+v, the path has %+v", j, got, want)
		}
		t.Logf("jitter %g px: measured %+v, the path has %+v", j, got, want)
	}
}

func TestMeasure(t *testing.T) {
	// A steady pan has no jitter, to its last frame.
	pan := make([]complex128, 40)
	for i := range pan {
		pan[i] = complex(2.5*float64(i), -float64(i))
	}
	if r := shake.Measure(pan); r.Mean > 1e-9 || r.P95 > 1e-9 || r.Frames != 40 {
		t.Errorf("steady pan: %+v, want no jitter", r)
	}
	// Alternating positions: every step is about 2 px of jitter.
	zig := make([]complex128, 40)
	for i := range zig {
		zig[i] = complex(float64(i%2), 0)
	}
	if r := shake.Measure(zig); math.Abs(r.Mean-1) > 0.05 {
		t.Errorf("zigzag of 1 px: mean %.3f, want about 1", r.Mean)
	}
	if r := shake.Measure(nil); r != (shake.Result{}) {
		t.Errorf("no frames: %+v", r)
	}
}
