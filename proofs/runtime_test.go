package proofs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/proofs"
)

// This file drives tpipe's real runtime (package buffer) through the
// schedules of the model. Each task is a coroutine (iter.Pull) whose
// buffer.Parker suspends it both where the runtime would block it (Park)
// and at the start of every operation that may block (Preempt), so the
// test decides which task takes each step, exactly as the model does:
// one resumption of a task is one step of the model.

// errStopped ends a task whose coroutine the test stopped.
var errStopped = errors.New("proofs test: coroutine stopped")

// coroutine is one task run as a coroutine.
type coroutine struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	done  bool
	err   error // what the task function returned
}

// parker suspends a coroutine; it implements buffer.Preempter too.
type parker struct {
	co   *coroutine
	pool *buffer.Pool
}

func (k *parker) Park(*buffer.Proc) error { return k.suspend() }
func (k *parker) Unpark(*buffer.Proc)     {} // the test sees Proc.Waiting
func (k *parker) Preempt(*buffer.Proc) {
	if err := k.suspend(); err != nil {
		k.pool.Abort(err)
	}
}

func (k *parker) suspend() error {
	if !k.co.yield(struct{}{}) {
		return errStopped
	}
	return nil
}

var _ buffer.Preempter = (*parker)(nil)

// rtRun is one run of a pipeline on the runtime.
type rtRun struct {
	p      proofs.Pipeline
	pool   *buffer.Pool
	queues []*buffer.Queue
	procs  []*buffer.Proc
	cos    []*coroutine
	out    []byte
}

// newRun sets up p on a pool of b buffers with c's reads, handoff and
// batching. Records are one byte; the record size is one byte per record
// a buffer carries, so without batching each buffer holds exactly one
// record, the paper's record-size buffer.
func newRun(p proofs.Pipeline, c proofs.Config, b, input int) (*rtRun, error) {
	return newRunResolved(p, c, b, input, nil)
}

// newRunResolved is newRun with a resolver for the pool's stalls.
func newRunResolved(p proofs.Pipeline, c proofs.Config, b, input int, resolve buffer.Resolver) (*rtRun, error) {
	if c.Write != proofs.ReserveFirst || c.EOFRecords {
		return nil, errors.New("the runtime has reserve-first writes and eof marks only")
	}
	batch := max(c.Batch, 1)
	pool, err := buffer.NewPool(buffer.Options{
		Buffers: b, RecordSize: batch, Compete: !c.Handoff, Resolver: resolve,
		// Local detection on: a deadlock it reports before the schedule
		// ends must be part of the model's.
		Local: true,
	})
	if err != nil {
		return nil, err
	}
	queues := make([]*buffer.Queue, len(p.Queues))
	for i, q := range p.Queues {
		if queues[i], err = pool.NewQueue(q.Name, q.Cap); err != nil {
			return nil, err
		}
	}
	r := &rtRun{p: p, pool: pool, queues: queues}
	in := proofs.Input(input)
	for i, ts := range p.Tasks {
		var ins, outs []*buffer.Queue
		for _, q := range ts.In {
			if q != proofs.File {
				ins = append(ins, queues[q])
			}
		}
		for _, q := range ts.Out {
			if q != proofs.File {
				outs = append(outs, queues[q])
			}
		}
		proc, err := pool.NewProc(p.TaskName(i), i, ins, outs)
		if err != nil {
			return nil, err
		}
		if !c.InPlace {
			// The model's copy reads: every task, the last too, copies a
			// record out and gives its buffer back at once.
			proc.CopyReads()
		}
		co := &coroutine{}
		proc.SetParker(&parker{co: co, pool: pool})
		fn := taskFunc(p, i, c, in, &r.out)
		co.next, co.stop = iter.Pull(func(yield func(struct{}) bool) {
			co.yield = yield
			co.err = fn(proc.Ports())
			proc.Finish(co.err != nil)
		})
		r.procs = append(r.procs, proc)
		r.cos = append(r.cos, co)
	}
	return r, nil
}

// resume runs task i until it next suspends or ends.
func (r *rtRun) resume(i int) {
	co := r.cos[i]
	if _, more := co.next(); !more {
		co.done = true
	}
}

// runnable reports whether task i has not ended and is not parked.
func (r *rtRun) runnable(i int) bool { return !r.cos[i].done && !r.procs[i].Waiting() }

// prime resumes every task once, in order: each runs its local actions up
// to its first operation, as the model's initial state has them.
func (r *rtRun) prime() {
	for i := range r.cos {
		r.resume(i)
	}
}

// settle resumes runnable tasks, the greatest index first, until none is
// left: tasks the model has blocked try their operation and park, and the
// last to park makes the pool detect the stall.
func (r *rtRun) settle() {
	for {
		i := len(r.cos) - 1
		for i >= 0 && !r.runnable(i) {
			i--
		}
		if i < 0 {
			return
		}
		r.resume(i)
	}
}

// close lets every coroutine end: after an abort each returns the pool's
// error at its next operation.
func (r *rtRun) close() {
	for range 1000 {
		left := false
		for i, co := range r.cos {
			if !co.done {
				left = true
				r.resume(i)
			}
		}
		if !left {
			return
		}
	}
	for _, co := range r.cos {
		co.stop()
	}
}

// done reports whether every task has ended.
func (r *rtRun) done() bool {
	for _, co := range r.cos {
		if !co.done {
			return false
		}
	}
	return true
}

// taskFunc returns the runtime code of task i of p: the kinds of the model
// written against the public API of package buffer, one Read per record
// and, without batching, a Flush after each Write so that a written
// buffer is handed over at once. Filters pass buffers on (Output.Pass)
// when c.Move says so and they read a queue.
func taskFunc(p proofs.Pipeline, i int, c proofs.Config, input []byte, out *[]byte) func(*buffer.Ports) error {
	spec := p.Tasks[i]
	// Runtime port numbers: only queue ports are ports of the Proc.
	inPort := make([]int, len(spec.In))
	outPort := make([]int, len(spec.Out))
	for k, n, m := 0, 0, 0; k < max(len(spec.In), len(spec.Out)); k++ {
		if k < len(spec.In) {
			inPort[k] = -1
			if spec.In[k] != proofs.File {
				inPort[k], n = n, n+1
			}
		}
		if k < len(spec.Out) {
			outPort[k] = -1
			if spec.Out[k] != proofs.File {
				outPort[k], m = m, m+1
			}
		}
	}
	batching := c.Batch > 1
	return func(proc *buffer.Ports) error {
		pos := 0
		read := func(k int) (byte, bool, error) {
			if inPort[k] < 0 {
				if pos == len(input) {
					return 0, false, nil
				}
				pos++
				return input[pos-1], true, nil
			}
			rec, err := proc.In(inPort[k]).Read()
			if err == io.EOF {
				return 0, false, nil
			}
			if err != nil {
				return 0, false, err
			}
			return rec[0], true, nil
		}
		write := func(k int, v byte) error {
			if outPort[k] < 0 {
				*out = append(*out, v)
				return nil
			}
			if err := proc.Out(outPort[k]).Write([]byte{v}); err != nil {
				return err
			}
			if !batching {
				proc.Flush()
			}
			return nil
		}
		kind := spec.Kind
		if kind == proofs.Prefix {
			if err := write(0, byte(16+i+1)); err != nil {
				return err
			}
		}
		if c.Move && kind.IsFilter() && inPort[0] >= 0 && outPort[0] >= 0 {
			keep := func(rec []byte) bool { return kind != proofs.Filter || rec[0]%2 == 1 }
			in, o := proc.In(inPort[0]), proc.Out(outPort[0])
			if c.InPlace {
				// Read and Forward: the buffer read moves on.
				for {
					rec, err := in.Read()
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
					if keep(rec) {
						if err := o.Forward(in); err != nil {
							return err
						}
					}
				}
			}
			// With CopyReads, Read copies and Forward would too; Pass
			// still moves buffers.
			for {
				err := o.Pass(in, keep)
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
			}
		}
		var acc, turn byte
		eofs, all := 0, 1<<len(spec.In)-1
		for eofs != all {
			in := 0
			switch kind {
			case proofs.Join:
				if eofs&1 != 0 {
					in = 1
				}
			case proofs.Merge:
				in = int(turn)
				if eofs&(1<<in) != 0 {
					in = 1 - in
				}
			}
			v, ok, err := read(in)
			if err != nil {
				return err
			}
			if !ok {
				eofs |= 1 << in
				continue
			}
			switch kind {
			case proofs.Copy, proofs.Prefix, proofs.Join:
				err = write(0, v)
			case proofs.Filter:
				if v%2 == 1 {
					err = write(0, v)
				}
			case proofs.Duplicate:
				if err = write(0, v); err == nil {
					err = write(0, v)
				}
			case proofs.Sum:
				acc = (acc + v) % 64
			case proofs.Tee:
				if err = write(0, v); err == nil {
					err = write(1, v)
				}
			case proofs.Route:
				if v%3 == 0 {
					err = write(1, v)
				} else {
					err = write(0, v)
				}
			case proofs.Merge:
				err = write(0, v)
				turn = byte(1 - in)
			}
			if err != nil {
				return err
			}
		}
		if kind == proofs.Sum {
			return write(0, 64+acc)
		}
		return nil
	}
}

// graphOf builds p as a graph for sched.Run, with the same task code.
func graphOf(p proofs.Pipeline, c proofs.Config, input int, out *[]byte) *graph.Graph {
	g := &graph.Graph{}
	in := proofs.Input(input)
	for i, ts := range p.Tasks {
		nin, nout := 0, 0
		for _, q := range ts.In {
			if q != proofs.File {
				nin++
			}
		}
		for _, q := range ts.Out {
			if q != proofs.File {
				nout++
			}
		}
		fn := taskFunc(p, i, c, in, out)
		g.Add(p.TaskName(i), nin, nout, func(_ context.Context, proc *buffer.Ports) error { return fn(proc) })
	}
	for q, qs := range p.Queues {
		from, to := -1, -1
		fromPort, toPort := 0, 0
		for i, ts := range p.Tasks {
			n := 0
			for _, x := range ts.In {
				if x == q {
					to, toPort = i, n
				}
				if x != proofs.File {
					n++
				}
			}
			n = 0
			for _, x := range ts.Out {
				if x == q {
					from, fromPort = i, n
				}
				if x != proofs.File {
					n++
				}
			}
		}
		e := g.Connect(from, fromPort, to, toPort, qs.Cap)
		e.Name = qs.Name
	}
	return g
}

// deadlockOf returns the run's *buffer.DeadlockError, or an error saying
// what happened instead.
func deadlockOf(r *rtRun) (*buffer.DeadlockError, error) {
	var d *buffer.DeadlockError
	if err := r.pool.Err(); !errors.As(err, &d) {
		return nil, fmt.Errorf("the runtime did not report a deadlock (pool error %v, output %v)", err, r.out)
	}
	return d, nil
}
