package buffer_test

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/tpipe/tpipe/buffer"
	"pgregory.net/rapid"
)

// fataler is what runPair reports through: a *testing.T or a *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// runPair runs a writer and a reader task on one queue, each on its own
// goroutine, and returns their errors.
func runPair(t fataler, b, s, c int, write func(*buffer.Ports) error, read func(*buffer.Ports) error) (error, error) {
	pool, err := buffer.NewPool(buffer.Options{Buffers: b, RecordSize: s})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := pool.NewQueue("q", c)
	w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
	r, _ := pool.NewProc("r", 1, []*buffer.Queue{q}, nil)
	var wg sync.WaitGroup
	var werr, rerr error
	wg.Add(2)
	go func() { defer wg.Done(); werr = write(w.Ports()); w.Finish(werr != nil) }()
	go func() { defer wg.Done(); rerr = read(r.Ports()); r.Finish(rerr != nil) }()
	wg.Wait()
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
	if pool.Free() != b {
		t.Fatalf("%d of %d buffers back in FREE", pool.Free(), b)
	}
	return werr, rerr
}

// lines splits a stream as the lines framing does: each line keeps its
// newline; a last line without one is a record too.
func lines(s []byte) [][]byte {
	var out [][]byte
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func collect(out *[][]byte) func(*buffer.Ports) error {
	return func(p *buffer.Ports) error {
		for {
			rec, err := p.In(0).Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*out = append(*out, append([]byte(nil), rec...))
		}
	}
}

// ScanFrom cuts any stream, read in any chunks and from one or two readers
// in a row, into the records the lines framing gives, lines longer than
// the record size included (they travel as chains).
func TestScanFromMatchesLines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(1, 48).Draw(t, "S")
		stream := rapid.SliceOfN(rapid.SampledFrom([]byte("ab\n")), 0, 300).Draw(t, "stream")
		cut := rapid.IntRange(0, len(stream)).Draw(t, "cut")
		oneByte := rapid.Bool().Draw(t, "oneByte")
		reader := func(b []byte) io.Reader {
			if oneByte {
				return iotest.OneByteReader(bytes.NewReader(b))
			}
			return iotest.HalfReader(bytes.NewReader(b))
		}
		var got [][]byte
		werr, rerr := runPair(t, rapid.IntRange(1, 4).Draw(t, "B"), s, rapid.IntRange(1, 3).Draw(t, "cap"),
			func(p *buffer.Ports) error {
				if err := p.Out(0).ScanFrom(reader(stream[:cut]), '\n'); err != nil {
					return err
				}
				return p.Out(0).ScanFrom(reader(stream[cut:]), '\n')
			}, collect(&got))
		want := lines(stream)
		if werr != nil || rerr != nil {
			t.Fatal(werr, rerr)
		}
		if len(got) != len(want) {
			t.Fatalf("got %d records %q, want %d %q", len(got), got, len(want), want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// Sift with a Skip keeps exactly the records Pass keeps with the same keep.
func TestSiftAgreesWithKeep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(2, 64).Draw(t, "S")
		recs := rapid.SliceOfN(rapid.SliceOfN(rapid.SampledFrom([]byte("az")), 0, s), 0, 80).Draw(t, "recs")
		invert := rapid.Bool().Draw(t, "invert") // grep -v zz, or grep zz
		lit := []byte("zz")
		keep := func(r []byte) bool { return bytes.Contains(r, lit) != invert }
		skip := func(d []byte) (int, bool) {
			if at := bytes.Index(d, lit); at >= 0 {
				return at, invert
			}
			return len(d), invert
		}
		pool, _ := buffer.NewPool(buffer.Options{Buffers: rapid.IntRange(2, 6).Draw(t, "B"), RecordSize: s})
		q1, _ := pool.NewQueue("q1", 1)
		q2, _ := pool.NewQueue("q2", 1)
		src, _ := pool.NewProc("src", 0, nil, []*buffer.Queue{q1})
		flt, _ := pool.NewProc("filter", 1, []*buffer.Queue{q1}, []*buffer.Queue{q2})
		dst, _ := pool.NewProc("dst", 2, []*buffer.Queue{q2}, nil)
		var got [][]byte
		var wg sync.WaitGroup
		errs := make([]error, 3)
		run := func(i int, p *buffer.Proc, f func() error) {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = f(); p.Finish(errs[i] != nil) }()
		}
		run(0, src, func() error {
			for _, r := range recs {
				if err := src.Ports().Out(0).Write(r); err != nil {
					return err
				}
			}
			return nil
		})
		run(1, flt, func() error {
			for {
				err := flt.Ports().Out(0).Sift(flt.Ports().In(0), buffer.Sieve{Keep: keep, Skip: skip})
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
			}
		})
		run(2, dst, func() error { return collect(&got)(dst.Ports()) })
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var want [][]byte
		for _, r := range recs {
			if keep(r) {
				want = append(want, r)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
}
