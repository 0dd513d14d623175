package recfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
)

var codecs = []recfile.Codec{recfile.None, recfile.S2, recfile.Zstd}

// records returns n records of assorted sizes and bytes: empty ones,
// newlines, NULs, compressible text and random bytes.
func records(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]byte, n)
	for i := range out {
		switch r.IntN(5) {
		case 0:
			out[i] = []byte{}
		case 1:
			out[i] = fmt.Appendf(nil, "line %d\n", i)
		case 2:
			out[i] = []byte{0, '\n', 0xff}
		case 3:
			out[i] = bytes.Repeat([]byte("abc"), r.IntN(5000))
		default:
			b := make([]byte, r.IntN(300))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			out[i] = b
		}
	}
	return out
}

func writeFile(t testing.TB, c recfile.Codec, blockSize int, recs [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := recfile.NewWriter(&buf, c, blockSize)
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Written() != int64(buf.Len()) || w.Records() != int64(len(recs)) {
		t.Fatalf("Written %d, Records %d; file of %d bytes, %d records", w.Written(), w.Records(), buf.Len(), len(recs))
	}
	return buf.Bytes()
}

func readAll(data []byte, limit int) ([][]byte, error) {
	r := recfile.NewReader(bytes.NewReader(data), limit)
	var got [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, bytes.Clone(rec))
	}
}

// Every codec and block size gives back exactly the records written.
func TestRoundTrip(t *testing.T) {
	recs := records(2000, 7)
	for _, c := range codecs {
		for _, bs := range []int{1, 100, 4 << 10, 0} {
			t.Run(fmt.Sprintf("%v/%d", c, bs), func(t *testing.T) {
				data := writeFile(t, c, bs, recs)
				got, err := readAll(data, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(recs) {
					t.Fatalf("%d records, want %d", len(got), len(recs))
				}
				for i := range recs {
					if !bytes.Equal(got[i], recs[i]) {
						t.Fatalf("record %d: %q, want %q", i, got[i][:min(20, len(got[i]))], recs[i][:min(20, len(recs[i]))])
					}
				}
			})
		}
	}
}

// A Reader Reset onto another file reads it from its start, whatever it
// was doing: mid-block, at the end, or stopped by a corrupt block.
func TestReaderReset(t *testing.T) {
	a, b := records(300, 1), records(300, 2)
	fa, fb := writeFile(t, recfile.S2, 1<<10, a), writeFile(t, recfile.None, 0, b)
	bad := bytes.Clone(fa)
	bad[len(bad)/2] ^= 1
	r := recfile.NewReader(bytes.NewReader(fa), 0)
	for _, stop := range []int{0, 7, len(a), -1} {
		switch {
		case stop < 0:
			r.Reset(bytes.NewReader(bad), 0)
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
		default:
			r.Reset(bytes.NewReader(fa), 0)
			for range stop {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.Reset(bytes.NewReader(fb), 0)
		for i := range b {
			rec, err := r.Next()
			if err != nil || !bytes.Equal(rec, b[i]) {
				t.Fatalf("after %d records of another file: record %d: %v", stop, i, err)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after %d records of another file: end %v", stop, err)
		}
	}
}

// A file with no record is a header and the end block; it reads back as no records and a clean end.
func TestEmpty(t *testing.T) {
	data := writeFile(t, recfile.Zstd, 0, nil)
	got, err := readAll(data, 0)
	if err != nil || len(got) != 0 {
		t.Fatalf("%d records, %v", len(got), err)
	}
}

// ReadBlock gives the blocks as the writer cut them, and what Next left of
// a block.
func TestReadBlock(t *testing.T) {
	var buf bytes.Buffer
	w := recfile.NewWriter(&buf, recfile.S2, 0)
	for _, r := range []string{"a", "b", "c"} {
		w.Add([]byte(r))
	}
	w.EndBlock()
	w.Add([]byte("d"))
	w.Close()
	if w.Blocks() != 2 {
		t.Errorf("%d blocks, want 2", w.Blocks())
	}
	r := recfile.NewReader(&buf, 0)
	if rec, err := r.Next(); err != nil || string(rec) != "a" {
		t.Fatalf("Next: %q, %v", rec, err)
	}
	var b recfile.Block
	var got []string
	for {
		if err := r.ReadBlock(&b); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		s := ""
		for i := range b.Len() {
			s += string(b.Record(i))
		}
		got = append(got, s)
	}
	if fmt.Sprint(got) != "[bc d]" {
		t.Errorf("blocks %q, want [bc d]", got)
	}
}

// Damage of every kind is a *CorruptError, never a panic nor a silent
// loss: a cut anywhere (at a block boundary too), a flipped byte, a bad
// header.
func TestCorrupt(t *testing.T) {
	recs := records(300, 3)
	for _, c := range codecs {
		data := writeFile(t, c, 1000, recs)
		for cut := 0; cut < len(data); cut += max(1, len(data)/97) {
			_, err := readAll(data[:cut], 0)
			var ce *recfile.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%v: cut at %d of %d: %v, want a CorruptError for an unexpected EOF", c, cut, len(data), err)
			}
		}
		for i := 0; i < len(data); i += max(1, len(data)/101) {
			bad := bytes.Clone(data)
			bad[i] ^= 0x20
			_, err := readAll(bad, 0)
			var ce *recfile.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("%v: byte %d flipped: %v, want a CorruptError", c, i, err)
			}
		}
	}
	// A block larger than the reader's limit is refused before it is read.
	data := writeFile(t, recfile.None, 0, [][]byte{bytes.Repeat([]byte("x"), 5000)})
	if _, err := readAll(data, 1000); err == nil {
		t.Error("a 5000-byte block passed a limit of 1000")
	}
	if _, err := readAll([]byte("not a record file at all"), 0); err == nil {
		t.Error("garbage read as a record file")
	}
}

// Errors are sticky: after the first, Next keeps returning it.
func TestStickyError(t *testing.T) {
	data := writeFile(t, recfile.Zstd, 0, records(10, 1))
	r := recfile.NewReader(bytes.NewReader(data[:len(data)-3]), 0)
	var first error
	for first == nil {
		_, first = r.Next()
	}
	if _, err := r.Next(); err != first {
		t.Errorf("second error %v, want the first %v", err, first)
	}
}

// A file from CreateTemp has no name in its directory, however it is
// made, and mode 0600 where it has one at all.
func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	f, err := recfile.CreateTemp(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("temp file left a name: %v", left[0].Name())
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := recfile.CreateTemp(filepath.Join(dir, "missing")); err == nil {
		t.Error("temp file in a missing directory")
	}
}

// WriteAtomic leaves the whole new file, or on failure the old one and no
// temporary file.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seg")
	write := func(recs ...string) func(*recfile.Writer) error {
		return func(w *recfile.Writer) error {
			for _, r := range recs {
				if err := w.Add([]byte(r)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := recfile.WriteAtomic(path, recfile.Zstd, write("a", "b")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := recfile.WriteAtomic(path, recfile.Zstd, func(w *recfile.Writer) error {
		w.Add([]byte("c"))
		return boom
	})
	if err != boom {
		t.Fatalf("failed write: %v, want boom", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(data, 0)
	if err != nil || fmt.Sprintf("%s", got) != "[a b]" {
		t.Errorf("after a failed rewrite: %s, %v; want [a b]", got, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("%d files in the directory, want 1", len(left))
	}
}

// Compression pays on text: a file of log lines takes much less than its
// records.
func TestCompresses(t *testing.T) {
	var recs [][]byte
	raw := 0
	for i := range 100000 {
		recs = append(recs, fmt.Appendf(nil, "GET /static/app.js HTTP/1.1 200 %d\n", i%977))
		raw += len(recs[i])
	}
	for _, c := range []recfile.Codec{recfile.S2, recfile.Zstd} {
		if n := len(writeFile(t, c, 0, recs)); n > raw/2 {
			t.Errorf("%v: %d bytes for %d of records", c, n, raw)
		}
	}
}

// A Writer's blocks stay within ReadLimit whatever the records: many empty
// ones (each costs a length byte and no data) or one larger than a block.
func TestBlocksWithinReadLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs [][]byte
		max  int
	}{
		{"empty records", make([][]byte, 100000), 0},
		{"short records", bytes.Split(bytes.Repeat([]byte("ab\n"), 50000), []byte("\n")), 2},
		{"one large record", [][]byte{bytes.Repeat([]byte("z"), 10000), {}, []byte("x")}, 10000},
	} {
		for _, c := range codecs {
			data := writeFile(t, c, 1000, tc.recs)
			got, err := readAll(data, recfile.ReadLimit(1000, tc.max))
			if err != nil || len(got) != len(tc.recs) {
				t.Errorf("%s, %v: %d records, %v; want %d", tc.name, c, len(got), err, len(tc.recs))
			}
		}
	}
}
