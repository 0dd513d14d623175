package builtin

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record/recfile"
)

func init() {
	register(&Spec{
		Name:  "tail",
		Usage: "tail [-q | -v] [-n [+]N | -c [+]N | -N | +N] [FILE]...",
		Help: "Write the last N lines (default 10) or bytes (-c) of each FILE, or with -n +N " +
			"or -c +N those from line or byte N on. Several FILEs get ==> FILE <== headers " +
			"(-q: never, -v: always). Past --sort-memory, what tail holds waits on disk. -f and " +
			"other options run the system's tail.",
		New: tailNew,
	})
}

// tailCmd is a parsed tail command line.
type tailCmd struct {
	env       *Env
	n         uint64
	bytes     bool // -c: count bytes, not lines
	fromStart bool // -n +N, -c +N: from line or byte N on
	headers   int  // -1 never (-q), 1 always (-v), 0 when several FILEs
	names     []string
}

func tailNew(env *Env, args []string) (*Cmd, error) {
	t := &tailCmd{env: env, n: 10}
	if n, fromStart, bytes, ok := tailObsolete(args); ok {
		t.n, t.fromStart, t.bytes = n, fromStart, bytes
		args = args[1:]
	}
	names, err := getopt{cmd: "tail", shorts: "qvn:c:", longs: headTailLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'q':
			t.headers = -1
			return nil
		case 'v':
			t.headers = 1
			return nil
		}
		// "+N" is parsed whole (a count may start with one '+'); of "-N"
		// the '-' is dropped.
		t.bytes = c == 'c'
		what := "lines"
		if t.bytes {
			what = "bytes"
		}
		t.fromStart = strings.HasPrefix(arg, "+")
		n, err := headCount("tail", what, strings.TrimPrefix(arg, "-"))
		t.n = n
		return err
	})
	if err != nil {
		return nil, err
	}
	t.names = names
	reads, err := env.edgeOperands("tail", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: t.run, Spills: !t.fromStart && t.n > 0}, nil
}

// tailObsolete recognizes the old forms "tail -N [FILE]" and "tail +N
// [FILE]" (an optional 'l' may follow N, or 'c' for bytes), which GNU
// accepts only with at most one FILE and no other option.
func tailObsolete(args []string) (n uint64, fromStart, bytes, ok bool) {
	if len(args) == 0 || len(args) > 2 || len(args) == 2 && len(args[1]) > 1 && args[1][0] == '-' {
		return 0, false, false, false
	}
	a := args[0]
	if len(a) < 2 || a[0] != '-' && a[0] != '+' || !headIsDigit(a[1]) {
		return 0, false, false, false
	}
	digits := a[1:]
	switch digits[len(digits)-1] {
	case 'c':
		bytes = true
		fallthrough
	case 'l':
		digits = digits[:len(digits)-1]
	}
	for i := 0; i < len(digits); i++ {
		if !headIsDigit(digits[i]) {
			return 0, false, false, false
		}
	}
	n, valid, _ := headParseCount(digits)
	if !valid {
		return 0, false, false, false
	}
	return n, a[0] == '+', bytes, true
}

func (t *tailCmd) run(ctx context.Context, p *buffer.Ports) error {
	return headTailRun(t.env, p, "tail", t.names, t.headers, func(src *operand, out *joiner) error {
		switch {
		case t.bytes && t.fromStart:
			return tailFromByte(src, out, t.n)
		case t.bytes:
			return tailLastBytes(t.env, src, out, t.n)
		case t.fromStart:
			return tailFrom(src, out, t.n)
		}
		return tailLast(t.env, src, out, t.n)
	})
}

// tailFrom copies the lines of src from line n on (line 0 counts as 1).
func tailFrom(src *operand, out *joiner, n uint64) error {
	in := src.Port()
	for line := uint64(1); ; line++ {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if line < n {
			continue
		}
		if in != nil {
			err = out.forward(in, rec)
		} else {
			err = out.write(rec)
		}
		if err != nil {
			return err
		}
	}
}

// tailLast writes the last n lines of src, GNU's way for a pipe: it holds
// the bytes of the stream as they come, in blocks (a buffer of a port, a
// read of a file) with the count of '\n' in each, and lets the oldest
// block go as soon as the newer ones hold more than n line ends. Nothing
// is done per line until the end, where the lines before the last n are
// skipped in the first block kept. Blocks wait in a recfile.FIFO bounded
// by Env.SortMemory: past it, older blocks go to disk, and a block too old
// to print is dropped unread, so tail reads back at most what it prints.
// A line is what GNU calls one: bytes up to a '\n', and the bytes after
// the last '\n' at the end. (tail -c N holds bytes: see tailLastBytes.)
//
// It once kept each line as a record of the FIFO: 20 million lines cost a
// record end each, a call each to push and drop, and with a small budget
// every line went through the disk; seq 1 20000000 | tail -n 10000000
// took three times GNU's time and twice its memory.
func tailLast(env *Env, src *operand, out *joiner, n uint64) error {
	if n == 0 {
		return nil
	}
	w := lineWindow{q: recfile.NewFIFO(sortTempDir(env), sortBudget(env)), n: n}
	defer w.q.Close()
	for {
		b, err := src.block()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := w.push(b); err != nil {
			return err
		}
	}
	// The lines go out as ScanFrom cuts bytes into records, in one pass
	// over each block, not one write per line (it hands its buffer over
	// at the end of each block, as after a short read).
	return w.finish(func(b []byte) error { return out.out.ScanFrom(bytes.NewReader(b), '\n') })
}

// lineWindow holds the last n lines of a stream, and a little more: blocks
// of bytes in q, oldest first, and the '\n's of each in ends (ends[head:]
// parallel to q's records). It is not safe for concurrent use.
type lineWindow struct {
	q    *recfile.FIFO
	n    uint64
	ends []uint64 // '\n's per block; blocks before head are gone
	head int
	held uint64 // '\n's of the blocks held
	last byte   // the stream's last byte
}

// push appends block b. Before it goes in, the oldest blocks go (unread)
// while the rest, b included, still hold more than n line ends: the last
// n lines start after the line end n+1 from the last, so the block that
// holds their first byte stays (a line may span many blocks, and a block
// may have no line end). A block is dropped before b goes in, never
// spilled first and dropped after.
func (w *lineWindow) push(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	c := uint64(bytes.Count(b, []byte{'\n'}))
	for w.head < len(w.ends) && w.held+c-w.ends[w.head] > w.n {
		if err := w.q.Drop(1); err != nil {
			return err
		}
		w.held -= w.ends[w.head]
		w.head++
	}
	if w.head > 1024 && w.head > len(w.ends)/2 {
		w.ends = w.ends[:copy(w.ends, w.ends[w.head:])]
		w.head = 0
	}
	if err := w.q.Push(b); err != nil {
		return err
	}
	w.ends = append(w.ends, c)
	w.held += c
	w.last = b[len(b)-1]
	return nil
}

// finish writes the last n lines held through write, in pieces that
// need not end at a line end, and empties the window.
func (w *lineWindow) finish(write func([]byte) error) error {
	lines := w.held
	if w.q.Len() > 0 && w.last != '\n' {
		lines++ // the last line, without its '\n'
	}
	var skip uint64 // line ends to go past before the first line written
	if lines > w.n {
		skip = lines - w.n
	}
	for ; w.q.Len() > 0; w.head++ {
		c := w.ends[w.head]
		if c < skip {
			// Every byte of the block is in a line skipped.
			if err := w.q.Drop(1); err != nil {
				return err
			}
			skip -= c
			continue
		}
		b, err := w.q.Front()
		if err != nil {
			return err
		}
		for ; skip > 0; skip-- {
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		if err := write(b); err != nil {
			return err
		}
		if err := w.q.Pop(); err != nil {
			return err
		}
	}
	return nil
}

// block returns the next bytes of src, whatever lines they make: the rest
// of a buffer of the port (buffer.Input.ReadBytes), or a read of a file.
// They are valid until the next call. It returns io.EOF at the end, a
// *fileError when a file cannot be read, and the port's error otherwise. A
// caller uses block, Read or Chunk on an operand, not a mix of them.
func (s *operand) block() ([]byte, error) {
	if s.in != nil {
		return s.in.ReadBytes()
	}
	if err := s.fill(); err != nil {
		return nil, err
	}
	return s.chunk, nil
}

// tailFromByte copies the bytes of src from byte n on (byte 0 counts as
// 1), piece by piece: no line is held whole.
func tailFromByte(src *operand, out *joiner, n uint64) error {
	skip := max(n, 1) - 1
	return src.eachChunk(func(piece []byte) error {
		k := min(skip, uint64(len(piece)))
		skip -= k
		return out.write(piece[k:])
	})
}

// tailLastBytes writes the last n bytes of src. They are held in a
// byteWindow, which never holds a line whole and spills past Env.SortMemory.
func tailLastBytes(env *Env, src *operand, out *joiner, n uint64) error {
	if n == 0 {
		return nil
	}
	w := newByteWindow(env, n)
	defer w.close()
	if err := w.read(src, nil); err != nil {
		return err
	}
	return w.finish(nil, out.writeBytes)
}

// byteWindow holds the last n bytes of a stream, for tail -c N and head
// -c -N: the bytes are kept in blocks of equal size, whatever the lines
// are, in a recfile.FIFO bounded by Env.SortMemory (older blocks wait on
// disk). Since every block but the newest has the same size, a block that
// is no longer needed leaves the window without being read back when it
// is dropped (tail), and in order when it is written (head). It is not
// safe for concurrent use.
type byteWindow struct {
	q     *recfile.FIFO
	block []byte // the newest bytes, not in q yet; full at cap(block)
	n     uint64
}

func newByteWindow(env *Env, n uint64) *byteWindow {
	budget := sortBudget(env)
	size := min(64<<10, max(budget/8, 1<<10))
	return &byteWindow{q: recfile.NewFIFO(sortTempDir(env), budget), block: make([]byte, 0, size), n: n}
}

// held returns the bytes the window holds.
func (w *byteWindow) held() uint64 { return uint64(w.q.Bytes()) + uint64(len(w.block)) }

// push appends b. The oldest blocks that the rest can spare (they still
// hold n bytes without them) leave the window, through gone if it is not
// nil, and unread otherwise.
func (w *byteWindow) push(b []byte, gone func([]byte) error) error {
	size := cap(w.block)
	for len(b) > 0 {
		k := min(len(b), size-len(w.block))
		w.block = append(w.block, b[:k]...)
		b = b[k:]
		if len(w.block) < size {
			continue
		}
		if err := w.q.Push(w.block); err != nil {
			return err
		}
		w.block = w.block[:0]
		// Every block in q is size bytes long.
		for w.q.Len() > 0 && w.held()-uint64(size) >= w.n {
			if err := w.pop(gone); err != nil {
				return err
			}
		}
	}
	return nil
}

// read pushes every piece of src, to its end (see push).
func (w *byteWindow) read(src *operand, gone func([]byte) error) error {
	return src.eachChunk(func(piece []byte) error { return w.push(piece, gone) })
}

// pop takes the oldest block out of q, through gone if it is not nil.
func (w *byteWindow) pop(gone func([]byte) error) error {
	if gone == nil {
		return w.q.Drop(1)
	}
	rec, err := w.q.Front()
	if err != nil {
		return err
	}
	if err := gone(rec); err != nil {
		return err
	}
	return w.q.Pop()
}

// finish ends the stream: of what the window holds, the bytes before the
// last n go to before and the last n to after (either may be nil, for
// bytes not wanted).
func (w *byteWindow) finish(before, after func([]byte) error) error {
	if len(w.block) > 0 {
		if err := w.q.Push(w.block); err != nil {
			return err
		}
		w.block = w.block[:0]
	}
	var first uint64 // bytes before the last n
	if h := uint64(w.q.Bytes()); h > w.n {
		first = h - w.n
	}
	for w.q.Len() > 0 {
		rec, err := w.q.Front()
		if err != nil {
			return err
		}
		k := min(first, uint64(len(rec)))
		first -= k
		if before != nil && k > 0 {
			if err := before(rec[:k]); err != nil {
				return err
			}
		}
		if after != nil && k < uint64(len(rec)) {
			if err := after(rec[k:]); err != nil {
				return err
			}
		}
		if err := w.q.Pop(); err != nil {
			return err
		}
	}
	return nil
}

func (w *byteWindow) close() { w.q.Close() }
