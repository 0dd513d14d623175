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

// ScanFrom leaves the lines of a buffer unindexed for its reader (see
// Buf.lazy). Whatever mix of reads the reader makes (records, pieces,
// bytes, batches), through a task that moves buffers on (Copy) or cuts
// bytes into lines again, with writes between the scans, on queues that
// may spill, every record read is the stream's next line, or the rest of
// it, every piece and batch goes on where the last one ended, a batch
// holds the lines it says, and the bytes are the stream's.
func TestLazyLinesReadAnyWay(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(4, 64).Draw(t, "S")
		var parts [][]byte // even ones read by ScanFrom, odd ones written
		for range rapid.IntRange(1, 4).Draw(t, "parts") {
			parts = append(parts, rapid.SliceOfN(rapid.SampledFrom([]byte("ab\n")), 0, 200).Draw(t, "scan"))
			rec := rapid.SliceOfN(rapid.SampledFrom([]byte("cd")), 0, s-1).Draw(t, "write")
			parts = append(parts, append(rec, '\n'))
		}
		oneByte := rapid.Bool().Draw(t, "oneByte")
		middle := rapid.IntRange(0, 2).Draw(t, "middle") // none, Copy, ReadBytes into ScanFrom
		modes := rapid.SliceOfN(rapid.IntRange(0, 3), 1, 8).Draw(t, "modes")
		// Enough buffers for every task to hold one and write one, and a
		// queue's worth more: fewer is a deadlock the pool reports (and
		// resolves only by spilling), whatever the index.
		pool, err := buffer.NewPool(buffer.Options{
			Buffers: rapid.IntRange(2+2*min(middle, 1), 7).Draw(t, "B"), RecordSize: s,
			Spill: rapid.Bool().Draw(t, "spill"), SpillDir: dir,
		})
		if err != nil {
			t.Fatal(err)
		}
		reader := func(b []byte) io.Reader {
			if oneByte {
				return iotest.OneByteReader(bytes.NewReader(b))
			}
			return iotest.HalfReader(bytes.NewReader(b))
		}
		write := func(p *buffer.Ports) error {
			for i, part := range parts {
				var err error
				if i%2 == 0 {
					err = p.Out(0).ScanFrom(reader(part), '\n')
				} else {
					err = p.Out(0).Write(part)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		stream := bytes.Join(parts, nil)
		c := &lineChecker{t: t, stream: stream}
		read := func(p *buffer.Ports) error {
			in := p.In(0)
			for i := 0; ; i++ {
				var err error
				switch modes[i%len(modes)] {
				case 0:
					var rec []byte
					if rec, err = in.Read(); err == nil {
						c.record(rec)
					}
				case 1:
					var piece []byte
					var more bool
					if piece, more, err = in.ReadChunk(); err == nil {
						c.piece(piece, more)
					}
				case 2:
					var data []byte
					if data, err = in.ReadBytes(); err == nil {
						c.bytes(data)
					}
				case 3:
					var data []byte
					var n int
					if data, n, err = in.ReadBatch(); err == nil {
						c.batch(data, n)
					}
				}
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
			}
		}
		var qs []*buffer.Queue
		for _, name := range []string{"q1", "q2"}[:1+min(middle, 1)] {
			q, _ := pool.NewQueue(name, rapid.IntRange(1, 3).Draw(t, "cap"))
			qs = append(qs, q)
		}
		procs := []lazyProc{{nil, qs[:1], write}}
		switch middle {
		case 1:
			procs = append(procs, struct {
				ins, outs []*buffer.Queue
				run       func(*buffer.Ports) error
			}{qs[:1], qs[1:], func(p *buffer.Ports) error {
				for {
					if err := p.Out(0).Copy(p.In(0)); err != nil {
						if err == io.EOF {
							return nil
						}
						return err
					}
				}
			}})
		case 2:
			procs = append(procs, struct {
				ins, outs []*buffer.Queue
				run       func(*buffer.Ports) error
			}{qs[:1], qs[1:], func(p *buffer.Ports) error {
				for {
					data, err := p.In(0).ReadBytes()
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
					if err := p.Out(0).ScanFrom(bytes.NewReader(data), '\n'); err != nil {
						return err
					}
				}
			}})
		}
		procs = append(procs, lazyProc{qs[len(qs)-1:], nil, read})
		ps := make([]*buffer.Proc, len(procs)) // every task registered before any starts
		for i, pr := range procs {
			if ps[i], err = pool.NewProc("p", i, pr.ins, pr.outs); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(procs))
		for i, pr := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = pr.run(ps[i].Ports()); ps[i].Finish(errs[i] != nil) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("task %d: %v", i, err)
			}
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
		if c.off != len(stream) {
			t.Fatalf("read %d of the stream's %d bytes", c.off, len(stream))
		}
	})
}

// lazyProc is a task of TestLazyLinesReadAnyWay: its queues and its body.
type lazyProc struct {
	ins, outs []*buffer.Queue
	run       func(*buffer.Ports) error
}

// lineChecker follows a reader through stream, the lines framing's way.
type lineChecker struct {
	t      *rapid.T
	stream []byte
	off    int
}

// lineEnd returns where the line holding byte off ends.
func (c *lineChecker) lineEnd(off int) int {
	if i := bytes.IndexByte(c.stream[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(c.stream)
}

func (c *lineChecker) next(data []byte, what string) {
	c.t.Helper()
	if !bytes.HasPrefix(c.stream[c.off:], data) {
		c.t.Fatalf("%s %q at %d: the stream has %q", what, data, c.off, c.stream[c.off:min(len(c.stream), c.off+len(data)+8)])
	}
	c.off += len(data)
}

func (c *lineChecker) record(rec []byte) {
	c.t.Helper()
	if end := c.lineEnd(c.off); len(rec) != end-c.off {
		c.t.Fatalf("record %q at %d: want %q", rec, c.off, c.stream[c.off:end])
	}
	c.next(rec, "record")
}

func (c *lineChecker) piece(piece []byte, more bool) {
	c.t.Helper()
	if end := c.lineEnd(c.off); !more && len(piece) != end-c.off {
		c.t.Fatalf("last piece %q at %d: want %q", piece, c.off, c.stream[c.off:end])
	}
	c.next(piece, "piece")
}

func (c *lineChecker) bytes(data []byte) {
	c.t.Helper()
	c.next(data, "bytes")
}

func (c *lineChecker) batch(data []byte, n int) {
	c.t.Helper()
	lines, off := 0, c.off
	for off < c.off+len(data) {
		off = c.lineEnd(off)
		lines++
	}
	if off != c.off+len(data) || lines != n {
		c.t.Fatalf("batch %q of %d records at %d: it holds %d lines, ending at %d", data, n, c.off, lines, off)
	}
	c.next(data, "batch")
}
