package buffer_test

import (
	"bytes"
	"io"
	"strconv"
	"testing"

	"github.com/tpipe/tpipe/buffer"
)

// askReader reads from r and remembers the largest read asked of it.
type askReader struct {
	r   io.Reader
	max int
}

func (a *askReader) Read(p []byte) (int, error) {
	a.max = max(a.max, len(p))
	return a.r.Read(p)
}

// Issue 30: `--record-size 64M 'cat f | wc -l'` took 10 s where the
// default S took 0.2 s. ScanFrom read S bytes at a time, indexed the 4096
// lines a buffer may carry, and copied the rest of the read to the next
// buffer, again and again. What ScanFrom reads at once, what it puts in one
// buffer and what it copies between buffers must not grow with S: this
// counts them (no clock) for the default S and for 64 MiB.
func TestScanFromCostDoesNotGrowWithS(t *testing.T) {
	var stream []byte
	for i := 1; len(stream) < 8<<20; i++ {
		stream = strconv.AppendInt(stream, int64(i), 10)
		stream = append(stream, '\n')
	}
	want := bytes.Count(stream, []byte{'\n'})
	carried := map[int]int64{}
	for _, s := range []int{256 << 10, 64 << 20} {
		src := &askReader{r: bytes.NewReader(stream)}
		var out *buffer.Output
		lines, biggest := 0, 0
		werr, rerr := runPair(t, 4, s, 2,
			func(p *buffer.Ports) error {
				out = p.Out(0)
				return out.ScanFrom(src, '\n')
			},
			func(p *buffer.Ports) error {
				for {
					data, n, err := p.In(0).ReadBatch()
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
					lines += n
					biggest = max(biggest, len(data))
				}
			})
		if werr != nil || rerr != nil {
			t.Fatal(werr, rerr)
		}
		if lines != want {
			t.Fatalf("S=%d: %d lines, want %d", s, lines, want)
		}
		if src.max > buffer.ScanBatch {
			t.Errorf("S=%d: a read of %d bytes, want at most ScanBatch = %d", s, src.max, buffer.ScanBatch)
		}
		if biggest > buffer.ScanBatch {
			t.Errorf("S=%d: a buffer of %d bytes of lines, want at most ScanBatch = %d", s, biggest, buffer.ScanBatch)
		}
		// A cut line per buffer, and lines the index had no room for
		// after a read a little too long: a few percent of the stream.
		if c := out.Carried(); c > int64(len(stream))/20 {
			t.Errorf("S=%d: %d bytes copied between buffers for %d read, want at most 5%%", s, c, len(stream))
		}
		carried[s] = out.Carried()
		t.Logf("S=%d: largest read %d, largest buffer %d, %d bytes copied between buffers", s, src.max, biggest, out.Carried())
	}
	if carried[64<<20] > 2*carried[256<<10]+4096 {
		t.Errorf("bytes copied between buffers: %d at S = 64 MiB, %d at 256 KiB", carried[64<<20], carried[256<<10])
	}
}
