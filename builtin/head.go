package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "head",
		Usage: "head [-q | -v] [-n [-]N | -c [-]N | -N] [FILE]...",
		Help: "Write the first N lines (-n, default 10) or bytes (-c) of each FILE; with -n -N " +
			"or -c -N, all but the last N. Several FILEs get ==> FILE <== headers (-q: never, " +
			"-v: always). head stops reading as soon as it has its lines, which stops the " +
			"commands before it.",
		New: headNew,
	})
}

// headCmd is a parsed head command line.
type headCmd struct {
	env     *Env
	bytes   bool   // -c: count bytes, not lines
	elide   bool   // -n -N or -c -N: all but the last n
	n       uint64 // how many lines or bytes
	headers int    // -1 never (-q), 1 always (-v), 0 when several FILEs
	names   []string
}

func headNew(env *Env, args []string) (*Cmd, error) {
	h := &headCmd{env: env, n: 10}
	// The obsolete form -N is only recognized as the first word.
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && headIsDigit(args[0][1]) {
		a := args[0][1:]
		i := 0
		for i < len(a) && headIsDigit(a[i]) {
			i++
		}
		n, err := headCount("head", "lines", a[:i])
		if err != nil {
			return nil, err
		}
		h.n = n
		for _, c := range []byte(a[i:]) {
			switch c {
			case 'c':
				h.bytes = true
			case 'l':
				h.bytes = false
			case 'q':
				h.headers = -1
			case 'v':
				h.headers = 1
			default:
				return nil, usagef("head", "invalid trailing option -- %c", c)
			}
		}
		args = args[1:]
	}
	names, err := getopt{cmd: "head", shorts: "qvn:c:", longs: headTailLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'q':
			h.headers = -1
			return nil
		case 'v':
			h.headers = 1
			return nil
		}
		h.bytes = c == 'c'
		what := "lines"
		if h.bytes {
			what = "bytes"
		}
		h.elide = strings.HasPrefix(arg, "-")
		n, err := headCount("head", what, strings.TrimPrefix(arg, "-"))
		h.n = n
		return err
	})
	if err != nil {
		return nil, err
	}
	h.names = names
	reads, err := env.edgeOperands("head", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: h.run, Spills: h.elide && h.n > 0}, nil
}

// headTailLongs are the long options head and tail share.
var headTailLongs = []longOpt{
	{name: "lines", short: 'n', hasArg: true},
	{name: "bytes", short: 'c', hasArg: true},
	{name: "quiet", short: 'q'},
	{name: "silent", short: 'q'},
	{name: "verbose", short: 'v'},
}

func headIsDigit(c byte) bool { return '0' <= c && c <= '9' }

// headCount parses the count of head and tail's -n and -c, and reports a
// bad one as GNU does ("invalid number of lines: 'x'").
func headCount(cmd, what, s string) (uint64, error) {
	n, ok, tooBig := headParseCount(s)
	switch {
	case tooBig:
		return 0, usagef(cmd, "invalid number of %s: '%s': Value too large for defined data type", what, s)
	case !ok:
		return 0, usagef(cmd, "invalid number of %s: '%s'", what, s)
	}
	return n, nil
}

// headParseCount parses a count with GNU's rules for head and tail: leading
// white space, an optional '+', decimal digits, and an optional multiplier:
// b (512), or one of K M G T P E Z Y R Q (k and m too) alone or with iB
// (powers of 1024) or with B (powers of 1000). A multiplier alone means
// one of it ("K" is 1024). tooBig reports a count past 2^64-1.
func headParseCount(s string) (n uint64, ok, tooBig bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	s = strings.TrimPrefix(s, "+")
	i := 0
	for i < len(s) && headIsDigit(s[i]) {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			tooBig = true
		}
		n = n*10 + d
		i++
	}
	suffix := s[i:]
	if i == 0 {
		if suffix == "" || !strings.ContainsRune("bEGKkMmPQRTYZ", rune(suffix[0])) {
			return 0, false, false
		}
		n = 1
	}
	if suffix == "" {
		return n, !tooBig, tooBig
	}
	var mult uint64
	switch suffix {
	case "b":
		mult = 512
	default:
		power := strings.IndexByte("KMGTPEZYRQ", suffix[0]) + 1
		switch suffix[0] {
		case 'k':
			power = 1
		case 'm':
			power = 2
		}
		if power == 0 {
			return 0, false, false
		}
		base := uint64(1024)
		switch suffix[1:] {
		case "", "iB":
		case "B":
			base = 1000
		default:
			return 0, false, false
		}
		mult = 1
		for range power {
			if mult > math.MaxUint64/base {
				return 0, true, true
			}
			mult *= base
		}
	}
	if n > math.MaxUint64/mult {
		tooBig = true
	}
	return n * mult, !tooBig, tooBig
}

// headHeader writes "==> NAME <==" before an operand's output when there
// are headers, with a blank line before every header but the first.
type headHeader struct {
	on      bool
	printed bool
	buf     []byte
}

func (h *headHeader) write(out *joiner, name string) error {
	if !h.on {
		return nil
	}
	if name == "-" {
		name = "standard input"
	}
	if h.printed {
		if err := out.write(nlNewline); err != nil {
			return err
		}
	}
	h.printed = true
	h.buf = fmt.Appendf(h.buf[:0], "==> %s <==\n", name)
	return out.write(h.buf)
}

func (h *headCmd) run(ctx context.Context, p *buffer.Ports) error {
	return headTailRun(h.env, p, "head", h.names, h.headers, h.one)
}

// headTailRun is the loop head and tail share: it writes each operand's
// header, then has body copy what the tool keeps of it. An operand that
// cannot be opened or read is reported in GNU's words and skipped, for an
// exit status of 1. headers is the -q/-v setting of the tools' commands.
func headTailRun(env *Env, p *buffer.Ports, cmd string, names []string, headers int, body func(src *operand, out *joiner) error) error {
	if len(names) == 0 {
		names = []string{"-"}
	}
	out := newJoiner(p)
	hdr := headHeader{on: headers > 0 || headers == 0 && len(names) > 1}
	failed := false
	for _, name := range names {
		src, err := openOperand(env, p, name)
		if err != nil {
			fmt.Fprintf(env.stderr(), "%s: cannot open '%s' for reading: %s\n", cmd, name, errText(err))
			failed = true
			continue
		}
		if err := hdr.write(out, name); err != nil {
			src.Close()
			return err
		}
		err = body(src, out)
		src.Close()
		var rerr *fileError
		if errors.As(err, &rerr) {
			fmt.Fprintf(env.stderr(), "%s: error reading '%s': %s\n", cmd, name, errText(rerr.err))
			failed = true
			continue
		}
		if err != nil {
			return err
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	if failed {
		return task.Exit(1)
	}
	return nil
}

// one copies the head of one operand. It returns as soon as it has what it
// needs, without reading the rest.
func (h *headCmd) one(src *operand, out *joiner) error {
	in := src.Port()
	emit := func(rec []byte) error {
		if in != nil {
			return out.forward(in, rec)
		}
		return out.write(rec)
	}
	switch {
	case h.elide && h.bytes:
		return headElideBytes(h.env, src, out, h.n)
	case h.elide:
		return headElideLines(h.env, src, out, h.n)
	case h.bytes:
		return headBytes(src, out, h.n)
	}
	left := h.n
	for left > 0 {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		left--
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

// headBytes copies the first n bytes of an operand, never a line at a time:
// a port in its pieces, a file straight into the output's buffers, so
// that `head -c 5 /dev/zero` reads a few kilobytes, not a line that never
// ends.
func headBytes(src *operand, out *joiner, n uint64) error {
	if in := src.Port(); in != nil {
		for n > 0 {
			piece, _, err := in.ReadChunk()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if uint64(len(piece)) > n {
				return out.write(piece[:n])
			}
			n -= uint64(len(piece))
			if err := out.forward(in, piece); err != nil {
				return err
			}
		}
		return nil
	}
	r := &catReader{r: io.LimitReader(src.rc, int64(min(n, math.MaxInt64)))}
	err := out.out.ScanFrom(r, '\n')
	if err != nil && r.err != nil && err == r.err {
		return &fileError{name: src.name, err: err}
	}
	return err
}

// headElideLines writes all but the last n lines: a line is written once n
// newer lines are held. They are held in a FIFO of bounded memory, as
// tail's (tailLast).
func headElideLines(env *Env, src *operand, out *joiner, n uint64) error {
	q := recfile.NewFIFO(sortTempDir(env), sortBudget(env))
	defer q.Close()
	for {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 {
			if err := out.write(rec); err != nil {
				return err
			}
			continue
		}
		if uint64(q.Len()) == n {
			if err := headWriteOldest(q, out); err != nil {
				return err
			}
		}
		if err := q.Push(rec); err != nil {
			return err
		}
	}
}

// headWriteOldest writes the oldest line of q and drops it.
func headWriteOldest(q *recfile.FIFO, out *joiner) error {
	rec, err := q.Front()
	if err != nil {
		return err
	}
	if err := out.write(rec); err != nil {
		return err
	}
	return q.Pop()
}

// headElideBytes writes all but the last n bytes. They are held in a
// byteWindow, as tail -c holds them: bytes, not lines, so that no line is
// held whole and memory stays within Env.SortMemory.
func headElideBytes(env *Env, src *operand, out *joiner, n uint64) error {
	w := newByteWindow(env, n)
	defer w.close()
	if err := w.read(src, out.writeBytes); err != nil {
		return err
	}
	return w.finish(out.writeBytes, nil)
}
