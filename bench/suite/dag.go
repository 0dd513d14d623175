package suite

import (
	"context"
	"fmt"
	"io"
	"sync"

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
	if pol, err := sched.ParsePolicy(spec.policy); err == nil && pol.DefaultCap() < c {
		c = pol.DefaultCap() // ros: Theorem 4.1's capacities
	}
	src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
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
	sink := g.Add("sink", 1, 0, func(ctx context.Context, p *buffer.Ports) error {
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
	pol, err := sched.ParsePolicy(spec.policy)
	if err != nil {
		return nil, err
	}
	g, total, want := dagGraph(spec)
	st, err := sched.Run(ctx, g, sched.Options{Policy: pol, Buffers: spec.buffers,
		RecordSize: recordSize(len(spec.rec)), TempDir: spec.tempDir})
	if err != nil {
		return st, err
	}
	if *total != want {
		return st, fmt.Errorf("%s: sink saw %d bytes, want %d", spec.shape, *total, want)
	}
	return st, nil
}

// channelsHasShape says whether runChannelsDAG has a plain Go version of
// shape.
func channelsHasShape(shape string) bool { return shape != "split-cat" }

// runChannelsDAG runs shape as a plain Go program would be written, as
// runChannels does the chain: a goroutine per task, a buffered channel per
// edge holding as many records as a tpipe queue of queueCap buffers,
// record buffers recycled through a free list. The tee copies each record
// once into a second buffer, as tpipe's tee does (one Write, one Forward);
// the join is a select over the two branches, as merge reads whichever
// has data. It checks that every byte reached the sink.
//
// split-cat has no such program: cat reads the fast branch to its end
// before the slow one, so the slow branch must hold every record until
// then. With bounded channels that deadlocks; with an unbounded slice it
// holds the whole input in memory, which is not a fair comparison either.
func runChannelsDAG(shape string, n int, rec []byte, rounds int) error {
	want := int64(n) * int64(len(rec))
	var ra, rb int // the branches' rounds
	switch shape {
	case "chain":
		if got := runChannels(n, rec, []int{rounds, rounds}); got != want {
			return fmt.Errorf("%s: sink saw %d bytes, want %d", shape, got, want)
		}
		return nil
	case "diamond":
		ra, rb = rounds, rounds
	case "split-merge":
		ra, rb = 0, 2*rounds
	default:
		return fmt.Errorf("channels: no plain Go version of %s", shape)
	}
	perBuf := max(1, min(recordSize(len(rec))/max(len(rec), 1), buffer.MaxRecords))
	depth := queueCap * perBuf
	// Six channels and six goroutines (the tee holds two buffers): with a
	// buffer more than they can hold at once, the free list never runs dry
	// while the sink waits.
	free := make(chan []byte, 6*depth+8)
	for range cap(free) {
		free <- make([]byte, len(rec))
	}
	var wg sync.WaitGroup
	src := make(chan []byte, depth)
	wg.Go(func() {
		for range n {
			buf := <-free
			copy(buf, rec)
			src <- buf
		}
		close(src)
	})
	ta, tb := make(chan []byte, depth), make(chan []byte, depth)
	wg.Go(func() {
		for r := range src {
			c := <-free
			copy(c, r)
			ta <- c
			tb <- r
		}
		close(ta)
		close(tb)
	})
	stage := func(in <-chan []byte, rounds int) <-chan []byte {
		out, k := make(chan []byte, depth), keep(rounds)
		wg.Go(func() {
			for r := range in {
				if k(r) {
					out <- r
				} else {
					free <- r
				}
			}
			close(out)
		})
		return out
	}
	a, b := stage(ta, ra), stage(tb, rb)
	joined := make(chan []byte, depth)
	wg.Go(func() {
		for a != nil || b != nil {
			select {
			case r, ok := <-a:
				if !ok {
					a = nil
					continue
				}
				joined <- r
			case r, ok := <-b:
				if !ok {
					b = nil
					continue
				}
				joined <- r
			}
		}
		close(joined)
	})
	var total int64
	for r := range joined {
		total += int64(len(r))
		free <- r
	}
	wg.Wait()
	if total != 2*want {
		return fmt.Errorf("%s: sink saw %d bytes, want %d", shape, total, 2*want)
	}
	return nil
}
