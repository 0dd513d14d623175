package task

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/tpipe/tpipe/buffer"
)

// This file holds the tasks that make a pipeline a graph: a fork (Tee,
// Route) has one input and several outputs, a merge (Merge, Concat, Join)
// several inputs and one output. Tasks that read their inputs as records
// arrive (Merge, Join) should be marked graph.Task.ReadsAny; Concat reads
// its inputs in turn, which no fixed B makes safe behind a fork (see
// graph.Graph.Shape).

// Tee copies every record of its one input to each of its outputs, in
// order. An output whose reader stops early (buffer.ErrReaderGone) is
// dropped and the others go on; Tee returns when the input ends or every
// output is gone. The last output still live gets the record by Forward,
// so a record that ends its buffer can move there without a copy.
func Tee() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		live := make([]*buffer.Output, p.NumOut())
		for i := range live {
			live[i] = p.Out(i)
		}
		for len(live) > 0 {
			rec, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			for k := 0; k < len(live); {
				// Forward last: after it, rec must not be used.
				if k == len(live)-1 {
					err = live[k].Forward(in)
				} else {
					err = live[k].Write(rec)
				}
				switch {
				case errors.Is(err, buffer.ErrReaderGone):
					// A failed write leaves rec as it was, for the others.
					live = slices.Delete(live, k, k+1)
				case err != nil:
					return err
				default:
					k++
				}
			}
		}
		return nil
	}
}

// Route sends each record of its one input to exactly one output: port
// pick(rec). A record for which pick returns no port (a negative index, or
// one past the last) is dropped, and so is a record for an output whose
// reader has stopped. Route returns when the input ends or every output is
// gone. rec is valid only during the call to pick.
func Route(pick func(rec []byte) int) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		gone := make([]bool, p.NumOut())
		live := len(gone)
		for live > 0 {
			rec, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			k := pick(rec)
			if k < 0 || k >= len(gone) || gone[k] {
				continue
			}
			err = p.Out(k).Forward(in)
			switch {
			case errors.Is(err, buffer.ErrReaderGone):
				gone[k] = true
				live--
			case err != nil:
				return err
			}
		}
		return nil
	}
}

func keepAll([]byte) bool { return true }

// Merge writes the records of all its inputs to output 0 in the order they
// arrive (buffer.Ports.Ready), a batch at a time: every record of an input
// buffer is passed on, without a copy, before Merge looks at another
// input. The records of one input keep their order; how those of
// different inputs interleave depends on the schedule.
func Merge() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		for {
			i, err := p.Ready()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			// Ready says this does not wait for input; at the port's end
			// it returns io.EOF, and Ready moves on.
			if err := out.Pass(p.In(i), keepAll); err != nil && err != io.EOF {
				return err
			}
		}
	}
}

// Concat writes all records of input 0, then all of input 1, and so on, to
// output 0, passing whole buffers on without a copy: what `cat @x @y`
// does. While it reads one input, the others wait in their queues.
func Concat() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		for i := range p.NumIn() {
			in := p.In(i)
			for {
				err := out.Pass(in, keepAll)
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
}
