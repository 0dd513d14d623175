package buffer

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
)

// endsParker notes wakes, as ros's scheduler does, for a source and a
// sink run by steps: a step never parks.
// It is an UnparkerBy, and notes in how each wake came: "src woken by
// sink" for a wake on the thread of a task, "src woken" for any other.
type endsParker struct{ woken, how map[string]bool }

func (k *endsParker) Park(*Proc) error { panic("a task run by steps parked") }
func (k *endsParker) Unpark(t *Proc) {
	k.woken[t.Name()] = true
	k.how[t.Name()+" woken"] = true
}
func (k *endsParker) UnparkBy(t, by *Proc) {
	k.woken[t.Name()] = true
	k.how[t.Name()+" woken by "+by.Name()] = true
}

// runEnds runs src -> sink, a Source and a Sink, both by steps from the
// test's goroutine, the greatest runnable index first, on B buffers and a
// queue of capacity c, with records of S = 8. After every step it checks
// buffer conservation and that the step's word on waiting is the pool's.
// It returns what the sink saw, one string per call of its function, and
// what the tasks waited on (Wait.On, by task name) and how they were
// woken (see endsParker).
func runEnds(t *testing.T, b, c int, recs []string, bytes bool) ([]string, map[string]bool) {
	t.Helper()
	pool, err := NewPool(Options{Buffers: b, RecordSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := pool.NewQueue("q", c)
	src, _ := pool.NewProc("src", 0, nil, []*Queue{q})
	sink, _ := pool.NewProc("sink", 1, []*Queue{q}, nil)
	k := &endsParker{woken: map[string]bool{}, how: map[string]bool{}}
	src.SetParker(k)
	sink.SetParker(k)
	i := 0
	source := src.Ports().Source(func() ([]byte, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return []byte(recs[i-1]), nil
	})
	var got []string
	take := func(data []byte) error { got = append(got, string(data)); return nil }
	sk := sink.Ports().SinkRecords(take)
	if bytes {
		sk = sink.Ports().SinkBytes(take)
	}
	steppers := []interface {
		Step() error
		Waits() bool
	}{source, sk}
	procs := []*Proc{src, sink}
	waits, done := []bool{false, false}, []bool{false, false}
	on := map[string]bool{}
	for n := 0; !done[0] || !done[1]; n++ {
		if n > 10000 {
			t.Fatal("no end after 10000 steps")
		}
		for idx := range waits {
			if name := procs[idx].Name(); k.woken[name] {
				waits[idx], k.woken[name] = false, false
			}
		}
		idx := -1
		for j := 1; j >= 0; j-- {
			if !done[j] && !waits[j] {
				idx = j
				break
			}
		}
		if idx < 0 {
			t.Fatal("both wait: a stall")
		}
		err := steppers[idx].Step()
		switch {
		case err == io.EOF:
			procs[idx].Finish(false)
			done[idx] = true
		case err != nil:
			t.Fatalf("%s's step: %v", procs[idx].Name(), err)
		default:
			waits[idx] = steppers[idx].Waits()
			wt, w := procs[idx].Wait()
			if w != waits[idx] {
				t.Fatalf("%s's step says it waits %v, the pool %v", procs[idx].Name(), waits[idx], w)
			}
			if w {
				on[procs[idx].Name()+" "+wt.On] = true
			}
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if free, queued, held := pool.Counts(); free != b || queued != 0 || held != 0 {
		t.Fatalf("at the end FREE %d, queued %d, held %d; want %d, 0, 0", free, queued, held, b)
	}
	maps.Copy(on, k.how)
	return got, on
}

// A source and a sink run by steps do what their loops of Write and Read
// would: every record arrives, in order, on one buffer (the source then
// waits for FREE with room in the queue) or more, and a sink of bytes
// sees the buffers' bytes.
func TestSourceSinkSteps(t *testing.T) {
	recs := []string{"a", "bb", "ccc", "dddd", "", "eeeeeeee", "f"}
	for _, b := range []int{1, 2, 3} {
		for _, c := range []int{1, 2} {
			t.Run(fmt.Sprintf("B=%d/cap=%d", b, c), func(t *testing.T) {
				got, on := runEnds(t, b, c, recs, false)
				if fmt.Sprint(got) != fmt.Sprint(recs) {
					t.Fatalf("records: got %q, want %q", got, recs)
				}
				if want := b < c; on["src free"] != want {
					t.Fatalf("the source waited on %v; want a wait for FREE %v", on, want)
				}
				if !on["sink read"] || !on["src room"] && c == 1 {
					t.Fatalf("the tasks waited on %v; want the sink to wait to read, and with capacity 1 the source for room", on)
				}
				// A push wakes the reader on the writer's thread, and
				// room the reader makes wakes the writer on the reader's
				// (UnparkerBy); a buffer given back to FREE wakes its
				// waiter from no task's thread in particular.
				if !on["sink woken by src"] || on["sink woken"] || on["src room"] != on["src woken by sink"] || on["src free"] != on["src woken"] {
					t.Fatalf("the tasks waited on and were woken %v; want the sink woken by the source, and the source by the sink for room, and from FREE without", on)
				}
				if got, _ := runEnds(t, b, c, recs, true); strings.Join(got, "") != strings.Join(recs, "") {
					t.Fatalf("bytes: got %q, want %q", got, recs)
				}
			})
		}
	}
}

// A record longer than S is for the source's own loop: Step returns
// ErrStepUnfit and Held gives the record back, with no reservation left.
// A sink of records leaves a buffer that starts a long record to its own
// loop, after the whole records before it.
func TestStepsLeaveLongRecords(t *testing.T) {
	pool, err := NewPool(Options{Buffers: 2, RecordSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := pool.NewQueue("q", 2)
	src, _ := pool.NewProc("src", 0, nil, []*Queue{q})
	sink, _ := pool.NewProc("sink", 1, []*Queue{q}, nil)
	k := &endsParker{woken: map[string]bool{}, how: map[string]bool{}}
	src.SetParker(k)
	sink.SetParker(k)
	recs := []string{"ab", "0123456789"}
	i := 0
	source := src.Ports().Source(func() ([]byte, error) {
		i++
		return []byte(recs[i-1]), nil
	})
	if err := source.Step(); !errors.Is(err, ErrStepUnfit) {
		t.Fatalf("step: %v, want ErrStepUnfit", err)
	}
	held := source.Held()
	if string(held) != recs[1] || q.reserved != 1 {
		t.Fatalf("held %q with %d reservations; want %q and the one of the buffer being filled", held, q.reserved, recs[1])
	}
	// The source's loop writes it, as a chain of two buffers.
	if err := src.Ports().Out(0).Write(held); err != nil {
		t.Fatal(err)
	}
	src.Finish(false)
	var got []string
	sk := sink.Ports().SinkRecords(func(rec []byte) error { got = append(got, string(rec)); return nil })
	if err := sk.Step(); !errors.Is(err, ErrStepUnfit) {
		t.Fatalf("sink's step: %v, want ErrStepUnfit", err)
	}
	// The loop reads on from the long record's first piece.
	rec, err := sink.Ports().In(0).Read()
	if err != nil || string(rec) != recs[1] || fmt.Sprint(got) != "[ab]" {
		t.Fatalf("the loop read %q, %v after the steps' %q", rec, err, got)
	}
	if _, err := sink.Ports().In(0).Read(); err != io.EOF {
		t.Fatalf("read after the end: %v", err)
	}
	sink.Finish(false)
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
}
