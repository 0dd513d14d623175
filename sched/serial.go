package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/task"
)

// This file is the serial policy, the paper's baseline: tasks run one at a
// time to completion, in topological order, and every edge is a temporary
// file. It needs no interleaving at all, so it also runs graphs that
// deadlock with bounded queues (a tee whose two branches meet again), at
// the price of the whole of every edge on disk.

// serialMaxBytes is the most bytes of framed records the serial policy
// stores for one edge, before compression. An infinite source (yes) would
// otherwise fill the disk, or run forever on a well-compressed stream.
var serialMaxBytes int64 = 1 << 30

// serialBlock is the raw bytes of records in one compressed block of an
// edge file: large enough for zstd to find repeats across many records.
const serialBlock = 1 << 20

// DiskStats are the serial policy's disk traffic: the compressed bytes
// written to and read back from its edge files.
type DiskStats struct {
	Written int64 `json:"written"`
	Read    int64 `json:"read"`
}

// runSerial is the serial policy; see runSerialDisk.
func runSerial(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, error) {
	st, disk, err := runSerialDisk(ctx, g, pl, o)
	if st != nil {
		st.Disk = &disk
	}
	return st, err
}

// runSerialDisk runs g's tasks one at a time in topological order. Each
// runs, concurrently, in a small graph of its own: a source per input edge
// reading that edge's file, the task, and a sink per output edge writing
// its file (a record file, package recfile, compressed with zstd at its
// fastest level). A small graph gets the
// caller's B, or else its own bound. A task that stops reading early
// (head) is fine: its upstream has already finished.
//
// The error follows Run's rules: the first hard failure stops the run and
// names the original task (a failure to read or write an edge's file names
// the task that reads or writes it); else the rightmost non-zero exit
// status. Stats have one entry per task and edge of g; Buffers and
// BuffersHighWater are the most any small graph used. Every file is
// removed, an edge's as soon as its reader has run. Hooks are not passed
// on: one written for g's indices could wait for a task a small graph does
// not have. The files are made by recfile.CreateTemp in o.TempDir and have
// no name, so a killed run leaves nothing behind; an edge's file stays
// open from its writer's step until its reader's.
func runSerialDisk(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, DiskStats, error) {
	s := &serialRun{g: g, pl: pl, o: o, spills: make([]spill, len(g.Edges)), start: time.Now(), ran: make([]bool, len(g.Tasks))}
	s.st = &Stats{Policy: Serial, RecordSize: pl.RecordSize, Bound: pl.Bound,
		Tasks: make([]TaskStats, len(g.Tasks)), Edges: make([]EdgeStats, len(g.Edges))}
	for i, t := range g.Tasks {
		s.st.Tasks[i] = TaskStats{Name: t.Name, Index: t.Index}
	}
	for k, e := range g.Edges {
		s.st.Edges[k] = EdgeStats{Name: e.Name, From: g.Tasks[e.From.Task].Name, To: g.Tasks[e.To.Task].Name, Cap: e.Cap}
	}
	detach := o.Live.Attach(s.sampleRun)
	err := s.run(ctx)
	detach()
	for k := range s.spills {
		s.spills[k].remove()
		s.disk.Written += s.spills[k].written
		s.disk.Read += s.spills[k].read
	}
	s.st.Wall = time.Since(s.start)
	return s.st, s.disk, err
}

type serialRun struct {
	g      *graph.Graph
	pl     Plan
	o      Options
	spills []spill // one per edge
	disk   DiskStats
	start  time.Time

	// A sampler (Options.Live) reads these under mu while steps run.
	mu  sync.Mutex
	st  *Stats
	ran []bool      // by task: its step has run
	cur *serialStep // the step running, if any
}

// serialStep is the small graph of the step running, as a sampler sees
// it: task pos[n] of it is task step[n] of g, its edge j is g's edge
// edges[j], which the step writes if out[j] (else it reads it).
type serialStep struct {
	live  *Live
	step  []int
	pos   []int
	edges []int
	out   []bool
}

// spill is the file of one edge. Its writer is a sink task of one small
// graph, its reader a source task of a later one; the counters are read
// only after each has returned.
type spill struct {
	f             *os.File // nil before the writer runs and once removed
	size          int64    // bytes of the finished file
	written, read int64
}

// remove closes the file, which has no name: that deletes it.
func (sp *spill) remove() {
	if sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

func (s *serialRun) run(ctx context.Context) error {
	g := s.g
	ins, outs := make([][]int, len(g.Tasks)), make([][]int, len(g.Tasks))
	for i, t := range g.Tasks {
		ins[i], outs[i] = make([]int, t.In), make([]int, t.Out)
	}
	for k, e := range g.Edges {
		ins[e.To.Task][e.To.Port] = k
		outs[e.From.Task][e.From.Port] = k
	}
	var status *TaskError
	for _, step := range serialSteps(g) {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		err := s.runStep(ctx, step, ins, outs)
		for _, i := range step {
			for _, k := range ins[i] {
				s.spills[k].remove()
			}
		}
		if err == nil {
			continue
		}
		var exit *task.ExitError
		if te, ok := err.(*TaskError); ok && errors.As(te.Err, &exit) {
			status = te // finish reports non-zero statuses only; later tasks are further right
			continue
		}
		return err
	}
	if status != nil {
		return status
	}
	return nil
}

// serialSteps orders the tasks of g into steps: one task each, except that
// the tasks of a group (graph.Task.Together) share a step, and a step comes
// after every step that writes its inputs. Ties keep topological order.
func serialSteps(g *graph.Graph) [][]int {
	groupOf := make([]int, len(g.Tasks)) // task -> step id
	var steps [][]int
	byKey := map[string]int{}
	for _, i := range g.Order() {
		if key := g.Tasks[i].Together; key != "" {
			if id, ok := byKey[key]; ok {
				groupOf[i] = id
				steps[id] = append(steps[id], i)
				continue
			}
			byKey[key] = len(steps)
		}
		groupOf[i] = len(steps)
		steps = append(steps, []int{i})
	}
	indeg := make([]int, len(steps))
	succ := make([][]int, len(steps))
	for _, e := range g.Edges {
		a, b := groupOf[e.From.Task], groupOf[e.To.Task]
		if a != b {
			indeg[b]++
			succ[a] = append(succ[a], b)
		}
	}
	var ordered [][]int
	done := make([]bool, len(steps))
	for len(ordered) < len(steps) {
		for id := range steps { // the first ready step in topological order
			if !done[id] && indeg[id] == 0 {
				done[id] = true
				ordered = append(ordered, steps[id])
				for _, n := range succ[id] {
					indeg[n]--
				}
				break
			}
		}
	}
	return ordered
}

// runStep runs the tasks of one step in a small graph of their own: for
// each, sources for its input edges, the task, and sinks for its output
// edges. The sources and sinks bear their task's name, since their failures
// are the task's.
func (s *serialRun) runStep(ctx context.Context, step []int, ins, outs [][]int) error {
	g := s.g
	sg := &graph.Graph{}
	cur := &serialStep{live: &Live{}, step: step, pos: make([]int, len(step))}
	pos := cur.pos // where each task of the step is in sg
	for n, i := range step {
		t := g.Tasks[i]
		first := len(sg.Tasks)
		for _, k := range ins[i] {
			sg.Add(t.Name, 0, 1, s.source(k))
		}
		c := *t // Validate sets Index: g's task must not be touched
		pos[n] = len(sg.Tasks)
		sg.Tasks = append(sg.Tasks, &c)
		for p, k := range ins[i] {
			sg.Connect(first+p, 0, pos[n], p, g.Edges[k].Cap).Name = g.Edges[k].Name
			cur.edges, cur.out = append(cur.edges, k), append(cur.out, false)
		}
		for p, k := range outs[i] {
			f, err := recfile.CreateTemp(s.o.TempDir)
			if err != nil {
				return &TaskError{Task: t.Name, Index: t.Index, Err: fmt.Errorf("edge %s: %w", g.Edges[k].Name, err)}
			}
			s.spills[k].f = f
			sink := sg.Add(t.Name, 1, 0, s.sink(k, f))
			sg.Connect(pos[n], p, sink, 0, g.Edges[k].Cap).Name = g.Edges[k].Name
			cur.edges, cur.out = append(cur.edges, k), append(cur.out, true)
		}
	}
	if err := sg.Validate(); err != nil {
		return fmt.Errorf("sched: serial: internal error: %w", err)
	}
	// A step with an external program is not a chain (the program's
	// tasks are apart): its stalls through the program are resolved.
	spl := Plan{Policy: Serial, Runs: Serial, Buffers: s.o.Buffers, RecordSize: s.pl.RecordSize, Bound: sg.Bound(), Resolve: !sg.IsChain()}
	if spl.Buffers == 0 {
		spl.Buffers = spl.Bound
	}
	s.mu.Lock()
	s.cur = cur
	s.mu.Unlock()
	st, err := runConcurrent(ctx, sg, spl, Options{RecordSize: spl.RecordSize, MaxRecord: s.o.MaxRecord, Stderr: s.o.Stderr, Resolver: s.o.Resolver, TempDir: s.o.TempDir,
		Live: cur.live})
	s.mu.Lock()
	if st != nil {
		s.mergeStep(step, pos, ins, outs, sg, st)
		s.st.Buffers = max(s.st.Buffers, spl.Buffers)
	}
	for _, i := range step {
		s.ran[i] = true
	}
	s.cur = nil
	s.mu.Unlock()
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
func (s *serialRun) mergeStep(step, pos []int, ins, outs [][]int, sg *graph.Graph, st *Stats) {
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
func (s *serialRun) merge(i, ti int, ins, outs []int, st *Stats) {
	ts := st.Tasks[ti]
	ts.Name, ts.Index = s.g.Tasks[i].Name, s.g.Tasks[i].Index
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

// source returns the task that reads edge k's file into its output.
func (s *serialRun) source(k int) task.Func {
	sp := &s.spills[k]
	name := s.g.Edges[k].Name
	return func(ctx context.Context, p *buffer.Ports) error {
		// A record larger than a block has a block of its own; the
		// longest is the pool's MaxRecord.
		r := recfile.NewReader(&countReader{io.NewSectionReader(sp.f, 0, sp.size), &sp.read},
			recfile.ReadLimit(serialBlock, p.MaxRecord()))
		out := p.Out(0)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read edge %s: %w", name, err)
			}
			if len(rec) > p.MaxRecord() {
				return fmt.Errorf("read edge %s: %w", name, &record.TooLargeError{Size: len(rec), Max: p.MaxRecord(),
					Limit: buffer.MaxRecordLimit})
			}
			if err := out.Write(rec); err != nil {
				return err
			}
		}
	}
}

// sink returns the task that writes its input to edge k's file f.
func (s *serialRun) sink(k int, f *os.File) task.Func {
	sp := &s.spills[k]
	e := s.g.Edges[k]
	from, to := s.g.Tasks[e.From.Task].Name, s.g.Tasks[e.To.Task].Name
	return func(ctx context.Context, p *buffer.Ports) error {
		w := recfile.NewWriter(&countWriter{f, &sp.written}, recfile.Zstd, serialBlock)
		in := p.In(0)
		var n int64
		for {
			rec, err := in.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if n += int64(len(rec) + record.LengthPrefixed.Overhead()); n > serialMaxBytes {
				return fmt.Errorf("edge %s from %s to %s: more than %d bytes: the serial policy keeps every edge on disk and needs finite input", e.Name, from, to, serialMaxBytes)
			}
			if err := w.Add(rec); err != nil {
				return fmt.Errorf("write edge %s: %w", e.Name, err)
			}
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("write edge %s: %w", e.Name, err)
		}
		sp.size = w.Written()
		return nil
	}
}

// sampleRun fills snap for Options.Live: the statistics of the steps that
// have run, and the counters of the one running over them. An edge counts
// what its writer wrote; a task, what it has read (nothing before its
// step).
func (s *serialRun) sampleRun(snap *Snapshot) {
	g := s.g
	s.mu.Lock()
	snap.Running, snap.Policy, snap.Elapsed = true, Serial, time.Since(s.start)
	snap.Tasks = snap.Tasks[:0]
	for i, ts := range s.st.Tasks {
		snap.Tasks = append(snap.Tasks, TaskSample{Name: ts.Name, Index: g.Tasks[i].Index, Busy: ts.Busy, Blocked: ts.Blocked, Done: s.ran[i]})
	}
	snap.Edges = snap.Edges[:0]
	for k, es := range s.st.Edges {
		e := g.Edges[k]
		snap.Edges = append(snap.Edges, EdgeSample{Name: es.Name, From: e.From.Task, To: e.To.Task, Cap: es.Cap, Records: es.Records, Bytes: es.Bytes})
	}
	cur := s.cur
	s.mu.Unlock()
	var sub Snapshot
	if cur != nil {
		sub = cur.live.Snapshot()
	}
	if sub.Running {
		for j, es := range sub.Edges {
			e := &snap.Edges[cur.edges[j]]
			e.Len, e.Cap = es.Len, es.Cap
			if cur.out[j] {
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
	if sub.Running {
		for n, i := range cur.step {
			ts, t := sub.Tasks[cur.pos[n]], &snap.Tasks[i]
			t.Busy, t.Blocked, t.Records, t.Bytes = ts.Busy, ts.Blocked, ts.Records, ts.Bytes
		}
	}
}

// countReader and countWriter count the bytes that reach the disk.
type countReader struct {
	r io.Reader
	n *int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

type countWriter struct {
	w io.Writer
	n *int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}
