package buffer

import (
	"time"
)

// Time blocked. A task's time blocked in this package (Proc.Blocked, which
// --stats, the live view's busy share, --cap auto's time per record and
// auto replicas all read) and its queues' ReadWait and WriteWait are sums
// over its waits. Timing every wait costs two readings of the clock, and a
// reading (25 to 130 ns on the project's machine, depending on its load)
// is as much as a whole handoff of a single-record buffer between two
// goroutines: on a chain of such buffers it was a quarter to a third of
// the CPU. So waits are timed by sampling:
//
//   - A task's wait is timed with probability 1/k, drawn at random when it
//     begins, and a timed wait counts k times its length. Whatever the
//     lengths, the expected count of every wait is its length (the
//     Horvitz-Thompson estimator), so sums over many waits are right on
//     average, and over n waits the error shrinks as 1/sqrt(n).
//   - k adapts to how often the task waits: 1 (every wait timed, exactly)
//     while it waits less often than every sampleGap, and up to maxK when
//     it waits every sampleGap/maxK or more often. A task then reads the
//     clock about twice per sampleGap at most.
//   - A wait that goes on is not left to chance: the pool's tick, armed
//     when an untimed wait begins and at most every tickEvery, times every
//     wait in course from then on, exactly (a timed one counts k times only
//     its part before the tick), and sets the task's k back to 1. So a
//     long wait after a run of short ones, which the first rule alone
//     could miss whole or count k times, is off by at most k times the
//     tick's delay, tickEvery and what the Go scheduler adds to it.
//
// Accuracy. A task that waits less often than every sampleGap, such as a
// bottleneck busy for microseconds per record or a task waiting on a slow
// source, is timed exactly. A faster one, over a window with n waits, is
// within about 2*sqrt(k/n) of its blocked time: over the 5 ms of a --cap
// auto sample of a stage that waits every 200 ns (n = 25,000, k = 16), a
// few percent; over a run, much less. TestWaitTimeSampled checks these
// against timing every wait.
//
// A task whose time blocked nothing reads over windows of milliseconds
// (Proc.SampleSparsely: no --cap auto, no auto replicas, only --stats over
// the whole run and the live view, as under ros) may go up to sparseK
// instead of maxK: a quarter of the clock readings, which on a chain of
// single records under ros were a tenth of the CPU, for twice the error
// over the same n (over 100 ms of waits every 250 ns, n = 400,000, about
// 2.5%; over a run of seconds, under 1%).
//
// The readings are of the monotonic clock only (time.Since on the pool's
// epoch), half the cost of time.Now. All of this is done under the pool's
// lock.

const (
	sampleGap = 32 * time.Microsecond
	maxK      = 16
	sparseK   = 64
	tickEvery = time.Millisecond
)

// waitClock is the time accounting of one task; the pool's lock guards it.
type waitClock struct {
	// blocked is the estimated time blocked in finished waits, and in the
	// parts of the current one counted so far.
	blocked time.Duration
	// The current wait: stamp is the pool's clock when its timing began
	// (0: untimed so far), weight what each nanosecond of it counts, and
	// sofar what it has counted into blocked already (at a tick).
	stamp  int64
	weight int64
	sofar  time.Duration
	// last is what the last finished wait counted, for its queue.
	last time.Duration
	// Sampling: a wait is timed with probability 1/k (k a power of two).
	// sampled is the clock at the start of the last timed wait and waits
	// the waits begun since then, this one included.
	k       int64
	sampled int64
	waits   int64
	// rng is the state of the task's draws (splitmix64: a few
	// nanoseconds, and no shared state between tasks).
	rng uint64
	// most is the greatest k: maxK, or sparseK (Proc.SampleSparsely); 0
	// means maxK.
	most int64
	// exact, set by tests, times every wait.
	exact bool
}

// draw returns the next pseudo-random number of w.
func (w *waitClock) draw() uint64 {
	w.rng += 0x9e3779b97f4a7c15
	z := w.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// clockLocked reads the pool's monotonic clock: nanoseconds since the
// pool was made, plus one, so that 0 means "not read".
func (p *Pool) clockLocked() int64 {
	if p.fakeClock != nil {
		return p.fakeClock()
	}
	return int64(time.Since(p.epoch)) + 1
}

// beginWaitLocked starts t's wait: timed, or not (see above).
func (p *Pool) beginWaitLocked(t *proc) {
	w := &t.waits
	w.waits++
	w.sofar = 0
	if w.k > 1 && !w.exact && w.draw()&uint64(w.k-1) != 0 {
		w.stamp = 0
		p.armTickLocked()
		return
	}
	c := p.clockLocked()
	w.stamp, w.weight = c, max(w.k, 1)
	if w.sampled != 0 {
		// The mean time between waits since the last timed one sets k.
		gap := (c - w.sampled) / w.waits
		k := int64(1)
		most := w.most
		if most == 0 {
			most = maxK
		}
		for k < most && gap*(2*k) <= int64(sampleGap) {
			k *= 2
		}
		w.k = k
	}
	w.sampled, w.waits = c, 0
}

// endWaitLocked ends t's wait and counts it.
func (p *Pool) endWaitLocked(t *proc) {
	w := &t.waits
	var d time.Duration
	if w.stamp != 0 {
		d = time.Duration(w.weight * (p.clockLocked() - w.stamp))
	}
	w.blocked += d
	w.last = w.sofar + d
	w.stamp, w.sofar = 0, 0
}

// blockedLocked is t's time blocked so far, the current wait's counted
// part included.
func (p *Pool) blockedLocked(t *proc) time.Duration {
	w := &t.waits
	d := w.blocked
	if w.stamp != 0 && t.wait.kind != waitNone {
		d += time.Duration(w.weight * (p.clockLocked() - w.stamp))
	}
	return d
}

// armTickLocked makes sure the tick comes within tickEvery.
func (p *Pool) armTickLocked() {
	if p.tickArmed || p.closed {
		return
	}
	p.tickArmed = true
	p.watchers.Add(1)
	if p.tick == nil {
		p.tick = time.AfterFunc(tickEvery, p.tickFired)
	} else {
		p.tick.Reset(tickEvery)
	}
}

// tickFired is the tick: it times every wait in course from now on.
func (p *Pool) tickFired() {
	defer p.watchers.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tickArmed = false
	p.timeWaitsLocked()
}

// timeWaitsLocked times every wait in course exactly from now on: a timed
// one counts its part so far, k times, and every waiting task's k goes
// back to 1, since a wait that lasts to a tick says its task now waits
// long.
func (p *Pool) timeWaitsLocked() {
	var c int64
	for _, t := range p.procs {
		if t.wait.kind == waitNone {
			continue
		}
		if c == 0 {
			c = p.clockLocked()
		}
		w := &t.waits
		if w.stamp != 0 {
			d := time.Duration(w.weight * (c - w.stamp))
			w.blocked += d
			w.sofar += d
		}
		w.stamp, w.weight, w.k = c, 1, 1
	}
}

// stopTickLocked stops the tick if it is armed; the pool is closing, so
// it is not armed again. A run of it already under way is waited for
// through p.watchers.
func (p *Pool) stopTickLocked() {
	if p.tickArmed && p.tick.Stop() {
		p.tickArmed = false
		p.watchers.Done()
	}
}
