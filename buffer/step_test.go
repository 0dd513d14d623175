package buffer

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// stepParker is the Parker of a filter its test runs by steps: a step
// never parks, and a wake is only noted, as a coroutine scheduler notes
// which task became runnable.
type stepParker struct{ woken int }

func (k *stepParker) Park(*Proc) error { panic("a filter run by steps parked") }
func (k *stepParker) Unpark(*Proc)     { k.woken++ }

// stepChain is src -> filter -> sink, the filter run by steps from the
// test's goroutine (as the ros scheduler runs it), the source written from
// it too, and the sink on its own goroutine, reading one record each time
// the test lets it.
type stepChain struct {
	pool             *Pool
	a, b             *Queue
	src, filt, sink  *Proc
	f                *Filter
	k                *stepParker
	got              chan string
	gate, sinkDone   chan error
	sinkWaitsForGate chan struct{}
}

func newStepChain(t *testing.T, buffers, capA, capB int) *stepChain {
	t.Helper()
	pool, err := NewPool(Options{Buffers: buffers, RecordSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	c := &stepChain{pool: pool, k: &stepParker{}, got: make(chan string, 8), gate: make(chan error), sinkDone: make(chan error, 1),
		sinkWaitsForGate: make(chan struct{}, 8)}
	c.a, _ = pool.NewQueue("a", capA)
	c.b, _ = pool.NewQueue("b", capB)
	c.src, _ = pool.NewProc("src", 0, nil, []*Queue{c.a})
	c.filt, _ = pool.NewProc("filter", 1, []*Queue{c.a}, []*Queue{c.b})
	c.sink, _ = pool.NewProc("sink", 2, []*Queue{c.b}, nil)
	c.filt.SetParker(c.k)
	c.f = c.filt.Ports().Filter(func(rec []byte) bool { return !strings.HasPrefix(string(rec), "x") })
	go func() {
		in := c.sink.Ports().In(0)
		for {
			rec, err := in.Read()
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				c.sinkDone <- err
				return
			}
			c.got <- string(rec)
			c.sinkWaitsForGate <- struct{}{}
			if err := <-c.gate; err != nil {
				c.sinkDone <- err
				return
			}
		}
	}()
	return c
}

// write writes rec from the source and hands it over.
func (c *stepChain) write(t *testing.T, rec string) {
	t.Helper()
	if err := c.src.Ports().Out(0).Write([]byte(rec)); err != nil {
		t.Fatal(err)
	}
	c.src.Ports().Flush()
}

// step runs one step of the filter and checks what it left: err, and
// whether the filter waits and on what ("" for not at all).
func (c *stepChain) step(t *testing.T, wantErr error, waitsOn string) {
	t.Helper()
	if err := c.f.Step(); !errors.Is(err, wantErr) {
		t.Fatalf("step: %v, want %v", err, wantErr)
	}
	w, waits := c.filt.Wait()
	if waits != (waitsOn != "") || waits && w.On != waitsOn {
		t.Fatalf("after the step the filter waits %v on %q, want on %q", waits, w.On, waitsOn)
	}
	if waits != c.filt.Waiting() {
		t.Fatal("Waiting disagrees with Wait")
	}
	if waits != c.f.Waits() {
		t.Fatal("Filter.Waits disagrees with Wait")
	}
	if err := c.pool.Check(); err != nil {
		t.Fatal(err)
	}
}

// waitSinkParked waits until the sink, on its own goroutine, waits to read.
func (c *stepChain) waitSinkParked() {
	for !c.sink.Waiting() {
		runtime.Gosched()
	}
}

// A filter run by steps does what its loop of Pass would: it waits to
// read where its input is empty, moves a kept record's buffer on whole,
// drops the rest, waits for room holding its sifted buffer, and ends at
// eof, with every buffer accounted for after each step; each wait it
// registers is ended by the other side's wake, as for a parked task.
func TestFilterSteps(t *testing.T) {
	c := newStepChain(t, 4, 3, 1)
	c.step(t, nil, "read")
	c.write(t, "one")
	if c.k.woken != 1 || c.filt.Waiting() {
		t.Fatalf("the write woke the filter %d times, waiting %v; want once, not waiting", c.k.woken, c.filt.Waiting())
	}
	c.step(t, nil, "read") // moved on, and waits for the next
	if s := <-c.got; s != "one" {
		t.Fatalf("sink read %q, want one", s)
	}
	<-c.sinkWaitsForGate
	// The sink holds b's one slot: the filter takes "two" and waits for
	// room with it.
	c.write(t, "two")
	c.step(t, nil, "room")
	if c.a.occupancy() != 1 || c.filt.t().ins[0].cur == nil {
		t.Fatalf("waiting for room, the filter should hold its input buffer (a holds %d)", c.a.occupancy())
	}
	c.step(t, nil, "room") // not woken: nothing changes
	c.gate <- nil          // the sink gives its buffer back and waits
	c.waitSinkParked()
	if c.filt.Waiting() {
		t.Fatal("room in b did not wake the filter")
	}
	c.step(t, nil, "read")
	if s := <-c.got; s != "two" {
		t.Fatalf("sink read %q, want two", s)
	}
	<-c.sinkWaitsForGate
	c.gate <- nil
	c.waitSinkParked()
	// A dropped record's buffer goes back to FREE at once.
	c.write(t, "xdrop")
	c.step(t, nil, "read")
	if free := c.pool.Free(); free != 4 {
		t.Fatalf("FREE has %d buffers after a drop, want 4", free)
	}
	// A record longer than S is a chain: the step leaves it to the
	// filter's general form, its first piece (handed over to the waiting
	// filter) the input's current buffer.
	c.write(t, "longer than eight")
	c.step(t, ErrStepUnfit, "")
	if c.a.n != 2 || c.filt.t().ins[0].cur == nil || !c.filt.t().ins[0].cur.cont {
		t.Fatal("the chain's first piece is not the input's current buffer")
	}
	out, in := c.filt.Ports().Out(0), c.filt.Ports().In(0)
	c.filt.SetParker(nil) // the general form parks on its channel
	done := make(chan error, 1)
	go func() {
		// The general form, on a goroutine of its own, as under
		// concurrent.
		for {
			if err := out.Pass(in, func(rec []byte) bool { return true }); err != nil {
				done <- err
				return
			}
		}
	}()
	if s := <-c.got; s != "longer than eight" {
		t.Fatalf("sink read %q, want the long record", s)
	}
	<-c.sinkWaitsForGate
	c.src.Finish(false)
	c.gate <- nil
	if err := <-done; err != io.EOF {
		t.Fatalf("the general form ended with %v, want io.EOF", err)
	}
	c.filt.Finish(false)
	if err := <-c.sinkDone; err != nil {
		t.Fatal(err)
	}
	c.sink.Finish(false)
	if err := c.pool.Check(); err != nil {
		t.Fatal(err)
	}
	if st := c.b.Stats(); st.Records != 3 {
		t.Fatalf("b counted %d records, want 3", st.Records)
	}
}

// At eof a step says io.EOF; after a reader that stopped, ErrReaderGone,
// with the buffer it held back in FREE.
func TestFilterStepEnds(t *testing.T) {
	c := newStepChain(t, 2, 1, 1)
	c.src.Finish(false)
	c.step(t, io.EOF, "")
	c.filt.Finish(false)
	if err := <-c.sinkDone; err != nil {
		t.Fatal(err)
	}
	c.sink.Finish(false)

	c = newStepChain(t, 3, 1, 1)
	c.write(t, "one")
	c.step(t, nil, "read")
	<-c.got
	<-c.sinkWaitsForGate
	c.write(t, "two")
	c.step(t, nil, "room")
	c.sink.Ports().In(0).Stop()
	c.gate <- errors.New("stopped")
	if err := <-c.sinkDone; err == nil {
		t.Fatal("the sink did not stop")
	}
	c.step(t, ErrReaderGone, "")
	c.src.Finish(false)
	c.filt.Finish(false)
	c.sink.Finish(false)
	if err := c.pool.Check(); err != nil {
		t.Fatal(err)
	}
	if free := c.pool.Free(); free != 3 {
		t.Fatalf("FREE has %d of 3 buffers at the end", free)
	}
}

// A filter run by steps whose output's reader is a bridge stuck on its
// program (the queue overflows) spills that queue rather than wait for
// room, as a write does; the reader then gets every record, in order.
func TestFilterStepSpillsOverflow(t *testing.T) {
	pool, err := NewPool(Options{Buffers: 4, RecordSize: 8, Spill: true, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := pool.NewQueue("a", 2)
	b, _ := pool.NewQueue("b", 1)
	src, _ := pool.NewProc("src", 0, nil, []*Queue{a})
	filt, _ := pool.NewProc("filter", 1, []*Queue{a}, []*Queue{b})
	sink, _ := pool.NewProc("sink", 2, []*Queue{b}, nil)
	filt.SetParker(&stepParker{})
	f := filt.Ports().Filter(func([]byte) bool { return true })
	for _, rec := range []string{"one", "two"} {
		if err := src.Ports().Out(0).Write([]byte(rec)); err != nil {
			t.Fatal(err)
		}
		src.Ports().Flush()
	}
	if err := f.Step(); err != nil {
		t.Fatal(err)
	}
	if w, ok := filt.Wait(); !ok || w.On != "room" {
		t.Fatalf("the filter waits %v on %q, want on room", ok, w.On)
	}
	pool.mu.Lock()
	b.overflow = true
	b.roomLocked() // the resolution that marks it wakes the writer too (waitfor.go)
	pool.mu.Unlock()
	if err := f.Step(); err != nil {
		t.Fatal(err)
	}
	if b.Stats().Spills == 0 {
		t.Fatal("the overflowing queue was not spilled")
	}
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
	src.Finish(false)
	if err := f.Step(); err != io.EOF {
		t.Fatalf("step at the end: %v, want io.EOF", err)
	}
	filt.Finish(false)
	var got []string
	in := sink.Ports().In(0)
	for {
		rec, err := in.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(rec))
	}
	sink.Finish(false)
	if strings.Join(got, ",") != "one,two" {
		t.Fatalf("sink read %q, want one, two", got)
	}
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
}

// trackingParker is a stepParker whose scheduler tracks waits itself
// (WaitTracker).
type trackingParker struct{ stepParker }

func (*trackingParker) TracksWaits() {}

// Under a WaitTracker the pool keeps no lock-free flag of the task's wait,
// and Waiting reads the wait under the lock instead: it still agrees with
// Wait and Filter.Waits through a wait and its wake.
func TestWaitingUnderWaitTracker(t *testing.T) {
	c := newStepChain(t, 4, 3, 1)
	k := &trackingParker{}
	c.filt.SetParker(k)
	c.step(t, nil, "read")
	if c.filt.t().parked.Load() {
		t.Fatal("the pool kept its flag of the wait for a WaitTracker")
	}
	c.write(t, "one")
	if k.woken != 1 || c.filt.Waiting() {
		t.Fatalf("the write woke the filter %d times, waiting %v; want once, not waiting", k.woken, c.filt.Waiting())
	}
	c.step(t, nil, "read")
	if s := <-c.got; s != "one" {
		t.Fatalf("sink read %q, want one", s)
	}
	<-c.sinkWaitsForGate
	c.src.Finish(false)
	c.step(t, io.EOF, "")
	c.filt.Finish(false)
	c.gate <- nil
	if err := <-c.sinkDone; err != nil {
		t.Fatal(err)
	}
}
