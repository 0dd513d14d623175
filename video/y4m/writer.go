package y4m

import (
	"fmt"
	"io"
)

// Writer writes a y4m stream: the header, then frames checked against it.
// The first error is sticky. A Writer is not safe for concurrent use; it
// does no buffering of its own.
type Writer struct {
	w    io.Writer
	lay  Layout
	line []byte
	err  error
}

// NewWriter writes h's header line to w and returns a Writer for its
// frames. It fails for a header whose Layout fails.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	lay, err := h.Layout()
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(h.Append(nil)); err != nil {
		return nil, err
	}
	return &Writer{w: w, lay: lay, line: make([]byte, 0, MaxFrameLine)}, nil
}

// Layout returns the layout the Writer checks frames against.
func (w *Writer) Layout() Layout { return w.lay }

// WriteFrame writes one frame: "FRAME", params (empty, or tokens each
// after a space, as Frame.Params), '\n', and data, which must be exactly
// one frame of the Writer's layout.
func (w *Writer) WriteFrame(params, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(data) != w.lay.FrameSize() {
		return fmt.Errorf("y4m: frame of %d bytes, want %d for %s", len(data), w.lay.FrameSize(), w.lay)
	}
	if len(frameTag)+len(params)+1 > MaxFrameLine || len(params) > 0 && params[0] != ' ' {
		return fmt.Errorf("y4m: frame parameters %q: want tokens each after a space, in all %d bytes at most", params, MaxFrameLine-len(frameTag)-1)
	}
	for _, c := range params {
		if c < ' ' || c == 0x7f {
			return fmt.Errorf("y4m: frame parameters %q: control byte", params)
		}
	}
	w.line = append(append(append(w.line[:0], frameTag...), params...), '\n')
	if _, err := w.w.Write(w.line); err != nil {
		w.err = err
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		w.err = err
		return err
	}
	return nil
}

// WriteRecord writes one frame record (Frame.Record: its FRAME line and
// planes) as it is, after checking it with SplitFrame.
func (w *Writer) WriteRecord(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, _, err := SplitFrame(rec, w.lay); err != nil {
		return err
	}
	if _, err := w.w.Write(rec); err != nil {
		w.err = err
		return err
	}
	return nil
}
