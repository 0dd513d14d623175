package buffer

import (
	"time"
)

// Waits outside the process. A task that copies between its ports and the
// pipes of an external program (a bridge) spends its waits in system
// calls, where the pool cannot see them: to the wait-for analysis of
// waitfor.go it looks busy, and a stall that runs through the program
// (a pipe the program does not drain because it waits on another pipe
// that tpipe does not fill) hides behind it for ever.
//
// So a bridge says when it is about to wait on a pipe with nothing moved
// (Ports.WaitOutside) and when bytes move again (Ports.Moved). Once it has
// waited Options.Grace with nothing moved, the analysis counts it as
// blocked, on its program. The program itself is a black box; the
// analysis treats it as a task that may act unless every one of its
// bridges is blocked or done and at least one of them waits in the pool:
//
//   - a bridge blocked outside proves the program is not using that pipe
//     (a full pipe is not being read, an empty one not written);
//   - a bridge blocked in the pool (on an empty queue, a full one, FREE)
//     is a pipe the program may be waiting on, and that tpipe serves no
//     more;
//   - a program none of whose bridges waits in the pool waits on nothing of
//     ours: it computes, sleeps or waits on the world, and may act.
//
// A program is stuck when it may not act by this rule and no bridge of it
// can be woken; its bridges waiting outside are then stuck with it. The
// grace period is the price of a black box: a program that is merely
// slow, with one bridge waiting in the pool, may be taken for stuck, and
// the resolver then grows or spills a queue it did not have to. That costs
// memory or disk within the bound, never a wrong result. A false report
// of a real deadlock would need every stuck task to wait to read, which a
// graph without cycles cannot give.
//
// A queue that was grown or spilled because its reader is such a bridge
// overflows to disk from then on (Queue.overflow), until the bridge moves
// again: each stall through a program costs a grace period to be seen, and
// without this the writer would stall again a capacity later.
//
// A task entering a wait outside arms one timer for the moment its grace
// runs out; when it fires, the pool looks for stuck tasks as it does when
// a task blocks, and arms the timer again for the next wait still in its
// grace. There is no ticker and no goroutine while nothing waits outside.

// DefaultGrace is Options.Grace when it is zero.
const DefaultGrace = 200 * time.Millisecond

// SetProgram says that the task is a bridge to the external program
// named program (one process): it copies between its ports and that
// program's pipes, and reports its waits on them with Ports.WaitOutside
// and Ports.Moved. The bridges of one program share the name, which
// deadlock reports use. It turns on the pool's local detection
// (Options.Local). Call it before the task starts.
func (c *Proc) SetProgram(program string) {
	t := c.t()
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	p.o.Local = true
	for i, name := range p.programs {
		if name == program {
			t.prog = i
			return
		}
	}
	t.prog = len(p.programs)
	p.programs = append(p.programs, program)
}

// WaitOutside says the task is about to wait on a pipe of its program
// (see Proc.SetProgram) with nothing moved since its last call to Moved:
// op is OpWrite when the pipe is full (the program does not read it) and
// OpRead when it is empty (the program does not write it). It first hands
// over partially filled output buffers, as a wait in this package does.
// The task must call Moved once bytes move or the operation ends, before
// it uses its ports again. Calling WaitOutside again without Moved keeps
// the start of the wait.
func (ps *Ports) WaitOutside(op Op) {
	t := ps.t()
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	t.idleLocked()
	if t.outside == 0 {
		t.outSince = now()
		p.outside++
	}
	t.outside = op
	p.armLocked(t.outSince.Add(p.grace()))
}

// Moved says bytes moved through the program's pipe, or the operation on
// it ended: the task's wait outside, if any, is over.
func (ps *Ports) Moved() {
	t := ps.t()
	p := t.pool
	p.mu.Lock()
	t.endOutsideLocked()
	p.mu.Unlock()
}

func (t *proc) endOutsideLocked() {
	if t.outside != 0 {
		t.outside = 0
		t.outSince = time.Time{}
		t.pool.outside--
		for _, in := range t.ins {
			in.q.overflow = false
		}
	}
}

// spillOverflowLocked spills the queues read by stuck bridges, for a task
// about to wait for FREE. It returns the buffers freed.
func (p *Pool) spillOverflowLocked() (int, error) {
	if p.spill == nil {
		return 0, nil
	}
	for _, q := range p.queues {
		if q.overflow && q.n > 0 {
			return q.spillLocked()
		}
	}
	return 0, nil
}

func (p *Pool) grace() time.Duration {
	if p.o.Grace > 0 {
		return p.o.Grace
	}
	return DefaultGrace
}

// stuckOutsideLocked reports whether t has waited outside, on its program,
// for the grace period with nothing moved (at clock).
func (t *proc) stuckOutsideLocked(clock time.Time) bool {
	return t.outside != 0 && t.prog >= 0 && !t.done && t.wait.kind == waitNone &&
		clock.Sub(t.outSince) >= t.pool.grace()
}

// armLocked makes sure the pool looks for stuck tasks at the latest at
// at. One timer serves every wait: it is moved earlier when needed and
// armed again for the next wait when it fires.
func (p *Pool) armLocked(at time.Time) {
	if p.closed || p.err != nil {
		return
	}
	if p.watch != nil {
		if !at.Before(p.watchAt) {
			return
		}
		if p.watch.Stop() {
			p.watchers.Done()
		}
	}
	p.watchGen++
	gen := p.watchGen
	p.watchAt = at
	p.watchers.Add(1)
	// On the package's clock, as the waits are (a test may set it).
	p.watch = time.AfterFunc(at.Sub(now()), func() {
		defer p.watchers.Done()
		p.watchFired(gen)
	})
}

// watchFired is the timer's work: a wait outside has used up its grace.
func (p *Pool) watchFired(gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.watchGen {
		return // stopped too late, and replaced by an earlier timer
	}
	p.watch = nil
	if p.closed || p.err != nil {
		return
	}
	// One reading of the clock for the look and for choosing the next
	// one: a wait still in its grace for this look must get another. Read
	// twice, a wait whose grace ran out between the readings (the
	// goroutine descheduled under load) was in grace for the look and
	// past it for the choice, so no look ever saw it, and a stall it
	// closed hung the run (the soak test of issue 13, under load).
	clock := now()
	p.checkStallAtLocked(clock)
	if p.outside == 0 || p.err != nil {
		return
	}
	// The next wait to run out of grace.
	var next time.Time
	for _, t := range p.procs {
		if t.outside == 0 || t.done {
			continue
		}
		if at := t.outSince.Add(p.grace()); at.After(clock) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if !next.IsZero() {
		p.armLocked(next)
	}
}

// stopWatch stops the timers and waits for a run of one in progress; the
// pool takes no new one.
func (p *Pool) stopWatch() {
	p.mu.Lock()
	p.closed = true
	if p.watch != nil && p.watch.Stop() {
		p.watchers.Done()
	}
	p.watch = nil
	p.stopTickLocked()
	p.mu.Unlock()
	p.watchers.Wait()
}
