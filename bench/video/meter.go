package video

import (
	"fmt"
	"io"
	"os"

	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/stab"
	"github.com/tpipe/tpipe/video/y4m"
)

// Check reads a y4m stream and reports an error unless it has the clip's
// size, 8-bit 4:2:0 frames, and as many of them: a stabilizer's output
// must be comparable frame for frame with its input.
func (c ClipSpec) Check(r io.Reader) error {
	_, err := c.measure(r, false)
	return err
}

// Measure is Check, and the shake of the stream by package shake's meter
// (phase correlation of consecutive luma planes, which knows nothing of
// how any stabilizer estimates motion).
func (c ClipSpec) Measure(r io.Reader) (shake.Result, error) {
	return c.measure(r, true)
}

// MeasureFile is Measure of the file name.
func (c ClipSpec) MeasureFile(name string) (shake.Result, error) {
	f, err := os.Open(name)
	if err != nil {
		return shake.Result{}, err
	}
	defer f.Close()
	res, err := c.Measure(f)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

func (c ClipSpec) measure(r io.Reader, meter bool) (shake.Result, error) {
	yr, err := y4m.NewReader(r)
	if err != nil {
		return shake.Result{}, err
	}
	l := yr.Layout()
	if l.Width != c.W || l.Height != c.H || l.Chroma != "4:2:0" || l.Depth != 8 {
		return shake.Result{}, fmt.Errorf("frames are %v, want %dx%d 4:2:0 8-bit", l, c.W, c.H)
	}
	var m *shake.Meter
	if meter {
		m = shake.NewMeter(c.W, c.H)
	}
	for {
		f, err := yr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return shake.Result{}, err
		}
		if m != nil {
			m.Add(stab.Plane{Pix: l.Plane(f.Data, 0), W: c.W, H: c.H, Stride: c.W})
		}
	}
	if n := yr.Frames(); n != c.Frames {
		return shake.Result{}, fmt.Errorf("%d frames, want %d", n, c.Frames)
	}
	if m == nil {
		return shake.Result{Frames: c.Frames}, nil
	}
	return m.Result(), nil
}
