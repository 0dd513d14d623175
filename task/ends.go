package task

import (
	"context"
	"errors"
	"io"

	"github.com/tpipe/tpipe/buffer"
)

// The ends of a pipeline in a form with no loop of their own, as
// PerRecord is for the stages between them: a source that makes its next
// record when asked, and a sink that takes records as they come. Each
// runs as a Func (its Func method, an ordinary loop) under every policy;
// the ros policy calls them as functions from its scheduler instead
// (buffer.Source, buffer.Sink), so that a record passes a chain of such
// ends and filters with no coroutine switch.
//
// Like a PerRecord, a Source or Sink value is one run's: its functions
// may keep state from call to call. They are called one at a time, never
// concurrently: by the task's goroutine, or under ros by its scheduler's,
// in the order the loop would call them.

// Source is the per-record form of a task with no input and one output.
type Source struct {
	// Start, if set, runs once before the first Next, with the run's
	// context and the task's ports: it opens what the source reads. An
	// error fails the task (Stop does not run).
	Start func(ctx context.Context, p *buffer.Ports) error
	// Next returns the next record, or io.EOF after the last one, or an
	// error that ends the task. The record must stay valid, unchanged,
	// until Next is called again; it may be longer than the record size
	// (it then goes out as a chain of buffers). A Next that may wait long
	// (a pipe) calls the ports' Flush first, as a loop would.
	Next func() ([]byte, error)
	// Stop, if set, runs once when the source ends after a Start that
	// succeeded, whatever ended it: err is nil after Next's io.EOF, or
	// Next's error, or the write's (buffer.ErrReaderGone, the run's
	// abort). It closes what Start opened, and what it returns is the
	// task's error.
	Stop func(err error) error
}

// Func returns the general form of s: Start, then a loop that writes what
// Next returns to port 0, then Stop.
func (s *Source) Func() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		if s.Start != nil {
			if err := s.Start(ctx, p); err != nil {
				return err
			}
		}
		return s.Loop(p, nil)
	}
}

// Loop writes held, if not nil, and then every record Next returns to
// port 0 of p, until Next returns io.EOF or an error, or a write fails,
// and then returns End's verdict: the Func's loop after Start, and what
// the ros policy resumes a source with when a record needs it (one
// longer than S, held).
func (s *Source) Loop(p *buffer.Ports, held []byte) error {
	out := p.Out(0)
	if held != nil {
		if err := out.Write(held); err != nil {
			return s.End(err)
		}
	}
	for {
		rec, err := s.Next()
		if err == io.EOF {
			return s.End(nil)
		}
		if err == nil {
			err = out.Write(rec)
		}
		if err != nil {
			return s.End(err)
		}
	}
}

// End ends the source, whatever ended it (err, nil after Next's io.EOF):
// it runs Stop, if set, and returns the task's error.
func (s *Source) End(err error) error {
	if s.Stop != nil {
		return s.Stop(err)
	}
	return err
}

// Sink is the per-record form of a task with one input and no output.
// Exactly one of Each and Bytes must be set.
type Sink struct {
	// Each, if set, is called once per record; rec is valid only during
	// the call. An error fails the task.
	Each func(rec []byte) error
	// Bytes, if set, is called with the input's bytes as they come (what
	// buffer.Input.ReadBytes returns: whole records, and a record longer
	// than the record size in its pieces, never held whole), for a sink
	// that sees its input as a byte stream. data is valid only during the
	// call. An error fails the task.
	Bytes func(data []byte) error
	// End, if set, runs after the last record.
	End func() error
}

// ErrNoSinkBody is returned by Sink.Func when neither or both of Each and
// Bytes are set.
var ErrNoSinkBody = errors.New("task: a sink needs exactly one of Each and Bytes")

// Func returns the general form of k: a loop that reads port 0 to its end.
func (k *Sink) Func() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		if (k.Each == nil) == (k.Bytes == nil) {
			return ErrNoSinkBody
		}
		in := p.In(0)
		for {
			var body error
			if k.Each != nil {
				rec, err := in.Read()
				if err != nil {
					if err == io.EOF {
						break
					}
					return err
				}
				body = k.Each(rec)
			} else {
				data, err := in.ReadBytes()
				if err != nil {
					if err == io.EOF {
						break
					}
					return err
				}
				body = k.Bytes(data)
			}
			if body != nil {
				return body
			}
		}
		if k.End != nil {
			return k.End()
		}
		return nil
	}
}
