package stab

import (
	"fmt"
	"math"
	"math/cmplx"
)

// Similarity is a motion of the picture: rotate by Angle (radians; since y
// grows downwards, a positive angle turns clockwise on screen) and scale by
// Scale about the centre of the frame, then shift by (Dx, Dy) pixels of
// luma. For Estimate(prev, cur) it maps a point of prev to where the same
// scene point is in cur.
//
// The zero Similarity has Scale 0 and maps everything to the centre;
// Identity is the motion that moves nothing.
type Similarity struct {
	Dx, Dy float64
	Angle  float64
	Scale  float64
}

// Identity is the similarity that moves nothing.
var Identity = Similarity{Scale: 1}

func (s Similarity) String() string {
	return fmt.Sprintf("shift (%.3f, %.3f) px, angle %.4f deg, scale %.5f", s.Dx, s.Dy, s.Angle*180/math.Pi, s.Scale)
}

// motion is a similarity as complex arithmetic on centred coordinates:
// a point z = x + iy goes to c*z + t. Composition and inversion are then
// one multiplication each.
type motion struct{ c, t complex128 }

var still = motion{c: 1}

func (s Similarity) motion() motion {
	return motion{c: cmplx.Rect(s.Scale, s.Angle), t: complex(s.Dx, s.Dy)}
}

func (m motion) similarity() Similarity {
	return Similarity{Dx: real(m.t), Dy: imag(m.t), Angle: cmplx.Phase(m.c), Scale: cmplx.Abs(m.c)}
}

func (m motion) apply(z complex128) complex128 { return m.c*z + m.t }

// then returns m followed by n.
func (m motion) then(n motion) motion { return motion{c: n.c * m.c, t: n.c*m.t + n.t} }

func (m motion) inverse() motion { return motion{c: 1 / m.c, t: -m.t / m.c} }

// Then returns the motion s followed by n.
func (s Similarity) Then(n Similarity) Similarity { return s.motion().then(n.motion()).similarity() }

// Inverse returns the motion that undoes s.
func (s Similarity) Inverse() Similarity { return s.motion().inverse().similarity() }

// Apply maps point (x, y) of a w x h luma plane.
func (s Similarity) Apply(w, h int, x, y float64) (float64, float64) {
	cx, cy := float64(w-1)/2, float64(h-1)/2
	z := s.motion().apply(complex(x-cx, y-cy))
	return real(z) + cx, imag(z) + cy
}
