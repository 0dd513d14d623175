package record_test

import (
	"errors"
	"io"
	"strings"

	"github.com/tpipe/tpipe/record"
)

// splitAll runs f.Split over data as a whole stream (atEOF throughout) and
// returns the records, as strings, and the error that ended the stream.
func splitAll(f record.Framing, data []byte) ([]string, error) {
	var recs []string
	for {
		advance, token, err := f.Split(data, true)
		if err != nil {
			return recs, err
		}
		if token != nil {
			recs = append(recs, string(token))
		}
		if advance == 0 {
			return recs, nil
		}
		data = data[advance:]
	}
}

// splitByteByByte runs f.Split as a scanner would if every read returned one
// byte: it calls Split with atEOF false on each growing window, and with
// atEOF true once the input is exhausted.
func splitByteByByte(f record.Framing, input []byte) ([]string, error) {
	var recs []string
	start := 0
	for end := 1; end <= len(input); end++ {
		for {
			advance, token, err := f.Split(input[start:end], false)
			if err != nil {
				return recs, err
			}
			if token != nil {
				recs = append(recs, string(token))
			}
			if advance == 0 {
				break
			}
			start += advance
		}
	}
	rest, err := splitAll(f, input[start:])
	return append(recs, rest...), err
}

// encode appends the records with f.
func encode(f record.Framing, recs []string) []byte {
	var b []byte
	for _, r := range recs {
		b = f.Append(b, []byte(r))
	}
	return b
}

// reusingSource is a Source over a list of records that, like a real port,
// hands out every record in the same buffer, overwritten by the next Read.
type reusingSource struct {
	recs []string
	buf  []byte
	err  error // returned after the records; io.EOF if nil
}

func (s *reusingSource) Read() ([]byte, error) {
	if len(s.recs) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	for i := range s.buf {
		s.buf[i] = '#' // scribble over the previous record
	}
	s.buf = append(s.buf[:0], s.recs[0]...)
	s.recs = s.recs[1:]
	return s.buf, nil
}

// bufferedSource adds Buffered to reusingSource: all its records are ready.
type bufferedSource struct{ reusingSource }

func (s *bufferedSource) Buffered() int { return len(s.recs) }

// collectSink is a Sink keeping copies of the records written to it.
type collectSink struct {
	recs []string
	err  error // returned by every Write, if set
}

func (s *collectSink) Write(rec []byte) error {
	if s.err != nil {
		return s.err
	}
	s.recs = append(s.recs, string(rec))
	return nil
}

// discardSink is a Sink that drops records.
type discardSink struct{}

func (discardSink) Write([]byte) error { return nil }

// chunkReader returns data in reads of the given sizes, cycling through
// them (a size larger than the caller's buffer is cut to it).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), r.sizes[r.i%len(r.sizes)])
	r.i++
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// loopReader returns its data over and over, for steady-state benchmarks.
type loopReader struct {
	data []byte
	off  int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.data)
	}
	return n, nil
}

// scanAll reads all records of r with a Scanner.
func scanAll(r io.Reader, f record.Framing, maxSize int) ([]string, error) {
	s := record.NewScanner(r, f, maxSize)
	var recs []string
	for s.Scan() {
		recs = append(recs, string(s.Record()))
	}
	return recs, s.Err()
}

// writeChunks writes data to a Writer in chunks of the given sizes
// (cycling) and closes it; it returns the records the sink got and the
// first error.
func writeChunks(data []byte, sizes []int, f record.Framing, maxSize int) ([]string, error) {
	sink := &collectSink{}
	w := record.NewWriter(sink, f, maxSize)
	for i := 0; len(data) > 0; i++ {
		n := min(len(data), sizes[i%len(sizes)])
		k, err := w.Write(data[:n])
		if err != nil {
			return sink.recs, err
		}
		if k != n {
			return sink.recs, errors.New("short write without error")
		}
		data = data[n:]
	}
	return sink.recs, w.Close()
}

// splitAfter is the dumb model of Lines and NUL: strings.SplitAfter
// without the empty string it yields after a final delimiter.
func splitAfter(s string, delim byte) []string {
	if s == "" {
		return nil
	}
	recs := strings.SplitAfter(s, string(delim))
	if recs[len(recs)-1] == "" {
		recs = recs[:len(recs)-1]
	}
	return recs
}
