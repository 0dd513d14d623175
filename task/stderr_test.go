package task_test

import (
	"bytes"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/task"
)

// Every write reaches the wrapped writer whole; between Keep and Kept the
// first limit bytes written are kept, in order, and the rest counted.
func TestStderrKeepsFirstBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var out bytes.Buffer
		s := task.NewStderr(&out)
		var want []byte // the dumb model: everything written
		var keptFrom int
		limit := -1 // not keeping
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				p := rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "p")
				if n, err := s.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				want = append(want, p...)
			},
			"keep": func(t *rapid.T) {
				limit = rapid.IntRange(0, 100).Draw(t, "limit")
				s.Keep(limit)
				keptFrom = len(want)
			},
			"kept": func(t *rapid.T) {
				kept, lost := s.Kept()
				if limit < 0 {
					if len(kept) != 0 || lost != 0 {
						t.Fatalf("kept %q, lost %d while not keeping", kept, lost)
					}
					return
				}
				since := want[keptFrom:]
				n := min(limit, len(since))
				if !bytes.Equal(kept, since[:n]) || lost != int64(len(since)-n) {
					t.Fatalf("kept %q, lost %d; want %q, %d", kept, lost, since[:n], len(since)-n)
				}
				limit = -1
			},
			"": func(t *rapid.T) {
				if !bytes.Equal(out.Bytes(), want) {
					t.Fatalf("wrote %q, want %q", out.Bytes(), want)
				}
			},
		})
	})
}

// Replay writes to the wrapped writer and keeps nothing.
func TestStderrReplayIsNotKept(t *testing.T) {
	var out bytes.Buffer
	s := task.NewStderr(&out)
	s.Keep(10)
	if err := s.Replay([]byte("old\n")); err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("new\n"))
	if kept, lost := s.Kept(); string(kept) != "new\n" || lost != 0 {
		t.Fatalf("kept %q, lost %d", kept, lost)
	}
	if out.String() != "old\nnew\n" {
		t.Fatalf("wrote %q", out.String())
	}
}

// Writers on several goroutines lose no byte of the kept copy.
func TestStderrConcurrentWrites(t *testing.T) {
	var out bytes.Buffer
	s := task.NewStderr(&out)
	s.Keep(1 << 20)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				s.Write([]byte("x\n"))
			}
		})
	}
	wg.Wait()
	kept, _ := s.Kept()
	if !bytes.Equal(kept, out.Bytes()) || len(kept) != 800 {
		t.Fatalf("kept %d bytes, wrote %d", len(kept), out.Len())
	}
}
