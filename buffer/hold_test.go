package buffer_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tpipe/tpipe/buffer"
)

// chain3 is src -> mid -> dst over q0 and q1, every task parking with
// refuse, so that one goroutine drives them and a would-be wait is an
// error.
type chain3 struct {
	pool             *buffer.Pool
	src, mid, dst    *buffer.Ports
	midProc, dstProc *buffer.Proc
}

// newChain3 makes the chain with B = b, S = s, and capacities c0 and c1;
// t is a *testing.T or a *rapid.T.
func newChain3(t interface {
	Helper()
	Fatal(...any)
}, b, s, c0, c1 int) *chain3 {
	t.Helper()
	pool, err := buffer.NewPool(buffer.Options{Buffers: b, RecordSize: s})
	if err != nil {
		t.Fatal(err)
	}
	q0, _ := pool.NewQueue("q0", c0)
	q1, _ := pool.NewQueue("q1", c1)
	src, _ := pool.NewProc("src", 0, nil, []*buffer.Queue{q0})
	mid, _ := pool.NewProc("mid", 1, []*buffer.Queue{q0}, []*buffer.Queue{q1})
	dst, _ := pool.NewProc("dst", 2, []*buffer.Queue{q1}, nil)
	for _, p := range []*buffer.Proc{src, mid, dst} {
		p.SetParker(refuse{})
	}
	return &chain3{pool: pool, src: src.Ports(), mid: mid.Ports(), dst: dst.Ports(), midProc: mid, dstProc: dst}
}

func (c *chain3) check(t *testing.T, free, queued, held int) {
	t.Helper()
	if err := c.pool.Check(); err != nil {
		t.Fatal(err)
	}
	f, q, h := c.pool.Counts()
	if f != free || q != queued || h != held {
		t.Fatalf("FREE/queued/held %d/%d/%d, want %d/%d/%d", f, q, h, free, queued, held)
	}
}

func mustRead(t *testing.T, in *buffer.Input, want string) {
	t.Helper()
	r, err := in.Read()
	if err != nil || string(r) != want {
		t.Fatalf("read %q, %v; want %q", r, err, want)
	}
}

// Kept records stay as they were, in buffers that leave FREE's count
// until released, and a task's end gives back what it still keeps.
func TestHoldKeepsRecordsAcrossReads(t *testing.T) {
	c := newChain3(t, 5, 4, 5, 1)
	for _, r := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		if err := c.src.Out(0).Write([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	c.src.Out(0).Close()
	in := c.mid.In(0)
	var held []buffer.Held
	for _, want := range []string{"aaaa", "bbbb", "cccc"} {
		mustRead(t, in, want)
		h, err := in.Hold()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
	}
	// Three buffers with the reader (two kept, one being read and
	// kept), one queued.
	c.check(t, 1, 1, 3)
	if k := in.Kept(); k != 2 {
		t.Errorf("Kept() = %d, want 2", k)
	}
	mustRead(t, in, "dddd")
	c.check(t, 1, 0, 4)
	for i, want := range []string{"aaaa", "bbbb", "cccc"} {
		if got := string(held[i].Bytes()); got != want {
			t.Errorf("kept record %d is %q, want %q", i, got, want)
		}
	}
	in.Release(held[1])
	c.check(t, 2, 0, 3)
	in.Release(buffer.Held{}) // nothing
	c.midProc.Finish(false)
	c.check(t, 5, 0, 0)
}

// A buffer with a kept record is never moved on: Pass and Forward copy
// its records, and the kept ones are untouched.
func TestHoldPassCopies(t *testing.T) {
	c := newChain3(t, 4, 8, 2, 2) // S = 8: two records a buffer
	out := c.src.Out(0)
	for _, r := range []string{"ab", "cd", "ef", "gh"} {
		if err := out.Write([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	out.Close() // two buffers: ab cd, ef gh
	in, mo := c.mid.In(0), c.mid.Out(0)
	mustRead(t, in, "ab")
	h1, err := in.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if err := mo.Pass(in, func([]byte) bool { return true }); err != nil {
		t.Fatal(err) // copies cd: its buffer keeps ab
	}
	mustRead(t, in, "ef")
	h2, err := in.Hold()
	if err != nil {
		t.Fatal(err)
	}
	mustRead(t, in, "gh")
	c.mid.Flush()
	if err := mo.Forward(in); err != nil {
		t.Fatal(err) // copies gh: its buffer keeps ef
	}
	c.mid.Flush()
	for _, h := range []struct {
		h    buffer.Held
		want string
	}{{h1, "ab"}, {h2, "ef"}} {
		if got := string(h.h.Bytes()); got != h.want {
			t.Fatalf("kept record is %q after Pass and Forward, want %s", got, h.want)
		}
	}
	mustRead(t, c.dst.In(0), "cd")
	mustRead(t, c.dst.In(0), "gh")
	// mid keeps ab's buffer and reads ef's; dst reads gh's.
	c.check(t, 1, 0, 3)
	in.Release(h1)
	c.check(t, 2, 0, 2)
	in.Release(h2) // ef's buffer is still being read
	c.check(t, 2, 0, 2)
}

// Hold refuses a record it cannot keep in place.
func TestHoldNotHeld(t *testing.T) {
	c := newChain3(t, 4, 8, 2, 2)
	if _, err := c.mid.In(0).Hold(); !errors.Is(err, buffer.ErrNotHeld) {
		t.Errorf("Hold before any read: %v, want ErrNotHeld", err)
	}
	c.midProc.CopyReads()
	if err := c.src.Out(0).Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	c.src.Flush()
	mustRead(t, c.mid.In(0), "x")
	if _, err := c.mid.In(0).Hold(); !errors.Is(err, buffer.ErrNotHeld) {
		t.Errorf("Hold of a copied read: %v, want ErrNotHeld", err)
	}
}

// Alloc makes a record in the output's buffer, batched as Write batches.
func TestAlloc(t *testing.T) {
	c := newChain3(t, 2, 8, 2, 2)
	out := c.src.Out(0)
	for _, r := range []string{"abc", "defgh"} {
		p, err := out.Alloc(len(r))
		if err != nil {
			t.Fatal(err)
		}
		copy(p, r)
	}
	if _, err := out.Alloc(9); err == nil {
		t.Error("Alloc of more than S: no error")
	}
	out.Close()
	if _, err := out.Alloc(1); !errors.Is(err, buffer.ErrClosed) {
		t.Errorf("Alloc after Close: %v, want ErrClosed", err)
	}
	data, n, err := c.mid.In(0).ReadBatch()
	if err != nil || n != 2 || !bytes.Equal(data, []byte("abcdefgh")) {
		t.Fatalf("read %d records %q, %v; want 2, abcdefgh", n, data, err)
	}
	c.check(t, 1, 0, 1)
}
