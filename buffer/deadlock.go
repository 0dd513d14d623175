package buffer

import (
	"fmt"
	"strings"
)

// Wait says what one blocked task waits on when a pool stalls.
type Wait struct {
	Task  string
	Index int
	// On is "read" (its input queue is empty), "room" (its output queue is
	// full), "free" (FREE is empty) or "drain" (it waits for its reader to
	// take everything, before it reports bad input).
	On    string
	Queue string // the queue, for "read" and "room"
	Len   int    // buffers in the queue (queued, reserved and being read)
	Cap   int
	Free  int // buffers in FREE
	Total int // B
}

func (w Wait) String() string {
	switch w.On {
	case "read":
		return fmt.Sprintf("%s waits to read %s (empty, cap %d)", w.Task, w.Queue, w.Cap)
	case "room":
		return fmt.Sprintf("%s waits for room in %s (%d/%d)", w.Task, w.Queue, w.Len, w.Cap)
	case "drain":
		return fmt.Sprintf("%s waits for its reader to take all of %s", w.Task, w.Queue)
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
	// Hint, when set by a scheduler, says what to do (for example the B
	// that Theorem 3.2 gives for the graph).
	Hint string
}

func (e *DeadlockError) Error() string {
	var sb strings.Builder
	if e.Artificial {
		sb.WriteString("deadlock (artificial: out of buffers or queue room): ")
	} else {
		sb.WriteString("deadlock (real: every task waits to read): ")
	}
	for i, w := range e.Waits {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(w.String())
	}
	if e.Hint != "" {
		sb.WriteString("; ")
		sb.WriteString(e.Hint)
	}
	return sb.String()
}

// checkStallLocked fails the run with a *DeadlockError when every live task
// is blocked, unless the resolver makes one runnable. It runs whenever a
// task blocks or finishes, so a stall is seen the moment it happens.
func (p *Pool) checkStallLocked() {
	if p.err != nil || p.live == 0 || p.blocked < p.live {
		return
	}
	d := p.deadlockLocked()
	if p.resolve != nil && p.resolve(d) && p.blocked < p.live {
		return
	}
	p.abortLocked(d)
}

func (p *Pool) deadlockLocked() *DeadlockError {
	d := &DeadlockError{}
	for _, t := range p.procs {
		if t.done || t.wait.kind == waitNone {
			continue
		}
		w := p.describeLocked(t)
		d.Artificial = d.Artificial || w.On != "read"
		d.Waits = append(d.Waits, w)
	}
	return d
}

// describeLocked says what the waiting task t waits on.
func (p *Pool) describeLocked(t *Proc) Wait {
	w := Wait{Task: t.name, Index: t.index, Free: len(p.free), Total: len(p.bufs)}
	switch t.wait.kind {
	case waitRead:
		w.On = "read"
	case waitRoom:
		w.On = "room"
	case waitFree:
		w.On = "free"
	case waitDrain:
		w.On = "drain"
	}
	if q := t.wait.q; q != nil {
		w.Queue, w.Len, w.Cap = q.name, q.occupancy(), q.cap
	}
	return w
}
