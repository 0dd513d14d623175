package stab_test

import (
	"testing"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/stab"
)

var hd = stab.Layout{W: 1280, H: 720, Chroma: stab.C420}

// BenchmarkStabilizer720p is frames per second of the whole stabilizer at
// 720p 4:2:0 (b.N frames through Push).
func BenchmarkStabilizer720p(b *testing.B) {
	clip := synth.NewShaky(hd, 8, 1, 2, 0.2, 1, 4)
	s, err := stab.New(hd, stab.DefaultOptions)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	dst := make([]byte, hd.FrameSize())
	b.SetBytes(int64(hd.FrameSize()))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.PushInto(dst, clip.Frames[i%len(clip.Frames)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkEstimate720p(b *testing.B) {
	clip := synth.NewShaky(hd, 2, 1, 2, 0.2, 1, 4)
	var e stab.Estimator
	p, q := hd.Plane(clip.Frames[0], 0), hd.Plane(clip.Frames[1], 0)
	for b.Loop() {
		e.Estimate(p, q)
	}
}

func BenchmarkWarp720p(b *testing.B) {
	src := make([]byte, hd.FrameSize())
	dst := make([]byte, hd.FrameSize())
	w := stab.NewWarper(0)
	defer w.Close()
	b.SetBytes(int64(hd.FrameSize()))
	for b.Loop() {
		w.Warp(dst, src, hd, stab.Similarity{Dx: 3.3, Dy: -1.2, Angle: 0.01, Scale: 1.1}, stab.Zoom)
	}
}
