package stab_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/stab"
)

// run pushes every frame of clip through a Stabilizer and returns copies
// of the frames it gives back.
func run(t *testing.T, clip *synth.Shaky, o stab.Options) [][]byte {
	t.Helper()
	s, err := stab.New(clip.Layout, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][]byte
	for _, f := range clip.Frames {
		if g := s.Push(f); g != nil {
			out = append(out, bytes.Clone(g))
		}
	}
	for g := s.Flush(); g != nil; g = s.Flush() {
		out = append(out, bytes.Clone(g))
	}
	return out
}

func jitter(l stab.Layout, frames [][]byte) shake.Result {
	m := shake.NewMeter(l.W, l.H)
	for _, f := range frames {
		m.Add(l.Plane(f, 0))
	}
	return m.Result()
}

// The test: a still picture panned along a known jittery path,
// with noise, comes out with at most a quarter of its jitter, as measured
// by phase correlation of consecutive output frames (package shake), not
// by the stabilizer's own estimates.
func TestStabilizeRemovesJitter(t *testing.T) {
	for _, c := range []struct {
		name                 string
		l                    stab.Layout
		pan, jit, jitDeg, nz float64
		o                    stab.Options
	}{
		{"420 shift", stab.Layout{W: 320, H: 240, Chroma: stab.C420}, 1, 2.5, 0, 2, stab.DefaultOptions},
		{"420 shift and turn", stab.Layout{W: 320, H: 240, Chroma: stab.C420}, 1.5, 2, 0.3, 2, stab.DefaultOptions},
		{"mono short window", stab.Layout{W: 256, H: 192, Chroma: stab.Mono}, 0.5, 2, 0.2, 1, stab.Options{Window: 12, Sigma: 5, MaxShift: 0.05, MaxAngle: math.Pi / 180}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clip := synth.NewShaky(c.l, 60, c.pan, c.jit, c.jitDeg, c.nz, 21)
			out := run(t, clip, c.o)
			if len(out) != len(clip.Frames) {
				t.Fatalf("%d frames out of %d", len(out), len(clip.Frames))
			}
			before, after := jitter(c.l, clip.Frames), jitter(c.l, out)
			t.Logf("jitter before: mean %.3f px, p95 %.3f px; after: mean %.3f px, p95 %.3f px (%.1f%%)",
				before.Mean, before.P95, after.Mean, after.P95, 100*after.Mean/before.Mean)
			if after.Mean > before.Mean/4 {
				t.Errorf("jitter %.3f px before, %.3f px after: want at most a quarter", before.Mean, after.Mean)
			}
		})
	}
}

func TestStabilizeKeepsSizeAndCount(t *testing.T) {
	for _, l := range []stab.Layout{
		{W: 97, H: 65, Chroma: stab.C420},
		{W: 120, H: 80, Chroma: stab.C422},
		{W: 64, H: 48, Chroma: stab.C444},
		{W: 33, H: 17, Chroma: stab.Mono},
		{W: 99, H: 41, Chroma: stab.C411},
		{W: 33, H: 17, Chroma: stab.C444Alpha},
	} {
		for _, n := range []int{0, 1, 3, 10} {
			clip := synth.NewShaky(l, n, 1, 1, 0, 0, 3)
			for _, b := range []stab.Border{stab.Zoom, stab.Black, stab.Fill} {
				o := stab.Options{Window: 4, Sigma: 2, MaxShift: 0.1, MaxAngle: 0.01, Borders: b}
				out := run(t, clip, o)
				if len(out) != n {
					t.Errorf("%v %dx%d, %d frames, borders %v: %d frames out", l.Chroma, l.W, l.H, n, b, len(out))
				}
				for _, f := range out {
					if len(f) != l.FrameSize() {
						t.Errorf("%v %dx%d: frame of %d bytes, want %d", l.Chroma, l.W, l.H, len(f), l.FrameSize())
					}
				}
			}
		}
	}
}

func TestStabilizerAllocatesNothingOnceWarm(t *testing.T) {
	l := stab.Layout{W: 160, H: 120, Chroma: stab.C420}
	clip := synth.NewShaky(l, 8, 1, 1, 0.2, 1, 5)
	s, err := stab.New(l, stab.Options{Window: 3, Sigma: 1, MaxShift: 0.05, MaxAngle: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range clip.Frames[:5] {
		s.Push(f)
	}
	i := 0
	if n := testing.AllocsPerRun(20, func() { s.Push(clip.Frames[i%len(clip.Frames)]); i++ }); n != 0 {
		t.Errorf("Push allocates %v times per frame", n)
	}
}

func TestOptionsOutOfRange(t *testing.T) {
	l := stab.Layout{W: 64, H: 48}
	d := stab.DefaultOptions
	for _, o := range []stab.Options{
		{},
		{Window: 10, Sigma: 11, MaxShift: 0.1},
		{Window: 10, Sigma: 1, MaxShift: 0.5},
		{Window: 10, Sigma: 1, MaxAngle: 1},
		{Window: 10, Sigma: 1, Zoom: 0.5},
		{Window: 10, Sigma: 1, MaxShift: 0.4, MaxAngle: 0.7},
	} {
		if s, err := stab.New(l, o); err == nil {
			s.Close()
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := stab.New(stab.Layout{}, d); err == nil {
		t.Error("empty layout: no error")
	}
}

// The blocks of a frame are tracked in parts at once, and the parts'
// matches joined in grid order: the frames out do not depend on how many
// workers there are.
func TestWorkersDoNotChangeOutput(t *testing.T) {
	l := stab.Layout{W: 640, H: 360, Chroma: stab.C420}
	clip := synth.NewShaky(l, 16, 1, 3, 0.3, 2, 8)
	var want [][]byte
	for _, w := range []int{1, 2, 3} {
		o := stab.Options{Window: 6, Sigma: 2, MaxShift: 0.05, MaxAngle: 0.02, Workers: w}
		got := run(t, clip, o)
		if want == nil {
			want = got
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%d workers: frame %d differs from 1 worker's", w, i)
			}
		}
	}
}

// The caller may keep the frames itself (Track, Correct): the frames out
// are those Push and Flush give, byte for byte, and the Stabilizer keeps
// none.
func TestTrackCorrectIsPush(t *testing.T) {
	l := stab.Layout{W: 160, H: 120, Chroma: stab.C420}
	clip := synth.NewShaky(l, 12, 1, 2, 0.2, 1, 6)
	o := stab.Options{Window: 4, Sigma: 2, MaxShift: 0.05, MaxAngle: 0.02}
	want := run(t, clip, o)
	s, err := stab.New(l, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got [][]byte
	next := 0 // the frame due next
	correct := func() {
		dst := make([]byte, l.FrameSize())
		s.Correct(dst, clip.Frames[next])
		got = append(got, dst)
		next++
	}
	for _, f := range clip.Frames {
		if s.Track(f) {
			correct()
		}
	}
	if n := s.Pending(); n != o.Window {
		t.Errorf("%d frames pending at the end, want the window's %d", n, o.Window)
	}
	for s.Pending() > 0 {
		correct()
	}
	if h := s.Held(); h != 0 {
		t.Errorf("Held() = %d with the caller keeping the frames, want 0", h)
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames out, Push gives %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs from Push's", i)
		}
	}
}
