package syncio

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestLockedWriterWhole checks that concurrent writes arrive whole: a
// bytes.Buffer alone would race (go test -race) and could interleave.
func TestLockedWriterWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewLockedWriter(&buf)
	line := strings.Repeat("x", 100) + "\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	lines := strings.SplitAfter(buf.String(), "\n")
	lines = lines[:len(lines)-1]
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if l != line {
			t.Fatalf("torn line %q", l)
		}
	}
}
