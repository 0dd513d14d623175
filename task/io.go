package task

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
)

// ReadFrom is a source task (no input, one output) that cuts r into records
// with f and writes them. A record longer than S goes out as a chain of
// buffers; lines (and NUL-ended records) are copied in pieces and may be of
// any length, other framings' records are held whole, and one longer than
// the pool's MaxRecord fails the task with a *record.TooLargeError. When r returns less than was asked
// (a pipe or terminal with nothing more for now), the task hands over its
// partial batch before reading again, so a slow producer's records flow at
// once.
func ReadFrom(r io.Reader, f record.Framing) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		switch f {
		case record.Lines:
			return out.ScanFrom(r, '\n')
		case record.NUL:
			return out.ScanFrom(r, 0)
		}
		sc := record.NewScanner(r, f, p.MaxRecord())
		for sc.Scan() {
			if err := out.Write(sc.Record()); err != nil {
				return err
			}
			if sc.ShortRead() {
				p.Flush()
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := sc.Err()
		var tl *record.TooLargeError
		if errors.As(err, &tl) {
			tl.Limit = buffer.MaxRecordLimit
			// The records before it are handed over; the error matters
			// only if the reader wants what comes next.
			if derr := out.Drain(); derr != nil {
				return derr
			}
		}
		return err
	}
}

// WriteTo is a sink task (one input, no output) that writes every record to
// w, encoded with f. Output is buffered, and flushed whenever no more
// records are ready, so an interactive stream is written a record at a
// time while a bulk stream is written in large blocks.
func WriteTo(w io.Writer, f record.Framing) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		if f == record.Lines || f == record.NUL {
			// Records are their bytes: write whole buffers, a long
			// line in its pieces, never held whole.
			return WriteLines(w).Func()(ctx, p)
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		var enc []byte
		for {
			if in.Buffered() == 0 {
				if err := bw.Flush(); err != nil {
					return err
				}
			}
			rec, err := in.Read()
			if err == io.EOF {
				return bw.Flush()
			}
			if err != nil {
				return err
			}
			enc = f.Append(enc[:0], rec)
			if _, err := bw.Write(enc); err != nil {
				return err
			}
		}
	}
}

// WriteLines is WriteTo of lines (or NUL-ended records) in per-record
// form: a sink that writes its input's bytes to w as they come, whole
// buffers at a time and a long line in its pieces, never held whole. The
// ros policy runs it as calls from its scheduler.
func WriteLines(w io.Writer) *Sink {
	return &Sink{Bytes: func(data []byte) error {
		_, err := w.Write(data)
		return err
	}}
}
