package buffer

import (
	"errors"
	"io"
)

// A filter run as plain calls. Under Record Oriented Scheduling a task
// runs as a coroutine, and every record costs it two switches (into the
// task and back to the scheduler), as iter.Pull does. A filter that only
// keeps or drops records (Output.Pass) needs no stack of its own between
// two buffers: its state is the buffer it holds. Its scheduler can then
// call it as a function that does what the task's loop would do until the
// task would wait or give way, and returns: the run-time form of the loop
// jamming of section 5 of "Thrifty Execution of Task Pipelines". Such a
// step never parks. Where the task would wait, it registers the wait as
// parkLocked does (deadlock detection, time blocked and the wake from the
// other side are the same) and returns; its scheduler calls it again once
// the task is woken.

// ErrStepUnfit is returned by Filter.Step when the next buffer needs the
// filter's general form (Output.Pass in the task's own loop): the first
// piece of a record longer than S, or an input queue spilled to disk. The
// scheduler runs the task's general form from then on, with the same
// ports: a buffer handed over to the step, if any, is the input's current
// one, which Pass reads first.
var ErrStepUnfit = errors.New("buffer: the filter's next buffer needs its general form")

// Filter is a task that keeps the records of its input 0 for which keep
// returns true and moves them to its output 0, run by its scheduler as
// plain calls (Step) instead of a loop of Output.Pass. It belongs to the
// scheduler that runs the task, which must call Step only while the task
// is not waiting (Proc.Waiting), from one goroutine at a time.
type Filter struct {
	in   *Input
	out  *Output
	keep func(rec []byte) bool
	// holding is set while the filter holds its input buffer, sifted, to
	// move on to the output when there is room and it need not give way;
	// its kept records start at index first.
	holding bool
	first   int
	stepWait
}

// stepWait is what a task run as plain calls (Filter, Source, Sink) knows
// of its waits between two steps.
type stepWait struct {
	// waited is the wait the last Step left the task in, to count into
	// its queue's waits once it is over.
	waited waiting
	// waits is set when the last Step returned with the task waiting
	// (Waits).
	waits bool
}

// resumeLocked starts a step of t: it reports false if t still waits
// (not woken yet), and else counts the wait the last step left, if any,
// into its queue's waits.
func (s *stepWait) resumeLocked(t *proc) bool {
	if t.wait.kind != waitNone {
		s.waits = true
		return false
	}
	if s.waited.kind != waitNone {
		s.countLocked(t)
	}
	return true
}

// countLocked counts the wait the last step left t in, now over. It is
// kept out of resumeLocked, so that resumeLocked is inlined.
//
//go:noinline
func (s *stepWait) countLocked(t *proc) {
	t.countWaitLocked(s.waited)
	s.waited = waiting{}
}

// waitLocked leaves t waiting on w, as parkLocked would, without parking:
// its scheduler learns of the wake through the task's Parker.
func (s *stepWait) waitLocked(t *proc, w waiting) {
	t.beginParkLocked(w)
	s.waited = w
	s.waits = true
}

// Waits reports whether the last Step returned with the task waiting,
// rather than giving way: its scheduler, with a WaitTracker, runs it
// again only after the Parker's Unpark, which may come from another
// goroutine at any time after the wait began, before or after Step
// returned. It belongs to the scheduler, as Step does.
func (s *stepWait) Waits() bool { return s.waits }

// Filter returns the task as a Filter of its input 0 to its output 0 by
// keep; its scheduler runs it with Step.
func (ps *Ports) Filter(keep func(rec []byte) bool) *Filter {
	return &Filter{in: ps.ins[0], out: ps.outs[0], keep: keep}
}

// Step runs the filter as far as it can go without waiting and without
// a task of greater index to give way to (Yielder.MustYield): it takes
// buffers from the input, sifts them with keep (outside the pool's lock)
// and moves them on, each buffer whole, with no copy. It returns nil when
// the task waits (Proc.Waiting: for a buffer, or for room) or must give
// way; io.EOF at the end of the input, when the task is done and its
// scheduler finishes it (Proc.Finish); ErrReaderGone when the output's
// reader has stopped; ErrStepUnfit (see there); or the pool's error. A
// panic in keep leaves the filter holding its buffer, which Finish gives
// back.
func (f *Filter) Step() error {
	in := f.in
	t := in.t
	p := t.pool
	f.waits = false
	if t.handed {
		// A writer handed its buffer over as it woke the task
		// (Queue.pushLocked), and counted the wait; the wake, which
		// the scheduler saw (Proc.Waiting) before this call, orders
		// its writes before these reads. The buffer is sifted before
		// the lock is taken, so a record costs one lock section.
		t.handed = false
		f.waited = waiting{}
		if b := in.cur; b.cont {
			return ErrStepUnfit
		}
		first, w := in.sift(f.keep, nil)
		p.mu.Lock()
		if w == first {
			in.giveBackLocked() // nothing kept
		} else {
			f.holding, f.first = true, first
		}
	} else {
		p.mu.Lock()
	}
	err := f.stepLocked()
	p.mu.Unlock() // not deferred: keep runs unlocked, and may panic
	return err
}

func (f *Filter) stepLocked() error {
	in, o := f.in, f.out
	t := in.t
	p := t.pool
	if !f.resumeLocked(t) {
		return nil // not woken yet
	}
	for {
		if p.err != nil {
			return p.err
		}
		if f.holding {
			if o.q.gone {
				f.holding = false
				in.giveBackLocked()
				return ErrReaderGone
			}
			if o.q.occupancy() >= o.q.cap {
				if o.q.overflow && o.q.n > 0 && p.spill != nil {
					// Its reader is a bridge stuck on its program:
					// spill, as a write would (reserveLocked).
					if _, err := o.q.spillLocked(); err != nil {
						p.abortLocked(err)
						return err
					}
					continue
				}
				o.q.wwait = t
				f.waitLocked(t, waiting{kind: waitRoom, q: o.q})
				return nil
			}
			if t.mustYieldLocked() {
				return nil
			}
			// Output.move, with no reservation to take and give back.
			b := in.cur
			in.cur = nil
			in.q.held--
			in.q.roomByLocked(t)
			b.lo = f.first
			f.holding = false
			o.q.pushLocked(b)
			continue
		}
		q := in.q
		if in.cur != nil || o.pend != nil || q.backlog() > 0 || q.n > 0 && q.ring[q.head].cont {
			return ErrStepUnfit
		}
		if q.n == 0 && !q.eof {
			if t.unreadLocked() {
				return ErrReaderGone
			}
			t.idleLocked()
			q.readerWaitsLocked(t)
			f.waitLocked(t, waiting{kind: waitRead, q: q, in: in})
			return nil
		}
		// A buffer or the end is there: the task could go on, so it
		// gives way first if it must, as in nextLocked.
		if t.mustYieldLocked() {
			return nil
		}
		if q.n == 0 {
			in.eof = true
			return io.EOF
		}
		in.takeLocked(q.popLocked())
		p.mu.Unlock()
		first, w := in.sift(f.keep, nil)
		p.mu.Lock()
		if w == first {
			in.giveBackLocked() // nothing kept
			continue
		}
		f.holding, f.first = true, first
	}
}

// mustYieldLocked reports whether t, under a Yielder, must give way now.
func (t *proc) mustYieldLocked() bool {
	return t.yielder != nil && t.yielder.MustYield((*Proc)(t))
}
