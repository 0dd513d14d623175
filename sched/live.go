package sched

import (
	"slices"
	"sync"
	"time"
)

// Live is a window on one run while it goes: pass it in Options.Live and
// call Snapshot, from any goroutine and as often as wanted, to read the
// counters the run's queues and tasks keep anyway (those --stats prints at
// the end). Nothing is counted for it: between two snapshots a run costs
// what it costs without one, and a snapshot takes the pool's lock for a
// moment per queue and per task.
//
// A zero Live is ready to use and safe for concurrent use. It watches one
// run at a time. Before the run starts, Snapshot returns a Snapshot with
// no tasks; once the run has ended, the run's last one (Running false).
type Live struct {
	mu     sync.Mutex
	sample func(*Snapshot) // the running policy's; nil when no run goes
	last   Snapshot
}

// Snapshot is the counters of a run at one moment. It shares nothing with
// the run: the caller may keep it.
type Snapshot struct {
	// Running is false once the run has ended.
	Running bool
	// Policy is the policy that runs (Plan.Runs).
	Policy  Policy
	Elapsed time.Duration
	// Tasks and Edges are in the order of the graph that runs: under the
	// fused policy, the fused graph (as in Stats).
	Tasks []TaskSample
	Edges []EdgeSample
}

// TaskSample is one task's counters.
type TaskSample struct {
	Name string
	// Index is the task's topological index (graph.Task.Index): sources
	// first.
	Index int
	// Busy is the wall time since the run started that the task did not
	// spend waiting for a queue or for FREE; a wait on a file, a pipe or
	// a program counts as busy. Blocked is the rest. Blocked is exact
	// for a task that waits less often than every 32 µs; a task that
	// waits more often has its short waits sampled, so over a window of
	// n waits its Blocked is within about 2*sqrt(16/n) (4% over 5 ms of
	// waits every 200 ns), and a long wait after short ones is off by at
	// most 16 ms (buffer.Proc.Blocked).
	Busy, Blocked time.Duration
	// Records and Bytes are what the task has taken in, summed over its
	// inputs; for a source, what it has put out. They are counted as they
	// enter a queue, so a reader is ahead of what it has read by at most
	// the queue's buffers.
	Records, Bytes int64
	// Done is set once the task has returned.
	Done bool
	ins  int // input edges
}

// EdgeSample is one queue's counters.
type EdgeSample struct {
	Name     string
	From, To int // positions in Snapshot.Tasks
	// Len is what counts against Cap now: queued buffers, the writer's
	// reservations and what the reader holds (buffer.QueueStats.Len).
	Len, Cap       int
	Records, Bytes int64
}

// Snapshot returns the run's counters now.
func (l *Live) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sample == nil {
		s := l.last
		s.Tasks, s.Edges = slices.Clone(s.Tasks), slices.Clone(s.Edges)
		return s
	}
	var s Snapshot
	l.sample(&s)
	return s
}

// Attach makes sample the source of l's snapshots while a run goes, and
// returns what ends it: detach keeps the run's last snapshot. The policies
// of this package attach when their run starts; a runner outside it (the
// spool's workers) may do the same. sample fills a Snapshot, reusing its
// slices, with Running set; it is called with l's lock held, from the
// goroutine that calls Snapshot, and must not call l. On a nil Live,
// Attach does nothing.
func (l *Live) Attach(sample func(*Snapshot)) (detach func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	l.sample = sample
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.sample == nil {
			return
		}
		l.last = Snapshot{}
		l.sample(&l.last)
		l.last.Running = false
		l.sample = nil
	}
}

// sampleRun fills s with r's counters, reusing s's slices.
func (r *runState) sampleRun(s *Snapshot) {
	g := r.g
	s.Running, s.Policy, s.Elapsed = true, r.pl.Runs, time.Since(r.start)
	s.Edges = slices.Grow(s.Edges[:0], len(g.Edges))
	for k, e := range g.Edges {
		qs := r.queues[k].Stats()
		s.Edges = append(s.Edges, EdgeSample{Name: e.Name, From: e.From.Task, To: e.To.Task,
			Len: qs.Len, Cap: qs.Cap, Records: qs.Records, Bytes: qs.Bytes})
	}
	s.Tasks = slices.Grow(s.Tasks[:0], len(g.Tasks))
	for i, t := range g.Tasks {
		ts := TaskSample{Name: t.Name, Index: t.Index}
		r.mu.Lock()
		if r.ended[i] {
			st := r.st.Tasks[i]
			ts.Busy, ts.Blocked, ts.Done = st.Busy, st.Blocked, true
		}
		r.mu.Unlock()
		if !ts.Done {
			ts.Blocked = r.procs[i].Blocked()
			ts.Busy = max(0, s.Elapsed-ts.Blocked)
		}
		s.Tasks = append(s.Tasks, ts)
	}
	s.addTotals()
}

// addTotals sets each task's Records and Bytes from its edges: what came
// in, or for a source, what went out.
func (s *Snapshot) addTotals() {
	for i := range s.Tasks {
		t := &s.Tasks[i]
		t.Records, t.Bytes, t.ins = 0, 0, 0
	}
	for _, e := range s.Edges {
		t := &s.Tasks[e.To]
		t.Records += e.Records
		t.Bytes += e.Bytes
		t.ins++
	}
	for _, e := range s.Edges {
		if t := &s.Tasks[e.From]; t.ins == 0 {
			t.Records += e.Records
			t.Bytes += e.Bytes
		}
	}
}
