package stab_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tpipe/tpipe/video/stab"
)

func TestWarpShiftMovesEveryPlaneAtItsScale(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, l := range []stab.Layout{
		{W: 64, H: 48, Chroma: stab.C420},
		{W: 64, H: 48, Chroma: stab.C422},
		{W: 64, H: 48, Chroma: stab.C444},
		{W: 64, H: 48, Chroma: stab.Mono},
		{W: 64, H: 48, Chroma: stab.C411},
		{W: 64, H: 48, Chroma: stab.C444Alpha},
	} {
		src := make([]byte, l.FrameSize())
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		dst := make([]byte, l.FrameSize())
		// dst at p shows src at p + (4, 2).
		stab.Warp(dst, src, l, stab.Similarity{Dx: 4, Dy: 2, Scale: 1}, stab.Black)
		sx, sy := l.Chroma.Subsampling()
		for p := range l.NumPlanes() {
			d, s := l.Plane(dst, p), l.Plane(src, p)
			ox, oy := 4, 2
			black := byte(16)
			switch {
			case l.IsChroma(p):
				ox, oy, black = 4/sx, 2/sy, 128
			case p == 3:
				black = 255 // alpha
			}
			for y := range d.H {
				for x := range d.W {
					want := black
					if x+ox < d.W && y+oy < d.H {
						want = s.At(x+ox, y+oy)
					}
					if got := d.At(x, y); got != want {
						t.Fatalf("%v plane %d (%d, %d): %d, want %d", l.Chroma, p, x, y, got, want)
					}
				}
			}
		}
	}
}

func TestWarpIdentityCopies(t *testing.T) {
	l := stab.Layout{W: 37, H: 23, Chroma: stab.C420}
	src := make([]byte, l.FrameSize())
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, len(src))
	stab.Warp(dst, src, l, stab.Identity, stab.Fill)
	if string(dst) != string(src) {
		t.Error("identity warp changed the frame")
	}
}

func TestWarpHalfSampleAverages(t *testing.T) {
	l := stab.Layout{W: 4, H: 1, Chroma: stab.Mono}
	src := []byte{0, 100, 200, 250}
	dst := make([]byte, 4)
	stab.Warp(dst, src, l, stab.Similarity{Dx: 0.5, Scale: 1}, stab.Fill)
	if want := []byte{50, 150, 225, 250}; string(dst) != string(want) {
		t.Errorf("half-sample shift: %v, want %v", dst, want)
	}
}
