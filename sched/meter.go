package sched

import "time"

// Meter turns snapshots of one run, taken one after another, into each
// task's rates, smoothed as exponentially weighted moving averages (EWMA)
// in which the newest sample weighs alpha. --cap auto's sampler reads
// NsPerRecord from one every 5 ms; the live view reads the rest.
//
// A Meter is not safe for concurrent use. Make one with NewMeter.
type Meter struct {
	alpha float64
	prev  Snapshot // counters of the last sample
	mark  []mark
	rates []Rates
}

// mark is where a task's time per record was last measured from: its busy
// time and records at the last sample in which it took records in.
type mark struct {
	busy time.Duration
	recs int64
}

// Rates are one task's smoothed rates. A finished task's are zero, except
// NsPerRecord, which keeps its last value.
type Rates struct {
	Records, Bytes float64 // taken in (a source: put out) per second
	// Busy is the share of wall time the task was busy (TaskSample.Busy),
	// from 0 to 1. For a task that waits more often than every 32 µs it
	// rests on sampled waits: each sample is within a few percent, and
	// the EWMA smooths it further (see TaskSample.Busy).
	Busy float64
	// NsPerRecord is busy time per record taken in; it changes only in
	// samples where records moved, and is 0 before the first. It has
	// Busy's accuracy.
	NsPerRecord float64
}

// NewMeter returns a Meter whose newest sample weighs alpha, in (0, 1].
func NewMeter(alpha float64) *Meter { return &Meter{alpha: alpha} }

// Add takes in the next snapshot of the run.
func (m *Meter) Add(s *Snapshot) {
	if len(m.rates) != len(s.Tasks) {
		m.rates = make([]Rates, len(s.Tasks))
		m.mark = make([]mark, len(s.Tasks))
		m.prev = Snapshot{Tasks: make([]TaskSample, len(s.Tasks))}
	}
	dt := (s.Elapsed - m.prev.Elapsed).Seconds()
	for i, t := range s.Tasks {
		r, was := &m.rates[i], m.prev.Tasks[i]
		if t.Done {
			*r = Rates{NsPerRecord: r.NsPerRecord}
			continue
		}
		if dt > 0 {
			first := m.prev.Elapsed == 0
			r.Records = m.smooth(r.Records, float64(t.Records-was.Records)/dt, first)
			r.Bytes = m.smooth(r.Bytes, float64(t.Bytes-was.Bytes)/dt, first)
			busy := min(1, max(0, (t.Busy-was.Busy).Seconds()/dt))
			r.Busy = m.smooth(r.Busy, busy, first)
		}
		mk := &m.mark[i]
		if dr := t.Records - mk.recs; dr > 0 {
			// Nothing moved: keep the last estimate (a task that waits
			// long for its first record is not slow per record).
			x := float64(max(0, t.Busy-mk.busy).Nanoseconds()) / float64(dr)
			r.NsPerRecord = m.smooth(r.NsPerRecord, x, r.NsPerRecord == 0)
			mk.busy, mk.recs = t.Busy, t.Records
		}
	}
	m.prev.Elapsed = s.Elapsed
	copy(m.prev.Tasks, s.Tasks)
}

func (m *Meter) smooth(old, x float64, first bool) float64 {
	if first {
		return x
	}
	return m.alpha*x + (1-m.alpha)*old
}

// Rates returns each task's rates, in the snapshots' task order. The slice
// is the Meter's and changes with the next Add.
func (m *Meter) Rates() []Rates { return m.rates }

// busyNeck is the Busy share from which the busiest task counts as the
// bottleneck: below it every task waits more than it works, and the
// pipeline is held back by something else (its input, the disk).
const busyNeck = 0.5

// Bottleneck returns the position of the task that holds the run back:
// the busiest unfinished one, if it is busy at least half the time; -1
// when none is.
func (m *Meter) Bottleneck() int {
	neck := -1
	for i, r := range m.rates {
		if m.prev.Tasks[i].Done || r.Busy < busyNeck {
			continue
		}
		if neck < 0 || r.Busy > m.rates[neck].Busy {
			neck = i
		}
	}
	return neck
}
