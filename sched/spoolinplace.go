package sched

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/spool"
)

// This file reads a file in place under the spool: cut into segments at
// line ends (record.Bounds), each segment read as a range of the file.

// readInPlace opens the file of in-place stage s and cuts it into
// segments of about SpoolOptions.Segment bytes, each ending at a line
// end; the segments' names hash the file's Ident and their byte ranges.
// It returns the edge's causal hash.
func (r *spoolRun) readInPlace(s *spoolStage) (string, error) {
	t := r.g.Tasks[s.tasks[0]]
	f, err := os.Open(t.File)
	if err != nil {
		return "", &TaskError{Task: t.Name, Index: t.Index, Err: err}
	}
	e := r.edges[s.outs[0]]
	e.file = f
	fi, err := f.Stat()
	if err != nil {
		return "", &TaskError{Task: t.Name, Index: t.Index, Err: err}
	}
	bounds, err := record.Bounds(f, fi.Size(), int64(r.so.Segment), record.Lines)
	if err != nil {
		return "", &TaskError{Task: t.Name, Index: t.Index, Err: err}
	}
	e.bounds = bounds
	names := make([]string, len(bounds)-1)
	for k := range names {
		names[k] = spool.SegName(k, spool.Hash(t.Ident, strconv.FormatInt(bounds[k], 10), strconv.FormatInt(bounds[k+1], 10)))
	}
	gen := spool.Hash("file", t.Ident, strconv.Itoa(r.so.Segment))
	e.complete(gen, names)
	e.markEnded()
	return gen, nil
}

// rangeBufs are readRange's buffers. A segment of the default size is
// four reads of one, where a bufio.Scanner made 64 (64 KiB each).
var rangeBufs = sync.Pool{New: func() any { return new([rangeBuf]byte) }}

const rangeBuf = 1 << 20

// readRange calls each with the lines of bytes [from, to) of f, each with
// its '\n' (the last may have none), as the runner's line framing cuts
// them; a line longer than maxRec is a *record.TooLargeError. It returns
// the bytes read. The line passed to each is valid only during the call.
func readRange(f *os.File, from, to int64, maxRec int, each func([]byte) error) (int64, error) {
	pooled := rangeBufs.Get().(*[rangeBuf]byte)
	defer rangeBufs.Put(pooled)
	buf := pooled[:]
	tooLarge := func(size int, atLeast bool) error {
		return &record.TooLargeError{Size: size, Max: maxRec, AtLeast: atLeast, Limit: buffer.MaxRecordLimit}
	}
	start, end, at := 0, 0, from // buf[start:end] is read and not yet handed out
	for {
		for {
			i := bytes.IndexByte(buf[start:end], '\n')
			if i < 0 {
				break
			}
			line := buf[start : start+i+1]
			if len(line) > maxRec {
				return to - from, tooLarge(len(line), false)
			}
			if err := each(line); err != nil {
				return to - from, err
			}
			start += i + 1
		}
		if at == to {
			if start == end {
				return to - from, nil
			}
			if end-start > maxRec {
				return to - from, tooLarge(end-start, false)
			}
			return to - from, each(buf[start:end])
		}
		// The part of a line read so far goes to the front; a line longer
		// than the buffer grows it (not the pooled one) up to maxRec.
		end = copy(buf, buf[start:end])
		start = 0
		if end == len(buf) {
			if end > maxRec {
				return to - from, tooLarge(maxRec+1, true)
			}
			buf = append(buf, make([]byte, min(len(buf), maxRec+1-len(buf)))...)
		}
		n, err := f.ReadAt(buf[end:min(int64(len(buf)), int64(end)+to-at)], at)
		end += n
		at += int64(n)
		if err != nil && (err != io.EOF || at < to) {
			if err == io.EOF {
				err = fmt.Errorf("%s: %w (the file was cut while read)", f.Name(), io.ErrUnexpectedEOF)
			}
			return to - from, err
		}
	}
}

// readSeg calls each with the records of segment k of edge e, named
// name: a token of its place, or a range of its file.
func (r *spoolRun) readSeg(e *spoolEdge, k int, name string, maxRec int, each func([]byte) error) error {
	var n int64
	var err error
	if e.file != nil {
		n, err = readRange(e.file, e.bounds[k], e.bounds[k+1], maxRec, each)
	} else if f := e.takeEarly(k); f != nil {
		n, err = spool.ReadWritten(f, maxRec, each)
		f.Close()
	} else {
		n, err = spool.ReadToken(e.p, name, maxRec, each)
	}
	r.read.Add(n)
	return err
}
