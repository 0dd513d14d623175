package builtin

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
	"pgregory.net/rapid"
)

// lastLines is the dumb model of tail -n n: split the stream into lines
// as GNU does (a last line may lack its '\n') and join the last n.
func lastLines(stream []byte, n int) []byte {
	var lines [][]byte
	for len(stream) > 0 {
		i := bytes.IndexByte(stream, '\n') + 1
		if i == 0 {
			i = len(stream)
		}
		lines = append(lines, stream[:i])
		stream = stream[i:]
	}
	return bytes.Join(lines[max(len(lines)-n, 0):], nil)
}

// A lineWindow fed a stream cut into blocks anywhere (inside lines, empty
// blocks, blocks with no line end) gives the model's last n lines, in
// memory and spilled to disk.
func TestLineWindowMatchesModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		stream := rapid.SliceOfN(rapid.SampledFrom([]byte("ab\n")), 0, 400).Draw(t, "stream")
		n := rapid.IntRange(1, 60).Draw(t, "n")
		budget := rapid.SampledFrom([]int{1, 1 << 20}).Draw(t, "budget") // 1: NewFIFO's least, 4 KiB
		if budget == 1 {
			stream = bytes.Repeat(stream, 30) // past 4 KiB, to spill
		}
		w := lineWindow{q: recfile.NewFIFO(dir, budget), n: uint64(n)}
		defer w.q.Close()
		rest := stream
		for len(rest) > 0 {
			k := rapid.IntRange(0, min(len(rest), 50)).Draw(t, "block")
			if err := w.push(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		var got []byte
		if err := w.finish(func(b []byte) error { got = append(got, b...); return nil }); err != nil {
			t.Fatal(err)
		}
		if want := lastLines(stream, n); !bytes.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// BenchmarkLineWindow pushes 20 million numbered lines through the window
// of tail -n 10000000, in blocks of 4096 lines as a port gives them, with
// the budget of --sort-memory auto and with 64 MiB (most blocks spill).
func BenchmarkLineWindow(b *testing.B) {
	var blocks [][]byte
	var blk []byte
	for i := 1; i <= 20_000_000; i++ {
		blk = strconv.AppendInt(blk, int64(i), 10)
		blk = append(blk, '\n')
		if i%4096 == 0 {
			blocks = append(blocks, blk)
			blk = nil
		}
	}
	blocks = append(blocks, blk)
	for _, budget := range []int{1 << 30, 64 << 20} {
		b.Run(fmt.Sprintf("budget=%dM", budget>>20), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := lineWindow{q: recfile.NewFIFO(b.TempDir(), budget), n: 10_000_000}
				for _, blk := range blocks {
					if err := w.push(blk); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.finish(func([]byte) error { return nil }); err != nil {
					b.Fatal(err)
				}
				w.q.Close()
			}
		})
	}
}

// Once tail -n's window is full, the blocks that come in reuse the memory
// of those that leave, in memory and when it spills (a FIFO once took a
// fresh segment for each it spilled: as many bytes allocated as pushed,
// and the garbage collector running all the time under tpipe's memory
// limit). Counted in bytes allocated, not timed.
func TestLineWindowSteadyStateAllocates(t *testing.T) {
	var blk []byte
	for i := 1; i <= 4096; i++ {
		blk = strconv.AppendInt(blk, int64(100000+i), 10)
		blk = append(blk, '\n')
	}
	for _, budget := range []int{64 << 20, 4 << 20} { // all in memory; most spilled
		w := lineWindow{q: recfile.NewFIFO(t.TempDir(), budget), n: 8 << 20 / 7} // about 8 MiB of lines
		push := func(times int) {
			for range times {
				if err := w.push(blk); err != nil {
					t.Fatal(err)
				}
			}
		}
		push(1000) // the window fills
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		push(2000) // 57 MB more
		runtime.ReadMemStats(&after)
		pushed := uint64(2000 * len(blk))
		if got := after.TotalAlloc - before.TotalAlloc; got > pushed/10 {
			t.Errorf("budget %d: %d bytes allocated for %d pushed, want at most a tenth", budget, got, pushed)
		}
		w.q.Close()
	}
}
