package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// Graph shapes, each doing the same hashing per source record as a chain
// of two stages:
//
//	chain:       src | A | B | sink
//	diamond:     src | tee | (A, B) | merge | sink
//	split-merge: src | tee | (copy, slow) | merge | sink
//	split-cat:   src | tee | (copy, slow) | cat | sink
//
// In the split shapes the slow branch does both stages' work. split-cat
// reads the fast branch to its end before the slow one, the shape that
// deadlocks for every fixed capacity: the run grows the slow branch's
// queue and then spills it to disk.
var dagShapes = []string{"chain", "diamond", "split-merge", "split-cat"}

// dagSpec is one graph run: n copies of rec through shape, each stage
// hashing a record rounds times.
type dagSpec struct {
	shape, policy string
	n, rounds     int
	rec           []byte
	buffers       int
	tempDir       string
}

// dagGraph builds the graph and returns it with the sink's byte count and
// the bytes it must reach.
func dagGraph(spec dagSpec) (*graph.Graph, *int64, int64) {
	total := new(int64)
	n, rec := spec.n, spec.rec
	g := &graph.Graph{}
	c := queueCap
	if spec.policy == "ros" {
		c = 1
	}
	src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Proc) error {
		out := p.Out(0)
		for range n {
			if err := out.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
	stage := func(name string, rounds int) int {
		return g.AddRecord(name, task.PerRecord{Keep: keep(rounds)})
	}
	var last int
	want := int64(n) * int64(len(rec))
	switch spec.shape {
	case "chain":
		a, b := stage("A", spec.rounds), stage("B", spec.rounds)
		g.Connect(src, 0, a, 0, c)
		g.Connect(a, 0, b, 0, c)
		last = b
	default:
		tee := g.Add("tee", 1, 2, task.Tee())
		g.Connect(src, 0, tee, 0, c)
		var a, b int
		if spec.shape == "diamond" {
			a, b = stage("A", spec.rounds), stage("B", spec.rounds)
		} else {
			a, b = stage("copy", 0), stage("slow", 2*spec.rounds)
		}
		g.Connect(tee, 0, a, 0, c)
		g.Connect(tee, 1, b, 0, c)
		join := task.Merge()
		if spec.shape == "split-cat" {
			join = task.Concat()
		}
		last = g.Add("join", 2, 1, join)
		g.Tasks[last].ReadsAny = spec.shape != "split-cat"
		g.Connect(a, 0, last, 0, c)
		g.Connect(b, 0, last, 1, c)
		want *= 2
	}
	sink := g.Add("sink", 1, 0, func(ctx context.Context, p *buffer.Proc) error {
		in := p.In(0)
		for {
			data, _, err := in.ReadBatch()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*total += int64(len(data))
		}
	})
	g.Connect(last, 0, sink, 0, c)
	return g, total, want
}

// runDAG runs spec and checks that every byte reached the sink.
func runDAG(ctx context.Context, spec dagSpec) (*sched.Stats, error) {
	g, total, want := dagGraph(spec)
	st, err := sched.Run(ctx, g, sched.Options{Policy: spec.policy, Buffers: spec.buffers,
		RecordSize: recordSize(len(spec.rec)), TempDir: spec.tempDir})
	if err != nil {
		return st, err
	}
	if *total != want {
		return st, fmt.Errorf("%s: sink saw %d bytes, want %d", spec.shape, *total, want)
	}
	return st, nil
}
