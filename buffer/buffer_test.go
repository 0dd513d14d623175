package buffer_test

import (
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/buffer"
)

func TestOutputDoneClosesWhenReaderStops(t *testing.T) {
	pool, _ := buffer.NewPool(buffer.Options{Buffers: 1, RecordSize: 8})
	q, _ := pool.NewQueue("q", 1)
	w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
	r, _ := pool.NewProc("r", 1, []*buffer.Queue{q}, nil)
	done := w.Ports().Out(0).Done()
	select {
	case <-done:
		t.Fatal("done before the reader stopped")
	default:
	}
	r.Finish(false)
	<-done
	if err := w.Ports().Out(0).Write([]byte("x")); !errors.Is(err, buffer.ErrReaderGone) {
		t.Fatalf("write after reader stopped: %v", err)
	}
	w.Finish(false)
}

// Two tasks that each wait to read the other's queue are a real deadlock
// (no memory would help); the pool reports it as such, naming both.
func TestRealDeadlockIsReported(t *testing.T) {
	pool, _ := buffer.NewPool(buffer.Options{Buffers: 2, RecordSize: 8})
	ab, _ := pool.NewQueue("ab", 1)
	ba, _ := pool.NewQueue("ba", 1)
	a, _ := pool.NewProc("a", 0, []*buffer.Queue{ba}, []*buffer.Queue{ab})
	b, _ := pool.NewProc("b", 1, []*buffer.Queue{ab}, []*buffer.Queue{ba})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []*buffer.Proc{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Ports().In(0).Read()
			p.Finish(true)
		}()
	}
	wg.Wait()
	var d *buffer.DeadlockError
	if !errors.As(errs[0], &d) || d.Artificial {
		t.Fatalf("err = %v, want a real deadlock", errs[0])
	}
	if want := "deadlock (real: every task on the cycle waits to read): a waits to read ba (empty, cap 1); b waits to read ab (empty, cap 1)"; d.Error() != want {
		t.Fatalf("got  %q\nwant %q", d.Error(), want)
	}
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
	if pool.Free() != 2 {
		t.Fatalf("FREE %d after the run, want 2", pool.Free())
	}
}

// A pool allocates a buffer the first time it leaves FREE, so a huge B
// costs nothing up front and a run pays for its high-water mark only; the
// count of buffers (FREE + queued + held = B) holds throughout.
func TestPoolAllocatesLazily(t *testing.T) {
	const huge = 1 << 30
	pool, err := buffer.NewPool(buffer.Options{Buffers: huge, RecordSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if got := pool.Allocated(); got != 0 {
		t.Fatalf("allocated %d buffers before any task ran, want 0", got)
	}
	if pool.Free() != huge {
		t.Fatalf("FREE %d, want B = %d", pool.Free(), huge)
	}
	pool2, _ := buffer.NewPool(buffer.Options{Buffers: 1000, RecordSize: 16})
	q, _ := pool2.NewQueue("q", 4)
	w, _ := pool2.NewProc("w", 0, nil, []*buffer.Queue{q})
	r, _ := pool2.NewProc("r", 1, []*buffer.Queue{q}, nil)
	out, in := w.Ports().Out(0), r.Ports().In(0)
	for i := range 20 {
		// 16-byte records: one record a buffer.
		if err := out.Write([]byte("0123456789abcde\n")); err != nil {
			t.Fatal(err)
		}
		w.Ports().Flush()
		if i%2 == 1 { // the reader trails by up to two buffers
			for range 2 {
				if _, err := in.Read(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := pool2.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if got, high := pool2.Allocated(), pool2.HighWater(); got != high || got > 4 {
		t.Fatalf("allocated %d buffers, high-water %d: want them equal and at most the queue's capacity 4", got, high)
	}
	w.Finish(false)
	r.Finish(false)
	if err := pool2.Check(); err != nil {
		t.Fatal(err)
	}
	if pool2.Free() != 1000 {
		t.Fatalf("FREE %d after the run, want 1000", pool2.Free())
	}
}

// Len counts what holds the writer back: queued buffers, the writer's
// reservation, and the buffer the reader holds.
func TestQueueStatsLen(t *testing.T) {
	pool, _ := buffer.NewPool(buffer.Options{Buffers: 4, RecordSize: 8})
	q, _ := pool.NewQueue("q", 4)
	w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
	r, _ := pool.NewProc("r", 1, []*buffer.Queue{q}, nil)
	out, in := w.Ports().Out(0), r.Ports().In(0)
	steps := []struct {
		do   func() error
		want int
	}{
		{func() error { return nil }, 0},
		{func() error { return out.Write([]byte("12345678")) }, 1}, // being filled: reserved
		{func() error { return out.Write([]byte("abcdefgh")) }, 2}, // the first is queued
		{func() error { _, err := in.Read(); return err }, 2},      // the reader holds the first
		{func() error { w.Finish(false); return nil }, 2},          // the second handed over: queued
		{func() error { _, err := in.Read(); return err }, 1},      // the first given back, the second held
		{func() error { _, err := in.Read(); return ignoreEOF(err) }, 0},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := q.Stats().Len; got != s.want {
			t.Fatalf("step %d: Len %d, want %d", i, got, s.want)
		}
	}
	r.Finish(false)
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
