package record

import (
	"fmt"
	"io"
)

// Source is an input port of a task.
type Source interface {
	// Read returns the next record, or io.EOF (unwrapped) when the
	// records ended cleanly. It blocks until a record is ready. The
	// record belongs to the Source and is valid until the next Read; a
	// caller must not modify it. When err != nil the record is ignored.
	Read() (rec []byte, err error)
}

// BufferedSource is a Source that can tell how many records it holds ready.
// NewReader uses it to pack several records into one Read without waiting
// for a record that may be slow to come.
type BufferedSource interface {
	Source
	// Buffered returns the number of records Read can return without
	// blocking.
	Buffered() int
}

// Sink is an output port of a task.
type Sink interface {
	// Write sends rec on, copying it or handing it over; either way the
	// caller may reuse rec once Write returns. It blocks while the port
	// is full.
	Write(rec []byte) error
}

// NewReader returns an io.Reader presenting the records of src as one byte
// stream, each record encoded with f.Append. With Lines, NUL and Fixed the
// stream is the records' bytes end to end.
//
// A Read waits (in src.Read) for one record at most: it returns what it
// has rather than wait for a second, unless src is a BufferedSource that
// says more records are ready. It returns io.EOF after src does, and other
// errors of src wrapped. With Fixed, a record of the wrong size is an error.
//
// With Lines, NUL and Fixed, Read copies records from the source straight
// into p. With LengthPrefixed it first encodes each record into one scratch
// slice, grown to the largest encoded record; so after the first records
// it does not allocate. The Reader is not safe for concurrent use.
func NewReader(src Source, f Framing) io.Reader {
	r := &reader{src: src, f: f}
	r.buffered, _ = src.(BufferedSource)
	r.checker, _ = f.(checker)
	_, r.verbatim = f.(verbatim)
	return r
}

var _ io.Reader = (*reader)(nil)

type reader struct {
	src      Source
	buffered BufferedSource // src, or nil
	f        Framing
	checker  checker // f's, or nil
	verbatim bool    // f.Append copies the record unchanged
	scratch  []byte  // encoded record, when not verbatim
	pending  []byte  // bytes of the current record not yet read
	err      error   // sticky; io.EOF at the end
}

func (r *reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pending) == 0 {
			if r.err != nil || (n > 0 && (r.buffered == nil || r.buffered.Buffered() == 0)) {
				break
			}
			r.next()
			continue
		}
		k := copy(p[n:], r.pending)
		r.pending = r.pending[k:]
		n += k
	}
	if n > 0 || len(p) == 0 {
		// An error met after some bytes waits for the next Read.
		return n, nil
	}
	return 0, r.err
}

// next makes the next record of src pending, or sets r.err.
func (r *reader) next() {
	rec, err := r.src.Read()
	switch {
	case err == io.EOF:
		r.err = io.EOF
		return
	case err != nil:
		r.err = fmt.Errorf("record: read record: %w", err)
		return
	}
	if r.checker != nil {
		if err := r.checker.check(rec); err != nil {
			r.err = err
			return
		}
	}
	if r.verbatim {
		// rec stays valid until the next src.Read, which waits until
		// pending is drained.
		r.pending = rec
		return
	}
	r.scratch = r.f.Append(r.scratch[:0], rec)
	r.pending = r.scratch
}
