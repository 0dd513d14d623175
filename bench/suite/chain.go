package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// queueCap is the capacity of every tpipe queue in the chain (1 under ros,
// Theorem 4.1 of "Thrifty Execution of Task Pipelines"); the channels
// baseline gets the same record memory per edge.
const queueCap = 2

// recordSize is S for a benchmark record: 64 KiB buffers batch small
// records; a large record gets a buffer of its own size.
func recordSize(rec int) int { return max(64<<10, rec) }

// chainSpec is one chain: a source writes n copies of rec, then len(rounds)
// stages pass every record on, stage i after hashing it rounds[i] times
// (0: a plain copy), and a sink counts the bytes.
type chainSpec struct {
	policy  string
	n       int
	rec     []byte
	rounds  []int
	s       int // S; 0 means recordSize(len(rec))
	buffers int // B; 0 means the bound
	trace   io.Writer
	capAuto bool        // sched.Options.CapAuto: capacities sized at run time
	live    *sched.Live // sched.Options.Live: the run watched while it goes
	// ends, if set, makes the source and the sink per-record forms
	// (task.Source, task.Sink), which ros runs as calls from its
	// scheduler; else they are task functions with loops of their own.
	ends bool
}

// work is the CPU a stage spends on a record: rounds passes of FNV-1a over
// it, about a nanosecond a byte a round.
func work(rec []byte, rounds int) uint64 {
	h := uint64(14695981039346656037)
	for range rounds {
		for _, c := range rec {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	return h
}

// keep is the per-record body of a stage: the hash result decides, so the
// compiler cannot drop the work; it is never 1 for the records used here
// (checked by the byte count at the sink).
func keep(rounds int) func([]byte) bool {
	if rounds == 0 {
		return func([]byte) bool { return true }
	}
	return func(rec []byte) bool { return work(rec, rounds) != 1 }
}

// chainGraph builds the chain of spec and returns it with a pointer to the
// sink's byte count, valid once the run is over.
func chainGraph(spec chainSpec) (*graph.Graph, *int64) {
	total := new(int64)
	n, rec := spec.n, spec.rec
	tasks := []*graph.Task{{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		for range n {
			if err := out.Write(rec); err != nil {
				return err
			}
		}
		return nil
	}}}
	for i, r := range spec.rounds {
		c := task.PerRecord{Keep: keep(r)}
		tasks = append(tasks, &graph.Task{Name: fmt.Sprint("stage", i+1), In: 1, Out: 1, Rec: &c})
	}
	tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		for {
			r, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*total += int64(len(r))
		}
	}})
	if spec.ends {
		tasks[0], tasks[len(tasks)-1] = chainEnds(n, rec, total)
	}
	c := queueCap
	if pol, err := sched.ParsePolicy(spec.policy); err == nil && pol.DefaultCap() < c {
		c = pol.DefaultCap() // ros: Theorem 4.1's capacities
	}
	return graph.Chain(c, tasks...), total
}

// chainEnds returns the chain's source and sink in per-record form
// (task.Source, task.Sink): the same records and count as chainGraph's
// loops, with no loop of their own.
func chainEnds(n int, rec []byte, total *int64) (src, sink *graph.Task) {
	left := n
	src = &graph.Task{Name: "src", Out: 1, Source: &task.Source{Next: func() ([]byte, error) {
		if left == 0 {
			return nil, io.EOF
		}
		left--
		return rec, nil
	}}}
	sink = &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Each: func(r []byte) error {
		*total += int64(len(r))
		return nil
	}}}
	return src, sink
}

// runChain runs spec under its tpipe policy and checks that every byte
// reached the sink.
func runChain(ctx context.Context, spec chainSpec) (*sched.Stats, error) {
	pol, err := sched.ParsePolicy(spec.policy)
	if err != nil {
		return nil, err
	}
	g, total := chainGraph(spec)
	s := spec.s
	if s == 0 {
		s = recordSize(len(spec.rec))
	}
	st, err := sched.Run(ctx, g, sched.Options{Policy: pol, Buffers: spec.buffers, RecordSize: s, Trace: spec.trace, CapAuto: spec.capAuto,
		Live: spec.live})
	if err != nil {
		return st, err
	}
	if want := int64(spec.n) * int64(len(spec.rec)); *total != want {
		return st, fmt.Errorf("sink saw %d bytes, want %d", *total, want)
	}
	return st, nil
}

// runChannels is the plain Go pipeline a user would write: a goroutine per
// stage, a buffered channel per edge, one record per send. Record buffers
// are recycled through a free list so memory stays bounded, as in tpipe;
// each channel holds as many records as a tpipe queue of queueCap buffers.
func runChannels(n int, rec []byte, rounds []int) int64 {
	perBuf := max(1, min(recordSize(len(rec))/max(len(rec), 1), buffer.MaxRecords))
	return runChannelsDepth(n, rec, rounds, queueCap*perBuf)
}

// runChannelsDepth is runChannels with depth records per channel.
func runChannelsDepth(n int, rec []byte, rounds []int, depth int) int64 {
	stages := len(rounds)
	free := make(chan []byte, depth*(stages+1)+2)
	for range cap(free) {
		free <- make([]byte, len(rec))
	}
	chans := make([]chan []byte, stages+1)
	for i := range chans {
		chans[i] = make(chan []byte, depth)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range n {
			buf := <-free
			copy(buf, rec)
			chans[0] <- buf
		}
		close(chans[0])
	})
	for s, r := range rounds {
		in, out, k := chans[s], chans[s+1], keep(r)
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
	}
	var total int64
	for r := range chans[stages] {
		total += int64(len(r))
		free <- r
	}
	wg.Wait()
	return total
}

// runPull is the cheapest switch between tasks Go has, as a chain: each
// stage is a coroutine (iter.Pull) that pulls a record from the one before
// and yields it on, so a record costs one switch into a stage and one back
// per stage, and a single buffer holds it all the way, as under ros. The
// sink drives the chain and counts the bytes.
func runPull(n int, rec []byte, rounds []int) int64 {
	buf := make([]byte, len(rec))
	var src iter.Seq[[]byte] = func(yield func([]byte) bool) {
		for range n {
			copy(buf, rec)
			if !yield(buf) {
				return
			}
		}
	}
	for _, r := range rounds {
		prev, k := src, keep(r)
		src = func(yield func([]byte) bool) {
			next, stop := iter.Pull(prev)
			defer stop()
			for {
				r, ok := next()
				if !ok {
					return
				}
				if k(r) && !yield(r) {
					return
				}
			}
		}
	}
	next, stop := iter.Pull(src)
	defer stop()
	var total int64
	for {
		r, ok := next()
		if !ok {
			return total
		}
		total += int64(len(r))
	}
}

// lineCounter counts the lines written to it: the ros trace has one line
// per task switch.
type lineCounter struct{ n int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}
