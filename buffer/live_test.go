package buffer_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
)

// A chain a -> b -> c for the tests of live streams: a's and b's records
// go in buffers of 64 bytes, so a few records fill none.
func liveChain(t *testing.T) (a, b, c *buffer.Proc, pool *buffer.Pool) {
	t.Helper()
	pool, err := buffer.NewPool(buffer.Options{Buffers: 4, RecordSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := pool.NewQueue("ab", 2)
	bc, _ := pool.NewQueue("bc", 2)
	a, _ = pool.NewProc("a", 0, nil, []*buffer.Queue{ab})
	b, _ = pool.NewProc("b", 1, []*buffer.Queue{ab}, []*buffer.Queue{bc})
	c, _ = pool.NewProc("c", 2, []*buffer.Queue{bc}, nil)
	return a, b, c, pool
}

// Idle tells a reader that has read everything handed over whether its
// writer has more coming: not after a full buffer, not while the writer
// is still filling one, but once the writer has handed over what it had
// before a wait of its own (Flush, or a wait in the pool).
func TestInputIdle(t *testing.T) {
	a, b, c, pool := liveChain(t)
	out, in := a.Ports().Out(0), b.Ports().In(0)
	if in.Idle() {
		t.Fatal("idle before the writer did anything")
	}
	// Two records of 32 bytes fill a 64-byte buffer: the third goes on in
	// a new one, and the full buffer is handed over without a flush.
	rec := []byte("a record of thirty-two bytes ..\n")
	for range 3 {
		if err := out.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := in.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if in.Idle() {
		t.Fatal("idle after a full buffer: the writer is still writing")
	}
	a.Ports().Flush()
	if in.Idle() {
		t.Fatal("idle with a record handed over and not read")
	}
	if _, err := in.Read(); err != nil {
		t.Fatal(err)
	}
	if !in.Idle() {
		t.Fatal("not idle: everything was read and the writer flushed")
	}
	if err := out.Write([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	out.Close()
	a.Finish(false)
	if in.Idle() {
		t.Fatal("idle with a record and the end to come")
	}
	if rec, err := in.Read(); err != nil || string(rec) != "more\n" {
		t.Fatalf("read %q, %v", rec, err)
	}
	b.Finish(false)
	c.Finish(false)
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
}

// A task whose only effect is its output (StopUnread) stops waiting for
// input once its reader is gone, although its writer never writes again
// (an idle `tail -f` before `cat | head -1`); a task with effects of its
// own (no StopUnread) waits on, as in a shell, until its input comes.
func TestStopUnread(t *testing.T) {
	for _, stops := range []bool{true, false} {
		a, b, c, pool := liveChain(t)
		if stops {
			b.StopUnread()
		}
		got := make(chan error, 1)
		go func() {
			_, err := b.Ports().In(0).Read()
			got <- err
		}()
		// c stops reading before b ever waited, or while it waits: both
		// must wake b.
		c.Finish(false)
		if stops {
			if err := within(t, got); !errors.Is(err, buffer.ErrReaderGone) {
				t.Fatalf("b's read = %v, want ErrReaderGone", err)
			}
		} else {
			select {
			case err := <-got:
				t.Fatalf("b, with effects, stopped waiting for input: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			if err := a.Ports().Out(0).Write([]byte("late\n")); err != nil {
				t.Fatal(err)
			}
			a.Ports().Flush()
			if err := <-got; err != nil {
				t.Fatalf("b's read = %v, want the record", err)
			}
		}
		b.Finish(false)
		if err := a.Ports().Out(0).Write([]byte("x\n")); !errors.Is(err, buffer.ErrReaderGone) {
			t.Fatalf("a's write after b stopped = %v, want ErrReaderGone", err)
		}
		a.Finish(false)
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// A task waiting on several inputs (Ready: merge, join) stops too.
func TestStopUnreadReady(t *testing.T) {
	pool, _ := buffer.NewPool(buffer.Options{Buffers: 6, RecordSize: 64})
	x, _ := pool.NewQueue("x", 2)
	y, _ := pool.NewQueue("y", 2)
	z, _ := pool.NewQueue("z", 2)
	wx, _ := pool.NewProc("wx", 0, nil, []*buffer.Queue{x})
	wy, _ := pool.NewProc("wy", 1, nil, []*buffer.Queue{y})
	m, _ := pool.NewProc("merge", 2, []*buffer.Queue{x, y}, []*buffer.Queue{z})
	r, _ := pool.NewProc("r", 3, []*buffer.Queue{z}, nil)
	m.StopUnread()
	got := make(chan error, 1)
	go func() {
		_, err := m.Ports().Ready()
		got <- err
	}()
	r.Finish(false)
	if err := within(t, got); !errors.Is(err, buffer.ErrReaderGone) {
		t.Fatalf("Ready = %v, want ErrReaderGone", err)
	}
	m.Finish(false)
	wx.Finish(false)
	wy.Finish(false)
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
}

// within returns what comes on got, failing the test if nothing comes
// for long: a wait that no stop reaches would hang for ever.
func within(t *testing.T, got <-chan error) error {
	t.Helper()
	select {
	case err := <-got:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting for input 10s after every reader left")
		return nil
	}
}
