package buffer

import (
	"math"
	"testing"
	"time"
)

// waitSim drives one task's wait clock on a fake clock, with no
// goroutines: the task is busy for a while, then waits, and the test
// knows the truth to compare the estimate with.
type waitSim struct {
	p     *Pool
	t     *proc
	now   int64 // the fake clock
	truth time.Duration
}

func newWaitSim(tb testing.TB, seed uint64) *waitSim {
	p, err := NewPool(Options{Buffers: 1, RecordSize: 1})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := p.NewProc("t", 0, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	s := &waitSim{p: p, t: c.t(), now: 1}
	p.fakeClock = func() int64 { return s.now }
	p.closed = true // no real tick: the test calls timeWaitsLocked itself
	s.t.waits.rng = seed
	return s
}

// wait is busy for busy ns, then a wait of d ns; tickAt, if positive, is
// how far into the wait a tick comes.
func (s *waitSim) wait(busy, d, tickAt int64) {
	p, t := s.p, s.t
	s.now += busy
	p.mu.Lock()
	t.wait.kind = waitRead
	p.beginWaitLocked(t)
	if tickAt > 0 && tickAt < d {
		s.now += tickAt
		p.timeWaitsLocked()
		s.now += d - tickAt
	} else {
		s.now += d
	}
	p.endWaitLocked(t)
	t.wait.kind = waitNone
	p.mu.Unlock()
	s.truth += time.Duration(d)
}

func (s *waitSim) blocked() time.Duration {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.blockedLocked(s.t)
}

// A task that waits less often than every sampleGap has every wait timed:
// its time blocked is exact.
func TestWaitTimeExactWhenRare(t *testing.T) {
	s := newWaitSim(t, 1)
	for i := range 10000 {
		s.wait(int64(sampleGap), int64(1+i%977*37), 0)
	}
	if got := s.blocked(); got != s.truth {
		t.Fatalf("blocked %v, want exactly %v", got, s.truth)
	}
	if s.t.waits.k != 1 {
		t.Fatalf("k = %d, want 1", s.t.waits.k)
	}
}

// A task that waits every 200 ns is sampled at 1 in maxK (1 in sparseK
// if it samples sparsely), and the estimate is right within the error
// the package doc states, over the whole run and over every window of
// 25,000 waits (5 ms).
func TestWaitTimeSampled(t *testing.T) {
	for _, tc := range []struct {
		sparse bool
		k      int64
		run    float64 // the whole run's bound
	}{
		{false, maxK, 0.01},
		// Four standard errors, sqrt(k/n) each, over the run's million
		// waits: 3.2%, where the seeds give 0.8 to 1.9%.
		{true, sparseK, 4 * math.Sqrt(sparseK/1e6)},
	} {
		for seed := range uint64(4) {
			s := newWaitSim(t, seed+1)
			if tc.sparse {
				(*Proc)(s.t).SampleSparsely()
			}
			const window = 25000
			var worst float64
			for range 40 {
				b0, t0 := s.blocked(), s.truth
				for i := range window {
					s.wait(100, int64(50+i*7919%101), 0)
				}
				est, truth := float64(s.blocked()-b0), float64(s.truth-t0)
				worst = max(worst, math.Abs(est-truth)/truth)
			}
			if s.t.waits.k != tc.k {
				t.Fatalf("sparse %v: k = %d, want %d", tc.sparse, s.t.waits.k, tc.k)
			}
			// The doc's 2*sqrt(k/n) is about two standard errors; allow four.
			if bound := 4 * math.Sqrt(float64(tc.k)/window); worst > bound {
				t.Errorf("sparse %v, seed %d: worst window off by %.1f%%, want under %.1f%%", tc.sparse, seed, 100*worst, 100*bound)
			}
			if err := math.Abs(float64(s.blocked()-s.truth)) / float64(s.truth); err > tc.run {
				t.Errorf("sparse %v, seed %d: whole run off by %.2f%%, want under %.1f%%", tc.sparse, seed, 100*err, 100*tc.run)
			}
		}
	}
}

// A long wait after many short ones is timed exactly from the tick on:
// it counts its length, less at most the time before the tick if it was
// not drawn, plus at most k-1 times that time if it was.
func TestWaitTimeLongWaitAfterShortOnes(t *testing.T) {
	const long, tick = int64(50 * time.Millisecond), int64(tickEvery)
	drawn, missed := 0, 0
	for seed := range uint64(64) {
		s := newWaitSim(t, seed+1)
		for range 10000 {
			s.wait(100, 100, 0)
		}
		k := s.t.waits.k
		before := s.blocked()
		s.wait(100, long, tick)
		got := int64(s.blocked() - before)
		switch {
		case got == long-tick:
			missed++
		case got == long+(k-1)*tick:
			drawn++
		default:
			t.Fatalf("seed %d: the long wait counted %v, want %v (not drawn) or %v (drawn, k = %d)",
				seed, time.Duration(got), time.Duration(long-tick), time.Duration(long+(k-1)*tick), k)
		}
		if s.t.waits.k != 1 {
			t.Fatalf("k = %d after a wait that lasted to a tick, want 1", s.t.waits.k)
		}
	}
	if drawn == 0 || missed == 0 {
		t.Fatalf("drawn %d, missed %d of 64: both cases should occur", drawn, missed)
	}
}

// Blocked never goes down, during a wait and across a tick.
func TestWaitTimeBlockedNeverDecreases(t *testing.T) {
	s := newWaitSim(t, 7)
	for range 10000 {
		s.wait(100, 100, 0)
	}
	p, tk := s.p, s.t
	last := s.blocked()
	for i := range 200 {
		p.mu.Lock()
		tk.wait.kind = waitRead
		p.beginWaitLocked(tk)
		p.mu.Unlock()
		for j := range 5 {
			s.now += 300
			if (i+j)%7 == 0 {
				p.mu.Lock()
				p.timeWaitsLocked()
				p.mu.Unlock()
			}
			if b := s.blocked(); b < last {
				t.Fatalf("wait %d: blocked went from %v down to %v", i, last, b)
			} else {
				last = b
			}
		}
		p.mu.Lock()
		p.endWaitLocked(tk)
		tk.wait.kind = waitNone
		p.mu.Unlock()
		if b := s.blocked(); b < last {
			t.Fatalf("end of wait %d: blocked went from %v down to %v", i, last, b)
		} else {
			last = b
		}
	}
}
