package record

import (
	"fmt"
	"io"
)

var _ io.WriteCloser = (*Writer)(nil)

// Writer is an io.Writer that cuts the stream written to it into records
// and writes each record to a Sink. Records that arrive whole in one Write
// go to the sink straight from the caller's slice; only a record split
// between Writes is copied, into a buffer allocated once by NewWriter.
//
// Close must be called at the end of the stream to flush the last record.
// Write and Close block in the sink's Write. The zero Writer is not usable:
// create one with NewWriter. A Writer is not safe for concurrent use.
type Writer struct {
	dst    Sink
	c      cutter
	buf    []byte // buf[:n] is the start of an unfinished record
	n      int
	err    error // sticky
	closed bool
}

// NewWriter returns a Writer sending records of at most maxSize bytes to
// dst. The limit counts a '\n' or '\x00' ending but not the header of
// LengthPrefixed. The Writer's buffer holds maxSize+f.Overhead()+1 bytes.
//
// NewWriter panics if maxSize < 1.
func NewWriter(dst Sink, f Framing, maxSize int) *Writer {
	if maxSize < 1 {
		panic("record: NewWriter: record size < 1")
	}
	c := newCutter(f, maxSize)
	return &Writer{dst: dst, c: c, buf: make([]byte, c.limit)}
}

// Write cuts p into records and writes each whole record to the sink,
// keeping an unfinished one for the next Write or Close. It does not retain
// p. A record over the limit gives a *TooLargeError. The first error is
// sticky: later Writes and Close return it.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for n < len(p) {
		if w.n > 0 {
			k, err := w.complete(p[n:])
			n += k
			if err != nil {
				return n, err
			}
			continue
		}
		advance, token, err := w.c.cut(p[n:], false)
		if err != nil {
			return n, w.fail(err)
		}
		if advance == 0 && token == nil {
			// cut has checked that the tail fits the buffer.
			w.n = copy(w.buf, p[n:])
			return len(p), nil
		}
		if token != nil {
			if err := w.emit(token); err != nil {
				return n, err
			}
		}
		n += advance
	}
	return n, nil
}

// firstStep is how many bytes complete first adds to an unfinished record
// before it looks for the record's end.
const firstStep = 512

// complete adds bytes of p to the unfinished record in the buffer until it
// is whole, writes it, and returns how many bytes of p it consumed. It adds
// them in doubling steps, so that a short tail costs a short copy and the
// rest of p can be cut without copying.
func (w *Writer) complete(p []byte) (int, error) {
	old := w.n // bytes buffered by earlier Writes
	used := 0  // bytes of p appended to the buffer
	step := max(firstStep, w.n)
	for {
		k := copy(w.buf[w.n:], p[used:min(len(p), used+step)])
		w.n += k
		used += k
		step *= 2
		advance, token, err := w.c.cut(w.buf[:w.n], false)
		if err != nil {
			return used, w.fail(err)
		}
		if advance == 0 && token == nil {
			if used == len(p) {
				return used, nil
			}
			continue
		}
		if token != nil {
			if err := w.emit(token); err != nil {
				return used, err
			}
		}
		if advance >= old {
			// The record ends in p: give back the bytes of p after it.
			w.n = 0
			return advance - old, nil
		}
		// The record ended within older bytes (a framing that skips, or a
		// user framing): keep the rest of those and drop the copy of p.
		w.n = copy(w.buf, w.buf[advance:old])
		return 0, nil
	}
}

func (w *Writer) emit(rec []byte) error {
	if err := w.dst.Write(rec); err != nil {
		return w.fail(fmt.Errorf("record: write: %w", err))
	}
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// Close writes the last record, which may lack its ending for Lines and NUL;
// for LengthPrefixed and Fixed an unfinished record is an error wrapping
// io.ErrUnexpectedEOF. Close does not close the sink. Calling Close again
// returns the same result.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	data := w.buf[:w.n]
	w.n = 0
	for {
		advance, token, err := w.c.cut(data, true)
		if err != nil {
			return w.fail(err)
		}
		if token != nil {
			if err := w.emit(token); err != nil {
				return err
			}
		}
		if advance == 0 {
			return nil
		}
		data = data[advance:]
	}
}
