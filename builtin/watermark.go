package builtin

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/stab"
	"github.com/tpipe/tpipe/video/y4m"
)

func init() {
	register(&Spec{
		Name:  "watermark",
		Usage: "watermark IMAGE.png [-x X] [-y Y] [--opacity A]",
		Help: "Blend the PNG image onto every frame of a y4m stream (8-bit 4:2:0, 4:2:2, " +
			"4:4:4 or mono) with its top left corner at pixel X, Y (default 0, 0; a " +
			"negative X or Y counts from the right or bottom edge to the image's far " +
			"edge), through the image's own alpha times A (0 to 1, default 1). Colours are " +
			"converted to BT.601 limited-range YUV; chroma is averaged over the pixels " +
			"each chroma sample covers, weighted by alpha. Frames the image misses pass " +
			"through without a copy.",
		New: watermarkNew,
	})
}

var watermarkLongs = []longOpt{{"opacity", 'a', true}}

func watermarkNew(env *Env, args []string) (*Cmd, error) {
	const cmd = "watermark"
	x, y, opacity := 0, 0, 1.0
	operands, err := getopt{cmd: cmd, shorts: "x:y:", longs: watermarkLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'x', 'y':
			v, err := strconv.Atoi(arg)
			if err != nil || v < -y4m.MaxDimension || v > y4m.MaxDimension {
				return usagef(cmd, "invalid position -%c '%s': want whole pixels", c, arg)
			}
			if c == 'x' {
				x = v
			} else {
				y = v
			}
		case 'a':
			v, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(v >= 0 && v <= 1) {
				return usagef(cmd, "invalid opacity '%s': want a number from 0 to 1", arg)
			}
			opacity = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch len(operands) {
	case 0:
		return nil, usagef(cmd, "missing IMAGE.png operand")
	case 1:
	default:
		return nil, usagef(cmd, "extra operand '%s': watermark takes one image", operands[1])
	}
	name := operands[0]
	return &Cmd{ReadsInput: true, Fn: func(ctx context.Context, p *buffer.Ports) error {
		img, err := watermarkLoad(env, name)
		if err != nil {
			fmt.Fprintf(env.stderr(), "%s: %s\n", cmd, err)
			return task.Exit(1)
		}
		in, out := p.In(0), p.Out(0)
		_, l, err := videoIn(env, cmd, in)
		if err != nil {
			return videoExit(err)
		}
		if err := out.Forward(in); err != nil {
			return err
		}
		ov := newOverlay(l, img, x, y, opacity)
		var rec []byte
		for n := 1; ; n++ {
			r, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			line, _, msg := videoFrame(r, l, n)
			if msg != "" {
				fmt.Fprintf(env.stderr(), "%s: %s\n", cmd, msg)
				return task.Exit(1)
			}
			if ov.none {
				if err := out.Forward(in); err != nil {
					return err
				}
				continue
			}
			// The record read is the pool's and read-only: blend a copy.
			rec = append(rec[:0], r...)
			ov.blend(rec[len(line):])
			if err := out.Write(rec); err != nil {
				return err
			}
		}
	}}, nil
}

// watermarkLoad reads the PNG file name.
func watermarkLoad(env *Env, name string) (image.Image, error) {
	f, err := env.open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, errText(err))
	}
	defer f.Close()
	img, err := png.Decode(f)
	var fe png.FormatError
	switch {
	case errors.As(err, &fe) && strings.Contains(string(fe), "not a PNG"):
		return nil, fmt.Errorf("%s: not a PNG image", name)
	case err != nil:
		return nil, fmt.Errorf("%s: bad PNG image: %v", name, err)
	}
	return img, nil
}

// overlay is an image converted, once, to one layout's planes where it
// falls on the frame: for each plane, the rectangle it covers, the
// image's samples there and their alpha (0 to 255, opacity applied).
type overlay struct {
	l      stab.Layout
	planes []overlayPlane
	none   bool // every alpha is 0: the frames pass unchanged
}

type overlayPlane struct {
	x0, y0, w, h int // the rectangle, in the plane's samples
	val, alpha   []byte
}

// newOverlay places img with its top left corner at luma pixel (x, y);
// a negative x or y places its far edge that far from the frame's.
func newOverlay(l stab.Layout, img image.Image, x, y int, opacity float64) *overlay {
	b := img.Bounds()
	if x < 0 {
		x = l.W + x - b.Dx()
	}
	if y < 0 {
		y = l.H + y - b.Dy()
	}
	// The image as luma-resolution Y, Cb, Cr and alpha, in frame
	// coordinates (the image's pixel (i, j) lands on (x+i, y+j)).
	iw, ih := b.Dx(), b.Dy()
	at := func(fx, fy int) (yy, cb, cr, a float64, ok bool) {
		i, j := fx-x, fy-y
		if i < 0 || j < 0 || i >= iw || j >= ih {
			return 0, 0, 0, 0, false
		}
		c := color.NRGBA64Model.Convert(img.At(b.Min.X+i, b.Min.Y+j)).(color.NRGBA64)
		r, g, bl := float64(c.R)/65535, float64(c.G)/65535, float64(c.B)/65535
		// BT.601, limited range: Y from 16 to 235, Cb and Cr from 16 to 240.
		yy = 16 + 65.481*r + 128.553*g + 24.966*bl
		cb = 128 - 37.797*r - 74.203*g + 112.0*bl
		cr = 128 + 112.0*r - 93.786*g - 18.214*bl
		return yy, cb, cr, float64(c.A) / 65535 * opacity, true
	}
	ov := &overlay{l: l}
	for p := range l.NumPlanes() {
		pw, ph := l.PlaneSize(p)
		sx, sy := 1, 1
		if l.IsChroma(p) {
			sx, sy = l.Chroma.Subsampling()
		}
		// The plane's samples that cover any of the image.
		x0, y0 := max(floorDiv(x, sx), 0), max(floorDiv(y, sy), 0)
		x1, y1 := min(floorDiv(x+iw-1, sx)+1, pw), min(floorDiv(y+ih-1, sy)+1, ph)
		op := overlayPlane{x0: x0, y0: y0, w: max(x1-x0, 0), h: max(y1-y0, 0)}
		op.val, op.alpha = make([]byte, op.w*op.h), make([]byte, op.w*op.h)
		for v := range op.h {
			for u := range op.w {
				// Average over the luma pixels the sample covers, the
				// colour weighted by alpha; pixels off the image count
				// as transparent.
				var sum, sa float64
				for dy := range sy {
					for dx := range sx {
						yy, cb, cr, a, ok := at((x0+u)*sx+dx, (y0+v)*sy+dy)
						if !ok {
							continue
						}
						// A video's alpha plane gets the image over it:
						// opaque where the image is.
						s := [4]float64{yy, cb, cr, 255}[p]
						sum += a * s
						sa += a
					}
				}
				k := v*op.w + u
				if sa > 0 {
					op.val[k] = byte(math.Round(min(max(sum/sa, 0), 255)))
				}
				op.alpha[k] = byte(math.Round(255 * sa / float64(sx*sy)))
			}
		}
		ov.planes = append(ov.planes, op)
	}
	ov.none = true
	for _, p := range ov.planes {
		for _, a := range p.alpha {
			ov.none = ov.none && a == 0
		}
	}
	return ov
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// blend blends the overlay into frame, the planes of one frame.
func (ov *overlay) blend(frame []byte) {
	for i, op := range ov.planes {
		pl := ov.l.Plane(frame, i)
		for v := range op.h {
			row := pl.Pix[(op.y0+v)*pl.Stride+op.x0:][:op.w]
			val, alpha := op.val[v*op.w:][:op.w], op.alpha[v*op.w:][:op.w]
			for u, a := range alpha {
				row[u] = byte((int(row[u])*(255-int(a)) + int(val[u])*int(a) + 127) / 255)
			}
		}
	}
}
