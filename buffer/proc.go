package buffer

import (
	"errors"
	"sync/atomic"
	"time"
)

// A task of a pool is seen through two handles over one record (proc):
//
//   - Ports, the task's own: its input and output ports and what it may do
//     with them (read, write, forward without a copy, write eof, stop
//     reading). A task function gets *Ports and nothing else of the pool.
//   - Proc, the scheduler's: how the task parks and resumes, whether it
//     waits and on what, its time blocked, and finishing it. The deadlock
//     detector works on the same record from inside the pool.
//
// The two are conversions of one pointer, so handing a task its Ports
// costs nothing.

// proc is one task's state in its pool.
type proc struct {
	pool    *Pool
	name    string
	index   int
	ins     []*Input
	outs    []*Output
	wake    chan struct{}
	park    Parker // nil: park on wake
	by      UnparkerBy
	preempt Preempter
	yielder Yielder
	// parked mirrors wait.kind != waitNone for schedulers that poll
	// without the lock (set and cleared under it), for tasks with a
	// Parker that is not a WaitTracker (mirror is set); a task parked on
	// its channel has no such scheduler, and a WaitTracker's scheduler
	// keeps its own record, so Waiting reads their wait under the lock.
	parked atomic.Bool
	mirror bool
	wait   waiting
	got    *Buf // a buffer handed over from FREE while this task waited for it
	// handed is set when a writer gave this task, waiting to read, the
	// buffer it pushed (Queue.pushLocked): the task goes on without
	// taking the pool's lock again.
	handed bool
	done   bool
	// stopUnread is set for a task whose only effect is what it writes
	// to its outputs (Proc.StopUnread): once no reader is left on any
	// of them, its wait for input ends with ErrReaderGone.
	stopUnread bool
	// readerGone is set when what the task writes to outside tpipe has
	// ended (Ports.ReaderGone): its waits for input end too.
	readerGone bool
	slot       int // position in pool.procs, for stuckLocked
	rr         int // the input Ready looks at first (round robin)
	// prog is the number of the external program the task bridges to
	// (SetProgram), or -1. outside is set while the task waits on the
	// program's pipe (OpWrite: full; OpRead: empty), since outSince.
	prog     int
	outside  Op
	outSince time.Time

	waits waitClock // its time blocked, sampled (waittime.go)
}

type waitKind uint8

const (
	waitNone waitKind = iota
	waitRead
	waitRoom
	waitFree
	waitDrain
	waitAny // Ready: any input
)

type waiting struct {
	kind waitKind
	q    *Queue
	// in, waiting to read q, is the input a writer may hand its buffer to
	// directly (nil: the reader copies what it reads, so it takes the
	// buffer itself).
	in *Input
}

// Proc is a scheduler's handle on one task of a pool (see Pool.NewProc):
// it sets how the task parks, learns whether and on what it waits, and
// finishes it. The task's own handle is Ports. A Proc's methods are safe
// for concurrent use, except SetParker and CopyReads, which must be called
// before the task starts.
type Proc proc

func (c *Proc) t() *proc { return (*proc)(c) }

// Ports returns the task's handle on its ports, to pass to the task.
func (c *Proc) Ports() *Ports { return (*Ports)(c) }

// Name returns the task's name.
func (c *Proc) Name() string { return c.name }

// Index returns the task's index.
func (c *Proc) Index() int { return c.index }

// Parker blocks and resumes a task for a scheduler that does not give
// every task its own goroutine (Record Oriented Scheduling runs tasks as
// coroutines). The default, with no Parker, parks the goroutine on a
// channel.
type Parker interface {
	// Park is called by t's own task, without the pool's lock, when it
	// must wait; it returns once t may run again. A non-nil error abandons
	// the wait: the operation that was waiting fails with that error (a
	// scheduler that stopped the task says so this way).
	Park(t *Proc) error
	// Unpark is called with the pool's lock held when t may run again; it
	// must not block. It may be called from another goroutine.
	Unpark(t *Proc)
}

// Preempter is a Parker that makes a task give way at the start of every
// operation that may block, whether or not it would wait: a test that
// replays a model's schedules step by step decides there which task goes
// on (package proofs).
type Preempter interface {
	Preempt(t *Proc)
}

// Yielder is a Parker that makes a task give way where it could go on
// without waiting, when its scheduler says another task must run first.
// Record Oriented Scheduling needs it: the runnable task with the greatest
// index must always be the one running, so a task that has woken a
// greater one (by handing it a buffer, or giving one back) yields before
// it can go on, and so before it can take that buffer again. An operation
// that must wait parks instead (Park), which gives way too; yielding first
// would only cost the scheduler a resumption that finds the wait.
type Yielder interface {
	// MustYield reports whether t must give way now. It is called by t's
	// own task with the pool's lock held, so it must be cheap and must
	// not block or call the pool.
	MustYield(t *Proc) bool
	// Yield gives way; it returns once t may run again. It is called
	// without the pool's lock, after MustYield said so. A non-nil error
	// (the scheduler stopped the task) aborts the pool.
	Yield(t *Proc) error
}

// WaitTracker is a Parker whose scheduler knows by itself which of its
// tasks wait, from what they tell it (Park, Filter.Waits) and from Unpark,
// and so never asks Waiting on its hot path. The pool then keeps no
// lock-free record of the wait for its tasks, which would cost two atomic
// stores per wait (a tenth of a single record's handoff under ros), and
// Waiting takes the pool's lock for them.
type WaitTracker interface {
	Parker
	// TracksWaits marks the Parker as one; it is never called.
	TracksWaits()
}

// UnparkerBy is a Parker told which task made t runnable, where the pool
// knows it: a buffer pushed to a queue wakes the queue's reader by the
// queue's writer, and the push runs on the writer's thread (its goroutine
// or coroutine, or whichever calls its Finish); room made in a queue by
// its reader (the buffer it read given back, or moved on whole) wakes the
// queue's writer by the reader, on the reader's thread likewise. A
// scheduler that runs both tasks on one thread can note such a wake with
// no atomic operation. Every other wake (an Abort, a spill brought back,
// a queue grown, a buffer given back to FREE) comes through Unpark.
type UnparkerBy interface {
	Parker
	// UnparkBy is Unpark, with the task by whose thread t is woken.
	UnparkBy(t, by *Proc)
}

// SetParker makes the task park with pk; call it before the task starts.
// A pk that is a Yielder gives way as a Yielder does, even if it is a
// Preempter too.
func (c *Proc) SetParker(pk Parker) {
	c.park = pk
	_, tracks := pk.(WaitTracker)
	c.mirror = pk != nil && !tracks
	c.by, _ = pk.(UnparkerBy)
	c.preempt, c.yielder = nil, nil
	if y, ok := pk.(Yielder); ok {
		c.yielder = y
	} else {
		c.preempt, _ = pk.(Preempter)
	}
}

// CopyReads makes Read and ReadBatch on this task's inputs copy each batch
// into a private buffer of the task (allocated here, once) and give the
// pool's buffer back at once, so that the task holds no pool buffer while
// it writes. It is the paper's model, where a task reads a record into a
// variable of its own; Record Oriented Scheduling needs it to run any task
// with one buffer. Pass still moves buffers without a copy. Tasks with
// outputs need it, and tasks that may block outside tpipe while reading
// (they must not keep a buffer through a wait on a pipe); call it before
// the task starts.
func (c *Proc) CopyReads() {
	t := c.t()
	for _, in := range t.ins {
		if in.priv != nil {
			continue // called twice
		}
		in.priv = &Buf{data: make([]byte, 0, t.pool.size), ends: make([]int32, 0, t.pool.nrec), id: -1}
	}
}

// SampleSparsely lets the task's waits be timed as sparsely as 1 in 64
// when it waits very often, instead of 1 in 16 (see waittime.go): for a
// task whose time blocked is read only over long spans, the whole run's
// statistics and the live view, never over the milliseconds of --cap
// auto's samples or auto replicas' windows. Record Oriented Scheduling
// has neither, and its tasks wait every few hundred nanoseconds on a
// chain of single records, where the clock readings the default takes
// were a tenth of the CPU. Call it before the task starts.
func (c *Proc) SampleSparsely() { c.waits.most = sparseK }

// StopUnread says that the task's only effect is what it writes to its
// output ports (no file of its own, no command it runs): once the
// readers of all its outputs have stopped, the task is of no use, and a
// wait of it for input (Input.Read and the other reads, Ports.Ready)
// ends at once with ErrReaderGone instead of when the next record comes
// and its write fails. That is how an early exit downstream (`head -1`,
// `grep -m1`) stops the tasks before it while their input is idle (a
// log that is followed, a program that prints now and then): a shell's
// pipeline learns it only at the next write. A task with no output
// port is never stopped so. Call it before the task starts.
func (c *Proc) StopUnread() { c.stopUnread = true }

// Waiting reports whether the task is parked waiting for a queue or FREE
// (and not yet woken). A coroutine scheduler runs only tasks that are not.
func (c *Proc) Waiting() bool {
	if !c.mirror {
		c.pool.mu.Lock()
		defer c.pool.mu.Unlock()
		return c.wait.kind != waitNone
	}
	return c.parked.Load()
}

// Wait describes what the task waits on, if it is waiting.
func (c *Proc) Wait() (Wait, bool) {
	t := c.t()
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.wait.kind == waitNone {
		return Wait{}, false
	}
	return p.describeLocked(t), true
}

// Finished reports whether the task has ended (Finish was called).
func (c *Proc) Finished() bool {
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	return c.done
}

// Blocked returns the time the task spent waiting in this package,
// including the wait it is in now, if any. It never decreases. Short
// waits are timed by sampling: a task that waits less often than every
// few microseconds is timed exactly, a faster one within a few percent
// over some thousands of waits (see waittime.go).
func (c *Proc) Blocked() time.Duration {
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	return c.pool.blockedLocked(c.t())
}

// Finish ends the task: it writes eof to every output (after handing over
// what was written), and stops reading every input (buffers already queued
// go back to FREE; the writer's next write returns ErrReaderGone). After a
// failure (failed true) outputs are closed without handing over pending
// records. Finish is idempotent; the scheduler calls it when the task
// function returns.
func (c *Proc) Finish(failed bool) {
	t := c.t()
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	t.endOutsideLocked()
	if t.got != nil {
		p.releaseLocked(t.got)
		t.got = nil
	}
	for _, o := range t.outs {
		if o.pend != nil {
			if failed || p.err != nil {
				o.q.reserved--
				p.releaseLocked(o.pend)
				o.pend = nil
			} else {
				o.endOpenLocked()
				o.commitLocked()
			}
		}
		o.closeLocked()
	}
	for _, in := range t.ins {
		in.stopLocked()
		in.dropKeptLocked()
	}
	p.live--
	p.checkStallLocked()
}

// yieldPoint is the start of an operation that may block, outside the
// lock: the Hook sees it, and a Preempter makes the task give way there.
func (t *proc) yieldPoint(op Op) {
	if h := t.pool.o.Hook; h != nil {
		h.Before(t.index, op)
	}
	if t.preempt != nil {
		t.preempt.Preempt((*Proc)(t))
	}
}

// giveWayLocked is where a task under a Yielder gives way: at an
// operation it is about to do without waiting (a read with a buffer or eof
// there, a write with room). It reports whether the task gave way; the
// pool's lock was let go meanwhile, so the caller must look again at what
// it found.
func (t *proc) giveWayLocked() bool {
	y := t.yielder
	if y == nil || !y.MustYield((*Proc)(t)) {
		return false
	}
	p := t.pool
	p.mu.Unlock()
	err := y.Yield((*Proc)(t))
	p.mu.Lock()
	if err != nil {
		p.abortLocked(err)
	}
	return true
}

func (t *proc) flushLocked() {
	for _, o := range t.outs {
		if o.pend != nil {
			o.commitLocked()
		}
	}
}

// idleLocked is flushLocked before a wait for input, or outside the
// pool: the task has nothing more for its readers until it is woken, and
// its output queues say so (Input.Idle). A wait for room or for FREE is
// not one: the task has more to give.
func (t *proc) idleLocked() {
	t.flushLocked()
	for _, o := range t.outs {
		o.q.idle = true
	}
}

// unreadLocked reports whether t, about to wait for input, is to stop
// instead: it may be stopped early (Proc.StopUnread) and no reader is
// left on any of its outputs, so nothing it could do would be seen.
func (t *proc) unreadLocked() bool {
	if t.readerGone {
		return true
	}
	if !t.stopUnread || len(t.outs) == 0 {
		return false
	}
	for _, o := range t.outs {
		if !o.q.gone {
			return false
		}
	}
	return true
}

// ReaderGone says that what the task writes to outside tpipe has ended
// (the program that a bridge feeds has exited): the task is of no use
// any more, and a wait of it for input, now or later, ends with
// ErrReaderGone. Without it a bridge would learn it only at its next
// write, which for a program that never reads its input (`tail -f log`,
// `sh -c 'echo hi'`, started with tpipe's stdin a terminal) is when the
// user next types a line. Unlike the other methods of Ports it may be
// called from any goroutine.
func (ps *Ports) ReaderGone() {
	t := ps.t()
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	t.readerGone = true
	if k := t.wait.kind; !t.done && (k == waitRead || k == waitAny) {
		t.dropAnyWaitLocked()
		p.wakeLocked(t)
	}
}

// wakeUnreadLocked wakes q's writer if it waits for input and, q's
// reader being gone, no reader is left on any of its outputs: it then
// stops (unreadLocked) instead of waiting for input that nobody would
// see the effect of.
func (q *Queue) wakeUnreadLocked() {
	w := q.writer
	if w == nil || w.done || !w.unreadLocked() {
		return
	}
	if k := w.wait.kind; k == waitRead || k == waitAny {
		w.dropAnyWaitLocked()
		q.pool.wakeLocked(w)
	}
}

// errHanded is parkLocked's word that the wait ended with a buffer handed
// to the task (waiting.in), and that the pool's lock is not held.
var errHanded = errors.New("buffer: handed a buffer")

// parkLocked blocks the task until another task wakes it. It returns the
// pool's error if the run was aborted meanwhile, or the Parker's if it
// abandoned the wait (the wait is then undone). It returns with the lock
// held, except for errHanded.
func (t *proc) parkLocked(w waiting) error {
	p := t.pool
	if p.err != nil {
		return p.err
	}
	t.beginParkLocked(w)
	p.mu.Unlock()
	var perr error
	if t.park != nil {
		perr = t.park.Park((*Proc)(t))
	} else {
		<-t.wake
	}
	if t.handed && perr == nil {
		// The waker did the rest under its lock (Queue.pushLocked); the
		// wake (a channel, or the scheduler's switch) orders its writes
		// before these reads.
		t.handed = false
		return errHanded
	}
	p.mu.Lock()
	t.handed = false
	if perr != nil {
		if t.wait.kind != waitNone {
			// Not woken: take the task off every list it waits on.
			t.unwaitLocked()
			if w.kind == waitFree {
				p.dropFreeWaiterLocked(t)
			}
		}
		if p.err != nil {
			return p.err
		}
		return perr
	}
	t.countWaitLocked(w)
	return p.err
}

// beginParkLocked makes t wait on w: it counts as blocked from now on,
// until a wakeLocked ends the wait, and the pool looks for a stall. The
// caller then lets go of the lock and parks (parkLocked), or, for a task
// its scheduler runs as plain calls, returns (Filter.Step).
func (t *proc) beginParkLocked(w waiting) {
	p := t.pool
	t.endOutsideLocked() // a task in the pool is not waiting on a pipe
	t.wait = w
	if t.mirror {
		t.parked.Store(true)
	}
	p.blocked++
	p.beginWaitLocked(t)
	p.checkStallLocked()
}

// countWaitLocked counts t's wait on w, just ended, into the waits of the
// queue it was for.
func (t *proc) countWaitLocked(w waiting) {
	d := t.waits.last // counted into the task's time blocked by wakeLocked
	switch w.kind {
	case waitRead:
		w.q.readWait += d
	case waitAny:
		for _, in := range t.ins {
			if !in.eof {
				in.q.readWait += d
			}
		}
	case waitRoom, waitDrain:
		w.q.writeWait += d
	case waitFree:
		for _, o := range t.outs {
			if o.q.reserved > 0 && o.pend == nil {
				o.q.writeWait += d
				break
			}
		}
	}
}

// unwaitLocked ends t's wait: it is taken off the queue it waits on, no
// longer counts as blocked, and its time blocked is counted.
func (t *proc) unwaitLocked() {
	p := t.pool
	switch t.wait.kind {
	case waitRead:
		if t.wait.q.rwait == t {
			t.wait.q.rwait = nil
		}
	case waitAny:
		t.dropAnyWaitLocked()
	case waitRoom, waitDrain:
		if t.wait.q.wwait == t {
			t.wait.q.wwait = nil
		}
	}
	t.wait = waiting{}
	if t.mirror {
		t.parked.Store(false)
	}
	p.blocked--
	// The wait ends here, not when the task next takes the lock: a
	// sampler reading Blocked in between must not count it as busy.
	p.endWaitLocked(t)
}

// wakeLocked makes a parked task runnable.
func (p *Pool) wakeLocked(t *proc) { p.wakeByLocked(t, nil) }

// wakeByLocked makes a parked task runnable on the thread of task by, if
// not nil (see UnparkerBy).
func (p *Pool) wakeByLocked(t, by *proc) {
	if t.wait.kind == waitNone {
		return
	}
	t.unwaitLocked()
	switch {
	case by != nil && t.by != nil:
		t.by.UnparkBy((*Proc)(t), (*Proc)(by))
	case t.park != nil:
		t.park.Unpark((*Proc)(t))
	default:
		t.wake <- struct{}{}
	}
}

// readerWaitsLocked records that t, q's reader, waits for a buffer, and
// wakes q's writer if it waits for the reader to ask for more (Drain).
func (q *Queue) readerWaitsLocked(t *proc) {
	q.rwait = t
	if w := q.wwait; w != nil && w.wait.kind == waitDrain {
		q.wwait = nil
		q.pool.wakeLocked(w)
	}
}

// dropAnyWaitLocked forgets t as the waiting reader of each of its inputs
// (a wait in Ready is on all of them).
func (t *proc) dropAnyWaitLocked() {
	for _, in := range t.ins {
		if in.q.rwait == t {
			in.q.rwait = nil
		}
	}
}

func (p *Pool) dropFreeWaiterLocked(t *proc) {
	for i, w := range p.freeWait {
		if w == t {
			p.freeWait = append(p.freeWait[:i], p.freeWait[i+1:]...)
			return
		}
	}
}

// takeFreeWaitLocked takes a buffer from FREE, waiting while FREE is empty
// (q, if not nil, is the queue it is for, for the deadlock report).
func (t *proc) takeFreeWaitLocked(q *Queue) (*Buf, error) {
	p := t.pool
	for {
		if b := p.takeFreeLocked(); b != nil {
			return b, nil
		}
		t.flushLocked()
		if b := p.takeFreeLocked(); b != nil {
			return b, nil // flushing gave an empty buffer back
		}
		if n, err := p.spillOverflowLocked(); err != nil {
			p.abortLocked(err)
			return nil, err
		} else if n > 0 {
			continue
		}
		p.freeWait = append(p.freeWait, t)
		err := t.parkLocked(waiting{kind: waitFree, q: q})
		if b := t.got; b != nil {
			// Handed over while we waited.
			t.got = nil
			if err == nil {
				return b, nil
			}
			p.releaseLocked(b)
		}
		if err != nil {
			p.dropFreeWaiterLocked(t)
			return nil, err
		}
		// Woken to compete for FREE (Options.Compete): try again.
	}
}
