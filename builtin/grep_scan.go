package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
)

// grep's general form reads its inputs a batch of lines at a time: a
// buffer of the input port (Input.ReadBatch), or a large block of a file
// (grepBlocks). A batch is searched as one string (grepMatcher.seek), so
// that the lines between two matches cost nothing one by one: they are
// skipped, counted with bytes.Count (-n, -c -v), or written on (-v) as a
// run. Line ends are found only around a match, as GNU grep does. What
// needs every line (context, -m with -v, a prefix before each line of a
// -v run) goes line by line through grepRun.line.

// grepInput is the state of one input of the general form being read in
// batches: whether it is binary, and the bytes held while the first
// grepBinaryProbe of them are looked at. It is used by the task's
// goroutine only.
type grepInput struct {
	r *grepRun
	f *grepFile
	// bin is set once the input is known to be binary: its lines go one
	// by one through binLine.
	bin bool
	// probing is set while the start of the input is held in held: a NUL
	// in its first grepBinaryProbe bytes makes all of it binary.
	probing bool
	held    []byte
	// binMatch is set when a line of binary input was selected.
	binMatch bool
}

// batch greps data, whole lines back to back. idle says that nothing
// more has come for now (the port's writer or the pipe waits): a probe
// ends there, as GNU grep decides on what its first read of a pipe gave.
func (g *grepInput) batch(data []byte, idle bool) error {
	if !g.probing {
		return g.text(data)
	}
	// The probe takes the lines that start within its first
	// grepBinaryProbe bytes, as many batches as that takes.
	need := grepBinaryProbe - len(g.held)
	end := len(data)
	if need <= len(data) {
		if e := bytes.IndexByte(data[need-1:], '\n'); e >= 0 {
			end = need + e
		}
	}
	if bytes.IndexByte(data[:end], 0) >= 0 {
		g.probing, g.bin = false, true
		if err := g.lines(g.held); err != nil {
			return err
		}
		g.held = g.held[:0]
		return g.lines(data)
	}
	if len(data) < need && !idle {
		g.held = append(g.held, data...)
		return nil
	}
	if err := g.endProbe(); err != nil {
		return err
	}
	return g.text(data)
}

// endProbe greps the lines held while probing, which hold no NUL: the
// input is text.
func (g *grepInput) endProbe() error {
	g.probing = false
	err := g.text(g.held)
	g.held = g.held[:0]
	return err
}

// text greps lines of input not known to be binary: in bulk up to the
// line with a NUL, if any, and that line on as binary.
func (g *grepInput) text(data []byte) error {
	if g.bin {
		return g.lines(data)
	}
	if !g.r.text {
		if z := bytes.IndexByte(data, 0); z >= 0 {
			start := bytes.LastIndexByte(data[:z], '\n') + 1
			if err := g.r.scan(g.f, data[:start]); err != nil {
				return err
			}
			g.bin = true
			return g.lines(data[start:])
		}
	}
	return g.r.scan(g.f, data)
}

// lines greps data one line at a time: binary input, and what batch held.
func (g *grepInput) lines(data []byte) error {
	return eachLine(data, g.line)
}

// line greps one line, as text or, once the input is binary, cut at its
// NULs.
func (g *grepInput) line(rec []byte) error {
	r, f := g.r, g.f
	if !r.text && !g.bin && bytes.IndexByte(record.TrimEOL(rec), 0) >= 0 {
		g.bin = true
	}
	if !g.bin {
		return r.line(f, rec)
	}
	if r.skipBinary {
		return errGrepStop
	}
	f.n++
	k := r.binarySelects(rec)
	if r.maxCount >= 0 {
		k = min(k, int(r.maxCount-f.count))
	}
	if k == 0 {
		return nil
	}
	if err := r.selectLines(f, k); err != nil || r.count {
		if err == nil && r.maxCount >= 0 && f.count >= r.maxCount {
			return errGrepStop // grep -c -m NUM counts NUM at most
		}
		return err
	}
	g.binMatch = true
	return errGrepBinary
}

// eachLine calls fn on each line of data, with its '\n' if it has one.
func eachLine(data []byte, fn func(rec []byte) error) error {
	for len(data) > 0 {
		n := len(data)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			n = i + 1
		}
		if err := fn(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// scan greps data, lines of text back to back (only the last may lack
// its '\n'), looking for the lines that may match with one search over
// all of them.
func (r *grepRun) scan(f *grepFile, data []byte) error {
	if !r.bulk || f.done || !r.m.seeks() {
		return eachLine(data, func(rec []byte) error { return r.line(f, rec) })
	}
	for pos := 0; pos < len(data); {
		at, sure := r.m.seek(data[pos:])
		start := len(data)
		if at >= 0 {
			at += pos
			start = lineStart(data, pos, at)
		}
		if start > pos {
			if err := r.misses(f, data[pos:start]); err != nil {
				return err
			}
		}
		if at < 0 {
			return nil
		}
		end := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			end = at + i + 1
		}
		rec := data[start:end]
		if err := r.decide(f, rec, sure || r.m.match(record.TrimEOL(rec))); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// lineStart returns the start of the line of data that holds offset at,
// a line start at or before it being from. Most often, where matches are
// many, it is from itself: a forward search (vector instructions) says
// so, where bytes.LastIndexByte would walk back byte by byte.
func lineStart(data []byte, from, at int) int {
	if bytes.IndexByte(data[from:at], '\n') < 0 {
		return from
	}
	return from + bytes.LastIndexByte(data[from:at], '\n') + 1
}

// misses takes run, whole lines that do not match: nothing to do but
// keep count, unless -v selects them.
func (r *grepRun) misses(f *grepFile, run []byte) error {
	if !r.invert {
		if r.number {
			f.n += bytes.Count(run, []byte{'\n'})
		}
		f.offset += int64(len(run))
		return nil
	}
	switch {
	case r.maxCount >= 0 || r.only:
	case r.count || r.quiet || r.listMatch || r.listMissing:
		// Selected, but no line is printed.
		k := grepLineCount(run)
		if r.number {
			f.n += k
		}
		f.offset += int64(len(run))
		return r.selectLines(f, k)
	case f.named || r.number || r.byteOffset:
	default:
		// Printed as they are: a run of lines, one Write each.
		r.selected = true
		f.offset += int64(len(run))
		return eachLine(run, r.write)
	}
	return eachLine(run, func(rec []byte) error { return r.decide(f, rec, false) })
}

// write writes rec, a selected line, with the '\n' GNU grep ends every
// output line with.
func (r *grepRun) write(rec []byte) error {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		return r.out.Write(rec)
	}
	r.buf = append(append(r.buf[:0], rec...), '\n')
	return r.out.Write(r.buf)
}

// grepLineCount returns the number of lines in run: its '\n's, and a
// last line without one.
func grepLineCount(run []byte) int {
	k := bytes.Count(run, []byte{'\n'})
	if n := len(run); n > 0 && run[n-1] != '\n' {
		k++
	}
	return k
}

// eachBatch calls fn on each batch of operand name: whole lines back to
// back, the last of the input maybe without its '\n', and whether the
// input is idle after it (Input.Idle; a read of a pipe or terminal that
// gave less than asked). Errors are those of
// eachRecord: a *fileError for a file that cannot be opened or read, and
// any other failure of a file (a line over the limit) wrapped with its
// name, which ends the run. buf is the memory to read a file into,
// reused from one operand to the next.
func eachBatch(ctx context.Context, env *Env, p *buffer.Ports, name string, buf *[]byte, fn func(data []byte, idle bool) error) error {
	src, err := openOperand(env, p, name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer src.Close()
	if in := src.Port(); in != nil {
		for {
			data, _, err := in.ReadBatch()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(data, in.Idle()); err != nil {
				return err
			}
		}
	}
	_, stream := src.rc.(*streamReader)
	b := grepBlocks{r: src.rc, max: src.max, buf: *buf}
	defer func() { *buf = b.buf }()
	for {
		data, err := b.next()
		if err == io.EOF {
			return nil
		}
		var tl *record.TooLargeError
		if errors.As(err, &tl) {
			tl.Limit = buffer.MaxRecordLimit
			return fmt.Errorf("%s: %w", name, err)
		}
		if err != nil {
			return &fileError{name: name, err: err}
		}
		if err := fn(data, stream && b.short); err != nil {
			return err
		}
		// Reading a file touches no port, where a cancelled run is
		// noticed.
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// grepBlockSize is the size grep reads a file in: large enough that the
// search, not the call, costs; small enough to stay in the cache. Tests
// make it small, to cut lines at block ends.
var grepBlockSize = 256 << 10

// grepBlocks reads a file a block at a time and hands out the whole lines
// of each block, back to back. A line longer than the block grows the
// buffer, up to max bytes a line. It is not safe for concurrent use.
type grepBlocks struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int   // buf[start:end] is read and not yet handed out
	err        error // the read's error (io.EOF at the end), once met
	// short is set when the last read gave less than asked: on a pipe or
	// terminal (a streamReader), nothing more for now; a regular file
	// gives less only at its end.
	short bool
}

// next returns the next lines: every whole line read and not yet handed
// out, or at the end a last line without '\n'. They stay valid until the
// next call. It returns io.EOF at the end, the read error once the lines
// read before it are out, and a *record.TooLargeError for a line over
// max.
func (b *grepBlocks) next() ([]byte, error) {
	for {
		if i := bytes.LastIndexByte(b.buf[b.start:b.end], '\n'); i >= 0 {
			data := b.buf[b.start : b.start+i+1]
			b.start += i + 1
			return data, b.check(data)
		}
		if b.err != nil {
			// At the end, what is left is a last line without '\n';
			// after a failed read, the rest of a line that was cut.
			if b.err == io.EOF && b.start < b.end {
				data := b.buf[b.start:b.end]
				b.start = b.end
				return data, b.check(data)
			}
			return nil, b.err
		}
		b.fill()
	}
}

// check returns a *record.TooLargeError if a line of data is over max:
// only a limit below the block size needs the look.
func (b *grepBlocks) check(data []byte) error {
	if b.max >= len(b.buf) {
		return nil
	}
	for len(data) > 0 {
		n := len(data)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			n = i + 1
		}
		if n > b.max {
			return &record.TooLargeError{Size: n, Max: b.max}
		}
		data = data[n:]
	}
	return nil
}

// fill moves the unfinished line to the front and reads after it,
// growing the buffer when that line fills it.
func (b *grepBlocks) fill() {
	if b.buf == nil {
		b.buf = make([]byte, grepBlockSize)
	}
	if b.start > 0 {
		b.end = copy(b.buf, b.buf[b.start:b.end])
		b.start = 0
	}
	if b.end == len(b.buf) {
		if b.end > b.max {
			b.err = &record.TooLargeError{Size: b.end, Max: b.max, AtLeast: true}
			return
		}
		buf := make([]byte, min(2*len(b.buf), b.max+1))
		copy(buf, b.buf[:b.end])
		b.buf = buf
	}
	for range maxEmptyReads {
		n, err := b.r.Read(b.buf[b.end:])
		b.short = n < len(b.buf)-b.end
		b.end += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// maxEmptyReads is how many reads in a row may return nothing before a
// reader is taken for broken, as in bufio.
const maxEmptyReads = 100
