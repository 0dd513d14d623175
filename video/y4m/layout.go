package y4m

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxFrameSize is the largest frame, in bytes, Layout accepts: records of
// a tpipe run are indexed with 32-bit offsets.
const MaxFrameSize = 1 << 30

// Layout is how one frame's bytes are laid out: the planes, their sizes
// and the bytes per sample. Chroma planes of an odd-sized picture round
// up (a 33x17 4:2:0 frame has 17x9 chroma planes), as ffmpeg does.
type Layout struct {
	Width, Height int
	// Color is the colour space, as in the header's C ("420jpeg" when C
	// is absent).
	Color string
	// Chroma is the subsampling in the usual notation: "4:2:0", "4:1:1",
	// "4:2:2", "4:4:4" or "mono".
	Chroma string
	// Planes is 1 (grey), 3 (Y, Cb, Cr) or 4 (with alpha).
	Planes int
	// Depth is the bits per sample, 8 to 16; above 8 a sample takes two
	// bytes, little-endian.
	Depth int
	// subX and subY divide the width and height of the chroma planes.
	subX, subY int
}

// chroma are the colour spaces by their C value without a depth suffix:
// subsampling, planes.
var chroma = map[string]struct {
	name       string
	subX, subY int
	planes     int
	deep       bool // takes a p9..p16 depth suffix ("420p10")
}{
	"420jpeg":  {"4:2:0", 2, 2, 3, false},
	"420paldv": {"4:2:0", 2, 2, 3, false},
	"420mpeg2": {"4:2:0", 2, 2, 3, false},
	"420":      {"4:2:0", 2, 2, 3, true},
	"411":      {"4:1:1", 4, 1, 3, false},
	"422":      {"4:2:2", 2, 1, 3, true},
	"444":      {"4:4:4", 1, 1, 3, true},
	"444alpha": {"4:4:4", 1, 1, 4, false},
	"mono":     {"mono", 1, 1, 1, true},
}

// Layout returns the layout of h's frames, or an error for a colour space
// this package does not know or a frame over MaxFrameSize.
func (h *Header) Layout() (Layout, error) {
	c := h.Color
	if c == "" {
		c = "420jpeg"
	}
	base, depth := c, 8
	if _, ok := chroma[c]; !ok {
		base, depth = splitDepth(c)
		if s, ok := chroma[base]; !ok || !s.deep {
			return Layout{}, fmt.Errorf("y4m: colour space C%s: not supported (want 420jpeg, 420paldv, 420mpeg2, 411, 422, 444, 444alpha, mono, "+
				"or 420, 422, 444 with p9 to p16, or mono9 to mono16)", c)
		}
	}
	s := chroma[base]
	l := Layout{Width: h.Width, Height: h.Height, Color: c, Chroma: s.name, Planes: s.planes, Depth: depth, subX: s.subX, subY: s.subY}
	if h.Width < 1 || h.Height < 1 {
		return Layout{}, fmt.Errorf("y4m: frame size %dx%d: want both at least 1", h.Width, h.Height)
	}
	if n := l.frameSize64(); n > MaxFrameSize {
		return Layout{}, fmt.Errorf("y4m: %s: a frame of %d bytes is larger than %d", l, n, MaxFrameSize)
	}
	return l, nil
}

// splitDepth splits a deep colour space into its base and depth:
// "420p10" is 420 and 10, "mono16" is mono and 16. Anything else gives
// depth 0 and a base that is not in chroma.
func splitDepth(c string) (base string, depth int) {
	i := len(c)
	for i > 0 && '0' <= c[i-1] && c[i-1] <= '9' {
		i--
	}
	d, err := strconv.Atoi(c[i:])
	if err != nil || c[i] == '0' || d < 9 || d > 16 {
		return "", 0
	}
	base = c[:i]
	switch {
	case base == "mono":
	case strings.HasSuffix(base, "p") && base != "monop":
		base = base[:len(base)-1]
	default:
		return "", 0
	}
	return base, d
}

// BytesPerSample is 1 for 8-bit layouts, 2 for deeper ones.
func (l Layout) BytesPerSample() int {
	if l.Depth > 8 {
		return 2
	}
	return 1
}

// PlaneSize returns the width and height, in samples, of plane i: 0 is
// luma, 1 and 2 chroma, 3 alpha.
func (l Layout) PlaneSize(i int) (w, h int) {
	if i == 1 || i == 2 {
		return (l.Width + l.subX - 1) / l.subX, (l.Height + l.subY - 1) / l.subY
	}
	return l.Width, l.Height
}

// PlaneBytes returns the size of plane i in bytes.
func (l Layout) PlaneBytes(i int) int {
	w, h := l.PlaneSize(i)
	return w * h * l.BytesPerSample()
}

// FrameSize returns the bytes of one frame's planes, without its FRAME
// line.
func (l Layout) FrameSize() int { return int(l.frameSize64()) }

func (l Layout) frameSize64() int64 {
	var n int64
	for i := range l.Planes {
		w, h := l.PlaneSize(i)
		n += int64(w) * int64(h) * int64(l.BytesPerSample())
	}
	return n
}

// RecordSize is the longest frame record of this layout: a FRAME line of
// up to MaxFrameLine bytes and the planes.
func (l Layout) RecordSize() int { return MaxFrameLine + l.FrameSize() }

// Plane returns plane i of frame data laid out as l (data as Frame.Data).
func (l Layout) Plane(data []byte, i int) []byte {
	off := 0
	for k := range i {
		off += l.PlaneBytes(k)
	}
	return data[off : off+l.PlaneBytes(i)]
}

// String describes the layout for people: "1280x720 4:2:0", "33x17 4:2:2
// 10-bit", "64x64 4:4:4 with alpha".
func (l Layout) String() string {
	s := fmt.Sprintf("%dx%d %s", l.Width, l.Height, l.Chroma)
	if l.Planes == 4 {
		s += " with alpha"
	}
	if l.Depth > 8 {
		s += fmt.Sprintf(" %d-bit", l.Depth)
	}
	return s
}
