package buffer_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
)

// teeIntoProgram builds the shape of `seq | tee @a @b; cat @a @b` with an
// external cat: a tee writes every record to qa and qb, and two bridges of
// one program "prog" read them. The program reads all of a before b, so
// bridge b, once it has a record to write, waits outside until bridge a
// is done. It returns the procs (tee, a, b) and their functions; got
// collects what the program read, in order.
func teeIntoProgram(t *testing.T, o buffer.Options, n int, got *[]string) (*buffer.Pool, []*buffer.Proc, []func(*buffer.Ports) error) {
	t.Helper()
	pool, err := buffer.NewPool(o)
	if err != nil {
		t.Fatal(err)
	}
	qa, _ := pool.NewQueue("qa", 1)
	qb, _ := pool.NewQueue("qb", 1)
	tee, _ := pool.NewProc("tee", 0, nil, []*buffer.Queue{qa, qb})
	a, _ := pool.NewProc("prog:a", 1, []*buffer.Queue{qa}, nil)
	b, _ := pool.NewProc("prog:b", 2, []*buffer.Queue{qb}, nil)
	a.SetProgram("prog")
	b.SetProgram("prog")
	aDone := make(chan struct{})
	var fromB []string
	drain := func(p *buffer.Ports, into *[]string) error {
		for {
			rec, err := p.In(0).Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*into = append(*into, string(rec))
		}
	}
	fns := []func(*buffer.Ports) error{
		func(p *buffer.Ports) error {
			for i := range n {
				rec := fmt.Appendf(nil, "%d", i)
				if err := p.Out(0).Write(rec); err != nil {
					return err
				}
				if err := p.Out(1).Write(rec); err != nil {
					return err
				}
			}
			return nil
		},
		func(p *buffer.Ports) error {
			defer close(aDone)
			return drain(p, got)
		},
		func(p *buffer.Ports) error {
			if _, err := p.In(0).Read(); err != nil {
				return err
			}
			// The pipe is full: the program reads a first.
			p.WaitOutside(buffer.OpWrite)
			select {
			case <-aDone:
			case <-time.After(5 * time.Second):
				p.Moved()
				return errors.New("the program never got to b")
			}
			p.Moved()
			fromB = append(fromB, "0")
			if err := drain(p, &fromB); err != nil {
				return err
			}
			*got = append(*got, fromB...)
			return nil
		},
	}
	t.Cleanup(func() { pool.Close() })
	return pool, []*buffer.Proc{tee, a, b}, fns
}

// A bridge that waits on its program with nothing moved is blocked once
// its grace has run out; the stall it closes (tee waits for room in qb,
// bridge a waits to read qa, the program waits on a) is resolved by
// growing, then spilling, qb.
func TestStallThroughProgramIsResolved(t *testing.T) {
	const n = 50
	var got []string
	pool, procs, fns := teeIntoProgram(t, buffer.Options{Buffers: 3, RecordSize: 16, Spill: true, SpillDir: t.TempDir(), Grace: 20 * time.Millisecond}, n, &got)
	for i, err := range runProcs(procs, fns) {
		if err != nil {
			t.Fatalf("%s: %v", procs[i].Name(), err)
		}
	}
	var want []string
	for range 2 {
		for i := range n {
			want = append(want, fmt.Sprint(i))
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the program read %v", got)
	}
	if r := pool.Resolved(); r.Growths == 0 || r.Spills == 0 {
		t.Fatalf("resolved by %v, want growths and spills", r)
	}
}

// With nothing to resolve it (no spilling), the stall is reported, naming
// the bridge and what it waits for; it is not a hang.
func TestStallThroughProgramIsReported(t *testing.T) {
	var got []string
	_, procs, fns := teeIntoProgram(t, buffer.Options{Buffers: 3, RecordSize: 16, Grace: 20 * time.Millisecond}, 50, &got)
	start := time.Now()
	errs := runProcs(procs, fns)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the stall took %v to be seen", d)
	}
	var d *buffer.DeadlockError
	if !errors.As(errs[0], &d) {
		t.Fatalf("tee: err = %v, want a deadlock", errs[0])
	}
	msg := d.Error()
	for _, want := range []string{"tee waits for room in qb", "prog:a waits to read qa", "prog:b waits for prog to read its pipe (full, nothing moved for"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

// A program none of whose bridges waits in the pool waits on nothing of
// tpipe's (it computes, or reads slowly): its bridge may wait outside
// long past the grace, and its writer for room, with no deadlock
// reported and nothing grown.
func TestSlowProgramIsNotStuck(t *testing.T) {
	pool, _ := buffer.NewPool(buffer.Options{Buffers: 2, RecordSize: 16, Grace: 10 * time.Millisecond})
	defer pool.Close()
	q, _ := pool.NewQueue("q", 1)
	w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
	b, _ := pool.NewProc("prog:stdin", 1, []*buffer.Queue{q}, nil)
	b.SetProgram("prog")
	errs := runProcs([]*buffer.Proc{w, b}, []func(*buffer.Ports) error{
		func(p *buffer.Ports) error {
			for i := range 5 {
				if err := p.Out(0).Write(fmt.Appendf(nil, "%d", i)); err != nil {
					return err
				}
				p.Flush()
			}
			return nil
		},
		func(p *buffer.Ports) error {
			for {
				_, err := p.In(0).Read()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				p.WaitOutside(buffer.OpWrite)
				time.Sleep(50 * time.Millisecond) // five graces
				p.Moved()
			}
		},
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r := pool.Resolved(); r.Growths+r.Spills > 0 {
		t.Fatalf("resolved a stall that was not one: %v", r)
	}
}

// fakeClock is a clock that moves only when told to: by Set, or by step
// at every reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *fakeClock) Set(t time.Time, step time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t, c.step = t, step
}

// Fixed bugs: when the grace timer fired, the pool looked for stuck tasks
// at one reading of the clock and chose the next wait to look at by a
// second, later one. A wait whose grace ran out between the two readings
// was looked at by neither, and the stall it closed hung the run (the
// soak test under load: `seq | ... | tee @a @b; /usr/bin/cat @a @b |
// cat`, where cat's output bridge began its last wait a fraction of a
// millisecond after the bridge for @b began its own). Here bridge b
// begins to wait at 0 and bridge out at 1ms, and the clock moves 2ms at
// every reading, so the timer for b fires at the end of b's grace and
// out's grace ends during the look.
func TestGraceEndingDuringALookIsSeen(t *testing.T) {
	const grace = time.Hour // the test's clock, not the real one, runs it out
	clk := &fakeClock{}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk.Set(start, 0)
	t.Cleanup(buffer.SetClock(clk.Now))
	pool, err := buffer.NewPool(buffer.Options{Buffers: 3, RecordSize: 16, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	qa, _ := pool.NewQueue("qa", 1)
	qb, _ := pool.NewQueue("qb", 1)
	tee, _ := pool.NewProc("tee", 0, nil, []*buffer.Queue{qa, qb})
	a, _ := pool.NewProc("prog:a", 1, []*buffer.Queue{qa}, nil)
	b, _ := pool.NewProc("prog:b", 2, []*buffer.Queue{qb}, nil)
	out, _ := pool.NewProc("prog", 3, nil, nil)
	for _, c := range []*buffer.Proc{a, b, out} {
		c.SetProgram("prog")
	}
	bWaits, outGo, outWaits, release := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	outsideUntilReleased := func(p *buffer.Ports, op buffer.Op, waits chan struct{}) error {
		p.WaitOutside(op)
		close(waits)
		<-release
		p.Moved()
		return errors.New("released")
	}
	done := make(chan []error)
	go func() {
		done <- runProcs([]*buffer.Proc{tee, a, b, out}, []func(*buffer.Ports) error{
			func(p *buffer.Ports) error {
				for i := 0; ; i++ {
					rec := fmt.Appendf(nil, "%d", i)
					if err := p.Out(0).Write(rec); err != nil {
						return err
					}
					if err := p.Out(1).Write(rec); err != nil {
						return err
					}
				}
			},
			func(p *buffer.Ports) error {
				for {
					if _, err := p.In(0).Read(); err != nil {
						return err
					}
				}
			},
			func(p *buffer.Ports) error {
				if _, err := p.In(0).Read(); err != nil {
					return err
				}
				// The pipe is full: the program reads a first.
				return outsideUntilReleased(p, buffer.OpWrite, bWaits)
			},
			func(p *buffer.Ports) error {
				<-outGo
				// The program's output pipe is empty: it waits on a.
				return outsideUntilReleased(p, buffer.OpRead, outWaits)
			},
		})
	}()
	<-bWaits
	clk.Set(start.Add(time.Millisecond), 0)
	close(outGo)
	<-outWaits
	// Wait for the rest to block: tee for room in qb, a to read qa.
	for {
		tw, tok := tee.Wait()
		aw, aok := a.Wait()
		if tok && tw.On == "room" && tw.Queue == "qb" && aok && aw.On == "read" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	clk.Set(start.Add(grace), 2*time.Millisecond)
	pool.FireWatch()
	for deadline := time.Now().Add(10 * time.Second); pool.Err() == nil && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if pool.Err() == nil {
		t.Error("the stall was never seen")
		pool.Abort(errors.New("the test gave up"))
	}
	close(release)
	errs := <-done
	pool.Close()
	var d *buffer.DeadlockError
	if !errors.As(errs[0], &d) {
		t.Fatalf("tee: err = %v, want a deadlock", errs[0])
	}
}
