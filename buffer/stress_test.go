package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"pgregory.net/rapid"
)

// How a stage of the stress chain moves its records on.
const (
	stressForward = iota // Read, Forward
	stressPass           // Pass, keeping all
	stressCopy           // Copy: whole buffers
	stressRewrite        // Read, Write: a copy
)

var errStress = errors.New("stress: aborted")

// TestPoolUnderConcurrentLoad hammers a pool from every side at once, with
// no Hook to order anything: a chain of goroutines moving records by each
// path (Write, Forward, Pass, Copy, Read), a controller growing queues, a
// checker running Pool.Check and Pool.Counts as fast as it can, and in some
// runs an Abort from the source in the middle. Whenever Check looks, every
// buffer is in exactly one place and no queue is over its capacity; the
// records arrive whole and in order (a prefix of them after an abort); and
// FREE has all B buffers back at the end. It is meant for -race, which
// also sees whether Check's view is taken under the locks the tasks use.
func TestPoolUnderConcurrentLoad(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stages := rapid.IntRange(0, 4).Draw(t, "stages")
		s := rapid.IntRange(4, 24).Draw(t, "S")
		caps := rapid.SliceOfN(rapid.IntRange(1, 3), stages+1, stages+1).Draw(t, "caps")
		modes := rapid.SliceOfN(rapid.IntRange(stressForward, stressRewrite), stages, stages).Draw(t, "modes")
		grows := rapid.SliceOfN(rapid.IntRange(0, stages), 0, 4).Draw(t, "grows")
		n := rapid.IntRange(0, 400).Draw(t, "records")
		abortAt := rapid.IntRange(-1, n).Draw(t, "abortAt") // -1: no abort
		// B covers every capacity the run can reach (Theorem 3.2's bound),
		// so that no stall can happen, whatever the interleaving.
		b := len(grows) + rapid.IntRange(0, 2).Draw(t, "spare")
		for _, c := range caps {
			b += c
		}
		want := make([]string, n)
		for i := range want {
			// Some records are longer than S and travel as chains.
			want[i] = fmt.Sprintf("%d:%s", i, string(make([]byte, i%(2*s))))
		}

		pool, err := buffer.NewPool(buffer.Options{Buffers: b, RecordSize: s})
		if err != nil {
			t.Fatal(err)
		}
		queues := make([]*buffer.Queue, stages+1)
		for i, c := range caps {
			if queues[i], err = pool.NewQueue(fmt.Sprintf("q%d", i), c); err != nil {
				t.Fatal(err)
			}
		}
		procs := make([]*buffer.Proc, 0, stages+2)
		fns := make([]func(*buffer.Ports) error, 0, stages+2)
		add := func(name string, ins, outs []*buffer.Queue, fn func(*buffer.Ports) error) {
			p, err := pool.NewProc(name, len(procs), ins, outs)
			if err != nil {
				t.Fatal(err)
			}
			procs, fns = append(procs, p), append(fns, fn)
		}
		add("src", nil, queues[:1], func(ps *buffer.Ports) error {
			for i, rec := range want {
				if i == abortAt {
					pool.Abort(errStress)
				}
				if err := ps.Out(0).Write([]byte(rec)); err != nil {
					return err
				}
			}
			return nil
		})
		for k, mode := range modes {
			add(fmt.Sprintf("stage%d", k), queues[k:k+1], queues[k+1:k+2], stressStage(mode))
		}
		var recs [][]byte
		add("sink", queues[stages:], nil, collect(&recs))

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stop := make(chan struct{})
		var side sync.WaitGroup
		var checkErr error
		side.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := pool.Check(); err != nil {
					checkErr = err
					return
				}
				if free, queued, held := pool.Counts(); free+queued+held != b || free < 0 || queued < 0 || held < 0 {
					checkErr = fmt.Errorf("counts %d free + %d queued + %d held != B %d", free, queued, held, b)
					return
				}
				runtime.Gosched()
			}
		})
		side.Go(func() {
			for _, k := range grows {
				runtime.Gosched()
				queues[k].Grow(1)
			}
		})
		done := make(chan []error, 1)
		go func() { done <- runProcs(procs, fns) }()
		var errs []error
		select {
		case errs = <-done:
		case <-ctx.Done():
			for _, p := range procs {
				if w, ok := p.Wait(); ok {
					t.Log(w)
				}
			}
			pool.Abort(ctx.Err())
			<-done
			close(stop)
			side.Wait()
			t.Fatal("the chain hung")
		}
		close(stop)
		side.Wait()
		got := make([]string, len(recs))
		for i, rec := range recs {
			got[i] = string(rec)
		}
		if checkErr != nil {
			t.Fatal(checkErr)
		}
		for i, err := range errs {
			if err != nil && (abortAt < 0 || !errors.Is(err, errStress)) {
				t.Fatalf("task %d: %v", i, err)
			}
		}
		if abortAt < 0 && !slices.Equal(got, want) {
			t.Fatalf("the sink got %d records, want %d: %q", len(got), len(want), got)
		}
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("the sink got %q, not a prefix of what was written", got)
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
		if pool.Free() != b {
			t.Fatalf("%d of %d buffers back in FREE", pool.Free(), b)
		}
	})
}

// stressStage is a stage of the stress chain that moves its input to its
// output by the given path.
func stressStage(mode int) func(*buffer.Ports) error {
	return func(ps *buffer.Ports) error {
		in, out := ps.In(0), ps.Out(0)
		for {
			var err error
			switch mode {
			case stressPass:
				err = out.Pass(in, func([]byte) bool { return true })
			case stressCopy:
				err = out.Copy(in)
			default:
				var rec []byte
				if rec, err = in.Read(); err != nil {
					break
				}
				if mode == stressForward {
					err = out.Forward(in)
				} else {
					err = out.Write(rec)
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
}
