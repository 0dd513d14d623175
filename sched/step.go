package sched

import (
	"context"
	"fmt"
	"sync"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// stepRunner runs the steps of a graph whose edges live on disk (the
// serial policy's temporary files, the spool's places): each step, one
// task or a group that must run together, in a small graph of its own,
// fed by a source task per input edge and drained by a sink task per
// output edge. It keeps the run's statistics; several steps may run at
// once.
type stepRunner struct {
	g  *graph.Graph
	pl Plan
	o  Options
	mu sync.Mutex // guards st
	st *Stats
}

func newStepRunner(g *graph.Graph, pl Plan, o Options, p Policy) stepRunner {
	st := &Stats{Policy: p, RecordSize: pl.RecordSize, Bound: pl.Bound,
		Tasks: make([]TaskStats, len(g.Tasks)), Edges: make([]EdgeStats, len(g.Edges))}
	for i, t := range g.Tasks {
		st.Tasks[i] = TaskStats{Name: t.Name, Index: t.Index}
	}
	for k, e := range g.Edges {
		st.Edges[k] = EdgeStats{Name: e.Name, From: g.Tasks[e.From.Task].Name, To: g.Tasks[e.To.Task].Name, Cap: e.Cap}
	}
	return stepRunner{g: g, pl: pl, o: o, st: st}
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

// runStep runs the tasks of one step in a small graph of their own: for
// each, source(k) for its input edges k, the task, and sink(k) for its
// output edges. The sources and sinks bear their task's name, since their
// failures are the task's. Edges between two tasks of the step would be
// fed and drained like any other.
func (s *stepRunner) runStep(ctx context.Context, step []int, ins, outs [][]int,
	source func(k int) task.Func, sink func(k int) (task.Func, error)) error {
	g := s.g
	sg := &graph.Graph{}
	pos := make([]int, len(step)) // where each task of the step is in sg
	for n, i := range step {
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
		}
		for p, k := range outs[i] {
			fn, err := sink(k)
			if err != nil {
				return &TaskError{Task: t.Name, Index: t.Index, Err: fmt.Errorf("edge %s: %w", g.Edges[k].Name, err)}
			}
			sk := sg.Add(t.Name, 1, 0, fn)
			sg.Connect(pos[n], p, sk, 0, g.Edges[k].Cap).Name = g.Edges[k].Name
		}
	}
	if err := sg.Validate(); err != nil {
		return fmt.Errorf("sched: %s: internal error: %w", s.st.Policy, err)
	}
	// A step with an external program is not a chain (the program's
	// tasks are apart): its stalls through the program are resolved.
	spl := Plan{Policy: s.st.Policy, Runs: s.st.Policy, Buffers: s.o.Buffers, RecordSize: s.pl.RecordSize, Bound: sg.Bound(), Resolve: !sg.IsChain()}
	if spl.Buffers == 0 {
		spl.Buffers = spl.Bound
	}
	st, err := runConcurrent(ctx, sg, spl, Options{RecordSize: spl.RecordSize, MaxRecord: s.o.MaxRecord, Stderr: s.o.Stderr, Resolver: s.o.Resolver, TempDir: s.o.TempDir})
	if st != nil {
		s.mergeStep(step, pos, ins, outs, sg, st)
		s.mu.Lock()
		s.st.Buffers = max(s.st.Buffers, spl.Buffers)
		s.mu.Unlock()
	}
	if te, ok := err.(*TaskError); ok {
		for _, i := range step {
			if g.Tasks[i].Name == te.Task {
				return &TaskError{Task: te.Task, Index: g.Tasks[i].Index, Err: te.Err}
			}
		}
	}
	return err
}

// mergeStep merges the statistics of a step's small graph: task i of the
// step is task pos[n] of sg; its edges are found by name.
func (s *stepRunner) mergeStep(step, pos []int, ins, outs [][]int, sg *graph.Graph, st *Stats) {
	for n, i := range step {
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
func (s *stepRunner) merge(i, ti int, ins, outs []int, st *Stats) {
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
