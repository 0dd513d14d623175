package buffer

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// indexLinesByIndexByte is indexLines as it was, one bytes.IndexByte per
// line: the reference.
func indexLinesByIndexByte(b *Buf, from int, delim byte) {
	pos := max(b.end(), from)
	for len(b.ends) < cap(b.ends)-1 {
		i := bytes.IndexByte(b.data[pos:], delim)
		if i < 0 {
			return
		}
		pos += i + 1
		b.ends = append(b.ends, int32(pos))
	}
}

// indexLines finds the same line ends as a search line by line, whatever
// the lengths of the lines (short ones found a word at a time, long ones
// by bytes.IndexByte), the delimiter, where the search starts, the ends
// already there and the room left for more.
func TestIndexLinesSameAsLineByLine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		delim := rapid.SampledFrom([]byte{'\n', 0, 0xff, 'a', 0x80, 0x7f}).Draw(t, "delim")
		var data []byte
		for range rapid.IntRange(0, 40).Draw(t, "lines") {
			n := rapid.SampledFrom([]int{0, 1, 3, 7, 8, 9, 15, 31, 32, 33, 100}).Draw(t, "len")
			for range n {
				c := rapid.SampledFrom([]byte{'x', 0x80 ^ delim, delim ^ 1, delim + 1, 0xfe, 1}).Draw(t, "byte")
				if c == delim {
					c = 'x' ^ delim
				}
				data = append(data, c)
			}
			if rapid.IntRange(0, 5).Draw(t, "unterminated") > 0 {
				data = append(data, delim)
			}
		}
		room := rapid.IntRange(1, 50).Draw(t, "room")
		have := rapid.IntRange(0, 2).Draw(t, "have")
		from := rapid.IntRange(0, len(data)).Draw(t, "from")
		var pre []int32
		for i, c := range data {
			if c == delim && len(pre) < have && i < from {
				pre = append(pre, int32(i+1))
			}
		}
		mk := func() *Buf {
			ends := make([]int32, len(pre), len(pre)+room)
			copy(ends, pre)
			return &Buf{data: data, ends: ends}
		}
		got, want := mk(), mk()
		indexLines(got, from, delim)
		indexLinesByIndexByte(want, from, delim)
		if !slices.Equal(got.ends, want.ends) {
			t.Fatalf("delim %q from %d room %d in %q:\n got %v\nwant %v", delim, from, room, data, got.ends, want.ends)
		}
	})
}

func TestDelimBytesIsExact(t *testing.T) {
	for d := range 256 {
		for c := range 256 {
			w := uint64(c)<<16 | uint64(d)<<8 | uint64(c) // c, d, c: a carry would show
			want := uint64(0x80) << 8
			if c == d {
				want |= 0x80 | 0x80<<16
			}
			want |= 0x8080808080 << 24 * uint64(btoi(d == 0))
			if got := delimBytes(w, byte(d)); got != want {
				t.Fatalf("delimBytes(%#x, %#x) = %#x, want %#x", w, d, got, want)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func BenchmarkIndexLines(b *testing.B) {
	for _, c := range []struct {
		name string
		line string
	}{
		{"8B", "1234567\n"},
		{"9B", "12345678\n"},
		{"20B", strings.Repeat("x", 19) + "\n"},
		{"88B", strings.Repeat("x", 87) + "\n"},
	} {
		data := []byte(strings.Repeat(c.line, (256<<10)/len(c.line)))
		lines := bytes.Count(data, []byte{'\n'})
		for _, f := range []struct {
			name string
			fn   func(*Buf, int, byte)
		}{{"words", indexLines}, {"indexbyte", indexLinesByIndexByte}} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				buf := &Buf{data: data, ends: make([]int32, 0, lines+1)}
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					buf.ends = buf.ends[:0]
					f.fn(buf, 0, '\n')
				}
			})
		}
	}
}
