package y4m

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxFrameLine is the longest FRAME line taken, '\n' included (ffmpeg's
// own limit for a y4m line).
const MaxFrameLine = 256

const frameTag = "FRAME"

// FrameError is a frame that could not be read: cut short (Got of Want
// bytes, wrapping io.ErrUnexpectedEOF) or without a valid FRAME line.
// Frames are numbered from 1.
type FrameError struct {
	Frame     int
	Got, Want int    // for a truncated frame: bytes of its planes read, and needed
	Msg       string // for a bad FRAME line
	Err       error
}

func (e *FrameError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("frame %d: %s", e.Frame, e.Msg)
	}
	return fmt.Sprintf("frame %d: truncated: %d of %d bytes", e.Frame, e.Got, e.Want)
}

func (e *FrameError) Unwrap() error { return e.Err }

// Frame is one frame as read. Its slices point into the Reader's buffer
// and are valid until the next call of Next.
type Frame struct {
	// Record is the frame as it was in the stream: its FRAME line and
	// its planes.
	Record []byte
	// Params are the FRAME line's bytes after "FRAME" without the '\n':
	// empty, or " Ip"-like tokens each after a space.
	Params []byte
	// Data are the planes, back to back (Layout.Plane cuts one out).
	Data []byte
}

// Reader reads a y4m stream frame by frame. It allocates one buffer, of
// one frame, and reuses it: Next allocates nothing. The first error is
// sticky. A Reader is not safe for concurrent use.
type Reader struct {
	br     *bufio.Reader
	hdr    Header
	raw    []byte
	lay    Layout
	buf    []byte
	frame  Frame
	frames int
	err    error
}

// NewReader reads and checks the header of the stream on r. An input that
// is not y4m gives an error matching ErrNotY4M, after reading no more than
// the length of Magic.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rd := &Reader{br: br}
	raw, err := ReadHeaderLine(br)
	if err != nil {
		return nil, err
	}
	rd.raw = raw
	if rd.hdr, err = ParseHeader(raw); err != nil {
		return nil, err
	}
	if rd.lay, err = rd.hdr.Layout(); err != nil {
		return nil, err
	}
	rd.buf = make([]byte, 0, len(frameTag)+1+rd.lay.FrameSize())
	return rd, nil
}

// ReadHeaderLine reads the header line from br, '\n' included, without
// reading past it: what a caller that hands the stream on needs. It
// checks the magic before it looks for the line's end, so that a stream
// that is not y4m is refused at once; the line itself is checked by
// ParseHeader. The line is a copy the caller owns.
func ReadHeaderLine(br *bufio.Reader) ([]byte, error) {
	head, err := br.Peek(len(Magic))
	if err != nil && err != io.EOF {
		return nil, err
	}
	if string(head) != Magic {
		return nil, notY4M(head)
	}
	line := make([]byte, 0, 128)
	for {
		b, err := br.ReadSlice('\n')
		line = append(line, b...)
		if len(line) > MaxHeaderLine {
			return nil, &SyntaxError{Offset: MaxHeaderLine, Msg: fmt.Sprintf("line longer than %d bytes", MaxHeaderLine)}
		}
		switch {
		case err == nil:
			return line, nil
		case err == io.EOF:
			return nil, &SyntaxError{Offset: len(line), Msg: "the stream ends inside the header line"}
		case err != bufio.ErrBufferFull:
			return nil, err
		}
	}
}

// Header returns the stream's header.
func (r *Reader) Header() Header { return r.hdr }

// HeaderLine returns the header line as read, '\n' included. The Reader
// owns it; it does not change.
func (r *Reader) HeaderLine() []byte { return r.raw }

// Layout returns the layout of the stream's frames.
func (r *Reader) Layout() Layout { return r.lay }

// Frames returns the number of frames read whole so far.
func (r *Reader) Frames() int { return r.frames }

// Next reads the next frame. It returns io.EOF at the end of the stream
// after a whole frame, and a *FrameError for a frame that is cut short or
// does not start with a FRAME line. The Frame and its bytes are the
// Reader's, valid until the next call.
func (r *Reader) Next() (*Frame, error) {
	if r.err != nil {
		return nil, r.err
	}
	f, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	r.frames++
	return f, nil
}

func (r *Reader) next() (*Frame, error) {
	n := r.frames + 1
	line, err := r.br.ReadSlice('\n')
	if len(line) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if err == bufio.ErrBufferFull || len(line) > MaxFrameLine {
		return nil, &FrameError{Frame: n, Msg: fmt.Sprintf("FRAME line longer than %d bytes", MaxFrameLine)}
	}
	if !bytes.HasPrefix(line, []byte(frameTag)) || len(line) > len(frameTag) && line[len(frameTag)] != ' ' && line[len(frameTag)] != '\n' {
		if err == io.EOF && bytes.HasPrefix([]byte(frameTag), line) {
			return nil, &FrameError{Frame: n, Msg: fmt.Sprintf("truncated: %d bytes of its FRAME line", len(line)), Err: io.ErrUnexpectedEOF}
		}
		return nil, &FrameError{Frame: n, Msg: fmt.Sprintf("want a FRAME line, found %s", quoteBytes(line[:min(len(line), 12)]))}
	}
	switch {
	case err == io.EOF:
		return nil, &FrameError{Frame: n, Msg: "truncated: no '\\n' after FRAME", Err: io.ErrUnexpectedEOF}
	case err != nil:
		return nil, fmt.Errorf("frame %d: %w", n, err)
	}
	size := r.lay.FrameSize()
	r.buf = append(r.buf[:0], line...)
	head := len(r.buf)
	if cap(r.buf) < head+size {
		r.buf = append(r.buf, make([]byte, head+size-len(r.buf))...)
	}
	r.buf = r.buf[:head+size]
	got, err := io.ReadFull(r.br, r.buf[head:])
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, &FrameError{Frame: n, Got: got, Want: size, Err: io.ErrUnexpectedEOF}
	case err != nil:
		return nil, fmt.Errorf("frame %d: %w", n, err)
	}
	r.frame = Frame{Record: r.buf, Params: r.buf[len(frameTag) : head-1], Data: r.buf[head:]}
	return &r.frame, nil
}

// ErrNotFrame is matched (errors.Is) by SplitFrame's errors.
var ErrNotFrame = errors.New("y4m: not a frame record")

// SplitFrame checks that rec is one frame record of layout l, a FRAME line
// and exactly one frame's planes, and returns the line's parameters
// (Frame.Params) and the planes. Both point into rec.
func SplitFrame(rec []byte, l Layout) (params, data []byte, err error) {
	nl := bytes.IndexByte(rec[:min(len(rec), MaxFrameLine)], '\n')
	if nl < 0 || !bytes.HasPrefix(rec, []byte(frameTag)) || nl > len(frameTag) && rec[len(frameTag)] != ' ' {
		return nil, nil, fmt.Errorf("%w: it starts with %s, want a FRAME line", ErrNotFrame, quoteBytes(rec[:min(len(rec), 12)]))
	}
	if got := len(rec) - nl - 1; got != l.FrameSize() {
		return nil, nil, fmt.Errorf("%w: %d bytes after its FRAME line, want %d for %s", ErrNotFrame, got, l.FrameSize(), l)
	}
	return rec[len(frameTag):nl], rec[nl+1:], nil
}
