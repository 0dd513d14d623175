package task

import (
	"context"
	"io"
	"strconv"

	"github.com/tpipe/tpipe/buffer"
)

// Copy passes every record unchanged: the paper's COPY.
func Copy() PerRecord {
	return PerRecord{Keep: func([]byte) bool { return true }, Verbatim: true}
}

// Prefix writes header as its first record, then copies: the paper's
// PREFIX, the task that makes Theorem 3.2's bound tight.
func Prefix(header []byte) PerRecord {
	return PerRecord{
		Start:    func(emit Emit) error { return emit(header) },
		Keep:     func([]byte) bool { return true },
		Verbatim: true,
	}
}

// Filter passes the records for which keep returns true.
func Filter(keep func(rec []byte) bool) PerRecord { return PerRecord{Keep: keep} }

// Map writes f(rec, scratch) for every record. f may append to scratch (a
// buffer the task reuses from record to record) and return it, so a map
// allocates nothing per record in steady state.
func Map(f func(rec, scratch []byte) []byte) PerRecord {
	var scratch []byte
	return PerRecord{Each: func(rec []byte, emit Emit) error {
		scratch = f(rec, scratch[:0])
		return emit(scratch)
	}}
}

// Duplicate writes every record twice (two writes per read).
func Duplicate() PerRecord {
	return PerRecord{Each: func(rec []byte, emit Emit) error {
		if err := emit(rec); err != nil {
			return err
		}
		return emit(rec)
	}}
}

// Count reads every record and then writes one: the number of records, in
// decimal, followed by a newline (a task that reads all before it writes).
func Count() PerRecord {
	n := 0
	return PerRecord{
		Each: func([]byte, Emit) error { n++; return nil },
		End: func(emit Emit) error {
			return emit(append(strconv.AppendInt(nil, int64(n), 10), '\n'))
		},
	}
}

// Records is a source task (no input, one output) that writes recs.
func Records(recs ...[]byte) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		for _, r := range recs {
			if err := out.Write(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// Collect is a sink task (one input, no output) that appends a copy of
// every record to *dst. *dst must not be read until the run has ended.
func Collect(dst *[][]byte) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		for {
			rec, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*dst = append(*dst, append([]byte(nil), rec...))
		}
	}
}

// Head reads at most n records, passes them on and stops: the tasks
// upstream then stop too, without an error.
func Head(n int) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in, out := p.In(0), p.Out(0)
		for i := 0; i < n; i++ {
			_, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := out.Forward(in); err != nil {
				return err
			}
		}
		return nil
	}
}

// RecordsSource is Records in per-record form: a source that returns
// recs one by one.
func RecordsSource(recs ...[]byte) *Source {
	i := 0
	return &Source{Next: func() ([]byte, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	}}
}

// CollectSink is Collect in per-record form: a sink that appends a copy
// of every record to *dst.
func CollectSink(dst *[][]byte) *Sink {
	return &Sink{Each: func(rec []byte) error {
		*dst = append(*dst, append([]byte(nil), rec...))
		return nil
	}}
}
