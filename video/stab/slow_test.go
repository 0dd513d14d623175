package stab_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/stab"
)

// slowPath is a pan of one pixel a frame with a slow shake: a sinusoid on
// each axis with periods of 37 to 59 frames (about half a hertz at 25
// frames/s), or a drift (a random velocity that forgets slowly), of about
// 2.5 px on each axis and 0.3 degrees.
func slowPath(n int, drift bool) []stab.Similarity {
	r := rand.New(rand.NewPCG(5, 6))
	path := make([]stab.Similarity, n)
	var vx, vy, va, x, y, a float64
	for i := range path {
		t := float64(i)
		if drift {
			// Velocity AR(1) at 0.9, the offset leaking at 0.95 a frame;
			// 0.12 of the deviation as innovation gives a deviation of
			// about one.
			vx = 0.9*vx + 0.12*2.5*r.NormFloat64()
			vy = 0.9*vy + 0.12*2.5*r.NormFloat64()
			va = 0.9*va + 0.12*0.3*r.NormFloat64()
			x, y, a = 0.95*x+vx, 0.95*y+vy, 0.95*a+va
		} else {
			x = 3.5 * math.Sin(2*math.Pi*t/47)
			y = 3.5 * math.Sin(2*math.Pi*t/37+1)
			a = 0.42 * math.Sin(2*math.Pi*t/59+2)
		}
		path[i] = stab.Similarity{Dx: -t + x, Dy: y, Angle: a * math.Pi / 180, Scale: 1}
	}
	return path
}

// Slow shake, the kind a Gaussian of a short lookahead lets through:
// the default options leave at most 0.05 px of jitter (measured at 256x192
// over 120 frames: 0.029 px on the sinusoid, 0.035 on the drift, from
// 0.27 and 0.56), and at most half what the first default (a Gaussian of
// 10 frames over 30) left (0.089 and 0.077).
func TestSlowShakeIsRemoved(t *testing.T) {
	l := stab.Layout{W: 256, H: 192, Chroma: stab.C420}
	first := stab.Options{Window: 30, Sigma: 10, MaxShift: 0.04, MaxAngle: math.Pi / 180}
	for _, c := range []struct {
		name  string
		drift bool
	}{{"sinusoid", false}, {"drift", true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.drift && raceEnabled {
				t.Skip("one slow clip is enough under the race detector")
			}
			clip := synth.NewShakyPath(l, slowPath(120, c.drift), 1, 9)
			before, after := jitter(l, clip.Frames), jitter(l, run(t, clip, stab.DefaultOptions))
			t.Logf("jitter before: mean %.3f px; after: %.3f px", before.Mean, after.Mean)
			if after.Mean > 0.05 {
				t.Errorf("jitter %.3f px after, want at most 0.05", after.Mean)
			}
			if testing.Short() || raceEnabled {
				return // two more runs, for a comparison only
			}
			if old := jitter(l, run(t, clip, first)); after.Mean > old.Mean/2 {
				t.Errorf("jitter %.3f px after, the first default left %.3f: want at most half", after.Mean, old.Mean)
			}
		})
	}
}
