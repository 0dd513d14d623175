package buffer_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"pgregory.net/rapid"
)

// Records longer than S travel as chains of pieces. The dumb model of
// these tests is the identity: whatever a writer writes, in whatever
// pieces, and whatever a filter does with it (forward, copy, pass, piece
// by piece), the reader gets the same records, or the same bytes for the
// byte paths, and every buffer is in one place before every operation.

// How src writes a record.
const (
	srcWrite  = iota // Write, whole
	srcChunks        // WriteChunk, in random pieces
)

// How mid moves records from q0 to q1.
const (
	midForward      = iota // Read, Forward
	midCopy                // Read, Write
	midPass                // Pass, keeping all
	midChunkForward        // ReadChunk, Forward
	midChunkCopy           // ReadChunk, WriteChunk
	midCopyAll             // Copy
)

// How dst reads q1.
const (
	dstRead   = iota // Read: records
	dstBatch         // ReadBatch: records back to back
	dstChunks        // ReadChunk: records joined from their pieces
	dstBytes         // ReadBytes: bytes only
)

func runProcsChecked(t *rapid.T, pool *buffer.Pool, hook *checkHook, procs []*buffer.Proc, fns []func(*buffer.Ports) error) {
	errs := runProcs(procs, fns)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	if len(hook.errs) > 0 {
		t.Fatal(hook.errs[0])
	}
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
	if pool.Free() != pool.Buffers() {
		t.Fatalf("%d of %d buffers back in FREE", pool.Free(), pool.Buffers())
	}
}

func TestChainsCarryAnyRecord(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(1, 16).Draw(t, "S")
		c0 := rapid.IntRange(1, 3).Draw(t, "cap0")
		c1 := rapid.IntRange(1, 3).Draw(t, "cap1")
		b := c0 + c1 + rapid.IntRange(0, 2).Draw(t, "spare")
		recs := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 4*s+3), 0, 30).Draw(t, "recs")
		srcMode := rapid.IntRange(srcWrite, srcChunks).Draw(t, "src")
		midMode := rapid.IntRange(midForward, midCopyAll).Draw(t, "mid")
		dstMode := rapid.IntRange(dstRead, dstBytes).Draw(t, "dst")
		copyReads := rapid.Bool().Draw(t, "copyReads")

		hook := &checkHook{}
		pool, err := buffer.NewPool(buffer.Options{Buffers: b, RecordSize: s, Hook: hook})
		if err != nil {
			t.Fatal(err)
		}
		hook.pool = pool
		q0, _ := pool.NewQueue("q0", c0)
		q1, _ := pool.NewQueue("q1", c1)
		src, _ := pool.NewProc("src", 0, nil, []*buffer.Queue{q0})
		mid, _ := pool.NewProc("mid", 1, []*buffer.Queue{q0}, []*buffer.Queue{q1})
		dst, _ := pool.NewProc("dst", 2, []*buffer.Queue{q1}, nil)
		if copyReads {
			mid.CopyReads()
			dst.CopyReads()
		}
		cuts := rapid.SliceOfN(rapid.IntRange(0, 2*s+1), 64, 64).Draw(t, "cuts")

		var got [][]byte
		var gotBytes []byte
		runProcsChecked(t, pool, hook, []*buffer.Proc{src, mid, dst}, []func(*buffer.Ports) error{
			func(p *buffer.Ports) error {
				out := p.Out(0)
				k := 0
				for _, r := range recs {
					if srcMode == srcWrite {
						if err := out.Write(r); err != nil {
							return err
						}
						continue
					}
					for {
						n := min(len(r), cuts[k%len(cuts)])
						k++
						if err := out.WriteChunk(r[:n], n < len(r)); err != nil {
							return err
						}
						if r = r[n:]; len(r) == 0 {
							break
						}
					}
				}
				return nil
			},
			func(p *buffer.Ports) error {
				in, out := p.In(0), p.Out(0)
				for {
					var err error
					switch midMode {
					case midForward, midCopy:
						var rec []byte
						if rec, err = in.Read(); err == nil {
							if midMode == midForward {
								err = out.Forward(in)
							} else {
								err = out.Write(rec)
							}
						}
					case midPass:
						err = out.Pass(in, func([]byte) bool { return true })
					case midCopyAll:
						err = out.Copy(in)
					case midChunkForward, midChunkCopy:
						var piece []byte
						var more bool
						if piece, more, err = in.ReadChunk(); err == nil {
							if midMode == midChunkForward {
								err = out.Forward(in)
							} else {
								err = out.WriteChunk(piece, more)
							}
						}
					}
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
				}
			},
			func(p *buffer.Ports) error {
				in := p.In(0)
				var long []byte
				for {
					switch dstMode {
					case dstRead:
						rec, err := in.Read()
						if err != nil {
							return eofNil(err)
						}
						got = append(got, append([]byte(nil), rec...))
					case dstBatch:
						data, n, err := in.ReadBatch()
						if err != nil {
							return eofNil(err)
						}
						if n < 1 {
							return fmt.Errorf("a batch of %d records", n)
						}
						gotBytes = append(gotBytes, data...)
					case dstChunks:
						piece, more, err := in.ReadChunk()
						if err == io.EOF && long != nil {
							got = append(got, long)
						}
						if err != nil {
							return eofNil(err)
						}
						long = append(long, piece...)
						if !more {
							got = append(got, long)
							long = nil
						}
					case dstBytes:
						data, err := in.ReadBytes()
						if err != nil {
							return eofNil(err)
						}
						gotBytes = append(gotBytes, data...)
					}
				}
			},
		})
		if dstMode == dstBatch || dstMode == dstBytes {
			if want := bytes.Join(recs, nil); !bytes.Equal(gotBytes, want) {
				t.Fatalf("got bytes %q, want %q", gotBytes, want)
			}
			return
		}
		if len(got) != len(recs) {
			t.Fatalf("got %d records %q, want %d %q", len(got), got, len(recs), recs)
		}
		for i := range got {
			if !bytes.Equal(got[i], recs[i]) {
				t.Fatalf("record %d: %q, want %q", i, got[i], recs[i])
			}
		}
	})
}

func eofNil(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// A line longer than S, from ScanFrom, is one record to Read and the same
// bytes to ReadChunk, with the buffers' bound kept: no buffer is ever more
// than S.
func TestScanFromChainsLongLines(t *testing.T) {
	line := strings.Repeat("x", 1000) + "\n"
	stream := "a\n" + line + "b\n" + line[:999] // the last line unterminated
	var got [][]byte
	rapid.Check(t, func(rt *rapid.T) {
		got = got[:0]
		werr, rerr := runPair(rt, 2, 16, 1,
			func(p *buffer.Ports) error {
				return p.Out(0).ScanFrom(iotest.HalfReader(strings.NewReader(stream)), '\n')
			}, collect(&got))
		if werr != nil || rerr != nil {
			rt.Fatal(werr, rerr)
		}
		want := lines([]byte(stream))
		if len(got) != len(want) {
			rt.Fatalf("got %d records, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				rt.Fatalf("record %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
			}
		}
	})
}

// Read reassembles a record up to the pool's MaxRecord; one byte more is a
// *record.TooLargeError that names the limit, while ReadChunk still reads
// every byte of it.
func TestMaxRecord(t *testing.T) {
	for _, n := range []int{100, 101} {
		for _, chunks := range []bool{false, true} {
			pool, err := buffer.NewPool(buffer.Options{Buffers: 2, RecordSize: 8, MaxRecord: 100})
			if err != nil {
				t.Fatal(err)
			}
			q, _ := pool.NewQueue("q", 1)
			w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
			r, _ := pool.NewProc("r", 1, []*buffer.Queue{q}, nil)
			var got int
			errs := runProcs([]*buffer.Proc{w, r}, []func(*buffer.Ports) error{
				func(p *buffer.Ports) error { return p.Out(0).Write(bytes.Repeat([]byte("z"), n)) },
				func(p *buffer.Ports) error {
					for {
						if chunks {
							piece, _, err := p.In(0).ReadChunk()
							if err != nil {
								return eofNil(err)
							}
							got += len(piece)
							continue
						}
						rec, err := p.In(0).Read()
						if err != nil {
							return eofNil(err)
						}
						got += len(rec)
					}
				},
			})
			var tl *record.TooLargeError
			switch {
			case chunks || n == 100:
				if errs[1] != nil || got != n {
					t.Fatalf("n=%d chunks=%v: %v, %d bytes", n, chunks, errs[1], got)
				}
			case !errors.As(errs[1], &tl) || tl.Max != 100:
				t.Fatalf("n=%d: err %v, want a TooLargeError naming 100", n, errs[1])
			default:
				if want := "record of 101 bytes exceeds the longest record a task holds whole (100 bytes)"; tl.Error() != want {
					t.Fatalf("message %q\nwant    %q", tl.Error(), want)
				}
				if !errors.Is(errs[0], buffer.ErrReaderGone) && errs[0] != nil {
					t.Fatalf("writer: %v", errs[0])
				}
			}
			if err := pool.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The fork-join of resolve_test.go with records longer than S: the queue
// that spills holds chains, and they come back from disk as one record
// each.
func TestTeeCatSpillsChains(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := rapid.IntRange(4, 6).Draw(rt, "B")
		s := rapid.IntRange(4, 32).Draw(rt, "S")
		n := rapid.IntRange(0, 200).Draw(rt, "n")
		size := rapid.IntRange(s+1, 4*s).Draw(rt, "size")
		tc := newTeeCat(t, b, s, 1, 1, true)
		defer tc.pool.Close()
		errs := tc.run(n, size)
		for i, err := range errs {
			if err != nil {
				rt.Fatalf("task %d: %v", i, err)
			}
		}
		if got, want := tc.out.String(), teeCatWant(n, size); got != want {
			rt.Fatalf("output differs: %d bytes, want %d", len(got), len(want))
		}
		if len(tc.hook.errs) > 0 {
			rt.Fatal(tc.hook.errs[0])
		}
		if n >= 50 && tc.pool.Resolved().Spills == 0 {
			rt.Fatalf("nothing spilled: %v", tc.pool.Resolved())
		}
	})
}

// EndRecord ends an unfinished record even when all of it was handed over
// already (a flush while its writer waited): the reader gets it whole,
// and the record written next stays a record of its own.
func TestEndRecordAfterFlush(t *testing.T) {
	for _, flush := range []bool{false, true} {
		pool, err := buffer.NewPool(buffer.Options{Buffers: 4, RecordSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := pool.NewQueue("q", 3)
		w, _ := pool.NewProc("w", 0, nil, []*buffer.Queue{q})
		r, _ := pool.NewProc("r", 1, []*buffer.Queue{q}, nil)
		var got []string
		errs := runProcs([]*buffer.Proc{w, r}, []func(*buffer.Ports) error{
			func(p *buffer.Ports) error {
				out := p.Out(0)
				if err := out.WriteChunk([]byte("last"), true); err != nil {
					return err
				}
				if flush {
					p.Flush()
				}
				if err := out.EndRecord(); err != nil {
					return err
				}
				return out.Write([]byte("next\n"))
			},
			func(p *buffer.Ports) error {
				for {
					rec, err := p.In(0).Read()
					if err != nil {
						return eofNil(err)
					}
					got = append(got, string(rec))
				}
			},
		})
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("flush %v: %v", flush, errs)
		}
		if want := []string{"last", "next\n"}; !slices.Equal(got, want) {
			t.Errorf("flush %v: read %q, want %q", flush, got, want)
		}
		if err := pool.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// Pass on a buffer holding a whole record and then the start of a record
// over the pool's MaxRecord: the whole record reaches the reader before
// the filter reports the long one, whether the start alone is over the
// limit or the limit falls in a later piece.
func TestPassSplitsBeforeATooLargeRecord(t *testing.T) {
	for _, tc := range []struct {
		max, size int
		atLeast   bool
	}{
		{max: 4, size: 13, atLeast: true}, // the 13 bytes after "ok\n"
		{max: 20, size: 29, atLeast: true},
		{max: 29, size: 30, atLeast: false}, // pieces of 13, 16 and 1

	} {
		t.Run(fmt.Sprint(tc.max), func(t *testing.T) {
			pool, err := buffer.NewPool(buffer.Options{Buffers: 3, RecordSize: 16, MaxRecord: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			q0, _ := pool.NewQueue("q0", 1)
			q1, _ := pool.NewQueue("q1", 1)
			src, _ := pool.NewProc("src", 0, nil, []*buffer.Queue{q0})
			mid, _ := pool.NewProc("mid", 1, []*buffer.Queue{q0}, []*buffer.Queue{q1})
			dst, _ := pool.NewProc("dst", 2, []*buffer.Queue{q1}, nil)
			mid.CopyReads()
			var got [][]byte
			errs := runProcs([]*buffer.Proc{src, mid, dst}, []func(*buffer.Ports) error{
				func(p *buffer.Ports) error {
					if err := p.Out(0).Write([]byte("ok\n")); err != nil {
						return err
					}
					return p.Out(0).Write(bytes.Repeat([]byte("z"), 30))
				},
				func(p *buffer.Ports) error {
					for {
						if err := p.Out(0).Pass(p.In(0), func([]byte) bool { return true }); err != nil {
							return eofNil(err)
						}
					}
				},
				func(p *buffer.Ports) error {
					for {
						rec, err := p.In(0).Read()
						if err != nil {
							return eofNil(err)
						}
						got = append(got, bytes.Clone(rec))
					}
				},
			})
			var tl *record.TooLargeError
			if !errors.As(errs[1], &tl) || tl.Size != tc.size || tl.Max != tc.max || tl.AtLeast != tc.atLeast {
				t.Fatalf("filter: %v (%+v), want a TooLargeError of %d bytes", errs[1], tl, tc.size)
			}
			if errs[0] != nil && !errors.Is(errs[0], buffer.ErrReaderGone) || errs[2] != nil {
				t.Fatalf("writer: %v, reader: %v", errs[0], errs[2])
			}
			if fmt.Sprintf("%q", got) != `["ok\n"]` {
				t.Fatalf("reader got %q, want the whole record before the long one", got)
			}
			if err := pool.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
