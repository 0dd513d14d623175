package sched

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// groupRunner runs the groups of a graph whose edges live on disk (the
// serial policy's temporary files, the spool's places): each group, one
// task or the tasks that must run together (the serial policy's step, the
// spool's stage), in a small graph of its own,
// fed by a source task per input edge and drained by a sink task per
// output edge. It keeps the run's statistics; several groups may run at
// once.
type groupRunner struct {
	g     *graph.Graph
	pl    Plan
	o     Options
	start time.Time

	// A sampler (Options.Live) reads these under mu while groups run.
	mu      sync.Mutex
	st      *Stats
	ran     []bool // by task: its group has run
	running map[*liveGroup]struct{}
}

// liveGroup is the small graph of a group that runs, as a sampler sees it:
// task pos[n] of it is task group[n] of g, and its edge j is g's edge
// edges[j], which the group writes if out[j] (else it reads it).
type liveGroup struct {
	live  *Live
	group []int
	pos   []int
	edges []int
	out   []bool
}

func newGroupRunner(g *graph.Graph, pl Plan, o Options, p Policy) groupRunner {
	st := &Stats{Policy: p, RecordSize: pl.RecordSize, Bound: pl.Bound,
		Tasks: make([]TaskStats, len(g.Tasks)), Edges: make([]EdgeStats, len(g.Edges))}
	for i, t := range g.Tasks {
		st.Tasks[i] = TaskStats{Name: t.Name, Index: t.Index}
	}
	for k, e := range g.Edges {
		st.Edges[k] = EdgeStats{Name: e.Name, From: g.Tasks[e.From.Task].Name, To: g.Tasks[e.To.Task].Name, Cap: e.Cap}
	}
	return groupRunner{g: g, pl: pl, o: o, st: st, start: time.Now(), ran: make([]bool, len(g.Tasks)), running: map[*liveGroup]struct{}{}}
}

// edgesOf returns, for each task of g, the edges of its input and output
// ports, in port order.
func edgesOf(g *graph.Graph) (ins, outs [][]int) {
	ins, outs = make([][]int, len(g.Tasks)), make([][]int, len(g.Tasks))
	for i, t := range g.Tasks {
		ins[i], outs[i] = make([]int, t.In), make([]int, t.Out)
	}
	for k, e := range g.Edges {
		ins[e.To.Task][e.To.Port] = k
		outs[e.From.Task][e.From.Port] = k
	}
	return ins, outs
}

// runGroup runs the tasks of one group in a small graph of their own: for
// each, source(k) for its input edges k, the task, and sink(k) for its
// output edges. The sources and sinks bear their task's name, since their
// failures are the task's. Edges between two tasks of the group would be
// fed and drained like any other.
func (s *groupRunner) runGroup(ctx context.Context, group []int, ins, outs [][]int,
	source func(k int) task.Func, sink func(k int) (task.Func, error)) error {
	g := s.g
	sg := &graph.Graph{}
	ls := &liveGroup{live: &Live{}, group: group, pos: make([]int, len(group))}
	pos := ls.pos // where each task of the group is in sg
	for n, i := range group {
		t := g.Tasks[i]
		first := len(sg.Tasks)
		for _, k := range ins[i] {
			sg.Add(t.Name, 0, 1, source(k))
		}
		c := *t // Validate sets Index: g's task must not be touched
		pos[n] = len(sg.Tasks)
		sg.Tasks = append(sg.Tasks, &c)
		for p, k := range ins[i] {
			sg.Connect(first+p, 0, pos[n], p, g.Edges[k].Cap).Name = g.Edges[k].Name
			ls.edges, ls.out = append(ls.edges, k), append(ls.out, false)
		}
		for p, k := range outs[i] {
			fn, err := sink(k)
			if err != nil {
				return &TaskError{Task: t.Name, Index: t.Index, Err: fmt.Errorf("edge %s: %w", g.Edges[k].Name, err)}
			}
			sk := sg.Add(t.Name, 1, 0, fn)
			sg.Connect(pos[n], p, sk, 0, g.Edges[k].Cap).Name = g.Edges[k].Name
			ls.edges, ls.out = append(ls.edges, k), append(ls.out, true)
		}
	}
	if err := sg.Validate(); err != nil {
		return fmt.Errorf("sched: %s: internal error: %w", s.st.Policy, err)
	}
	// A group with an external program is not a chain (the program's
	// tasks are apart): its stalls through the program are resolved.
	spl := Plan{Policy: s.st.Policy, Runs: s.st.Policy, Buffers: s.o.Buffers, RecordSize: s.pl.RecordSize, Bound: sg.Bound(), Resolve: !sg.IsChain()}
	if spl.Buffers == 0 {
		spl.Buffers = spl.Bound
	}
	if !spl.Resolve && s.o.SpillBelowBound && spl.Buffers < spl.Bound {
		spl.Resolve = true // as MakePlan does for a whole chain
	}
	s.mu.Lock()
	s.running[ls] = struct{}{}
	s.mu.Unlock()
	st, err := runConcurrent(ctx, sg, spl, Options{RecordSize: spl.RecordSize, MaxRecord: s.o.MaxRecord, Stderr: s.o.Stderr, Resolver: s.o.Resolver, TempDir: s.o.TempDir,
		Live: ls.live})
	if st != nil {
		s.mergeGroup(group, pos, ins, outs, sg, st)
	}
	s.mu.Lock()
	if st != nil {
		s.st.Buffers = max(s.st.Buffers, spl.Buffers)
	}
	delete(s.running, ls)
	s.mu.Unlock()
	s.markRan(group)
	if te, ok := err.(*TaskError); ok {
		for _, i := range group {
			if g.Tasks[i].Name == te.Task {
				return &TaskError{Task: te.Task, Index: g.Tasks[i].Index, Err: te.Err}
			}
		}
	}
	return err
}

// mergeGroup merges the statistics of a group's small graph: task i of the
// group is task pos[n] of sg; its edges are found by name.
func (s *groupRunner) mergeGroup(group, pos []int, ins, outs [][]int, sg *graph.Graph, st *Stats) {
	for n, i := range group {
		var ein, eout []int // edges of i in sg, in port order
		for k, e := range sg.Edges {
			if e.To.Task == pos[n] {
				ein = append(ein, k)
			}
		}
		for k, e := range sg.Edges {
			if e.From.Task == pos[n] {
				eout = append(eout, k)
			}
		}
		sub := &Stats{Tasks: st.Tasks, BuffersHighWater: st.BuffersHighWater}
		for _, k := range append(ein, eout...) {
			sub.Edges = append(sub.Edges, st.Edges[k])
		}
		s.merge(i, pos[n], ins[i], outs[i], sub)
	}
}

// merge copies the statistics of task i's small graph, where it is task ti
// and the edges are ins then outs, into the run's: an edge's writer side
// comes from its writer's run, its read wait from its reader's.
func (s *groupRunner) merge(i, ti int, ins, outs []int, st *Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := st.Tasks[ti]
	ts.Name, ts.Index = s.g.Tasks[i].Name, s.g.Tasks[i].Index
	ts.SegmentsRun, ts.SegmentsCached = s.st.Tasks[i].SegmentsRun, s.st.Tasks[i].SegmentsCached
	s.st.Tasks[i] = ts
	s.st.BuffersHighWater = max(s.st.BuffersHighWater, st.BuffersHighWater)
	for p, es := range st.Edges {
		if p < len(ins) {
			e := &s.st.Edges[ins[p]]
			e.ReadWait = es.ReadWait
			e.Growths += es.Growths
			continue
		}
		e := &s.st.Edges[outs[p-len(ins)]]
		e.Records, e.Bytes, e.HighWater, e.WriteWait = es.Records, es.Bytes, es.HighWater, es.WriteWait
		e.Cap = es.Cap
		e.Growths += es.Growths
	}
}

// markRan records that the tasks of group have run to their end.
func (s *groupRunner) markRan(group []int) {
	s.mu.Lock()
	for _, i := range group {
		s.ran[i] = true
	}
	s.mu.Unlock()
}

// sample fills snap for Options.Live: the statistics of the groups that
// have run, and the counters of those running over them. An edge counts
// what its writer wrote; a task, what it has read (nothing before its
// group).
func (s *groupRunner) sample(snap *Snapshot) {
	g := s.g
	s.mu.Lock()
	snap.Running, snap.Policy, snap.Elapsed = true, s.st.Policy, time.Since(s.start)
	snap.Tasks = snap.Tasks[:0]
	for i, ts := range s.st.Tasks {
		snap.Tasks = append(snap.Tasks, TaskSample{Name: ts.Name, Index: g.Tasks[i].Index, Busy: ts.Busy, Blocked: ts.Blocked, Done: s.ran[i]})
	}
	snap.Edges = snap.Edges[:0]
	for k, es := range s.st.Edges {
		e := g.Edges[k]
		snap.Edges = append(snap.Edges, EdgeSample{Name: es.Name, From: e.From.Task, To: e.To.Task, Cap: es.Cap, Records: es.Records, Bytes: es.Bytes})
	}
	running := make([]*liveGroup, 0, len(s.running))
	for ls := range s.running {
		running = append(running, ls)
	}
	s.mu.Unlock()
	subs := make([]Snapshot, len(running))
	for n, ls := range running {
		// A group that has ended since the list was taken still gives its
		// last snapshot: its counters are final, where skipping it would
		// show its tasks back at zero until the group is merged and marked.
		subs[n] = ls.live.Snapshot()
		if len(subs[n].Tasks) == 0 { // not started yet
			continue
		}
		for j, es := range subs[n].Edges {
			e := &snap.Edges[ls.edges[j]]
			e.Len, e.Cap = es.Len, es.Cap
			if ls.out[j] {
				e.Records, e.Bytes = es.Records, es.Bytes
			}
		}
	}
	snap.addTotals()
	for i := range snap.Tasks {
		if t := &snap.Tasks[i]; !t.Done {
			t.Records, t.Bytes = 0, 0
		}
	}
	for n, ls := range running {
		if len(subs[n].Tasks) == 0 {
			continue
		}
		for m, i := range ls.group {
			ts, t := subs[n].Tasks[ls.pos[m]], &snap.Tasks[i]
			t.Busy, t.Blocked, t.Records, t.Bytes = ts.Busy, ts.Blocked, ts.Records, ts.Bytes
		}
	}
}
