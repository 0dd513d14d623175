package buffer

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Local deadlock detection. A pool used to see a stall only when every
// live task was blocked in it; in a graph, one part can be stuck while
// another still runs (or waits in a system call, where tpipe cannot see
// it). So whenever a task blocks or finishes, the pool works out which
// blocked tasks could still be woken, in the manner of Geilen and Basten's
// local detection for Kahn process networks:
//
//   - a task that is not blocked in the pool (running, not yet started, in a
//     system call) may act, unless it is a bridge to an external program
//     that has waited on the program's pipe for a grace period with nothing
//     moved: it may act only if its program may (see outside.go);
//   - a task waiting to read a queue may be woken if that queue's writer
//     may act (it may write, or finish and so send eof); one reading
//     whichever input comes first, if any of its writers may act;
//   - a task waiting for room, or for its reader to drain, may be woken if
//     the queue's reader may act;
//   - a task waiting for FREE may be woken if some task that may act holds
//     a buffer or reads a queue with buffers in it: only such a task can
//     give a buffer back.
//
// The blocked tasks outside that set can never be woken by anyone: they
// are deadlocked, whatever the rest of the graph does. The set is a least
// fixed point, computed in a few passes over the tasks (graphs are small).

// stuckLocked returns the blocked tasks that no task that may act can ever
// wake, in registration order; nil if there are none. Waits outside are
// measured at clock; the zero time means now.
func (p *Pool) stuckLocked(clock time.Time) []*proc {
	if p.blocked == 0 || (!p.o.Local && p.blocked < p.live) {
		return nil
	}
	may := p.mayAct
	if cap(may) < len(p.procs) {
		may = make([]bool, len(p.procs))
		p.mayAct = may
	}
	may = may[:len(p.procs)]
	if p.outside > 0 && clock.IsZero() {
		clock = now()
	}
	for i, t := range p.procs {
		t.slot = i
		may[i] = !t.done && t.wait.kind == waitNone && !t.stuckOutsideLocked(clock)
	}
	// A program may act while one of its bridges may, or while none of
	// them waits in the pool (see outside.go).
	progMay, progPool := p.progMay[:0], p.progPool[:0]
	for range p.programs {
		progMay, progPool = append(progMay, false), append(progPool, false)
	}
	p.progMay, p.progPool = progMay, progPool
	for i, t := range p.procs {
		if t.prog < 0 || t.done {
			continue
		}
		progMay[t.prog] = progMay[t.prog] || may[i]
		progPool[t.prog] = progPool[t.prog] || t.wait.kind != waitNone
	}
	for k := range progMay {
		progMay[k] = progMay[k] || !progPool[k]
	}
	canFree := func() bool {
		for i, u := range p.procs {
			if may[i] && u.holdsOrFeedsLocked() {
				return true
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for i, t := range p.procs {
			if may[i] || t.done {
				continue
			}
			ok := false
			switch t.wait.kind {
			case waitNone: // blocked outside, on its program
				ok = progMay[t.prog]
			case waitRead:
				ok = t.wait.q.writer != nil && may[t.wait.q.writer.slot]
			case waitAny:
				for _, in := range t.ins {
					if w := in.q.writer; !in.eof && w != nil && may[w.slot] {
						ok = true
						break
					}
				}
			case waitRoom, waitDrain:
				ok = t.wait.q.reader != nil && may[t.wait.q.reader.slot]
			case waitFree:
				ok = canFree()
			}
			if ok {
				may[i] = true
				changed = true
				if t.prog >= 0 {
					progMay[t.prog] = true
				}
			}
		}
	}
	var stuck []*proc
	for i, t := range p.procs {
		if !may[i] && !t.done {
			stuck = append(stuck, t)
		}
	}
	return stuck
}

// holdsOrFeedsLocked reports whether t could give a buffer back to FREE
// without anyone else moving first: it holds one, or it reads a queue that
// has buffers queued or on disk.
func (t *proc) holdsOrFeedsLocked() bool {
	if t.got != nil {
		return true
	}
	for _, in := range t.ins {
		if (in.cur != nil && in.cur != in.priv) || len(in.kept) > 0 || in.q.n > 0 {
			return true
		}
	}
	for _, o := range t.outs {
		if o.pend != nil {
			return true
		}
	}
	return false
}

// Resolution. Options.Spill turns on the pool's own resolver for graphs whose
// shape no fixed B makes safe (a tee whose branches are read unevenly, a
// join that reads one input first). It follows Parks' rule for bounded
// Kahn networks: of the full queues whose writers are stuck, grow the
// smallest. Growing costs a buffer only when the writer then takes one, so
// it is done only while FREE has buffers; once FREE is empty, the buffers
// queued in a stuck queue go to a temp file instead (see spill.go), so
// record memory never exceeds B x S.

// resolveLocked tries to make one of the stuck tasks runnable. It returns
// an error only when spilling failed (the disk is full).
func (p *Pool) resolveLocked(stuck []*proc) (bool, error) {
	// Full queues whose writer is stuck waiting for room; their reader is
	// stuck too (or the writer could be woken).
	var full []*Queue
	freeWait := false
	for _, t := range stuck {
		switch t.wait.kind {
		case waitRoom:
			full = append(full, t.wait.q)
		case waitFree:
			freeWait = true
		}
	}
	// Of the full queues, those whose reader waits for something other than
	// room come first: along a chain of writers each waiting for room, only
	// the last queue's reader is held by the cycle itself, and growing or
	// spilling an earlier queue only moves the stall one step on (and makes
	// the same records go to disk twice). Then the smallest, as Parks says.
	endOfChain := func(q *Queue) bool { return q.reader == nil || q.reader.wait.kind != waitRoom }
	for _, q := range p.queues {
		if r := q.reader; r != nil && r.outside != 0 && slices.Contains(stuck, r) {
			q.overflow = true // see outside.go
		}
	}
	sort.SliceStable(full, func(i, j int) bool {
		if a, b := endOfChain(full[i]), endOfChain(full[j]); a != b {
			return a
		}
		return full[i].cap < full[j].cap
	})
	if len(full) > 0 && p.freeLocked() > 0 {
		full[0].resolveLocked()
		return true, nil
	}
	if len(full) == 0 && !freeWait {
		return false, nil // every stuck task waits to read: a real deadlock
	}
	// Spill: the smallest full queue that has buffers queued; failing
	// that (the stuck tasks wait for FREE), the stuck reader's queue with
	// the most buffers queued.
	var victim *Queue
	for _, q := range full {
		if q.n > 0 {
			victim = q
			break
		}
	}
	if victim == nil {
		for _, q := range p.queues {
			if q.n > 0 && q.reader != nil && slices.Contains(stuck, q.reader) && (victim == nil || q.n > victim.n) {
				victim = q
			}
		}
	}
	if victim == nil {
		return false, nil
	}
	n, err := victim.spillLocked()
	return n > 0, err
}

// deadlockOf is the error for stuck tasks no resolver could help: the
// wait of each, in the order of the wait-for cycle where there is one.
func (p *Pool) deadlockOf(stuck []*proc) *DeadlockError {
	d := &DeadlockError{}
	for _, t := range stuck {
		w := p.describeLocked(t)
		// A program that waits is neither: more memory does not help
		// it, and its bridges' neighbours in the pool say what would.
		d.Artificial = d.Artificial || (w.On != "read" && w.On != "program")
		d.Waits = append(d.Waits, w)
	}
	if len(stuck) < p.live {
		d.Local = true
	}
	return d
}

// anyNames lists the inputs a task reading whichever comes first waits
// on.
func (t *proc) anyNames() string {
	var names []string
	for _, in := range t.ins {
		if !in.eof {
			names = append(names, in.q.name)
		}
	}
	return strings.Join(names, ", ")
}
