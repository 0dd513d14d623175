package sched_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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

// A source and a sink in per-record form (task.Source, task.Sink) run
// under ros as calls from the scheduler, and switch where their loops
// switched as coroutines: the chain of the filters' golden test, with
// its ends in those forms, gives the same trace line for line (Theorem
// 4.1's choice, the greatest runnable index first, is made on the same
// waits).
func TestROSEndsTraceGolden(t *testing.T) {
	var recs [][]byte
	for i := range 12 {
		recs = append(recs, []byte(fmt.Sprint(i%5, strings.Repeat("x", i*3%20))))
	}
	for _, tc := range []struct {
		name string
		sink func(*[][]byte) *graph.Task
	}{
		{"records", func(out *[][]byte) *graph.Task {
			return &graph.Task{Name: "sink", In: 1, Sink: task.CollectSink(out)}
		}},
		{"bytes", func(out *[][]byte) *graph.Task {
			return &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Bytes: func(data []byte) error {
				*out = append(*out, append([]byte(nil), data...))
				return nil
			}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out [][]byte
			g := graph.Chain(1,
				&graph.Task{Name: "src", Out: 1, Source: task.RecordsSource(recs...)},
				&graph.Task{Name: "f1", In: 1, Out: 1, Rec: ptr(task.Filter(func(r []byte) bool { return r[0]%2 == 0 }))},
				&graph.Task{Name: "f2", In: 1, Out: 1, Rec: ptr(task.Filter(func(r []byte) bool { return len(r) > 3 }))},
				tc.sink(&out),
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
				t.Errorf("trace differs from the loop forms':\n%s", trace.String())
			}
			if got := bytes.Join(out, nil); len(got) != 55 {
				t.Errorf("sink got %d bytes %q, want 55", len(got), got)
			}
		})
	}
}

// The ends as calls under ros, beside their loops under every other
// policy (Theorem 2.2: the same output): records longer than S (the
// source's steps leave one to its own loop; a sink of records leaves the
// buffer with its first piece to its loop, a sink of bytes takes the
// pieces), a sink's End, errors and panics of next and of the sink's
// function, a reader that stops early, and cancellation.
func TestROSEndsAsCalls(t *testing.T) {
	long := bytes.Repeat([]byte("ab"), 20) // longer than S = 16
	input := [][]byte{[]byte("a"), []byte("bb"), long, []byte("cccc"), []byte("d"), long[:30], []byte("ee")}
	boom := errors.New("boom")
	type chain struct {
		src  *graph.Task
		mid  []*graph.Task
		sink *graph.Task
		out  func() string // what the sink saw
	}
	collect := func() (*graph.Task, func() string) {
		var out [][]byte
		return &graph.Task{Name: "sink", In: 1, Sink: task.CollectSink(&out)}, func() string { return fmt.Sprintf("%q", out) }
	}
	source := func(recs ...[]byte) *graph.Task {
		return &graph.Task{Name: "src", Out: 1, Source: task.RecordsSource(recs...)}
	}
	for _, tc := range []struct {
		name    string
		build   func() chain
		want    string // the sink's records, if the run succeeds
		wantErr error  // else an error wrapping this, or nil for a panic
		failing string // the task that fails
	}{
		{"records", func() chain {
			k, out := collect()
			return chain{src: source(input...), mid: []*graph.Task{{Name: "copy", In: 1, Out: 1, Rec: ptr(task.Filter(func([]byte) bool { return true }))}}, sink: k, out: out}
		}, fmt.Sprintf("%q", input), nil, ""},
		{"bytes", func() chain {
			var out bytes.Buffer
			k := &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Bytes: func(data []byte) error { out.Write(data); return nil }}}
			return chain{src: source(input...), sink: k, out: func() string { return fmt.Sprintf("%q", out.String()) }}
		}, fmt.Sprintf("%q", bytes.Join(input, nil)), nil, ""},
		{"end", func() chain {
			n := 0
			var end string
			k := &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{
				Each: func(rec []byte) error { n += len(rec); return nil },
				End:  func() error { end = fmt.Sprint(n); return nil },
			}}
			return chain{src: source(input...), sink: k, out: func() string { return end }}
		}, "80", nil, ""},
		{"next fails", func() chain {
			k, out := collect()
			i := 0
			src := &graph.Task{Name: "src", Out: 1, Source: &task.Source{Next: func() ([]byte, error) {
				if i++; i > 3 {
					return nil, boom
				}
				return []byte("x"), nil
			}}}
			return chain{src: src, sink: k, out: out}
		}, "", boom, "src"},
		{"each fails", func() chain {
			k := &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Each: func(rec []byte) error {
				if len(rec) == 4 {
					return boom
				}
				return nil
			}}}
			return chain{src: source(input...), sink: k, out: func() string { return "" }}
		}, "", boom, "sink"},
		{"bytes fails", func() chain {
			k := &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Bytes: func([]byte) error { return boom }}}
			return chain{src: source(input...), sink: k, out: func() string { return "" }}
		}, "", boom, "sink"},
		{"next panics", func() chain {
			k, out := collect()
			src := &graph.Task{Name: "src", Out: 1, Source: &task.Source{Next: func() ([]byte, error) { panic("next") }}}
			return chain{src: src, sink: k, out: out}
		}, "", nil, "src"},
		{"each panics", func() chain {
			k := &graph.Task{Name: "sink", In: 1, Sink: &task.Sink{Each: func([]byte) error { panic("each") }}}
			return chain{src: source(input...), sink: k, out: func() string { return "" }}
		}, "", nil, "sink"},
		{"reader stops", func() chain {
			k, out := collect()
			src := source(bytes.Split(bytes.Repeat([]byte("y\n"), 200), []byte("\n"))...)
			return chain{src: src, mid: []*graph.Task{{Name: "head", In: 1, Out: 1, Fn: task.Head(3)}}, sink: k, out: out}
		}, `["y" "y" "y"]`, nil, ""},
	} {
		for _, pol := range []sched.Policy{sched.ROS, sched.Concurrent, sched.Serial, sched.Fused} {
			t.Run(fmt.Sprint(tc.name, "/", pol), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c := tc.build()
				tasks := append(append([]*graph.Task{c.src}, c.mid...), c.sink)
				st, err := sched.Run(ctx, graph.Chain(1, tasks...), sched.Options{Policy: pol, RecordSize: 16})
				if tc.failing != "" {
					var te *sched.TaskError
					if !errors.As(err, &te) || te.Task != tc.failing {
						t.Fatalf("err = %v, want task %s's", err, tc.failing)
					}
					var pe *sched.PanicError
					if tc.wantErr != nil && !errors.Is(err, tc.wantErr) || tc.wantErr == nil && !errors.As(err, &pe) {
						t.Fatalf("err = %v, want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := c.out(); got != tc.want {
					t.Fatalf("got %s, want %s", got, tc.want)
				}
				if pol == sched.ROS && st.BuffersHighWater > 1 {
					t.Fatalf("%d buffers out at once under ros", st.BuffersHighWater)
				}
			})
		}
	}
}

// A source as calls never waits in the pool while its reader consumes
// fast enough, so cancellation reaches it through the pool's abort at its
// next buffer: the run ends with the context's error.
func TestROSEndsCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	g := graph.Chain(1,
		&graph.Task{Name: "yes", Out: 1, Source: &task.Source{Next: func() ([]byte, error) { return []byte("y\n"), nil }}},
		&graph.Task{Name: "stop", In: 1, Sink: &task.Sink{Each: func([]byte) error {
			if n++; n == 100 {
				cancel()
			}
			return nil
		}}},
	)
	done := make(chan error, 1)
	go func() {
		_, err := sched.Run(ctx, g, sched.Options{Policy: sched.ROS, RecordSize: 16})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end after cancellation")
	}
}

// Chains whose ends are drawn as loops or as per-record forms, with
// filters as calls or loops between them, on one buffer, against the
// serial meaning of the chain, on lines up to three times S: the output
// is the serial one and no more than one buffer is ever out of FREE
// (Theorem 4.1), whichever forms run as calls.
func TestROSEndsMatchSerial(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(1, 12).Draw(t, "S")
		var input [][]byte
		for _, l := range rapid.SliceOfN(rapid.SliceOfN(rapid.ByteRange('a', 'd'), 0, 3*s), 0, 40).Draw(t, "input") {
			input = append(input, append(l, '\n'))
		}
		src := &graph.Task{Name: "src", Out: 1}
		if rapid.Bool().Draw(t, "source as calls") {
			src.Source = task.RecordsSource(input...)
		} else {
			src.Fn = task.Records(input...)
		}
		want := input
		tasks := []*graph.Task{src}
		for i := range rapid.IntRange(0, 3).Draw(t, "filters") {
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
			if rapid.Bool().Draw(t, fmt.Sprint("calls", i)) {
				tk.Rec = ptr(task.Filter(keep))
			} else {
				tk.Fn = passLoop(func(in *buffer.Input, out *buffer.Output) error { return out.Pass(in, keep) })
			}
			tasks = append(tasks, tk)
		}
		var got [][]byte
		var gotBytes bytes.Buffer
		sink := &graph.Task{Name: "sink", In: 1}
		form := rapid.IntRange(0, 2).Draw(t, "sink form")
		switch form {
		case 0:
			sink.Fn = task.Collect(&got)
		case 1:
			sink.Sink = task.CollectSink(&got)
		case 2:
			sink.Sink = &task.Sink{Bytes: func(data []byte) error { gotBytes.Write(data); return nil }}
		}
		runOneBuffer(t, append(tasks, sink), s)
		if form == 2 {
			if w := bytes.Join(want, nil); !bytes.Equal(gotBytes.Bytes(), w) {
				t.Fatalf("got %q, serial gives %q", gotBytes.Bytes(), w)
			}
			return
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("got %q, serial gives %q", got, want)
		}
	})
}

// Time blocked (--stats, the live view, --cap auto) of ends run as calls
// is what their loops report. Behind a slow sink the filter waits to read
// most of the run; the sink is busy; and the source, which under ros
// waits for the sink's thread rather than for a buffer (it is runnable
// while the sink runs), is not blocked either.
func TestROSEndsTimeBlocked(t *testing.T) {
	shares := func(calls bool) map[string]float64 {
		recs := bytes.Split(bytes.Repeat([]byte("r\n"), 40), []byte("\n"))
		slow := func([]byte) error { time.Sleep(2 * time.Millisecond); return nil }
		src := &graph.Task{Name: "src", Out: 1, Fn: task.Records(recs...)}
		sink := &graph.Task{Name: "sink", In: 1, Fn: (&task.Sink{Each: slow}).Func()}
		if calls {
			src.Fn, src.Source = nil, task.RecordsSource(recs...)
			sink.Fn, sink.Sink = nil, &task.Sink{Each: slow}
		}
		g := graph.Chain(1, src, &graph.Task{Name: "filter", In: 1, Out: 1, Rec: ptr(task.Filter(func([]byte) bool { return true }))}, sink)
		st, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, ts := range st.Tasks {
			m[ts.Name] = float64(ts.Blocked) / float64(ts.Busy+ts.Blocked)
		}
		return m
	}
	loops, calls := shares(false), shares(true)
	for name, want := range map[string]float64{"src": 0, "filter": 1, "sink": 0} {
		if math.Abs(loops[name]-want) > 0.2 || math.Abs(calls[name]-want) > 0.2 {
			t.Errorf("%s blocked %.2f of its run as a loop, %.2f as calls; want about %.0f", name, loops[name], calls[name], want)
		}
	}
}

// A source's Start runs once before its first record and its Stop once at
// its end, whatever ended it, with what ended it, under every policy (ros
// calls them around its steps); Stop's verdict is the task's.
func TestSourceStartStop(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		startErr error // Start's error
		nextErr  error // Next's error after three records, else io.EOF
		head     bool  // a reader that stops after two records
		long     bool  // a record longer than S, for ros's loop
		stop     func(error) error
		wantStop string // what Stop was given, "" if it must not run
		wantErr  error
	}{
		{name: "eof", wantStop: "<nil>"},
		{name: "long record", long: true, wantStop: "<nil>"},
		{name: "reader stops", head: true, wantStop: buffer.ErrReaderGone.Error()},
		{name: "next fails", nextErr: boom, wantStop: "boom", wantErr: boom},
		{name: "stop forgives", nextErr: boom, stop: func(error) error { return nil }, wantStop: "boom"},
		{name: "start fails", startErr: boom, wantErr: boom},
	} {
		for _, pol := range []sched.Policy{sched.ROS, sched.Concurrent, sched.Serial} {
			t.Run(fmt.Sprint(tc.name, "/", pol), func(t *testing.T) {
				starts, stops, stopped := 0, 0, ""
				i := 0
				src := &task.Source{
					Start: func(ctx context.Context, p *buffer.Ports) error { starts++; return tc.startErr },
					Next: func() ([]byte, error) {
						if i++; i > 3 {
							if tc.nextErr != nil {
								return nil, tc.nextErr
							}
							return nil, io.EOF
						}
						if tc.long && i == 2 {
							return bytes.Repeat([]byte("x"), 40), nil
						}
						return []byte("r"), nil
					},
					Stop: func(err error) error {
						stops++
						stopped = fmt.Sprint(err)
						if tc.stop != nil {
							return tc.stop(err)
						}
						return err
					},
				}
				var out [][]byte
				tasks := []*graph.Task{{Name: "src", Out: 1, Source: src}}
				if tc.head {
					tasks = append(tasks, &graph.Task{Name: "head", In: 1, Out: 1, Fn: task.Head(2)})
				}
				tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Sink: task.CollectSink(&out)})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err := sched.Run(ctx, graph.Chain(1, tasks...), sched.Options{Policy: pol, RecordSize: 16})
				if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				wantStops, wantStop := 1, tc.wantStop
				if wantStop == "" {
					wantStops = 0
				}
				if tc.head && pol == sched.Serial {
					wantStop = "<nil>" // the source ran to its end before head began
				}
				if starts != 1 || stops != wantStops || stopped != wantStop {
					t.Fatalf("Start ran %d times, Stop %d times with %q; want once, %d times with %q", starts, stops, stopped, wantStops, wantStop)
				}
			})
		}
	}
}
