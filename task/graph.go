package task

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
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

// Join is the and-merge of pmjq: it reads its inputs as records arrive
// (buffer.Ports.Ready) and, once a record with the same key has arrived on
// every input, writes one record to output 0: those records in input
// order, each without its trailing '\n', separated by tabs and ended by
// '\n'. Records with the same key on one input are matched first come,
// first served. A joined record longer than the record size fails the run
// (a *record.TooLargeError).
//
// key returns a record's key, or ok false for a record without one; the
// key may be part of rec and is not retained. A record without a key is
// passed at once to unmatched (if not nil); a record still waiting for its
// partners when every input has ended is passed to it then, input by input
// and in arrival order within an input. Either way rec is the record as
// read, valid only during the call. Which records are unmatched does not
// depend on how the inputs interleave. If the reader of the output stops,
// Join returns at once and reports nothing.
//
// The records waiting for their partners are copies held by the task,
// outside the pool's B buffers (as sort's runs are): Join's memory grows
// with the number of records whose partners have not yet arrived.
func Join(key func(rec []byte) ([]byte, bool), unmatched func(input int, rec []byte)) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		j := &join{key: key, unmatched: unmatched, n: p.NumIn(), out: p.Out(0), slots: map[string]*joinSlot{}}
		for {
			i, err := p.Ready()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			// The records of the current buffer are read without waiting;
			// then Ready looks at the other inputs.
			in := p.In(i)
			for {
				rec, err := in.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				if err := j.add(i, rec); err != nil {
					return err
				}
				if in.Buffered() == 0 {
					break
				}
			}
		}
		j.report()
		return nil
	}
}

// join is the state of one run of Join.
type join struct {
	key       func(rec []byte) ([]byte, bool)
	unmatched func(input int, rec []byte)
	n         int
	out       *buffer.Output
	slots     map[string]*joinSlot
	seq       int    // arrival number of the next record kept
	buf       []byte // the joined record being built
}

// joinSlot holds the records of one key waiting for their partners: a
// FIFO per input. At most n-1 FIFOs are non-empty, or they would have
// been joined.
type joinSlot struct {
	fifo     [][]joinRec
	nonEmpty int
}

type joinRec struct {
	seq int
	rec []byte
}

// add takes record rec of input i: it joins it with the oldest waiting
// record of its key on every other input, or keeps a copy.
func (j *join) add(i int, rec []byte) error {
	k, ok := j.key(rec)
	if !ok {
		if j.unmatched != nil {
			j.unmatched(i, rec)
		}
		return nil
	}
	s := j.slots[string(k)]
	if s == nil {
		s = &joinSlot{fifo: make([][]joinRec, j.n)}
		j.slots[string(k)] = s
	}
	if len(s.fifo[i]) > 0 || s.nonEmpty < j.n-1 {
		if len(s.fifo[i]) == 0 {
			s.nonEmpty++
		}
		s.fifo[i] = append(s.fifo[i], joinRec{j.seq, slices.Clone(rec)})
		j.seq++
		return nil
	}
	b := j.buf[:0]
	for x := range j.n {
		if x > 0 {
			b = append(b, '\t')
		}
		if x == i {
			b = append(b, record.TrimEOL(rec)...)
			continue
		}
		f := s.fifo[x]
		b = append(b, record.TrimEOL(f[0].rec)...)
		f[0] = joinRec{}
		if s.fifo[x] = f[1:]; len(f) == 1 {
			s.fifo[x] = nil
			s.nonEmpty--
		}
	}
	if s.nonEmpty == 0 {
		delete(j.slots, string(k))
	}
	j.buf = append(b, '\n')
	return j.out.Write(j.buf)
}

// report passes every record still waiting to unmatched, input by input,
// in arrival order.
func (j *join) report() {
	if j.unmatched == nil {
		return
	}
	type left struct {
		input int
		joinRec
	}
	var all []left
	for _, s := range j.slots {
		for x, f := range s.fifo {
			for _, r := range f {
				all = append(all, left{x, r})
			}
		}
	}
	slices.SortFunc(all, func(a, b left) int {
		if a.input != b.input {
			return a.input - b.input
		}
		return a.seq - b.seq
	})
	for _, l := range all {
		j.unmatched(l.input, l.rec)
	}
}
