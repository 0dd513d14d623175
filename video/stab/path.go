package stab

import (
	"math"
	"math/cmplx"
)

// Pose is where the camera is, relative to the first frame, as numbers
// that can be averaged: the motion of the scene from the first frame to
// this one, with its shift (X, Y, luma pixels, about the centre), its
// angle (radians, summed frame to frame, so never wrapped) and the log of
// its scale. The zero Pose is the first frame's.
type Pose struct {
	X, Y     float64
	Angle    float64
	LogScale float64
}

func (p Pose) motion() motion {
	return motion{c: cmplx.Rect(math.Exp(p.LogScale), p.Angle), t: complex(p.X, p.Y)}
}

// Then returns the pose after one more motion s, the motion from this
// frame to the next.
func (p Pose) Then(s Similarity) Pose {
	m := p.motion().then(s.motion())
	return Pose{X: real(m.t), Y: imag(m.t), Angle: p.Angle + s.Angle, LogScale: p.LogScale + math.Log(s.Scale)}
}

func (p Pose) add(q Pose, w float64) Pose {
	return Pose{p.X + w*q.X, p.Y + w*q.Y, p.Angle + w*q.Angle, p.LogScale + w*q.LogScale}
}

// lerp returns the pose a fraction f of the way from p to q.
func (p Pose) lerp(q Pose, f float64) Pose {
	return Pose{p.X + f*(q.X-p.X), p.Y + f*(q.Y-p.Y), p.Angle + f*(q.Angle-p.Angle), p.LogScale + f*(q.LogScale-p.LogScale)}
}

// Kernel returns the weights of a Gaussian of standard deviation sigma
// frames, from -radius to radius, summing to 1.
func Kernel(sigma float64, radius int) []float64 {
	k := make([]float64, 2*radius+1)
	sum := 0.0
	for i := range k {
		d := float64(i - radius)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	return k
}

// Smooth sets dst[i] to the average of path around i under kernel (from
// Kernel). Past either end, the path is continued by reflecting it
// through its end point (pose 2*end - mirror image), so that a steady pan
// stays steady up to the last frame instead of slowing down. dst and path
// have the same length and must not overlap.
func Smooth(dst, path []Pose, kernel []float64) {
	for i := range path {
		dst[i] = smoothAt(path, i, kernel)
	}
}

func smoothAt(path []Pose, i int, kernel []float64) Pose {
	r := len(kernel) / 2
	n := len(path)
	var s Pose
	for k, w := range kernel {
		j := i + k - r
		var p Pose
		switch {
		case j < 0:
			p = path[0].add(path[0], 1).add(path[min(-j, n-1)], -1)
		case j >= n:
			p = path[n-1].add(path[n-1], 1).add(path[max(2*(n-1)-j, 0)], -1)
		default:
			p = path[j]
		}
		s = s.add(p, w)
	}
	return s
}
