package stab

import (
	"errors"
	"fmt"
)

// Chroma is how a layout stores colour.
type Chroma int

const (
	C420      Chroma = iota // U and V at half width and half height
	C422                    // U and V at half width, full height
	C444                    // U and V at full size
	Mono                    // luma only
	C411                    // U and V at a quarter width, full height
	C444Alpha               // U and V at full size, and an alpha plane
)

// String returns the YUV4MPEG2 spelling of c ("420", "422", "444", "mono").
func (c Chroma) String() string {
	switch c {
	case C420:
		return "420"
	case C422:
		return "422"
	case C444:
		return "444"
	case Mono:
		return "mono"
	case C411:
		return "411"
	case C444Alpha:
		return "444alpha"
	}
	return fmt.Sprintf("Chroma(%d)", int(c))
}

// Subsampling returns the horizontal and vertical factors between the luma
// plane and a chroma plane (1 for Mono).
func (c Chroma) Subsampling() (sx, sy int) {
	switch c {
	case C420:
		return 2, 2
	case C422:
		return 2, 1
	case C411:
		return 4, 1
	}
	return 1, 1
}

// Layout is the shape of a frame: luma width and height and how chroma is
// stored. A Layout is a value; the zero Layout is not valid.
type Layout struct {
	W, H   int
	Chroma Chroma
}

// ErrLayout is returned (wrapped) by Layout.Check for a layout no frame
// can have.
var ErrLayout = errors.New("stab: bad frame layout")

// Check reports whether l describes a frame: positive sizes, a known
// chroma form.
func (l Layout) Check() error {
	if l.W <= 0 || l.H <= 0 {
		return fmt.Errorf("%w: size %dx%d", ErrLayout, l.W, l.H)
	}
	if l.Chroma < C420 || l.Chroma > C444Alpha {
		return fmt.Errorf("%w: %v", ErrLayout, l.Chroma)
	}
	return nil
}

// NumPlanes returns 1 for Mono, 4 for C444Alpha and 3 otherwise.
func (l Layout) NumPlanes() int {
	switch l.Chroma {
	case Mono:
		return 1
	case C444Alpha:
		return 4
	}
	return 3
}

// PlaneSize returns the width and height of plane i (0 is luma, 1 and 2
// chroma, 3 alpha). A subsampled chroma plane rounds up: a 5x3 4:2:0
// frame has 3x2 chroma.
func (l Layout) PlaneSize(i int) (w, h int) {
	if !l.IsChroma(i) {
		return l.W, l.H
	}
	sx, sy := l.Chroma.Subsampling()
	return (l.W + sx - 1) / sx, (l.H + sy - 1) / sy
}

// IsChroma reports whether plane i is a chroma plane (1 or 2), sampled at
// the chroma's subsampling; luma (0) and alpha (3) are at full size.
func (l Layout) IsChroma(i int) bool { return (i == 1 || i == 2) && l.Chroma != Mono }

// FrameSize returns the bytes of one frame: its planes back to back.
func (l Layout) FrameSize() int {
	n := 0
	for i := range l.NumPlanes() {
		w, h := l.PlaneSize(i)
		n += w * h
	}
	return n
}

// Plane returns plane i of frame, which must be FrameSize bytes. The
// plane shares frame's memory.
func (l Layout) Plane(frame []byte, i int) Plane {
	off := 0
	for j := range i {
		w, h := l.PlaneSize(j)
		off += w * h
	}
	w, h := l.PlaneSize(i)
	return Plane{Pix: frame[off : off+w*h : off+w*h], W: w, H: h, Stride: w}
}

// Plane is one 8-bit plane: sample (x, y) is Pix[y*Stride+x].
type Plane struct {
	Pix    []byte
	W, H   int
	Stride int
}

// At returns sample (x, y).
func (p Plane) At(x, y int) byte { return p.Pix[y*p.Stride+x] }
