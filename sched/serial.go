package sched

import (
	"context"
	"fmt"
	"io"
	"os"
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
	s := &serialRun{groupRunner: newGroupRunner(g, pl, o, Serial), spills: make([]spill, len(g.Edges))}
	detach := o.Live.Attach(s.sample)
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
	groupRunner
	spills []spill // one per edge
	disk   DiskStats
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
	ins, outs := edgesOf(s.g)
	var errs pipefail
	for _, step := range serialSteps(s.g) {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		err := s.runGroup(ctx, step, ins, outs)
		for _, i := range step {
			for _, k := range ins[i] {
				s.spills[k].remove()
			}
		}
		if err == nil {
			continue
		}
		if te, _, ok := exitStatus(err); ok {
			errs.exit(te.Index, te) // finish reports non-zero statuses only
			continue
		}
		return err
	}
	return errs.err()
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

// runGroup runs the tasks of one step in a small graph of their own (see
// groupRunner.runGroup), with each edge's file as its source and sink.
func (s *serialRun) runGroup(ctx context.Context, step []int, ins, outs [][]int) error {
	return s.groupRunner.runGroup(ctx, step, ins, outs, s.source, func(k int) (task.Func, error) {
		f, err := recfile.CreateTemp(s.o.TempDir)
		if err != nil {
			return nil, err
		}
		s.spills[k].f = f
		return s.sink(k, f), nil
	})
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
		w := recfile.NewWriter(f, recfile.Zstd, serialBlock)
		defer func() { sp.written = w.Written() }()
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

// countReader counts the bytes read back from the disk.
type countReader struct {
	r io.Reader
	n *int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
