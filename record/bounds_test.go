package record

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Bounds cuts a stream at record ends, each range at least seg bytes: read
// back range by range with a Scanner, the ranges give the stream's records.
func TestBounds(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "%s\n", strings.Repeat("x", i%97))
	}
	b.WriteString("last, with no newline")
	stream := b.String()
	for _, tc := range []struct {
		name   string
		stream string
		seg    int64
	}{
		{"empty", "", 10},
		{"one byte", "x", 10},
		{"one line", "x\n", 1},
		{"seg 1", stream, 1},
		{"seg 100", stream, 100},
		{"seg 4096", stream, 4096},
		{"seg 100000 (bigger than the buffer)", stream, 100000},
		{"seg past the end", stream, 1 << 30},
		{"a line longer than the read buffer", strings.Repeat("y", 200<<10) + "\nz\n", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := strings.NewReader(tc.stream)
			size := int64(len(tc.stream))
			bounds, err := Bounds(r, size, tc.seg, Lines)
			if err != nil {
				t.Fatal(err)
			}
			if size == 0 {
				if len(bounds) != 1 {
					t.Fatalf("bounds %v, want [0]", bounds)
				}
				return
			}
			if bounds[0] != 0 || bounds[len(bounds)-1] != size {
				t.Fatalf("bounds from %d to %d, want 0 to %d", bounds[0], bounds[len(bounds)-1], size)
			}
			var got bytes.Buffer
			for k := 0; k+1 < len(bounds); k++ {
				from, to := bounds[k], bounds[k+1]
				if to-from < tc.seg && to != size {
					t.Fatalf("range %d is %d bytes, want at least %d", k, to-from, tc.seg)
				}
				if to != size && tc.stream[to-1] != '\n' {
					t.Fatalf("range %d ends inside a line", k)
				}
				s := NewScanner(io.NewSectionReader(r, from, to-from), Lines, 1<<20)
				for s.Scan() {
					got.Write(s.Record())
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != tc.stream {
				t.Fatal("the ranges' records are not the stream")
			}
		})
	}
	if _, err := Bounds(strings.NewReader("x"), 1, 1, LengthPrefixed); err == nil {
		t.Error("Bounds of a length-prefixed stream: no error")
	}
}
