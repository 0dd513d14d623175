package record_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/tpipe/tpipe/record"
)

func TestReaderStreams(t *testing.T) {
	for _, tt := range streamTests {
		if tt.err != nil {
			continue
		}
		want := []byte(tt.in)
		r := record.NewReader(&reusingSource{recs: tt.recs}, tt.f)
		if err := iotest.TestReader(r, want); err != nil {
			t.Errorf("%s %q: %v", tt.f.Name(), tt.in, err)
		}
		r = record.NewReader(&bufferedSource{reusingSource{recs: tt.recs}}, tt.f)
		if err := iotest.TestReader(r, want); err != nil {
			t.Errorf("%s %q, buffered source: %v", tt.f.Name(), tt.in, err)
		}
	}
}

// TestReaderWaits checks that a Read does not wait for a second record
// unless the source says it has one ready.
func TestReaderWaits(t *testing.T) {
	recs := []string{"a\n", "bc\n", "", "d"}
	p := make([]byte, 100)

	r := record.NewReader(&reusingSource{recs: recs}, record.Lines)
	var got []string
	for {
		n, err := r.Read(p)
		if n > 0 {
			got = append(got, string(p[:n]))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"a\n", "bc\n", "d"}; !slices.Equal(got, want) {
		t.Errorf("reads %q, want %q", got, want)
	}

	r = record.NewReader(&bufferedSource{reusingSource{recs: recs}}, record.Lines)
	if n, err := r.Read(p); string(p[:n]) != "a\nbc\nd" || err != nil {
		t.Errorf("Read = %q, %v; want all records at once", p[:n], err)
	}
	if n, err := r.Read(p); n != 0 || err != io.EOF {
		t.Errorf("Read at the end = %d, %v", n, err)
	}
}

func TestReaderErrors(t *testing.T) {
	errGone := errors.New("gone")
	r := record.NewReader(&reusingSource{recs: []string{"a\n"}, err: errGone}, record.Lines)
	data, err := io.ReadAll(r)
	if string(data) != "a\n" || !errors.Is(err, errGone) || err.Error() != "record: read record: gone" {
		t.Errorf("ReadAll = %q, %v", data, err)
	}
	if _, err2 := r.Read(make([]byte, 1)); err2 != err {
		t.Errorf("Read after an error: %v, want %v", err2, err)
	}

	r = record.NewReader(&bufferedSource{reusingSource{recs: []string{"abc", "ab", "abc"}}}, record.Fixed(3))
	data, err = io.ReadAll(r)
	if string(data) != "abc" || err == nil || err.Error() != "record: fixed:3: record of 2 bytes" {
		t.Errorf("ReadAll of a short fixed record = %q, %v", data, err)
	}
}

func TestReaderAllocs(t *testing.T) {
	for _, f := range []record.Framing{record.Lines, record.LengthPrefixed} {
		src := &endlessSource{recs: [][]byte{[]byte("abc\n"), bytes.Repeat([]byte("x"), 100), []byte("d\n")}}
		r := record.NewReader(src, f)
		p := make([]byte, 64)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.Read(p); err != nil {
				panic(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Read, want 0", f.Name(), allocs)
		}
	}
}

// endlessSource cycles through its records.
type endlessSource struct {
	recs [][]byte
	i    int
}

func (s *endlessSource) Read() ([]byte, error) {
	s.i++
	return s.recs[s.i%len(s.recs)], nil
}
