// Package synth makes test pictures and clips for the video packages: a
// smooth random texture that can be rendered exactly under any
// similarity, frames of any layout, and YUV4MPEG2 streams cut into
// tpipe's records (the header, then one record per frame).
package synth

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"github.com/tpipe/tpipe/video/stab"
)

// Texture is a sum of plane waves of random direction, wavelength and
// phase. A wave seen through a similarity is again a wave, so a Texture
// renders shifted, turned or scaled with no resampling error.
type Texture struct{ waves []wave }

type wave struct{ kx, ky, phase, amp float64 }

// NewTexture returns a texture of 32 waves with wavelengths from 6 to 96
// pixels, chosen by seed.
func NewTexture(seed uint64) *Texture {
	r := rand.New(rand.NewPCG(seed, 1))
	t := &Texture{}
	for range 32 {
		lambda := 6 * math.Pow(16, r.Float64())
		dir := 2 * math.Pi * r.Float64()
		k := 2 * math.Pi / lambda
		t.waves = append(t.waves, wave{kx: k * math.Cos(dir), ky: k * math.Sin(dir), phase: 2 * math.Pi * r.Float64(), amp: 14})
	}
	return t
}

// Render fills p with the texture moved by s: what is at point x of the
// texture (a plane of p's size) is at s(x) in p, s acting about p's
// centre as stab.Similarity does. scale, for a chroma plane, is the
// plane's subsampling: s's shift is in luma pixels and is divided by it.
func (t *Texture) Render(p stab.Plane, s stab.Similarity, sx, sy int) {
	cx, cy := float64(p.W-1)/2, float64(p.H-1)/2
	inv := s.Inverse()
	c := cmplx.Rect(inv.Scale, inv.Angle)
	a, b := real(c), imag(c)
	// A point y of p shows texture point A(y - ctr) + t + ctr.
	tx, ty := inv.Dx/float64(sx), inv.Dy/float64(sy)
	acc := make([]float64, p.W*p.H)
	su, cu := make([]float64, p.W), make([]float64, p.W)
	for _, w := range t.waves {
		// k . (A(y-ctr) + t + ctr) = (A^T k) . y + k . (t + ctr - A ctr)
		kx := a*w.kx + b*w.ky
		ky := -b*w.kx + a*w.ky
		ox := tx + cx - (a*cx - b*cy)
		oy := ty + cy - (b*cx + a*cy)
		ph := w.phase + w.kx*ox + w.ky*oy
		for x := range p.W {
			su[x], cu[x] = math.Sincos(kx * float64(x))
		}
		for y := range p.H {
			sv, cv := math.Sincos(ky*float64(y) + ph)
			row := acc[y*p.W : (y+1)*p.W]
			for x := range row {
				row[x] += w.amp * (su[x]*cv + cu[x]*sv)
			}
		}
	}
	for y := range p.H {
		for x := range p.W {
			p.Pix[y*p.Stride+x] = clamp(128 + acc[y*p.W+x])
		}
	}
}

func clamp(v float64) byte {
	return byte(math.Round(math.Max(0, math.Min(255, v))))
}

// Noise adds Gaussian noise of standard deviation sigma to p.
func Noise(p stab.Plane, sigma float64, r *rand.Rand) {
	for y := range p.H {
		row := p.Pix[y*p.Stride : y*p.Stride+p.W]
		for x, v := range row {
			row[x] = clamp(float64(v) + sigma*r.NormFloat64())
		}
	}
}

// Frame renders one frame of layout l: luma from t, chroma from two
// textures of its own (seeded from t's), all under s.
func Frame(l stab.Layout, t, u, v *Texture, s stab.Similarity) []byte {
	f := make([]byte, l.FrameSize())
	t.Render(l.Plane(f, 0), s, 1, 1)
	if l.NumPlanes() == 3 {
		sx, sy := l.Chroma.Subsampling()
		cs := s
		u.Render(l.Plane(f, 1), cs, sx, sy)
		v.Render(l.Plane(f, 2), cs, sx, sy)
	}
	return f
}

// Header returns a YUV4MPEG2 stream header for l at 25 frames/s.
func Header(l stab.Layout) []byte {
	c := map[stab.Chroma]string{stab.C420: "420jpeg", stab.C422: "422", stab.C444: "444", stab.Mono: "mono", stab.C411: "411", stab.C444Alpha: "444alpha"}[l.Chroma]
	return fmt.Appendf(nil, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C%s\n", l.W, l.H, c)
}

// Record returns frame's record: "FRAME\n" and its planes.
func Record(frame []byte) []byte {
	return append([]byte("FRAME\n"), frame...)
}

// Shaky is a clip: a still texture seen by a camera that pans steadily
// and shakes. Path[i] is frame i's motion from the texture, Frames[i] its
// planes.
type Shaky struct {
	Layout stab.Layout
	Path   []stab.Similarity
	Frames [][]byte
}

// NewShaky makes n frames of layout l panning pan pixels a frame to the
// right, with a random shake of standard deviation jitter pixels on each
// axis (and jitterDeg degrees of rotation) at every frame, and sensor
// noise of standard deviation noise.
func NewShaky(l stab.Layout, n int, pan, jitter, jitterDeg, noise float64, seed uint64) *Shaky {
	r := rand.New(rand.NewPCG(seed, 2))
	path := make([]stab.Similarity, n)
	for i := range path {
		path[i] = stab.Similarity{
			Dx:    -pan*float64(i) + jitter*r.NormFloat64(),
			Dy:    jitter * r.NormFloat64(),
			Angle: jitterDeg * math.Pi / 180 * r.NormFloat64(),
			Scale: 1,
		}
	}
	return NewShakyPath(l, path, noise, seed)
}

// NewShakyPath makes the frames of layout l that show the texture of seed
// moved by each motion of path in turn, with sensor noise of standard
// deviation noise.
func NewShakyPath(l stab.Layout, path []stab.Similarity, noise float64, seed uint64) *Shaky {
	r := rand.New(rand.NewPCG(seed, 3))
	t, u, v := NewTexture(seed), NewTexture(seed+1), NewTexture(seed+2)
	c := &Shaky{Layout: l}
	for _, s := range path {
		f := Frame(l, t, u, v, s)
		if noise > 0 {
			for p := range l.NumPlanes() {
				Noise(l.Plane(f, p), noise, r)
			}
		}
		c.Path = append(c.Path, s)
		c.Frames = append(c.Frames, f)
	}
	return c
}

// Records returns the clip as a YUV4MPEG2 stream's records.
func (c *Shaky) Records() [][]byte {
	recs := [][]byte{Header(c.Layout)}
	for _, f := range c.Frames {
		recs = append(recs, Record(f))
	}
	return recs
}
