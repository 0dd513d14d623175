package record_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tpipe/tpipe/record"
)

// readers wrap a stream in readers of different read sizes.
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"dataerr", iotest.DataErrReader},
}

func TestScannerStreams(t *testing.T) {
	for _, tt := range streamTests {
		for _, rd := range readers {
			recs, err := scanAll(rd.wrap(strings.NewReader(tt.in)), tt.f, 16)
			if !slices.Equal(recs, tt.recs) {
				t.Errorf("%s %q (%s reads): records %q, want %q", tt.f.Name(), tt.in, rd.name, recs, tt.recs)
			}
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("%s %q (%s reads): error %v, want %v", tt.f.Name(), tt.in, rd.name, err, tt.err)
			}
		}
	}
}

// tooLargeTests are streams holding a record over the limit, with the
// records before it and the error a reader returning the whole stream in
// one read gives.
var tooLargeTests = []struct {
	f    record.Framing
	max  int
	in   string
	recs []string
	want record.TooLargeError
}{
	{record.Lines, 4, "abcd\n", nil, record.TooLargeError{Size: 5, Max: 4}},
	{record.Lines, 4, "ab\nabcdefgh\nab\n", []string{"ab\n"}, record.TooLargeError{Size: 9, Max: 4}},
	{record.Lines, 4, "abc\nabcde", []string{"abc\n"}, record.TooLargeError{Size: 5, Max: 4, AtLeast: true}},
	{record.NUL, 1, "\x00a\x00", []string{"\x00"}, record.TooLargeError{Size: 2, Max: 1}},
	// The header gives the exact size before the payload arrives.
	{record.LengthPrefixed, 3, "\x00\x00\x00\x04abcd", nil, record.TooLargeError{Size: 4, Max: 3}},
	{record.LengthPrefixed, 3, "\x00\x00\x00\x01a\x00\x00\x01\x00ab", []string{"a"}, record.TooLargeError{Size: 256, Max: 3}},
	{record.LengthPrefixed, 3, "\xff\xff\xff\xff", nil, record.TooLargeError{Size: 1<<32 - 1, Max: 3}},
	{record.Fixed(8), 4, "12345678", nil, record.TooLargeError{Size: 8, Max: 4}},
	{record.Fixed(8), 4, "123", nil, record.TooLargeError{Size: 8, Max: 4}},
}

// TestScannerEmptyOverLimit checks that a framing whose every record is
// over the limit still reads an empty stream cleanly.
func TestScannerEmptyOverLimit(t *testing.T) {
	recs, err := scanAll(strings.NewReader(""), record.Fixed(8), 4)
	if recs != nil || err != nil {
		t.Errorf("got %q, %v; want no records and no error", recs, err)
	}
}

func TestScannerTooLarge(t *testing.T) {
	for _, tt := range tooLargeTests {
		for _, rd := range readers {
			recs, err := scanAll(rd.wrap(strings.NewReader(tt.in)), tt.f, tt.max)
			if !slices.Equal(recs, tt.recs) {
				t.Errorf("%s %q (%s reads): records %q, want %q", tt.f.Name(), tt.in, rd.name, recs, tt.recs)
			}
			var tl *record.TooLargeError
			if !errors.Is(err, record.ErrTooLarge) || !errors.As(err, &tl) {
				t.Errorf("%s %q (%s reads): error %v, want a TooLargeError", tt.f.Name(), tt.in, rd.name, err)
				continue
			}
			// How much of a delimited record was seen depends on the reads.
			if rd.name == "whole" && *tl != tt.want {
				t.Errorf("%s %q: error %+v, want %+v", tt.f.Name(), tt.in, *tl, tt.want)
			}
			if tl.Max != tt.max || tl.Size <= tt.max {
				t.Errorf("%s %q (%s reads): error %+v", tt.f.Name(), tt.in, rd.name, *tl)
			}
		}
	}
}

// TestScannerAtLimit checks records of exactly the record size, with a
// buffer no larger than the limit needs, and a record cut off by the
// buffer's end.
func TestScannerAtLimit(t *testing.T) {
	const max = 100_000 // larger than the smallest scan buffer
	line := strings.Repeat("x", max-1) + "\n"
	in := line + line + line[:max-1]
	for _, rd := range readers {
		recs, err := scanAll(rd.wrap(strings.NewReader(in)), record.Lines, max)
		if err != nil || len(recs) != 3 || recs[0] != line || recs[1] != line || recs[2] != line[:max-1] {
			t.Errorf("%s reads: %d records, %v", rd.name, len(recs), err)
		}
		// One byte more: the final record without '\n' is too large too.
		_, err = scanAll(rd.wrap(strings.NewReader(in+"xx")), record.Lines, max)
		var tl *record.TooLargeError
		if !errors.As(err, &tl) || tl.Size < max+1 {
			t.Errorf("%s reads, final record of %d bytes: error %v", rd.name, max+1, err)
		}
	}
	// A long line with nothing after it: the Scanner cannot tell its size.
	_, err := scanAll(strings.NewReader(strings.Repeat("x", 3*max)), record.Lines, max)
	var tl *record.TooLargeError
	if !errors.As(err, &tl) || !tl.AtLeast || tl.Size != max+1 {
		t.Errorf("long unterminated line: error %#v, want at least %d bytes", err, max+1)
	}
}

// TestScannerManyRecords scans a long stream across many buffer refills.
func TestScannerManyRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var want []string
	var in []byte
	for len(in) < 300_000 {
		rec := strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(2000)) + "\n"
		want = append(want, rec)
		in = append(in, rec...)
	}
	sizes := []int{1, 7, 4096, 100, 65536, 3}
	for _, f := range []record.Framing{record.Lines, record.LengthPrefixed} {
		data := in
		if f == record.LengthPrefixed {
			data = encode(f, want)
		}
		recs, err := scanAll(&chunkReader{data: data, sizes: sizes}, f, 2001)
		if err != nil || !slices.Equal(recs, want) {
			t.Errorf("%s: %d records, %v; want %d records", f.Name(), len(recs), err, len(want))
		}
	}
}

func TestScannerReadError(t *testing.T) {
	errBroken := errors.New("broken")
	r := io.MultiReader(strings.NewReader("a\nb\nc"), iotest.ErrReader(errBroken))
	recs, err := scanAll(r, record.Lines, 16)
	// "c" is not a record: the stream did not end there.
	if !slices.Equal(recs, []string{"a\n", "b\n"}) {
		t.Errorf("records %q", recs)
	}
	if !errors.Is(err, errBroken) || err.Error() != "record: read: broken" {
		t.Errorf("error %v, want %v wrapped", err, errBroken)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestScannerNoProgress(t *testing.T) {
	_, err := scanAll(emptyReader{}, record.Lines, 16)
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("error %v, want io.ErrNoProgress", err)
	}
}

func TestScannerSticky(t *testing.T) {
	s := record.NewScanner(strings.NewReader("a\nbcdef\n"), record.Lines, 4)
	if !s.Scan() || string(s.Record()) != "a\n" {
		t.Fatalf("first Scan: %q, %v", s.Record(), s.Err())
	}
	for range 3 {
		if s.Scan() {
			t.Fatalf("Scan after a too large record: %q", s.Record())
		}
		if !errors.Is(s.Err(), record.ErrTooLarge) {
			t.Fatalf("Err() = %v", s.Err())
		}
		if s.Record() != nil {
			t.Fatalf("Record() = %q after failure", s.Record())
		}
	}
	s = record.NewScanner(strings.NewReader(""), record.Lines, 4)
	for range 3 {
		if s.Scan() || s.Err() != nil {
			t.Fatalf("empty stream: Scan true or Err %v", s.Err())
		}
	}
}

func TestScannerShortRead(t *testing.T) {
	s := record.NewScanner(strings.NewReader("a\nb\n"), record.Lines, 16)
	if !s.Scan() || !s.ShortRead() {
		t.Errorf("small stream: ShortRead() = false")
	}
	s = record.NewScanner(&loopReader{data: []byte("a\n")}, record.Lines, 16)
	if !s.Scan() || s.ShortRead() {
		t.Errorf("endless stream: ShortRead() = true")
	}
}

func TestScannerPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewScanner with max 0 did not panic")
		}
	}()
	record.NewScanner(strings.NewReader(""), record.Lines, 0)
}

// userFraming is a framing from outside the package: records are two
// bytes, and a '-' between records is skipped.
type userFraming struct{}

func (userFraming) Name() string                  { return "pairs" }
func (userFraming) Overhead() int                 { return 0 }
func (userFraming) Append(dst, rec []byte) []byte { return append(dst, rec...) }
func (userFraming) Split(data []byte, atEOF bool) (int, []byte, error) {
	switch {
	case len(data) > 0 && data[0] == '-':
		return 1, nil, nil
	case len(data) >= 2:
		return 2, data[:2], nil
	case atEOF && len(data) == 1:
		return 0, nil, errors.New("odd byte")
	}
	return 0, nil, nil
}

func TestScannerUserFraming(t *testing.T) {
	for _, rd := range readers {
		recs, err := scanAll(rd.wrap(strings.NewReader("ab--cd-ef")), userFraming{}, 2)
		if err != nil || !slices.Equal(recs, []string{"ab", "cd", "ef"}) {
			t.Errorf("%s reads: %q, %v", rd.name, recs, err)
		}
		_, err = scanAll(rd.wrap(strings.NewReader("ab-c")), userFraming{}, 2)
		if err == nil || err.Error() != "record: pairs: odd byte" {
			t.Errorf("%s reads: error %v", rd.name, err)
		}
	}
}

func TestScannerAllocs(t *testing.T) {
	for _, f := range []record.Framing{record.Lines, record.LengthPrefixed, record.Fixed(5)} {
		data := encode(f, []string{"abcd\n", "efgh\n", "ijkl\n"})
		s := record.NewScanner(&loopReader{data: data}, f, 64)
		allocs := testing.AllocsPerRun(10_000, func() {
			if !s.Scan() || len(s.Record()) != 5 {
				panic("bad scan")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per record, want 0", f.Name(), allocs)
		}
	}
}

func BenchmarkScannerLines(b *testing.B) {
	line := bytes.Repeat([]byte("x"), 79)
	line = append(line, '\n')
	data := bytes.Repeat(line, 1000)
	s := record.NewScanner(&loopReader{data: data}, record.Lines, 64<<10)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		s.Scan()
	}
}

// badFraming is a framing whose Split breaks the SplitFunc contract.
type badFraming struct {
	userFraming
	advance int
	token   []byte
}

func (b badFraming) Split(data []byte, atEOF bool) (int, []byte, error) {
	return b.advance, b.token, nil
}

func TestBadFraming(t *testing.T) {
	tests := []struct {
		f    badFraming
		want string
	}{
		{badFraming{advance: 5}, "record: pairs: split advanced 5 bytes over 2"},
		{badFraming{advance: -1}, "record: pairs: split advanced -1 bytes over 2"},
		{badFraming{token: []byte("x")}, "record: pairs: split returned a record without consuming input"},
	}
	for _, tt := range tests {
		_, err := scanAll(strings.NewReader("ab"), tt.f, 4)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Scanner: error %v, want %q", err, tt.want)
		}
		_, err = writeChunks([]byte("ab"), []int{2}, tt.f, 4)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Writer: error %v, want %q", err, tt.want)
		}
	}
}

// A Scanner with a large limit starts small and grows for a long record,
// as far as the limit and no further.
func TestScannerGrows(t *testing.T) {
	long := strings.Repeat("z", 700<<10) + "\n"
	sc := record.NewScanner(strings.NewReader("a\n"+long+"b\n"), record.Lines, 1<<20)
	var got []string
	for sc.Scan() {
		got = append(got, string(sc.Record()))
	}
	if sc.Err() != nil || len(got) != 3 || got[1] != long {
		t.Fatalf("err %v, %d records", sc.Err(), len(got))
	}
	sc = record.NewScanner(strings.NewReader(long), record.Lines, 600<<10)
	for sc.Scan() {
	}
	var tl *record.TooLargeError
	if !errors.As(sc.Err(), &tl) || tl.Max != 600<<10 {
		t.Fatalf("err %v, want a TooLargeError at 600K", sc.Err())
	}
}
