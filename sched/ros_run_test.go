package sched_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden trace files in testdata")

// Theorem 4.1 on random chains: with one buffer, Record Oriented
// Scheduling never deadlocks, gives the serial output, and never has more
// than one buffer outside FREE.
func TestROSRandomChainsOneBuffer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawChain(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		st, err := sched.Run(ctx, c.g, sched.Options{Policy: sched.ROS, RecordSize: c.s})
		if err != nil {
			t.Fatalf("ros with B=1: %v", err)
		}
		if st.Buffers != 1 || st.BuffersHighWater != 1 && len(c.want) > 0 {
			t.Fatalf("B %d, high water %d; want 1 and 1", st.Buffers, st.BuffersHighWater)
		}
		c.check(t)
	})
}

// The trace of the paper's COPY | PREFIX | COPY under ros, kept as a
// golden file that reads like the schedules of the paper: each line is one
// task switch.
func TestROSTraceGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs int
	}{{"copy-prefix-copy", 3}, {"copy-prefix-copy-empty", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var out [][]byte
			var trace bytes.Buffer
			_, err := sched.Run(context.Background(), dsChain(1, tc.recs, &out), sched.Options{Policy: sched.ROS, RecordSize: 4, Trace: &trace})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "ros", tc.name+".txt")
			if *rewrite {
				if err := os.WriteFile(golden, trace.Bytes(), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if trace.String() != string(want) {
				t.Errorf("trace differs from %s:\n%s", golden, trace.String())
			}
			// The same graph and input give the same switches.
			var again bytes.Buffer
			sched.Run(context.Background(), dsChain(1, tc.recs, new([][]byte)), sched.Options{Policy: sched.ROS, RecordSize: 4, Trace: &again})
			if again.String() != trace.String() {
				t.Error("a second run switched differently")
			}
		})
	}
}

func TestROSEarlyExitAndFailure(t *testing.T) {
	var out [][]byte
	g := graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "copy", In: 1, Out: 1, Rec: ptr(task.Copy())},
		&graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(3)},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	if _, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 64}); err != nil || len(out) != 3 {
		t.Fatalf("early exit: %v, %d records", err, len(out))
	}
	boom := errors.New("boom")
	g = graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "fail", In: 1, Out: 1, Rec: ptr(task.PerRecord{Each: func([]byte, task.Emit) error { return boom }})},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(new([][]byte))},
	)
	_, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 64})
	var te *sched.TaskError
	if !errors.As(err, &te) || te.Task != "fail" || !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

// A task that waits outside tpipe runs on its own goroutine under ros, and
// the others go on meanwhile.
func TestROSBlockingTask(t *testing.T) {
	var out [][]byte
	slow := func(ctx context.Context, p *buffer.Ports) error {
		for i := 0; i < 3; i++ {
			time.Sleep(5 * time.Millisecond)
			if err := p.Out(0).Write([]byte(fmt.Sprintf("%d\n", i))); err != nil {
				return err
			}
			p.Flush()
		}
		return nil
	}
	g := graph.Chain(1,
		&graph.Task{Name: "slow", Out: 1, Fn: slow, Blocking: true},
		&graph.Task{Name: "copy", In: 1, Out: 1, Rec: ptr(task.Copy())},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	if _, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 64}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", out); got != `["0\n" "1\n" "2\n"]` {
		t.Fatalf("got %s", got)
	}
}

func TestROSCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "stop", In: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			for i := 0; ; i++ {
				if _, err := p.In(0).Read(); err != nil {
					return err
				}
				if i == 100 {
					cancel()
				}
			}
		}},
	)
	_, err := sched.Run(ctx, g, sched.Options{Policy: sched.ROS, RecordSize: 16})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// Under ros a per-record filter runs as plain calls from the scheduler
// (buffer.Filter), and falls back to its own loop where a buffer needs it
// (a record longer than S) or at its end when it has an End: the output
// is the serial one in every case, with one buffer, and a panic in keep
// is the filter's error.
func TestROSFiltersAsCalls(t *testing.T) {
	even := func(r []byte) bool { return len(r)%2 == 0 }
	long := bytes.Repeat([]byte("ab"), 20) // longer than S = 16
	input := [][]byte{[]byte("a"), []byte("bb"), long, []byte("cccc"), []byte("d"), long[:30], []byte("ee")}
	withEnd := task.PerRecord{Keep: even, End: func(emit task.Emit) error { return emit([]byte("end")) }}
	for _, tc := range []struct {
		name     string
		src      *graph.Task
		filters  []task.PerRecord
		want     [][]byte
		panicked bool
	}{
		{"short records", &graph.Task{Name: "src", Out: 1, Fn: task.Records(input[:2]...)},
			[]task.PerRecord{task.Filter(even), task.Filter(even)}, [][]byte{[]byte("bb")}, false},
		{"long records", &graph.Task{Name: "src", Out: 1, Fn: task.Records(input...)},
			[]task.PerRecord{task.Filter(even), task.Filter(even)}, [][]byte{[]byte("bb"), long, []byte("cccc"), long[:30], []byte("ee")}, false},
		{"end", &graph.Task{Name: "src", Out: 1, Fn: task.Records(input...)},
			[]task.PerRecord{task.Filter(even), withEnd}, [][]byte{[]byte("bb"), long, []byte("cccc"), long[:30], []byte("ee"), []byte("end")}, false},
		{"blocking source", &graph.Task{Name: "src", Out: 1, Fn: task.Records(input...), Blocking: true},
			[]task.PerRecord{task.Filter(even)}, [][]byte{[]byte("bb"), long, []byte("cccc"), long[:30], []byte("ee")}, false},
		{"panic", &graph.Task{Name: "src", Out: 1, Fn: task.Records(input...)},
			[]task.PerRecord{task.Filter(func(r []byte) bool {
				if len(r) == 4 {
					panic("four")
				}
				return true
			})}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var out [][]byte
			tasks := []*graph.Task{tc.src}
			for i, f := range tc.filters {
				tasks = append(tasks, &graph.Task{Name: fmt.Sprint("filter", i+1), In: 1, Out: 1, Rec: &f})
			}
			tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)})
			st, err := sched.Run(ctx, graph.Chain(1, tasks...), sched.Options{Policy: sched.ROS, RecordSize: 16})
			if tc.panicked {
				var pe *sched.PanicError
				var te *sched.TaskError
				if !errors.As(err, &pe) || !errors.As(err, &te) || te.Task != "filter1" {
					t.Fatalf("err = %v, want the filter's panic", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", out) != fmt.Sprintf("%q", tc.want) {
				t.Fatalf("got %q, want %q", out, tc.want)
			}
			if !tc.src.Blocking && st.Buffers != 1 {
				t.Fatalf("B = %d, want 1", st.Buffers)
			}
			for _, ts := range st.Tasks {
				if ts.Name == "" || ts.Err != "" {
					t.Fatalf("task statistics %+v", ts)
				}
			}
		})
	}
}

// Filters under ros on one buffer, against the serial meaning of the
// chain, on lines up to three times S and with queues of capacity 1 to 3:
// the output is the serial one, and no more than the one buffer is ever
// out of FREE (Theorem 4.1). Each filter is drawn in one of three forms:
// run as plain calls (task.Filter, whose steps leave a buffer with the
// start of a long line to the task's own loop), or a task of its own
// looping on Output.Pass, or on Output.Sift with a Skip (as grep does). A
// buffer holding whole lines and then the start of a long one once
// deadlocked on one buffer: the kept lines were copied out to a second
// buffer while the filter held the first.
func TestROSFilterChainsMatchSerial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(1, 12).Draw(t, "S")
		var input [][]byte
		for _, l := range rapid.SliceOfN(rapid.SliceOfN(rapid.ByteRange('a', 'd'), 0, 3*s), 0, 40).Draw(t, "input") {
			input = append(input, append(l, '\n'))
		}
		want := input
		tasks := []*graph.Task{{Name: "src", Out: 1, Fn: task.Records(input...)}}
		for i := range rapid.IntRange(1, 4).Draw(t, "filters") {
			b := rapid.ByteRange('a', 'd').Draw(t, fmt.Sprint("drop", i))
			keep := func(r []byte) bool { return r[0] != b }
			var kept [][]byte
			for _, r := range want {
				if keep(r) {
					kept = append(kept, r)
				}
			}
			want = kept
			tk := &graph.Task{Name: fmt.Sprint("filter", i+1), In: 1, Out: 1}
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprint("form", i)) {
			case 0:
				tk.Rec = ptr(task.Filter(keep))
			case 1:
				tk.Fn = passLoop(func(in *buffer.Input, out *buffer.Output) error { return out.Pass(in, keep) })
			case 2:
				sieve := buffer.Sieve{Keep: keep, Skip: lineSkip(keep)}
				tk.Fn = passLoop(func(in *buffer.Input, out *buffer.Output) error { return out.Sift(in, sieve) })
			}
			tasks = append(tasks, tk)
		}
		var got [][]byte
		tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(&got)})
		runOneBuffer(t, tasks, s)
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("got %q, serial gives %q", got, want)
		}
	})
}

// runOneBuffer runs the chain of tasks under ros on one buffer of S = s,
// with queues of drawn capacities from 1 to 3, and fails if it fails or
// ever has more than that buffer out of FREE (Theorem 4.1).
func runOneBuffer(t *rapid.T, tasks []*graph.Task, s int) {
	g := &graph.Graph{}
	for i, tk := range tasks {
		g.Tasks = append(g.Tasks, tk)
		if i > 0 {
			g.Connect(i-1, 0, i, 0, rapid.IntRange(1, 3).Draw(t, fmt.Sprint("cap", i)))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := sched.Run(ctx, g, sched.Options{Policy: sched.ROS, RecordSize: s, Buffers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.BuffersHighWater > 1 {
		t.Fatalf("%d buffers out at once, B = 1", st.BuffersHighWater)
	}
}

// passLoop is a filter task that calls pass on its input 0 and output 0
// until the end.
func passLoop(pass func(*buffer.Input, *buffer.Output) error) task.Func {
	return func(_ context.Context, p *buffer.Ports) error {
		for {
			if err := pass(p.In(0), p.Out(0)); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
}

// lineSkip is a Skip for keep on lines: the lines from the start that
// share the first one's verdict, decided in one call.
func lineSkip(keep func([]byte) bool) func([]byte) (int, bool) {
	return func(data []byte) (int, bool) {
		n, verdict := 0, false
		for i := 0; n < len(data); i++ {
			end := bytes.IndexByte(data[n:], '\n')
			if end < 0 {
				break
			}
			k := keep(data[n : n+end+1])
			if i > 0 && k != verdict {
				break
			}
			n, verdict = n+end+1, k
		}
		return n, verdict
	}
}

// Filters run as calls switch where they switched as coroutines: the
// golden trace of src | f1 | f2 | sink was written by the coroutine form
// (before filters ran as calls), and the calls give it line for line,
// the end included (a filter that finds the end gives way first to a
// greater task woken, as the coroutine did).
func TestROSFilterTraceGolden(t *testing.T) {
	var recs [][]byte
	for i := range 12 {
		recs = append(recs, []byte(fmt.Sprint(i%5, strings.Repeat("x", i*3%20))))
	}
	var out [][]byte
	g := graph.Chain(1,
		&graph.Task{Name: "src", Out: 1, Fn: task.Records(recs...)},
		&graph.Task{Name: "f1", In: 1, Out: 1, Rec: ptr(task.Filter(func(r []byte) bool { return r[0]%2 == 0 }))},
		&graph.Task{Name: "f2", In: 1, Out: 1, Rec: ptr(task.Filter(func(r []byte) bool { return len(r) > 3 }))},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	var trace bytes.Buffer
	if _, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 32, Trace: &trace}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "ros", "filters.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if trace.String() != string(want) {
		t.Errorf("trace differs from the coroutine form's:\n%s", trace.String())
	}
	if len(out) != 5 {
		t.Errorf("sink got %d records, want 5", len(out))
	}
}

// A chain of more filters than one word of the scheduler's set of woken
// tasks holds, with a source on its own goroutine (whose wakes come from
// another goroutine): the output is the serial one, under ros as under
// the serial policy.
func TestROSLongChainMatchesSerial(t *testing.T) {
	var input [][]byte
	for i := range 300 {
		input = append(input, []byte(fmt.Sprint(i)))
	}
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprint("blocking=", blocking), func(t *testing.T) {
			var outs [2][][]byte
			for k, pol := range []sched.Policy{sched.Serial, sched.ROS} {
				tasks := []*graph.Task{{Name: "src", Out: 1, Fn: task.Records(input...), Blocking: blocking}}
				for i := range 100 {
					digit := byte('0' + i%10)
					keep := func(r []byte) bool { return i <= 90 || r[len(r)-1] != digit }
					tasks = append(tasks, &graph.Task{Name: fmt.Sprint("filter", i+1), In: 1, Out: 1, Rec: ptr(task.Filter(keep))})
				}
				tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(&outs[k])})
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err := sched.Run(ctx, graph.Chain(1, tasks...), sched.Options{Policy: pol, RecordSize: 8})
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", pol, err)
				}
			}
			if len(outs[1]) != 30 || fmt.Sprintf("%q", outs[0]) != fmt.Sprintf("%q", outs[1]) {
				t.Fatalf("ros gave %d records %q, serial %q", len(outs[1]), outs[1], outs[0])
			}
		})
	}
}
