package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// serialDir points os.TempDir at a fresh directory and returns a function
// that fails t if the serial policy left a file in it.
func serialDir(t *testing.T) func() {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return func() {
		t.Helper()
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("files left behind: %v", left)
		}
	}
}

func serialRunDisk(g *graph.Graph, o Options) (*Stats, DiskStats, error) {
	pl, err := MakePlan(g, o)
	if err != nil {
		return nil, DiskStats{}, err
	}
	return runSerialDisk(context.Background(), g, *pl, o)
}

// Any bytes round-trip through an edge file: empty records, newlines, NULs,
// records of the full record size.
func TestSerialRoundTripsAnyBytes(t *testing.T) {
	check := serialDir(t)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(1, 300).Draw(t, "S")
		input := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, s), 0, 200).Draw(t, "input")
		var got [][]byte
		g := graph.Chain(rapid.IntRange(1, 4).Draw(t, "cap"),
			&graph.Task{Name: "src", Out: 1, Fn: task.Records(input...)},
			&graph.Task{Name: "copy", In: 1, Out: 1, Rec: ptrTo(task.Copy())},
			&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&got)},
		)
		st, disk, err := serialRunDisk(g, Options{RecordSize: s})
		if err != nil {
			t.Fatal(err)
		}
		if !jamSame(got, input) {
			t.Fatalf("got %q, want %q", got, input)
		}
		if disk.Written <= 0 || disk.Read <= 0 {
			t.Fatalf("disk %+v: want bytes both ways", disk)
		}
		var bytes int64
		for _, r := range input {
			bytes += int64(len(r))
		}
		for _, e := range st.Edges {
			if e.Records != int64(len(input)) || e.Bytes != bytes {
				t.Fatalf("edge %s: %d records, %d bytes; want %d, %d", e.Name, e.Records, e.Bytes, len(input), bytes)
			}
		}
	})
	check()
}

func ptrTo[T any](v T) *T { return &v }

// serialYes writes its record until its reader stops.
func serialYes(rec []byte) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		for {
			if err := p.Out(0).Write(rec); err != nil {
				return err
			}
		}
	}
}

// yes | head would fill the disk: the serial policy stops at its limit and
// says why, naming the task that writes the edge.
func TestSerialInfiniteInputHitsTheLimit(t *testing.T) {
	check := serialDir(t)
	defer func(n int64) { serialMaxBytes = n }(serialMaxBytes)
	serialMaxBytes = 1 << 16
	var out [][]byte
	g := graph.Chain(2,
		&graph.Task{Name: "yes", Out: 1, Fn: serialYes([]byte("y\n"))},
		&graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(3)},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	st, disk, err := serialRunDisk(g, Options{RecordSize: 1024})
	var te *TaskError
	if !errors.As(err, &te) || te.Task != "yes" || te.Index != 0 {
		t.Fatalf("err = %v, want a *TaskError of yes", err)
	}
	for _, want := range []string{"yes: edge F1 from yes to head: more than 65536 bytes", "needs finite input"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if st.Tasks[0].Name != "yes" || st.Tasks[1].Name != "head" || disk.Read != 0 {
		t.Errorf("stats %+v, disk %+v", st.Tasks, disk)
	}
	check()
}

// Early exit is fine: the upstream finished before head ran.
func TestSerialEarlyExit(t *testing.T) {
	check := serialDir(t)
	var out [][]byte
	g := graph.Chain(2,
		&graph.Task{Name: "src", Out: 1, Fn: task.Records(jamRecs("a", "b", "c", "d")...)},
		&graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(2)},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	st, _, err := serialRunDisk(g, Options{RecordSize: 16})
	if err != nil || !jamSame(out, jamRecs("a", "b")) {
		t.Fatalf("out %q, err %v", out, err)
	}
	if st.Policy != Serial || st.Edges[0].Records != 4 || st.Edges[1].Records != 2 {
		t.Fatalf("stats %+v", st)
	}
	check()
}

// A status does not stop the run and the rightmost one wins (pipefail),
// as with Run.
func TestSerialExitStatusIsPipefail(t *testing.T) {
	check := serialDir(t)
	var out [][]byte
	g := graph.Chain(1,
		&graph.Task{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			if err := p.Out(0).Write([]byte("a")); err != nil {
				return err
			}
			return task.Exit(3)
		}},
		&graph.Task{Name: "mid", In: 1, Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			if err := task.Records([]byte("m"))(ctx, p); err != nil {
				return err
			}
			if err := task.Collect(new([][]byte))(ctx, p); err != nil {
				return err
			}
			return task.Exit(4)
		}},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	st, _, err := serialRunDisk(g, Options{RecordSize: 16})
	var te *TaskError
	var ee *task.ExitError
	if !errors.As(err, &te) || te.Task != "mid" || te.Index != 1 || !errors.As(err, &ee) || ee.Code != 4 {
		t.Fatalf("err = %v, want mid's status 4", err)
	}
	if len(out) != 1 || string(out[0]) != "m" || st.Tasks[0].Status != 3 || st.Tasks[1].Status != 4 {
		t.Fatalf("out %q, statuses %d %d", out, st.Tasks[0].Status, st.Tasks[1].Status)
	}
	check()
}

// The first hard failure stops the run: the tasks after it never run.
func TestSerialFailureStops(t *testing.T) {
	check := serialDir(t)
	ran := false
	g := graph.Chain(1,
		&graph.Task{Name: "src", Out: 1, Fn: task.Records(jamRecs("a", "b")...)},
		&graph.Task{Name: "bad", In: 1, Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			if err := p.Out(0).Write([]byte("x")); err != nil {
				return err
			}
			return errJamBoom
		}},
		&graph.Task{Name: "sink", In: 1, Fn: func(ctx context.Context, p *buffer.Ports) error { ran = true; return nil }},
	)
	_, _, err := serialRunDisk(g, Options{RecordSize: 16})
	var te *TaskError
	if !errors.As(err, &te) || te.Task != "bad" || te.Index != 1 || !errors.Is(err, errJamBoom) || ran {
		t.Fatalf("err = %v, sink ran %v; want bad's boom and no sink", err, ran)
	}
	check()
}

func TestSerialCancel(t *testing.T) {
	check := serialDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	g := graph.Chain(1,
		&graph.Task{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			cancel()
			return p.Out(0).Write([]byte("x"))
		}},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(new([][]byte))},
	)
	pl, err := MakePlan(g, Options{RecordSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runSerial(ctx, g, *pl, Options{RecordSize: 16}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	check()
}

// serialTee copies its input to both outputs.
func serialTee(ctx context.Context, p *buffer.Ports) error {
	for {
		rec, err := p.In(0).Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for o := range 2 {
			if err := p.Out(o).Write(rec); err != nil {
				return err
			}
		}
	}
}

// serialCat2 writes all of input 0, then all of input 1.
func serialCat2(ctx context.Context, p *buffer.Ports) error {
	for i := range 2 {
		for {
			rec, err := p.In(i).Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if err := p.Out(0).Write(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// src | tee | (a, b) | cat2 | sink deadlocks with fixed queues, whatever
// B: cat2 waits for the first branch while tee waits for room in the
// second. The serial policy has no bound on an edge and completes it; the
// concurrent one completes it by resolving the stall (growing the second
// branch's queue, or spilling it).
func TestSerialRunsWhatDeadlocksConcurrently(t *testing.T) {
	check := serialDir(t)
	build := func(out *[][]byte) *graph.Graph {
		var in []string
		for i := range 20 {
			in = append(in, fmt.Sprintf("r%02d", i))
		}
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(jamRecs(in...)...))
		tee := g.Add("tee", 1, 2, serialTee)
		a, b := g.AddRecord("a", task.Copy()), g.AddRecord("b", task.Prefix([]byte("B")))
		cat := g.Add("cat2", 2, 1, serialCat2)
		sink := g.Add("sink", 1, 0, task.Collect(out))
		g.Connect(src, 0, tee, 0, 1)
		g.Connect(tee, 0, a, 0, 1)
		g.Connect(tee, 1, b, 0, 1)
		g.Connect(a, 0, cat, 0, 1)
		g.Connect(b, 0, cat, 1, 1)
		g.Connect(cat, 0, sink, 0, 1)
		return g
	}
	var out [][]byte
	cst, err := runPolicy(context.Background(), jamPolicies[0], build(&out), Options{RecordSize: 3, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("concurrent: %v", err)
	}
	if cst.Growths+cst.Spills == 0 {
		t.Fatalf("concurrent: nothing resolved: %+v", cst)
	}
	concurrent := out
	out = nil
	st, disk, err := serialRunDisk(build(&out), Options{RecordSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", out) != fmt.Sprintf("%q", concurrent) {
		t.Fatalf("serial %q\nconcurrent %q", out, concurrent)
	}
	if len(out) != 41 || string(out[0]) != "r00" || string(out[20]) != "B" || string(out[40]) != "r19" {
		t.Fatalf("output %q", out)
	}
	if len(st.Tasks) != 6 || len(st.Edges) != 6 || st.Edges[5].Records != 41 || disk.Written <= 0 || disk.Read <= 0 {
		t.Fatalf("stats %+v, disk %+v", st, disk)
	}
	check()
}
