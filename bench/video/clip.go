package video

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/stab"
)

// ClipSpec says what clip to make: a still picture of its own, seen by a
// camera that sways smoothly over it and shakes as Shake says, W x H luma
// pixels in 4:2:0, Frames frames at 25 frames/s.
type ClipSpec struct {
	W, H, Frames int
	Seed         uint64
	Shake        Shake
}

// Shake is the kind of shake a clip has. Each is about as strong (a
// standard deviation of H/144 pixels on each axis and 0.3 degrees of
// turn), at a different pace.
type Shake uint8

const (
	// Random shake: each frame's offset is half the last one's plus a
	// fresh random part (AR(1)), so it is about as large from frame to
	// frame as in all.
	Random Shake = iota
	// Sine shake: a slow steady sway, a sinusoid on each axis with
	// periods of 37 to 59 frames (about half a hertz at 25 frames/s, a
	// camera on a boat or held at arm's length): slow enough that a
	// smoother of a second's lookahead lets part of it through.
	Sine
	// Drift: a slow wander with periods of about 1 to 4 seconds (the
	// random part goes into the velocity, which forgets slowly): the
	// shake a smoother confuses with intended motion.
	Drift
)

// Shakes lists the kinds of shake, in the report's order.
var Shakes = []Shake{Random, Sine, Drift}

func (s Shake) String() string {
	switch s {
	case Random:
		return "random"
	case Sine:
		return "sine"
	case Drift:
		return "drift"
	}
	return fmt.Sprintf("Shake(%d)", uint8(s))
}

// Pose is where the camera looks in one frame: the still's point shown at
// the frame's centre, as an offset from the still's centre in pixels, and
// the camera's turn in radians.
type Pose struct{ X, Y, Angle float64 }

// The camera, relative to the frame height H: it sways sinusoidally
// (swayX·W and swayY·H, over periods long next to the meter's smoothing)
// and shakes with an AR(1) process of standard deviation H/jitterDiv
// pixels on each axis and jitterDeg degrees of turn. With a coefficient of
// 1/2 the frame-to-frame shake is about as large as the shake itself: 2.5
// px at 360p, 5 at 720p, 7.5 at 1080p.
const (
	swayX, swayY   = 0.08, 0.04
	periodX        = 160.0 // frames
	periodY        = 110.0
	jitterDiv      = 144.0
	jitterDeg      = 0.3
	jitterCoef     = 0.5
	noiseSigma     = 2.0 // sensor noise, in 8-bit levels
	rectsPerMPixel = 400 // flat-shaded rectangles over the waves: corners to track
)

// Path returns the camera's smooth path and the path with its shake for
// the spec. They depend only on the spec.
func (c ClipSpec) Path() (smooth, shaky []Pose) {
	shakes := c.shakes()
	for i := range c.Frames {
		t := float64(i)
		s := Pose{
			X: swayX * float64(c.W) * math.Sin(2*math.Pi*t/periodX),
			Y: swayY * float64(c.H) * math.Sin(2*math.Pi*t/periodY),
		}
		j := shakes(t)
		smooth = append(smooth, s)
		shaky = append(shaky, Pose{X: s.X + j.X, Y: s.Y + j.Y, Angle: j.Angle})
	}
	return smooth, shaky
}

// shakes returns the clip's shake as a function of the frame number,
// called for frames 0, 1, 2, ... in turn.
func (c ClipSpec) shakes() func(t float64) Pose {
	r := rand.New(rand.NewPCG(c.Seed, 7))
	sd := float64(c.H) / jitterDiv
	ad := jitterDeg * math.Pi / 180
	var j Pose
	switch c.Shake {
	case Sine:
		// Amplitude sqrt(2) sd: a sinusoid's deviation is its amplitude
		// over sqrt(2). Phases from the seed.
		px, py, pa := 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64()
		return func(t float64) Pose {
			return Pose{
				X:     math.Sqrt2 * sd * math.Sin(2*math.Pi*t/47+px),
				Y:     math.Sqrt2 * sd * math.Sin(2*math.Pi*t/37+py),
				Angle: math.Sqrt2 * ad * math.Sin(2*math.Pi*t/59+pa),
			}
		}
	case Drift:
		// The velocity is AR(1) with coefficient driftCoef, the offset
		// leaks back to 0 at driftLeak a frame; the scale of the
		// innovation is set so that the offset's deviation is sd.
		var v Pose
		inno := driftInno()
		return func(float64) Pose {
			v = Pose{
				X:     driftCoef*v.X + inno*sd*r.NormFloat64(),
				Y:     driftCoef*v.Y + inno*sd*r.NormFloat64(),
				Angle: driftCoef*v.Angle + inno*ad*r.NormFloat64(),
			}
			j = Pose{X: driftLeak*j.X + v.X, Y: driftLeak*j.Y + v.Y, Angle: driftLeak*j.Angle + v.Angle}
			return j
		}
	}
	inno := math.Sqrt(1 - jitterCoef*jitterCoef)
	return func(float64) Pose {
		j = Pose{
			X:     jitterCoef*j.X + inno*sd*r.NormFloat64(),
			Y:     jitterCoef*j.Y + inno*sd*r.NormFloat64(),
			Angle: jitterCoef*j.Angle + inno*ad*r.NormFloat64(),
		}
		return j
	}
}

// The drift's two poles: the velocity forgets at driftCoef a frame and
// the offset at driftLeak, which puts most of its motion at periods of
// 25 to 100 frames.
const (
	driftCoef = 0.9
	driftLeak = 0.95
)

// driftInno is the innovation, as a fraction of the wanted deviation,
// that gives the drift's offset a deviation of one: the variance of the
// AR(2) process x[t] = (a+b) x[t-1] - ab x[t-2] + e[t] is
// (1+ab) / ((1-ab) ((1+ab)^2 - (a+b)^2)) times e's.
func driftInno() float64 {
	a, b := driftCoef, driftLeak
	gain := (1 + a*b) / ((1 - a*b) * ((1+a*b)*(1+a*b) - (a+b)*(a+b)))
	return 1 / math.Sqrt(gain)
}

// TrueShake is the shake of the clip's picture computed from its path,
// with shake.Measure: what an exact meter would report for the input.
// The picture moves opposite to the camera.
func (c ClipSpec) TrueShake() shake.Result {
	_, p := c.Path()
	path := make([]complex128, len(p))
	for i, q := range p {
		path[i] = complex(-q.X, -q.Y)
	}
	return shake.Measure(path)
}

// margin is how far past the frame, on each side, the camera can look:
// the sway, five standard deviations of shake, and the corner's travel
// under the largest turn.
func (c ClipSpec) margin() (mx, my int) {
	sd := float64(c.H) / jitterDiv
	turn := 5 * jitterDeg * math.Pi / 180 * math.Hypot(float64(c.W), float64(c.H)) / 2
	mx = int(math.Ceil(swayX*float64(c.W) + 5*sd + turn + 2))
	my = int(math.Ceil(swayY*float64(c.H) + 5*sd + turn + 2))
	return mx, my
}

// still is the picture the camera looks at: three planes, chroma at half
// size, each larger than the frame by the margin.
type still struct {
	y, u, v stab.Plane
}

func newStill(c ClipSpec) *still {
	mx, my := c.margin()
	w, h := c.W+2*mx, c.H+2*my
	// Even sizes, so the chroma planes cover the luma plane exactly.
	w += w & 1
	h += h & 1
	plane := func(w, h int) stab.Plane { return stab.Plane{Pix: make([]byte, w*h), W: w, H: h, Stride: w} }
	s := &still{y: plane(w, h), u: plane(w/2, h/2), v: plane(w/2, h/2)}
	// The same scene at every size: the texture's waves (6 to 96 pixels
	// at 360p) scale with the frame.
	k := float64(c.H) / 360
	synth.NewTexture(c.Seed).Render(s.y, stab.Similarity{Scale: k}, 1, 1)
	synth.NewTexture(c.Seed+1).Render(s.u, stab.Similarity{Scale: k}, 2, 2)
	synth.NewTexture(c.Seed+2).Render(s.v, stab.Similarity{Scale: k}, 2, 2)
	// Muted colour: a third of the texture's swing about grey.
	for _, p := range []stab.Plane{s.u, s.v} {
		for i, v := range p.Pix {
			p.Pix[i] = byte(128 + (int(v)-128)/3)
		}
	}
	// Flat rectangles, half blended into the waves: hard edges and
	// corners, which block matchers and feature trackers want, as a
	// photograph has them.
	r := rand.New(rand.NewPCG(c.Seed, 9))
	n := rectsPerMPixel * w * h / 1e6
	for range n {
		rw := 4 + r.IntN(c.H/10)
		rh := 4 + r.IntN(c.H/10)
		x0, y0 := r.IntN(w-rw), r.IntN(h-rh)
		ly, lu, lv := 16+r.IntN(220), 64+r.IntN(128), 64+r.IntN(128)
		for y := y0; y < y0+rh; y++ {
			row := s.y.Pix[y*s.y.Stride:]
			for x := x0; x < x0+rw; x++ {
				row[x] = byte((int(row[x]) + ly) / 2)
			}
		}
		for y := y0 / 2; y < (y0+rh)/2; y++ {
			ru, rv := s.u.Pix[y*s.u.Stride:], s.v.Pix[y*s.v.Stride:]
			for x := x0 / 2; x < (x0+rw)/2; x++ {
				ru[x] = byte((int(ru[x]) + lu) / 2)
				rv[x] = byte((int(rv[x]) + lv) / 2)
			}
		}
	}
	return s
}

// view samples plane p of the still into dst as the camera at pose q sees
// it: dst's sample at (u, v), taken about its centre, is the still's at
// R(angle)·(u, v)·sub + the pose's offset, about the still's centre, with
// sub the plane's subsampling. Bilinear; the margin keeps every sample
// inside.
func view(dst, src stab.Plane, q Pose, sub float64) {
	sin, cos := math.Sincos(q.Angle)
	dcx, dcy := float64(dst.W-1)/2, float64(dst.H-1)/2
	scx, scy := float64(src.W-1)/2+q.X/sub, float64(src.H-1)/2+q.Y/sub
	for v := range dst.H {
		fv := float64(v) - dcy
		// Along a row the source point moves by (cos, sin) a sample.
		x := scx - dcx*cos - fv*sin
		y := scy - dcx*sin + fv*cos
		row := dst.Pix[v*dst.Stride : v*dst.Stride+dst.W]
		for u := range row {
			xi, yi := int(x), int(y)
			fx, fy := x-float64(xi), y-float64(yi)
			if uint(xi) >= uint(src.W-1) || uint(yi) >= uint(src.H-1) {
				// Past the margin (a shake of over five deviations):
				// the nearest edge sample.
				xi, yi = max(0, min(xi, src.W-2)), max(0, min(yi, src.H-2))
				fx, fy = 0, 0
			}
			o := yi*src.Stride + xi
			p00, p01 := float64(src.Pix[o]), float64(src.Pix[o+1])
			p10, p11 := float64(src.Pix[o+src.Stride]), float64(src.Pix[o+src.Stride+1])
			top := p00 + (p01-p00)*fx
			bot := p10 + (p11-p10)*fx
			row[u] = byte(top + (bot-top)*fy + 0.5)
			x += cos
			y += sin
		}
	}
}

// noise is a table of Gaussian noise, read from a random place for each
// row: drawing a normal number per sample would take longer than the
// rest of a frame.
type noise struct {
	tab []int8
	r   *rand.Rand
}

func newNoise(seed uint64) *noise {
	r := rand.New(rand.NewPCG(seed, 11))
	n := &noise{tab: make([]int8, 1<<18), r: r}
	for i := range n.tab {
		n.tab[i] = int8(max(-127, min(127, math.Round(noiseSigma*r.NormFloat64()))))
	}
	return n
}

func (n *noise) add(p stab.Plane) {
	for y := range p.H {
		row := p.Pix[y*p.Stride : y*p.Stride+p.W]
		off := n.r.IntN(len(n.tab) - len(row))
		for x, d := range n.tab[off : off+len(row)] {
			row[x] = byte(max(0, min(255, int(row[x])+int(d))))
		}
	}
}

// Header is the y4m header line of the clip, '\n' included.
func (c ClipSpec) Header() string {
	return fmt.Sprintf("YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", c.W, c.H)
}

// Layout is the clip's frame layout.
func (c ClipSpec) Layout() stab.Layout { return stab.Layout{W: c.W, H: c.H, Chroma: stab.C420} }

// Write writes the clip to w as a y4m stream. The same spec gives the
// same bytes.
func (c ClipSpec) Write(w io.Writer) error {
	if c.W < 64 || c.H < 64 || c.W%2 != 0 || c.H%2 != 0 || c.Frames < 1 {
		return fmt.Errorf("clip %dx%d of %d frames: want even sizes of at least 64 and a frame", c.W, c.H, c.Frames)
	}
	s := newStill(c)
	nz := newNoise(c.Seed)
	_, path := c.Path()
	l := c.Layout()
	frame := make([]byte, l.FrameSize())
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(c.Header())
	for _, q := range path {
		y, u, v := l.Plane(frame, 0), l.Plane(frame, 1), l.Plane(frame, 2)
		view(y, s.y, q, 1)
		view(u, s.u, q, 2)
		view(v, s.v, q, 2)
		nz.add(y)
		bw.WriteString("FRAME\n")
		if _, err := bw.Write(frame); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes the clip to a new file name.
func (c ClipSpec) WriteFile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := c.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}
