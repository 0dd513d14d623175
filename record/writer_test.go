package record_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/record"
)

// chunkings are the chunk sizes writeChunks cycles through.
var chunkings = [][]int{{1 << 20}, {1}, {2, 3}, {5, 1, 7}, {600, 1}}

func TestWriterStreams(t *testing.T) {
	for _, tt := range streamTests {
		for _, sizes := range chunkings {
			recs, err := writeChunks([]byte(tt.in), sizes, tt.f, 16)
			if !slices.Equal(recs, tt.recs) {
				t.Errorf("%s %q (chunks %v): records %q, want %q", tt.f.Name(), tt.in, sizes, recs, tt.recs)
			}
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("%s %q (chunks %v): error %v, want %v", tt.f.Name(), tt.in, sizes, err, tt.err)
			}
		}
	}
}

func TestWriterTooLarge(t *testing.T) {
	for _, tt := range tooLargeTests {
		for _, sizes := range chunkings {
			recs, err := writeChunks([]byte(tt.in), sizes, tt.f, tt.max)
			if !slices.Equal(recs, tt.recs) {
				t.Errorf("%s %q (chunks %v): records %q, want %q", tt.f.Name(), tt.in, sizes, recs, tt.recs)
			}
			var tl *record.TooLargeError
			if !errors.Is(err, record.ErrTooLarge) || !errors.As(err, &tl) {
				t.Errorf("%s %q (chunks %v): error %v, want a TooLargeError", tt.f.Name(), tt.in, sizes, err)
				continue
			}
			if tl.Max != tt.max || tl.Size <= tt.max {
				t.Errorf("%s %q (chunks %v): error %+v", tt.f.Name(), tt.in, sizes, *tl)
			}
		}
	}
}

func TestWriterAtLimit(t *testing.T) {
	const max = 5000
	line := strings.Repeat("x", max-1) + "\n"
	in := line + "y\n" + line + line[:max-1]
	for _, sizes := range chunkings {
		recs, err := writeChunks([]byte(in), sizes, record.Lines, max)
		if err != nil || !slices.Equal(recs, []string{line, "y\n", line, line[:max-1]}) {
			t.Errorf("chunks %v: %d records, %v", sizes, len(recs), err)
		}
		_, err = writeChunks([]byte(in+"xx"), sizes, record.Lines, max)
		if !errors.Is(err, record.ErrTooLarge) {
			t.Errorf("chunks %v, final record of %d bytes: error %v", sizes, max+1, err)
		}
	}
}

// TestWriterCopiesTail checks that the Writer keeps its own copy of an
// unfinished record: the caller reuses its buffer between Writes.
func TestWriterCopiesTail(t *testing.T) {
	sink := &collectSink{}
	w := record.NewWriter(sink, record.Lines, 16)
	buf := []byte("a\nbc")
	if n, err := w.Write(buf); n != 4 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	copy(buf, "XXXX")
	copy(buf, "d\ne")
	if n, err := w.Write(buf[:3]); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a\n", "bcd\n", "e"}; !slices.Equal(sink.recs, want) {
		t.Errorf("records %q, want %q", sink.recs, want)
	}
}

func TestWriterErrors(t *testing.T) {
	// A record over the limit: Write reports how much went through.
	sink := &collectSink{}
	w := record.NewWriter(sink, record.Lines, 4)
	n, err := w.Write([]byte("ab\ncdefgh\nij\n"))
	if n != 3 || !errors.Is(err, record.ErrTooLarge) {
		t.Errorf("Write = %d, %v; want 3, a TooLargeError", n, err)
	}
	if n, err2 := w.Write([]byte("ok\n")); n != 0 || err2 != err {
		t.Errorf("Write after an error = %d, %v; want 0, %v", n, err2, err)
	}
	if err2 := w.Close(); err2 != err {
		t.Errorf("Close after an error = %v, want %v", err2, err)
	}
	if !slices.Equal(sink.recs, []string{"ab\n"}) {
		t.Errorf("records %q", sink.recs)
	}

	// The sink fails.
	errFull := errors.New("full")
	w = record.NewWriter(&collectSink{err: errFull}, record.Lines, 4)
	if n, err := w.Write([]byte("ab\n")); n != 0 || !errors.Is(err, errFull) || err.Error() != "record: write: full" {
		t.Errorf("Write to a failing sink = %d, %v", n, err)
	}
	w = record.NewWriter(&collectSink{err: errFull}, record.Lines, 4)
	if n, err := w.Write([]byte("ab")); n != 2 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	if err := w.Close(); !errors.Is(err, errFull) {
		t.Errorf("Close to a failing sink: %v", err)
	}

	// Unfinished records at Close.
	w = record.NewWriter(&collectSink{}, record.LengthPrefixed, 8)
	w.Write([]byte("\x00\x00\x00\x03ab"))
	if err := w.Close(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Close in a payload: %v, want io.ErrUnexpectedEOF", err)
	}

	// Write after Close, and Close again.
	w = record.NewWriter(&collectSink{}, record.Lines, 4)
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.Write([]byte("a")); err != record.ErrClosed {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
}

func TestWriterUserFraming(t *testing.T) {
	for _, sizes := range chunkings {
		recs, err := writeChunks([]byte("ab--cd-ef"), sizes, userFraming{}, 2)
		if err != nil || !slices.Equal(recs, []string{"ab", "cd", "ef"}) {
			t.Errorf("chunks %v: %q, %v", sizes, recs, err)
		}
	}
}

func TestWriterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewWriter with max 0 did not panic")
		}
	}()
	record.NewWriter(discardSink{}, record.Lines, 0)
}

func TestWriterAllocs(t *testing.T) {
	for _, f := range []record.Framing{record.Lines, record.LengthPrefixed, record.Fixed(5)} {
		// Chunks that end inside records, so that the buffer is used.
		data := encode(f, []string{"abcd\n", "efgh\n", "ijkl\n", "mnop\n"})
		w := record.NewWriter(discardSink{}, f, 1000)
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			i = (i + 3) % len(data)
			if _, err := w.Write(data[:i]); err != nil {
				panic(err)
			}
			if _, err := w.Write(data[i:]); err != nil {
				panic(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Write, want 0", f.Name(), allocs)
		}
	}
}

func BenchmarkWriterLines(b *testing.B) {
	line := bytes.Repeat([]byte("x"), 79)
	line = append(line, '\n')
	data := bytes.Repeat(line, 1000)
	chunk := data[:32<<10] // cuts a line
	w := record.NewWriter(discardSink{}, record.Lines, 64<<10)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		w.Write(chunk)
	}
}
