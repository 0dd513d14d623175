package recfile_test

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
	"pgregory.net/rapid"
)

// A FIFO behaves as a slice of records whatever its budget: Push appends,
// Front and Pop take the oldest, Drop forgets the oldest k; Len and Bytes
// agree once the front was read.
func TestFIFOModel(t *testing.T) {
	dir := t.TempDir()
	spilled := false
	rapid.Check(t, func(rt *rapid.T) {
		budget := rapid.SampledFrom([]int{0, 100, 5000}).Draw(rt, "budget")
		q := recfile.NewFIFO(dir, budget)
		defer q.Close()
		var model [][]byte
		next := 0
		for range rapid.IntRange(1, 200).Draw(rt, "ops") {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0, 1, 2, 3, 4:
				n := rapid.SampledFrom([]int{0, 1, 10, 300, 9000}).Draw(rt, "len")
				rec := bytes.Repeat([]byte{byte('a' + next%26)}, n)
				next++
				if err := q.Push(rec); err != nil {
					rt.Fatal(err)
				}
				model = append(model, rec)
			case 5, 6, 7:
				rec, err := q.Front()
				if len(model) == 0 {
					if err != io.EOF {
						rt.Fatalf("Front of empty: %v", err)
					}
					continue
				}
				if err != nil || !bytes.Equal(rec, model[0]) {
					rt.Fatalf("Front = %.20q (%d bytes), %v; want %.20q (%d bytes)", rec, len(rec), err, model[0], len(model[0]))
				}
				if err := q.Pop(); err != nil {
					rt.Fatal(err)
				}
				model = model[1:]
			default:
				k := rapid.IntRange(0, 20).Draw(rt, "drop")
				if err := q.Drop(int64(k)); err != nil {
					rt.Fatal(err)
				}
				model = model[min(k, len(model)):]
			}
			if q.Len() != int64(len(model)) {
				rt.Fatalf("Len = %d, want %d", q.Len(), len(model))
			}
			spilled = spilled || q.Spilled() > 0
		}
		for len(model) > 0 {
			rec, err := q.Front()
			if err != nil || !bytes.Equal(rec, model[0]) {
				rt.Fatalf("draining: Front = %d bytes, %v; want %d bytes", len(rec), err, len(model[0]))
			}
			var total int64
			for _, m := range model {
				total += int64(len(m))
			}
			if q.Bytes() != total {
				rt.Fatalf("Bytes = %d, want %d", q.Bytes(), total)
			}
			if err := q.Pop(); err != nil {
				rt.Fatal(err)
			}
			model = model[1:]
		}
	})
	if !spilled {
		t.Error("no case spilled to disk")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left in the temp dir", len(ents))
	}
}

// Records pushed past the budget go to disk: memory stays bounded while
// the FIFO holds many times its budget.
func TestFIFOSpills(t *testing.T) {
	q := recfile.NewFIFO(t.TempDir(), 64<<10)
	defer q.Close()
	line := bytes.Repeat([]byte("x"), 99)
	for range 10000 {
		if err := q.Push(line); err != nil {
			t.Fatal(err)
		}
	}
	if q.Bytes() != 990000 || q.Spilled() < 900000 {
		t.Errorf("Bytes %d, Spilled %d: want 990000 held, most of it on disk", q.Bytes(), q.Spilled())
	}
}

// Fixed bug: every spilled segment was a file of its own, so a FIFO with
// a small budget holding much (tail -c of a large input) ran out of file
// descriptors. Segments now share files of up to 64 MiB, and a file goes
// once its segments are gone.
func TestFIFOFewFiles(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd:", err)
		}
		return len(ents)
	}
	dir := t.TempDir()
	before := fds()
	q := recfile.NewFIFO(dir, 4<<10) // segments of 1 KiB
	defer q.Close()
	rec := bytes.Repeat([]byte("r"), 99)
	const n = 100000 // 9.9 MB: about 10,000 segments on disk
	for i := range n {
		rec[0] = byte(i)
		if err := q.Push(rec); err != nil {
			t.Fatal(err)
		}
	}
	if open := fds() - before; open > 2 {
		t.Errorf("%d files open for %d bytes held, want at most 2", open, q.Bytes())
	}
	// Dropping most and reading the rest gives what was pushed, in order.
	if err := q.Drop(n - 1000); err != nil {
		t.Fatal(err)
	}
	for i := n - 1000; i < n; i++ {
		got, err := q.Front()
		rec[0] = byte(i)
		if err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("record %d: %.10q, %v", i, got, err)
		}
		if err := q.Pop(); err != nil {
			t.Fatal(err)
		}
	}
	if open := fds() - before; open != 0 {
		t.Errorf("%d files still open once the FIFO is empty", open)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left in the temp dir", len(ents))
	}
}

// Fixed bug: a memory segment was an eighth of the budget, taken whole
// when it started, so a FIFO with sort memory auto's gigabyte took 128
// MiB to hold five lines (tail -n 5).
func TestFIFOSmallUseSmallMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	q := recfile.NewFIFO(t.TempDir(), 1<<30)
	defer q.Close()
	for range 5 {
		if err := q.Push([]byte("a line\n")); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("five lines took %d bytes", n)
	}
}

// A FIFO sliding over a window larger than its budget (tail -n) writes to
// disk about the part of the window past the budget, not every record it
// is given: it spills its newest segments, and the oldest, dropped soon,
// free memory for those that follow.
func TestFIFOSlidingSpillsOnlyThePastBudget(t *testing.T) {
	const budget, window, total = 64 << 10, 96 << 10, 1 << 21 // bytes
	q := recfile.NewFIFO(t.TempDir(), budget)
	defer q.Close()
	rec := []byte("0123456789abcdef0123456789abcdef0123456789abcdef012345678901234\n")
	for range total / len(rec) {
		if err := q.Push(rec); err != nil {
			t.Fatal(err)
		}
		for q.Bytes() > window {
			if err := q.Drop(1); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The window is a third past the budget: about a third of what comes
	// after the first window goes to disk. Spilling the oldest wrote 97%.
	if got := q.Spilled(); got > total/2 {
		t.Errorf("spilled %d of %d bytes pushed through a %d-byte window with a %d-byte budget", got, total, window, budget)
	}
	var n int64
	for q.Len() > 0 {
		b, err := q.Front()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(rec) {
			t.Fatalf("record %d is %q", n, b)
		}
		if err := q.Pop(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != int64(window/len(rec)) {
		t.Errorf("read back %d records, want %d", n, window/len(rec))
	}
}
