package sched_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// delay is a task that keeps the last n records it read in their pool
// buffers (buffer.Input.Hold) and writes each once n more have come:
// stabilize's lookahead, without the video. Its output is its input. Half
// of them make the copy in place (Output.Alloc).
func delay(n int, alloc bool) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in, out := p.In(0), p.Out(0)
		var kept []buffer.Held
		emit := func() error {
			h := kept[0]
			kept = kept[1:]
			if alloc {
				rec, err := out.Alloc(len(h.Bytes()))
				if err != nil {
					return err
				}
				copy(rec, h.Bytes())
			} else if err := out.Write(h.Bytes()); err != nil {
				return err
			}
			in.Release(h)
			return nil
		}
		for {
			_, err := in.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			h, err := in.Hold()
			if err != nil {
				return err
			}
			kept = append(kept, h)
			if len(kept) > n {
				if err := emit(); err != nil {
					return err
				}
			}
		}
		for len(kept) > 0 {
			if err := emit(); err != nil {
				return err
			}
		}
		return nil
	}
}

// A chain of delays and copies, each delay declaring what it keeps
// (graph.Task.Holds), runs to its end under every policy at the B its plan
// gives, which counts the kept buffers, with its input as its output and
// never more buffers out of FREE than B. Deadlines, not timing, catch a
// hang; goleak in TestMain catches a task left behind.
func TestDelaysCompleteUnderEveryPolicy(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.IntRange(4, 24).Draw(rt, "S")
		input := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 1, s), 0, 30).Draw(rt, "input")
		nstages := rapid.IntRange(1, 3).Draw(rt, "stages")
		type stage struct {
			keep  int // 0: a copy
			alloc bool
		}
		stages := make([]stage, nstages)
		for i := range stages {
			stages[i].keep = rapid.IntRange(0, 4).Draw(rt, fmt.Sprint("keep", i))
			stages[i].alloc = rapid.Bool().Draw(rt, fmt.Sprint("alloc", i))
		}
		caps := rapid.SliceOfN(rapid.IntRange(1, 3), nstages+1, nstages+1).Draw(rt, "caps")
		pols := []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused, sched.Serial}
		for _, pol := range pols {
			for _, capAuto := range []bool{false, true} {
				if capAuto && pol != sched.Concurrent {
					continue
				}
				var got [][]byte
				g := &graph.Graph{}
				prev := g.Add("src", 0, 1, task.Records(input...))
				want := 0
				for i, st := range stages {
					var k int
					if st.keep > 0 {
						k = g.Add(fmt.Sprintf("delay%d", i), 1, 1, delay(st.keep, st.alloc))
						g.Tasks[k].Holds = st.keep
						want += st.keep
					} else {
						k = g.AddRecord(fmt.Sprintf("copy%d", i), task.Copy())
					}
					g.Connect(prev, 0, k, 0, caps[i])
					prev = k
				}
				sink := g.Add("sink", 1, 0, task.Collect(&got))
				g.Connect(prev, 0, sink, 0, caps[nstages])
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				pl, err := sched.MakePlan(g, sched.Options{Policy: pol, RecordSize: s, CapAuto: capAuto, TempDir: t.TempDir()})
				if err != nil {
					cancel()
					rt.Fatalf("%s: plan: %v", pol, err)
				}
				st, err := pl.Run(ctx)
				cancel()
				if err != nil {
					rt.Fatalf("%s (cap auto %v), B=%d: %v", pol, capAuto, pl.Buffers, err)
				}
				if !slices.EqualFunc(got, input, func(a, b []byte) bool { return string(a) == string(b) }) {
					rt.Fatalf("%s: output %q, want the input %q", pol, got, input)
				}
				if st.BuffersHighWater > pl.Buffers {
					rt.Fatalf("%s: %d buffers out at once, B = %d", pol, st.BuffersHighWater, pl.Buffers)
				}
				if pol == sched.Concurrent && !capAuto {
					sum := 0
					for _, c := range caps {
						sum += c
					}
					if pl.Bound != sum+want {
						rt.Fatalf("bound %d, want the capacities' %d and the %d kept", pl.Bound, sum, want)
					}
				}
			}
		}
	})
}
