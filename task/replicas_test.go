package task_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// expand is a stateless task that emits a record's bytes k times over, k
// from its first byte: some records vanish, some grow, so batches come out
// of the workers in sizes unlike the ones that went in.
func expand() *task.PerRecord {
	return &task.PerRecord{
		Each: func(rec []byte, emit task.Emit) error {
			for range int(rec[0]) % 3 {
				if err := emit(rec); err != nil {
					return err
				}
			}
			return nil
		},
		Fresh: expand,
	}
}

// runReplicated runs src | stage | sink with the stage replicated as asked
// and returns the sink's output.
func runReplicated(ctx context.Context, in string, s int, replicas int, stage *task.PerRecord, tail ...*graph.Task) (string, *sched.Stats, error) {
	var out bytes.Buffer
	tasks := []*graph.Task{
		{Name: "src", Out: 1, Fn: task.ReadFrom(strings.NewReader(in), record.Lines)},
		{Name: "stage", In: 1, Out: 1, Rec: stage},
	}
	tasks = append(tasks, tail...)
	tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.WriteTo(&out, record.Lines)})
	st, err := sched.Run(ctx, graph.Chain(2, tasks...), sched.Options{Policy: sched.Concurrent, RecordSize: s, Replicas: replicas})
	return out.String(), st, err
}

// The property: a replicated stateless stage writes what the plain stage
// writes, in the same order, whatever the copies, the record size (so the
// batch size) and the input; and every buffer comes back (Stats say the
// run finished clean).
func TestReplicasKeepOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for i := range rapid.IntRange(0, 3000).Draw(rt, "lines") {
			fmt.Fprintf(&b, "%c line %d %s\n", 'a'+byte(i*7%26), i, strings.Repeat("x", i%40))
		}
		if rapid.Bool().Draw(rt, "cut") && b.Len() > 0 {
			s := b.String()
			b.Reset()
			b.WriteString(s[:len(s)-1])
		}
		in := b.String()
		s := rapid.SampledFrom([]int{64, 512, 4096}).Draw(rt, "S")
		want, _, err := runReplicated(context.Background(), in, s, 1, expand())
		if err != nil {
			rt.Fatal(err)
		}
		n := rapid.IntRange(2, 5).Draw(rt, "replicas")
		got, _, err := runReplicated(context.Background(), in, s, n, expand())
		if err != nil || got != want {
			rt.Fatalf("%d replicas, S %d: %d bytes, %v; want %d bytes", n, s, len(got), err, len(want))
		}
	})
}

// Auto replicas turn to copies mid-stream when the stage is busy; the
// output is still in order.
func TestReplicasAutoSwitch(t *testing.T) {
	var b strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&b, "%d\n", i)
	}
	slow := func() *task.PerRecord {
		var f func() *task.PerRecord
		f = func() *task.PerRecord {
			return &task.PerRecord{Each: func(rec []byte, emit task.Emit) error {
				h := uint32(0)
				for range 200 {
					for _, c := range rec {
						h = h*31 + uint32(c)
					}
				}
				if h == 0 {
					return nil
				}
				return emit(rec)
			}, Fresh: f}
		}
		return f()
	}
	var turned atomic.Int32
	defer task.SetOnReplicate(func(int) { turned.Add(1) })()
	want, _, err := runReplicated(context.Background(), b.String(), 4096, 1, slow())
	if err != nil || turned.Load() != 0 {
		t.Fatalf("replicas 1: %v, turned %d times", err, turned.Load())
	}
	got, _, err := runReplicated(context.Background(), b.String(), 4096, 0, slow())
	if err != nil || got != want {
		t.Fatalf("auto replicas: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	// The stage is the pipeline's only work: it is busy, and turned. (On
	// one CPU there is nothing to turn to.)
	if runtime.GOMAXPROCS(0) > 1 && turned.Load() != 1 {
		t.Errorf("auto replicas on a busy stage: turned %d times, want 1", turned.Load())
	}
}

// A reader that stops early (head) stops the replicated stage and its
// workers; an error of a copy fails the run, naming the stage.
func TestReplicasStopAndFail(t *testing.T) {
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	head := &graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(3)}
	var same func() *task.PerRecord
	same = func() *task.PerRecord {
		return &task.PerRecord{Each: func(rec []byte, emit task.Emit) error { return emit(rec) }, Fresh: same}
	}
	got, _, err := runReplicated(context.Background(), b.String(), 512, 3, same(), head)
	if err != nil || got != "line 0\nline 1\nline 2\n" {
		t.Errorf("replicas | head -3: %q, %v", got, err)
	}
	boom := errors.New("boom")
	var failing func() *task.PerRecord
	failing = func() *task.PerRecord {
		return &task.PerRecord{Each: func(rec []byte, emit task.Emit) error {
			if string(rec) == "line 40000\n" {
				return boom
			}
			return emit(rec)
		}, Fresh: failing}
	}
	_, _, err = runReplicated(context.Background(), b.String(), 512, 2, failing())
	var te *sched.TaskError
	if !errors.Is(err, boom) || !errors.As(err, &te) || te.Task != "stage" {
		t.Errorf("failing copy: err = %v", err)
	}
}

// Only the concurrent policy replicates; the others run the stage as
// one, with the same output (Theorem 2.2).
func TestReplicasPlan(t *testing.T) {
	stage := expand()
	for _, p := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused, sched.Serial} {
		g := graph.Chain(2,
			&graph.Task{Name: "src", Out: 1, Fn: task.ReadFrom(strings.NewReader("a\nb\n"), record.Lines)},
			&graph.Task{Name: "stage", In: 1, Out: 1, Rec: stage},
			&graph.Task{Name: "sink", In: 1, Fn: task.WriteTo(&bytes.Buffer{}, record.Lines)})
		pl, err := sched.MakePlan(g, sched.Options{Policy: p, Replicas: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if p == sched.Concurrent {
			want = 1
		}
		if len(pl.Replicas) != want {
			t.Errorf("%v: replicas %+v", p, pl.Replicas)
		}
	}
}
