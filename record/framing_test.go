package record_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/tpipe/tpipe/record"
)

var fixed3 = record.Fixed(3)

// streamTests are whole streams with the records each framing finds in
// them and the error that ends them, if any.
var streamTests = []struct {
	f    record.Framing
	in   string
	recs []string
	err  error // matched with errors.Is
}{
	{record.Lines, "", nil, nil},
	{record.Lines, "a", []string{"a"}, nil},
	{record.Lines, "a\n", []string{"a\n"}, nil},
	{record.Lines, "a\nb", []string{"a\n", "b"}, nil},
	{record.Lines, "a\nbc\n", []string{"a\n", "bc\n"}, nil},
	{record.Lines, "\n", []string{"\n"}, nil},
	{record.Lines, "\n\n", []string{"\n", "\n"}, nil},
	{record.Lines, "\n\nx", []string{"\n", "\n", "x"}, nil},
	{record.Lines, "a\r\n", []string{"a\r\n"}, nil},
	{record.Lines, "a\x00b\n\x00", []string{"a\x00b\n", "\x00"}, nil},

	{record.NUL, "", nil, nil},
	{record.NUL, "a", []string{"a"}, nil},
	{record.NUL, "a\x00b\x00", []string{"a\x00", "b\x00"}, nil},
	{record.NUL, "a\x00b", []string{"a\x00", "b"}, nil},
	{record.NUL, "\x00\x00", []string{"\x00", "\x00"}, nil},
	{record.NUL, "a\nb\n\x00", []string{"a\nb\n\x00"}, nil},

	{record.LengthPrefixed, "", nil, nil},
	{record.LengthPrefixed, "\x00\x00\x00\x00", []string{""}, nil},
	{record.LengthPrefixed, "\x00\x00\x00\x03abc", []string{"abc"}, nil},
	{record.LengthPrefixed, "\x00\x00\x00\x01a\x00\x00\x00\x02\n\x00", []string{"a", "\n\x00"}, nil},
	{record.LengthPrefixed, "\x00", nil, io.ErrUnexpectedEOF},
	{record.LengthPrefixed, "\x00\x00\x00", nil, io.ErrUnexpectedEOF},
	{record.LengthPrefixed, "\x00\x00\x00\x05ab", nil, io.ErrUnexpectedEOF},
	{record.LengthPrefixed, "\x00\x00\x00\x01a\x00\x00", []string{"a"}, io.ErrUnexpectedEOF},

	{fixed3, "", nil, nil},
	{fixed3, "abc", []string{"abc"}, nil},
	{fixed3, "abc\n\x00f", []string{"abc", "\n\x00f"}, nil},
	{fixed3, "ab", nil, io.ErrUnexpectedEOF},
	{fixed3, "abcd", []string{"abc"}, io.ErrUnexpectedEOF},
	{record.Fixed(1), "\n\x00", []string{"\n", "\x00"}, nil},
}

func TestSplitStreams(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(fmt.Sprintf("%s/%q", tt.f.Name(), tt.in), func(t *testing.T) {
			check := func(how string, recs []string, err error) {
				t.Helper()
				if !slices.Equal(recs, tt.recs) {
					t.Errorf("%s: records %q, want %q", how, recs, tt.recs)
				}
				if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
					t.Errorf("%s: error %v, want %v", how, err, tt.err)
				}
			}
			recs, err := splitAll(tt.f, []byte(tt.in))
			check("whole", recs, err)
			recs, err = splitByteByByte(tt.f, []byte(tt.in))
			check("byte by byte", recs, err)
			if tt.err == nil {
				if got := string(encode(tt.f, tt.recs)); got != tt.in {
					t.Errorf("Append of the records = %q, want %q", got, tt.in)
				}
			}
		})
	}
}

// TestSplitCalls checks single calls, in particular those asking for more
// data (0, nil, nil) before atEOF.
func TestSplitCalls(t *testing.T) {
	const more = "<more>" // no token
	tests := []struct {
		f       record.Framing
		in      string
		atEOF   bool
		advance int
		token   string
	}{
		{record.Lines, "", false, 0, more},
		{record.Lines, "", true, 0, more},
		{record.Lines, "abc", false, 0, more},
		{record.Lines, "abc", true, 3, "abc"},
		{record.Lines, "ab\ncd", false, 3, "ab\n"},
		{record.Lines, "\n", false, 1, "\n"},
		{record.NUL, "ab\n", false, 0, more},
		{record.NUL, "ab\x00", false, 3, "ab\x00"},
		// A header arriving in pieces, then its payload.
		{record.LengthPrefixed, "\x00", false, 0, more},
		{record.LengthPrefixed, "\x00\x00\x00", false, 0, more},
		{record.LengthPrefixed, "\x00\x00\x00\x02", false, 0, more},
		{record.LengthPrefixed, "\x00\x00\x00\x02a", false, 0, more},
		{record.LengthPrefixed, "\x00\x00\x00\x02ab", false, 6, "ab"},
		{record.LengthPrefixed, "\x00\x00\x00\x02abc", false, 6, "ab"},
		{record.LengthPrefixed, "\x00\x00\x00\x00", false, 4, ""},
		{record.LengthPrefixed, "", true, 0, more},
		{fixed3, "ab", false, 0, more},
		{fixed3, "abcd", false, 3, "abc"},
		{fixed3, "", true, 0, more},
	}
	for _, tt := range tests {
		advance, token, err := tt.f.Split([]byte(tt.in), tt.atEOF)
		got := string(token)
		if token == nil {
			got = more
		}
		if err != nil || advance != tt.advance || got != tt.token {
			t.Errorf("%s.Split(%q, %v) = %d, %q, %v; want %d, %q, nil",
				tt.f.Name(), tt.in, tt.atEOF, advance, got, err, tt.advance, tt.token)
		}
	}
}

func TestSplitErrorText(t *testing.T) {
	tests := []struct {
		f    record.Framing
		in   string
		want string
	}{
		{record.LengthPrefixed, "\x00\x00", "record: length: stream ends inside a header (2 of 4 bytes): unexpected EOF"},
		{record.LengthPrefixed, "\x00\x00\x00\x03a", "record: length: stream ends inside a payload (1 of 3 bytes): unexpected EOF"},
		{record.LengthPrefixed, "\xff\xff\xff\xffab", "record: length: stream ends inside a payload (2 of 4294967295 bytes): unexpected EOF"},
		{fixed3, "ab", "record: fixed:3: final frame has 2 of 3 bytes: unexpected EOF"},
	}
	for _, tt := range tests {
		_, _, err := tt.f.Split([]byte(tt.in), true)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s.Split(%q, true): error %v, want %q", tt.f.Name(), tt.in, err, tt.want)
		}
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		f        record.Framing
		rec      string
		want     string
		overhead int
	}{
		{record.Lines, "a\n", "a\n", 0},
		{record.Lines, "a", "a", 0},
		{record.NUL, "a\x00", "a\x00", 0},
		{record.LengthPrefixed, "", "\x00\x00\x00\x00", 4},
		{record.LengthPrefixed, "ab", "\x00\x00\x00\x02ab", 4},
		{fixed3, "abc", "abc", 0},
	}
	for _, tt := range tests {
		got := tt.f.Append([]byte("<"), []byte(tt.rec))
		if string(got) != "<"+tt.want {
			t.Errorf("%s.Append(%q) = %q, want %q", tt.f.Name(), tt.rec, got[1:], tt.want)
		}
		if o := tt.f.Overhead(); o != tt.overhead {
			t.Errorf("%s.Overhead() = %d, want %d", tt.f.Name(), o, tt.overhead)
		}
	}
	rec := make([]byte, 300)
	got := record.LengthPrefixed.Append(nil, rec)
	if string(got[:4]) != "\x00\x00\x01\x2c" || len(got) != 304 {
		t.Errorf("LengthPrefixed header of a 300-byte record: % x", got[:4])
	}
}

func TestParseFraming(t *testing.T) {
	tests := []struct {
		in   string
		want record.Framing // nil: an error
	}{
		{"lines", record.Lines},
		{"nul", record.NUL},
		{"length", record.LengthPrefixed},
		{"fixed:1", record.Fixed(1)},
		{"fixed:4096", record.Fixed(4096)},
		{"fixed:4K", record.Fixed(4096)},
		{"fixed:1MiB", record.Fixed(1 << 20)},
		{"", nil},
		{"Lines", nil},
		{"line", nil},
		{"csv", nil},
		{"fixed", nil},
		{"fixed:", nil},
		{"fixed:0", nil},
		{"fixed:-1", nil},
		{"fixed:x", nil},
		{" lines", nil},
	}
	for _, tt := range tests {
		f, err := record.ParseFraming(tt.in)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("ParseFraming(%q) = %s, want an error", tt.in, f.Name())
		case tt.want != nil && err != nil:
			t.Errorf("ParseFraming(%q): %v", tt.in, err)
		case tt.want != nil && f != tt.want:
			t.Errorf("ParseFraming(%q) = %s, want %s", tt.in, f.Name(), tt.want.Name())
		}
	}
}

func TestNames(t *testing.T) {
	for _, f := range []record.Framing{record.Lines, record.NUL, record.LengthPrefixed, record.Fixed(7), record.Fixed(1 << 20)} {
		g, err := record.ParseFraming(f.Name())
		if err != nil || g != f {
			t.Errorf("ParseFraming(%q) = %v, %v; want the framing back", f.Name(), g, err)
		}
	}
	if got := record.Fixed(4096).Name(); got != "fixed:4096" {
		t.Errorf("Fixed(4096).Name() = %q", got)
	}
}

func TestFixedPanics(t *testing.T) {
	for _, n := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Fixed(%d) did not panic", n)
				}
			}()
			record.Fixed(n)
		}()
	}
}

func TestTrimEOL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"\n", ""},
		{"a\n", "a"},
		{"a", "a"},
		{"a\n\n", "a\n"},
		{"a\r\n", "a\r"},
	}
	for _, tt := range tests {
		if got := string(record.TrimEOL([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimEOL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitAllocs(t *testing.T) {
	lines := []byte("one\ntwo\n\nthree")
	for _, tt := range []struct {
		f    record.Framing
		data []byte
	}{
		{record.Lines, lines},
		{record.NUL, []byte("one\x00two\x00\x00three")},
		{record.LengthPrefixed, encode(record.LengthPrefixed, []string{"one", "", "two"})},
		{fixed3, []byte("onetwo")},
	} {
		allocs := testing.AllocsPerRun(100, func() {
			data := tt.data
			for {
				advance, _, err := tt.f.Split(data, true)
				if err != nil {
					panic(err)
				}
				if advance == 0 {
					break
				}
				data = data[advance:]
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per stream, want 0", tt.f.Name(), allocs)
		}
	}
}
