package task

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/tpipe/tpipe/buffer"
)

// Replicas: a stateless per-record task (PerRecord.Fresh set) that is the
// bottleneck of a pipeline can use more than one core. Replicated returns
// its general form: one task, as the graph has it, whose goroutine reads
// batches of records, hands each batch to one of n workers (each with its
// own copy of the task, from Fresh), and writes the workers' output in the
// order the batches were read, as GNU parallel --pipe --keep-order does.
// The records a worker holds are copies in task memory, outside the pool:
// at most 2n batches of about S bytes in, and what they emit.
//
// With auto set, the task starts as the plain loop on its own goroutine
// and turns to workers only once it has measured itself busy: over a
// window of at least replicaWindow, the time it did not spend blocked in
// the pool (buffer.Ports.Blocked) was at least replicaBusy of the window.
// A stage that waits on its neighbours gains nothing from copies of
// itself, and pays a copy of every record for them.
func (r PerRecord) Replicated(n int, auto bool) Func {
	if r.Fresh == nil || n < 2 {
		return r.Func()
	}
	return func(ctx context.Context, p *buffer.Ports) error {
		if (r.Keep == nil) == (r.Each == nil) {
			return ErrNoBody
		}
		if r.Start != nil {
			if err := r.Start(emitNothing); err != nil {
				return err
			}
		}
		if auto {
			if done, err := r.inlineUntilBusy(p); done || err != nil {
				return err
			}
		}
		return r.replicate(p, n)
	}
}

// The measure that turns an auto replicated task to its workers.
const (
	replicaWindow = 10 * time.Millisecond
	replicaBusy   = 0.9
)

// onReplicate, set by tests, sees a task turn to n workers.
var onReplicate func(n int)

// errEmitted is a stateless task's Start or End that emitted a record,
// which its promise (PerRecord.Fresh) rules out.
var errEmitted = errors.New("task: a stateless task emitted a record from Start or End")

func emitNothing([]byte) error { return errEmitted }

// inlineUntilBusy runs r as the plain loop until the input ends (done) or
// the task measures itself busy.
func (r PerRecord) inlineUntilBusy(p *buffer.Ports) (done bool, err error) {
	in, out := p.In(0), p.Out(0)
	emit := Emit(out.Write)
	start, blocked := time.Now(), p.Blocked()
	for n := 1; ; n++ {
		rec, err := in.Read()
		if err == io.EOF {
			return true, r.end()
		}
		if err != nil {
			return true, err
		}
		if r.Keep != nil {
			if r.Keep(rec) {
				err = out.Forward(in)
			}
		} else {
			err = r.Each(rec, emit)
		}
		if err != nil {
			return true, err
		}
		if n%1024 != 0 {
			continue
		}
		if wall := time.Since(start); wall >= replicaWindow {
			b := p.Blocked()
			if float64(wall-(b-blocked)) >= replicaBusy*float64(wall) {
				return false, nil
			}
			start, blocked = time.Now(), b
		}
	}
}

func (r PerRecord) end() error {
	if r.End != nil {
		return r.End(emitNothing)
	}
	return nil
}

// batch is records handed to a worker, and what it emitted for them.
type batch struct {
	in, out   []byte
	inEnds    []int32
	outEnds   []int32
	err       error
	processed chan struct{} // one token when the worker is done with it
}

func (b *batch) reset() {
	b.in, b.out, b.inEnds, b.outEnds, b.err = b.in[:0], b.out[:0], b.inEnds[:0], b.outEnds[:0], nil
}

// replicate is the task with n workers. Batches are in flight in read
// order; the oldest is written out before a new one is read once 2n are
// out, so a slow worker holds the others up by at most 2n batches.
func (r PerRecord) replicate(p *buffer.Ports, n int) (err error) {
	if onReplicate != nil {
		onReplicate(n)
	}
	in, out := p.In(0), p.Out(0)
	size := p.RecordSize()
	todo := make(chan *batch, 2*n)
	var workers sync.WaitGroup
	for range n {
		c := r.Fresh()
		workers.Go(func() { c.work(todo) })
	}
	defer func() {
		close(todo)
		workers.Wait()
		if err == nil {
			err = r.end()
		}
	}()
	var flight, spare []*batch
	writeOldest := func() error {
		b := flight[0]
		flight = flight[1:]
		<-b.processed
		if b.err != nil {
			return b.err
		}
		start := int32(0)
		for _, e := range b.outEnds {
			if err := out.Write(b.out[start:e]); err != nil {
				return err
			}
			start = e
		}
		spare = append(spare, b)
		return nil
	}
	for eof := false; !eof; {
		if len(flight) == 2*n {
			if err := writeOldest(); err != nil {
				return err
			}
		}
		var b *batch
		if len(spare) > 0 {
			b, spare = spare[len(spare)-1], spare[:len(spare)-1]
			b.reset()
		} else {
			b = &batch{processed: make(chan struct{}, 1)}
		}
		for len(b.in) < size {
			rec, err := in.Read()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return err
			}
			b.in = append(b.in, rec...)
			b.inEnds = append(b.inEnds, int32(len(b.in)))
		}
		if len(b.inEnds) > 0 {
			flight = append(flight, b)
			todo <- b
		}
	}
	for len(flight) > 0 {
		if err := writeOldest(); err != nil {
			return err
		}
	}
	return nil
}

// work runs the copy c on every batch of todo until it is closed.
func (c *PerRecord) work(todo <-chan *batch) {
	var startErr error
	if c.Start != nil {
		startErr = c.Start(emitNothing)
	}
	for b := range todo {
		if startErr != nil {
			b.err = startErr
			b.processed <- struct{}{}
			continue
		}
		emit := func(rec []byte) error {
			b.out = append(b.out, rec...)
			b.outEnds = append(b.outEnds, int32(len(b.out)))
			return nil
		}
		start := int32(0)
		for _, e := range b.inEnds {
			rec := b.in[start:e:e]
			start = e
			if c.Keep != nil {
				if c.Keep(rec) {
					emit(rec)
				}
				continue
			}
			if err := c.Each(rec, emit); err != nil {
				b.err = err
				break
			}
		}
		b.processed <- struct{}{}
	}
}
