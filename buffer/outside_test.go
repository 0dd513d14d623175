package buffer_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
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
