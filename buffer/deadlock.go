package buffer

import (
	"fmt"
	"strings"
	"time"
)

// Wait says what one blocked task waits on when a pool stalls.
type Wait struct {
	Task  string
	Index int
	// On is "read" (its input queue is empty), "room" (its output queue is
	// full), "free" (FREE is empty), "drain" (it waits for its reader to
	// take everything, before it reports bad input) or "program" (it is a
	// bridge waiting on its external program's pipe: Op is OpWrite when
	// the program does not read, OpRead when it does not write).
	On    string
	Queue string // the queue, for "read" and "room"; several, for Any; the program, for "program"
	Op    Op
	// For is how long a "program" wait has lasted with nothing moved.
	For time.Duration
	// Any is set when the task reads whichever of its inputs has a record
	// first (Ports.Ready) and all of them are empty.
	Any   bool
	Len   int // buffers in the queue (queued, reserved and being read)
	Cap   int
	Free  int // buffers in FREE
	Total int // B
}

func (w Wait) String() string {
	switch w.On {
	case "read":
		if w.Any {
			return fmt.Sprintf("%s waits to read any of %s (all empty)", w.Task, w.Queue)
		}
		return fmt.Sprintf("%s waits to read %s (empty, cap %d)", w.Task, w.Queue, w.Cap)
	case "room":
		return fmt.Sprintf("%s waits for room in %s (%d/%d)", w.Task, w.Queue, w.Len, w.Cap)
	case "drain":
		return fmt.Sprintf("%s waits for its reader to take all of %s", w.Task, w.Queue)
	case "program":
		d := w.For.Round(time.Millisecond)
		if w.Op == OpWrite {
			return fmt.Sprintf("%s waits for %s to read its pipe (full, nothing moved for %v)", w.Task, w.Queue, d)
		}
		return fmt.Sprintf("%s waits for %s to write (its pipe empty for %v)", w.Task, w.Queue, d)
	default:
		return fmt.Sprintf("%s waits for a free buffer (FREE %d of %d)", w.Task, w.Free, w.Total)
	}
}

// DeadlockError is the error of a run in which every unfinished task was
// blocked in this package and no resolver could help. Artificial is true
// when some task waits for room or for FREE (more buffers or capacity would
// let the run go on); false when every task waits to read (a real deadlock:
// no amount of memory helps).
type DeadlockError struct {
	Waits      []Wait
	Artificial bool
	// Need, when a scheduler knows it, is the B at which this run would
	// not have stalled, or could have resolved the stall (for a chain, the
	// bound of Theorem 3.2); NeedIs says what that number is. Zero when
	// more buffers would not help.
	Need   int
	NeedIs string
	// Local is set when only some tasks were stuck and others could still
	// run (or were outside tpipe, in a system call).
	Local bool
}

func (e *DeadlockError) Error() string {
	var sb strings.Builder
	part := ""
	if e.Local {
		part = " in part of the graph"
	}
	if e.Artificial {
		fmt.Fprintf(&sb, "deadlock%s (artificial: out of buffers or queue room): ", part)
	} else {
		fmt.Fprintf(&sb, "deadlock%s (real: every task on the cycle waits to read): ", part)
	}
	for i, w := range e.Waits {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(w.String())
	}
	if e.Need > 0 {
		fmt.Fprintf(&sb, "; it needs %d buffers (%s)", e.Need, e.NeedIs)
	}
	return sb.String()
}

// checkStallLocked looks for tasks that are stuck for good (stuckLocked)
// and, unless a resolver frees them, fails the run with a *DeadlockError
// that says what each waits on. It runs whenever a task blocks or
// finishes, so a deadlock is seen the moment it happens, with no timer.
// While some task is not blocked, and the pool looks for no stuck part
// short of all (Options.Local), nothing can be stuck: that test, the
// answer every time a task of a flowing chain waits, is made here, where
// it is inlined, and not behind two calls (stuckLocked says the same).
func (p *Pool) checkStallLocked() {
	if p.blocked == 0 || !p.o.Local && p.blocked < p.live {
		return
	}
	p.checkStallAtLocked(time.Time{})
}

// checkStallAtLocked is checkStallLocked with waits outside measured at
// clock; the zero time means now, read only if a task waits outside.
func (p *Pool) checkStallAtLocked(clock time.Time) {
	for tries := 0; p.err == nil && p.blocked > 0; tries++ {
		stuck := p.stuckLocked(clock)
		if len(stuck) == 0 {
			return
		}
		d := p.deadlockOf(stuck)
		// Each resolution wakes a stuck task; a few rounds cover several
		// stuck parts at once. A resolver that wakes no one is not asked
		// forever.
		if tries <= len(p.procs) {
			if r := p.o.Resolver; r != nil {
				if q := r(d); q != nil && q.pool == p {
					q.resolveLocked()
					continue
				}
			}
			if p.spill != nil {
				ok, err := p.resolveLocked(stuck)
				if err != nil {
					p.abortLocked(err)
					return
				}
				if ok {
					continue
				}
			}
		}
		p.abortLocked(d)
		return
	}
}

// describeLocked says what the waiting task t waits on.
func (p *Pool) describeLocked(t *proc) Wait {
	w := Wait{Task: t.name, Index: t.index, Free: p.freeLocked(), Total: p.nbuf}
	switch t.wait.kind {
	case waitRead:
		w.On = "read"
	case waitAny:
		w.On, w.Any, w.Queue = "read", true, t.anyNames()
	case waitRoom:
		w.On = "room"
	case waitFree:
		w.On = "free"
	case waitDrain:
		w.On = "drain"
	case waitNone:
		if t.outside != 0 && t.prog >= 0 {
			w.On, w.Queue, w.Op, w.For = "program", p.programs[t.prog], t.outside, now().Sub(t.outSince)
		}
	}
	if q := t.wait.q; q != nil {
		w.Queue, w.Len, w.Cap = q.name, q.occupancy(), q.cap
	}
	return w
}
