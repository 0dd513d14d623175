package buffer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// pass runs a writer of recs and a reader on p, and returns what the
// reader read; the pool is closed after both have finished.
func pass(t *testing.T, p *Pool, recs []string) []string {
	t.Helper()
	q, _ := p.NewQueue("q", 2)
	w, _ := p.NewProc("w", 0, nil, []*Queue{q})
	r, _ := p.NewProc("r", 1, []*Queue{q}, nil)
	var got []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, rec := range recs {
			if err := w.Ports().Out(0).Write([]byte(rec)); err != nil {
				t.Error(err)
			}
		}
		w.Finish(false)
	})
	wg.Go(func() {
		for {
			rec, err := r.Ports().In(0).Read()
			if err != nil {
				break
			}
			got = append(got, string(rec))
		}
		r.Finish(false)
	})
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRecycle: a pool that closes with every buffer in FREE gives their
// memory away, and a later pool of the size runs on it with nothing of
// the earlier run's records showing.
func TestRecycle(t *testing.T) {
	var recs []string
	for i := range 50 {
		recs = append(recs, fmt.Sprintf("earlier run, record %02d\n", i))
	}
	a, _ := NewPool(Options{Buffers: 4, RecordSize: 64})
	if got := pass(t, a, recs); !slices.Equal(got, recs) {
		t.Fatalf("first run read %q", got)
	}
	if a.Allocated() == 0 {
		t.Fatal("the first run allocated no buffer")
	}
	for _, b := range a.bufs {
		if b.data != nil || b.ends != nil {
			t.Fatalf("buffer %d kept its memory after Close", b.id)
		}
	}
	for range 3 {
		b, _ := NewPool(Options{Buffers: 4, RecordSize: 64})
		if got := pass(t, b, []string{"x\n", "y"}); !slices.Equal(got, []string{"x\n", "y"}) {
			t.Fatalf("a run on recycled buffers read %q", got)
		}
	}
}

// TestNoRecycleWhileHeld: a pool closed while a buffer is out of FREE (a
// run that failed with a task holding one) keeps every buffer's memory.
func TestNoRecycleWhileHeld(t *testing.T) {
	p, _ := NewPool(Options{Buffers: 2, RecordSize: 64})
	q, _ := p.NewQueue("q", 2)
	w, _ := p.NewProc("w", 0, nil, []*Queue{q})
	if err := w.Ports().Out(0).Write([]byte("held\n")); err != nil {
		t.Fatal(err)
	}
	p.Close()
	for _, b := range p.bufs {
		if b.data == nil {
			t.Fatalf("buffer %d gave its memory away while a queue held it", b.id)
		}
	}
	w.Finish(false)
}

// TestNewBufFromStore: a buffer made after others of its size were given
// back has their memory, empty, with room for the pool's records. (Under
// the race detector a sync.Pool drops some of what it is given; of many,
// one comes back.)
func TestNewBufFromStore(t *testing.T) {
	p, _ := NewPool(Options{Buffers: 1, RecordSize: 96})
	s := storeOf(96)
	given := map[*byte]bool{}
	for range 30 {
		data := make([]byte, 5, 96)
		given[&data[:1][0]] = true
		s.Put(&mem{data: data, ends: make([]int32, 3, p.nrec)})
	}
	b := p.newBuf(0)
	if len(b.data) != 0 || cap(b.data) != 96 || len(b.ends) != 0 || cap(b.ends) < p.nrec {
		t.Fatalf("buffer of len %d cap %d, ends len %d cap %d", len(b.data), cap(b.data), len(b.ends), cap(b.ends))
	}
	if !given[&b.data[:1][0]] {
		t.Error("the buffer's memory is new, with recycled memory in the store")
	}
}
