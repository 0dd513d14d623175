package buffer

import (
	"io"
	"runtime"
	"testing"
)

// A writer that pushes a buffer to a reader waiting for it hands the
// buffer over under its own lock, as a channel hands a value to a waiting
// receiver: once the push returns, the buffer is the reader's, not queued,
// whether or not the reader has run since; it reads the record without
// taking the buffer itself, and the count of buffers holds throughout.
func TestWriterHandsBufferToWaitingReader(t *testing.T) {
	pool, _ := NewPool(Options{Buffers: 2, RecordSize: 8})
	q, _ := pool.NewQueue("q", 2)
	w, _ := pool.NewProc("w", 0, nil, []*Queue{q})
	r, _ := pool.NewProc("r", 1, []*Queue{q}, nil)
	// Unbuffered: the reader holds the buffer it read until the test has
	// looked (with room in got it could read on, give the buffer back and
	// wait again first, as the race detector's schedules showed).
	got := make(chan string)
	done := make(chan error, 1)
	go func() {
		in := r.Ports().In(0)
		for {
			rec, err := in.Read()
			if err == io.EOF {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			got <- string(rec)
		}
	}()
	for _, rec := range []string{"one", "two"} {
		for !r.Waiting() {
			// The reader is on its way to wait; let it get there.
			select {
			case err := <-done:
				t.Fatalf("the reader ended before it waited: %v", err)
			default:
				runtime.Gosched()
			}
		}
		out := w.Ports().Out(0)
		if err := out.Write([]byte(rec)); err != nil {
			t.Fatal(err)
		}
		w.Ports().Flush()
		pool.mu.Lock()
		n, held, cur := q.n, q.held, r.ins[0].cur
		pool.mu.Unlock()
		if n != 0 || held != 1 || cur == nil {
			t.Fatalf("after the push: %d queued, %d held, reader's buffer %v; want 0, 1 and the buffer", n, held, cur)
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != rec {
			t.Fatalf("read %q, want %q", s, rec)
		}
	}
	w.Finish(false)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Finish(false)
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Records != 2 {
		t.Fatalf("queue counted %d records, want 2", st.Records)
	}
}
