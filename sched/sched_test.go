package sched_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// gateDS forces the schedule DS of "Thrifty Execution of Task Pipelines",
// section 3.2: T1 runs alone until it has read and written k records; only
// then may T2 and T3 take a step.
type gateDS struct {
	k       int
	writes  atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (g *gateDS) Before(t int, op buffer.Op) {
	if t == 0 {
		// The (k+1)-th write is the first that finds F1 full.
		if op == buffer.OpWrite && int(g.writes.Add(1)) == g.k+1 {
			g.once.Do(func() { close(g.release) })
		}
		return
	}
	<-g.release
}

// dsChain is T1: COPY | T2: PREFIX | T3: COPY with cap(F1) = k, cap(F2) = 1
// and records that each fill a buffer, so buffers are the paper's records.
func dsChain(k, n int, out *[][]byte) *graph.Graph {
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = []byte(fmt.Sprintf("r%03d", i))
	}
	g := &graph.Graph{}
	t1 := g.Add("T1:COPY", 0, 1, task.Records(recs...))
	t2 := g.AddRecord("T2:PREFIX", task.Prefix([]byte("HDR:")))
	t3 := g.Add("T3:COPY", 1, 0, task.Collect(out))
	g.Connect(t1, 0, t2, 0, k)
	g.Connect(t2, 0, t3, 0, 1)
	return g
}

// Theorem 3.2, necessity: with B = k < cap(F1) + cap(F2) the schedule DS
// deadlocks, and the run reports it instead of hanging.
func TestPaperScheduleDSDeadlocksBelowBound(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			var out [][]byte
			g := dsChain(k, k+3, &out)
			var stderr bytes.Buffer
			_, err := sched.Run(context.Background(), g, sched.Options{
				Policy: sched.Concurrent, Buffers: k, RecordSize: 4, Stderr: &stderr,
				Hook: &gateDS{k: k, release: make(chan struct{})},
			})
			var d *buffer.DeadlockError
			if !errors.As(err, &d) {
				t.Fatalf("err = %v, want a deadlock", err)
			}
			if !d.Artificial {
				t.Errorf("deadlock should be artificial (T2 waits for FREE): %v", d)
			}
			msg := d.Error()
			for _, want := range []string{"T1:COPY waits for room in F1", "T2:PREFIX waits for a free buffer (FREE 0 of", "T3:COPY waits to read F2", fmt.Sprintf("it needs %d buffers (the bound)", k+1)} {
				if !strings.Contains(msg, want) {
					t.Errorf("deadlock message %q lacks %q", msg, want)
				}
			}
			if !strings.Contains(stderr.String(), "below the bound") {
				t.Errorf("no warning on stderr for B below the bound: %q", stderr.String())
			}
		})
	}
}

// Theorem 3.2, sufficiency: the same forced schedule with B = k + 1 = the
// sum of capacities completes with the serial output.
func TestPaperScheduleDSCompletesAtBound(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5} {
		var out [][]byte
		g := dsChain(k, k+3, &out)
		st, err := sched.Run(context.Background(), g, sched.Options{
			Policy: sched.Concurrent, RecordSize: 4, Hook: &gateDS{k: k, release: make(chan struct{})},
		})
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if st.Buffers != k+1 {
			t.Fatalf("default B = %d, want the bound %d", st.Buffers, k+1)
		}
		if len(out) != k+4 || string(out[0]) != "HDR:" || string(out[k+3]) != fmt.Sprintf("r%03d", k+2) {
			t.Fatalf("k=%d: output %q", k, out)
		}
		if st.BuffersHighWater > st.Buffers {
			t.Fatalf("high water %d > B %d", st.BuffersHighWater, st.Buffers)
		}
	}
}

// yes writes its record until the reader stops.
func yes(rec []byte) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		for {
			if err := p.Out(0).Write(rec); err != nil {
				return err
			}
		}
	}
}

func TestEarlyExitStopsUpstreamWithoutError(t *testing.T) {
	var out [][]byte
	g := graph.Chain(2,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "copy", In: 1, Out: 1, Rec: ptr(task.Copy())},
		&graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(3)},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	st, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.Concurrent, RecordSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("got %d records, want 3", len(out))
	}
	for _, ts := range st.Tasks {
		if ts.Err != "" {
			t.Errorf("task %s reported %q", ts.Name, ts.Err)
		}
	}
}

func TestFirstErrorWinsAndNamesTheTask(t *testing.T) {
	boom := errors.New("boom")
	var out [][]byte
	g := graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "fail", In: 1, Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			for i := 0; i < 10; i++ {
				if _, err := p.In(0).Read(); err != nil {
					return err
				}
			}
			return boom
		}},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)},
	)
	_, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.Concurrent, RecordSize: 16})
	var te *sched.TaskError
	if !errors.As(err, &te) || te.Task != "fail" || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom from task fail", err)
	}
}

func TestPanicBecomesError(t *testing.T) {
	g := graph.Chain(1,
		&graph.Task{Name: "src", Out: 1, Fn: task.Records([]byte("x"))},
		&graph.Task{Name: "bad", In: 1, Fn: func(ctx context.Context, p *buffer.Ports) error { panic("oops") }},
	)
	_, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.Concurrent, RecordSize: 16})
	var pe *sched.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "bad: panic: oops") {
		t.Fatalf("err = %v", err)
	}
}

func TestCancelStopsEveryTask(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Fn: yes([]byte("y\n"))},
		&graph.Task{Name: "slow", In: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			if _, err := p.In(0).Read(); err != nil {
				return err
			}
			cancel()
			<-ctx.Done()
			_, err := p.In(0).Read()
			for err == nil {
				_, err = p.In(0).Read()
			}
			return err
		}},
	)
	_, err := sched.Run(ctx, g, sched.Options{Policy: sched.Concurrent, RecordSize: 16})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A record longer than S travels as a chain; past MaxRecord, the task
// that needs it whole fails, named, with the limit in the message.
func TestLongRecordsAndMaxRecord(t *testing.T) {
	for _, n := range []int{100, 200} {
		var got [][]byte
		g := graph.Chain(1,
			&graph.Task{Name: "src", Out: 1, Fn: task.Records(make([]byte, n))},
			&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&got)},
		)
		_, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.Concurrent, RecordSize: 16, MaxRecord: 150})
		switch {
		case n == 100 && (err != nil || len(got) != 1 || len(got[0]) != 100):
			t.Fatalf("n=%d: err = %v, %d records", n, err, len(got))
		case n == 200 && (err == nil || !strings.Contains(err.Error(), "sink: record of at least 160 bytes exceeds the longest record a task holds whole (150 bytes)")):
			t.Fatalf("n=%d: err = %v", n, err)
		}
	}
}

func TestBadOptions(t *testing.T) {
	g := graph.Chain(1, &graph.Task{Name: "src", Out: 1, Fn: task.Records()}, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(new([][]byte))})
	for _, o := range []sched.Options{{Buffers: -1}, {RecordSize: -5}, {Policy: sched.Policy(200)}} {
		if _, err := sched.Run(context.Background(), g, o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
}

// stage is one random task of a chain with its serial meaning.
type stage struct {
	name   string
	rec    task.PerRecord
	serial func(in [][]byte) [][]byte
}

func stageGen(s int) *rapid.Generator[stage] {
	return rapid.Custom(func(t *rapid.T) stage {
		switch rapid.IntRange(0, 4).Draw(t, "kind") {
		case 0:
			return stage{"copy", task.Copy(), func(in [][]byte) [][]byte { return in }}
		case 1:
			h := rapid.SliceOfN(rapid.Byte(), 0, s).Draw(t, "header")
			return stage{"prefix", task.Prefix(h), func(in [][]byte) [][]byte { return append([][]byte{h}, in...) }}
		case 2:
			keep := func(r []byte) bool { return len(r)%2 == 0 }
			return stage{"filter", task.Filter(keep), func(in [][]byte) [][]byte {
				var out [][]byte
				for _, r := range in {
					if keep(r) {
						out = append(out, r)
					}
				}
				return out
			}}
		case 3:
			return stage{"duplicate", task.Duplicate(), func(in [][]byte) [][]byte {
				var out [][]byte
				for _, r := range in {
					out = append(out, r, r)
				}
				return out
			}}
		default:
			f := func(r, s []byte) []byte {
				s = append(s, r...)
				for i := range s {
					s[i] ^= 0x20
				}
				return s
			}
			return stage{"flip", task.Map(f), func(in [][]byte) [][]byte {
				out := make([][]byte, len(in))
				for i, r := range in {
					out[i] = f(r, nil)
				}
				return out
			}}
		}
	})
}

// drawnChain is a random chain src | stages... | sink with random
// capacities, and the output the serial schedule gives.
type drawnChain struct {
	g    *graph.Graph
	s    int
	want [][]byte
	got  *[][]byte
}

func drawChain(t *rapid.T) drawnChain {
	s := rapid.IntRange(1, 24).Draw(t, "S")
	n := rapid.IntRange(1, 5).Draw(t, "stages")
	input := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, s), 0, 60).Draw(t, "input")
	c := drawnChain{g: &graph.Graph{}, s: s, want: input, got: new([][]byte)}
	tasks := []*graph.Task{{Name: "src", Out: 1, Fn: task.Records(input...)}}
	for i := 0; i < n; i++ {
		st := stageGen(s).Draw(t, fmt.Sprint("stage", i))
		c.want = st.serial(c.want)
		tasks = append(tasks, &graph.Task{Name: fmt.Sprintf("%s%d", st.name, i+1), In: 1, Out: 1, Rec: &st.rec})
	}
	tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(c.got)})
	for i, tk := range tasks {
		c.g.Tasks = append(c.g.Tasks, tk)
		if i > 0 {
			c.g.Connect(i-1, 0, i, 0, rapid.IntRange(1, 3).Draw(t, fmt.Sprint("cap", i)))
		}
	}
	return c
}

// check compares what the sink got with the serial output.
func (c drawnChain) check(t *rapid.T) {
	got := *c.got
	if len(got) != len(c.want) {
		t.Fatalf("got %d records, serial gives %d", len(got), len(c.want))
	}
	for i := range got {
		if !bytes.Equal(got[i], c.want[i]) {
			t.Fatalf("record %d: got %q, serial gives %q", i, got[i], c.want[i])
		}
	}
}

// Theorem 2.2 and 3.2 on random chains: every run with B at or above the
// sum of capacities completes with the output of the serial schedule; below
// it, a run either completes with that output or reports a deadlock; it
// never hangs, and every buffer comes back to FREE (Run checks that).
func TestRandomChainsMatchSerial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawChain(t)
		bound := c.g.Bound()
		b := rapid.IntRange(1, bound+2).Draw(t, "B")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		st, err := sched.Run(ctx, c.g, sched.Options{Policy: sched.Concurrent, Buffers: b, RecordSize: c.s})
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hang: B=%d bound=%d", b, bound)
		}
		var d *buffer.DeadlockError
		if errors.As(err, &d) {
			if b >= bound {
				t.Fatalf("deadlock with B=%d >= bound %d: %v", b, bound, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		c.check(t)
		if st.BuffersHighWater > b {
			t.Fatalf("high water %d > B %d", st.BuffersHighWater, b)
		}
	})
}

// A non-zero exit status is not a failure that stops the run: the others
// finish, and the rightmost status wins (pipefail).
func TestExitStatusIsPipefailNotAbort(t *testing.T) {
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
	st, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.Concurrent, RecordSize: 16})
	var te *sched.TaskError
	if !errors.As(err, &te) || te.Task != "mid" {
		t.Fatalf("err = %v, want mid's status", err)
	}
	var ee *task.ExitError
	if !errors.As(err, &ee) || ee.Code != 4 {
		t.Fatalf("err = %v, want exit status 4", err)
	}
	if len(out) != 1 || string(out[0]) != "m" || st.Tasks[0].Status != 3 || st.Tasks[1].Status != 4 {
		t.Fatalf("out %q, statuses %d %d", out, st.Tasks[0].Status, st.Tasks[1].Status)
	}
}

// The policy table: every name parses back to its policy, the zero Policy
// is the default, and an unknown name says which are known.
func TestPolicyTable(t *testing.T) {
	if (sched.Options{}).Policy != sched.DefaultPolicy {
		t.Fatalf("the zero Options run %v", (sched.Options{}).Policy)
	}
	for _, p := range sched.Policies() {
		q, err := sched.ParsePolicy(p.String())
		if err != nil || q != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, q, err)
		}
		if p.Summary() == "" || p.Buffers() == "" {
			t.Errorf("%s: no summary or buffers text", p)
		}
		if p.DefaultCap() < 1 {
			t.Errorf("%s: default capacity %d", p, p.DefaultCap())
		}
		b, _ := p.MarshalText()
		var back sched.Policy
		if err := back.UnmarshalText(b); err != nil || back != p {
			t.Errorf("%s: text round trip gives %v, %v", p, back, err)
		}
	}
	_, err := sched.ParsePolicy("nope")
	if want := `unknown policy "nope" (known: auto, concurrent, ros, fused, serial, spool)`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if sched.ROS.DefaultCap() != 1 || !sched.Serial.Finite() || sched.Concurrent.Finite() || !sched.Fused.Fuses() || !sched.Auto.Chooses() {
		t.Error("the table's rows do not say what the policies are")
	}
}

// A plan of a graph with an external program promises no safe B: what the
// program does with its pipes is not in the graph (issue 13).
func TestPlanDoesNotClaimSafetyThroughPrograms(t *testing.T) {
	g := &graph.Graph{}
	src := g.Add("seq", 0, 1, func(context.Context, *buffer.Ports) error { return nil })
	in := g.Add("awk:stdin", 1, 0, func(context.Context, *buffer.Ports) error { return nil })
	out := g.Add("awk", 0, 1, func(context.Context, *buffer.Ports) error { return nil })
	sink := g.Add("wc", 1, 0, func(context.Context, *buffer.Ports) error { return nil })
	g.Tasks[in].Together, g.Tasks[out].Together = "awk", "awk"
	g.Connect(src, 0, in, 0, 2)
	g.Connect(out, 0, sink, 0, 2)
	pl, err := sched.MakePlan(g, sched.Options{Policy: sched.Concurrent})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Safe || !strings.Contains(pl.Shape, "does not cover the external programs (awk)") {
		t.Fatalf("safe %v, shape %q", pl.Safe, pl.Shape)
	}
}
