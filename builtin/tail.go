package builtin

import (
	"context"
	"io"
	"math"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record/recfile"
)

func init() {
	register(&Spec{
		Name:  "tail",
		Usage: "tail [-q | -v] [-n [+]N | -c [+]N | -N | +N] [FILE]...",
		Help: "Write the last N lines (default 10) of each FILE, or with -n +N the lines from " +
			"line N on; -c counts bytes instead. Several FILEs get ==> FILE <== headers " +
			"(-q: never, -v: always). tail holds the last N lines in memory. -f and other " +
			"options run the system's tail.",
		New: tailNew,
	})
}

// tailCmd is a parsed tail command line.
type tailCmd struct {
	env       *Env
	n         uint64
	fromStart bool // -n +N: from line N on
	bytes     bool // -c: count bytes
	headers   int  // -1 never (-q), 1 always (-v), 0 when several FILEs
	names     []string
}

func tailNew(env *Env, args []string) (*Cmd, error) {
	t := &tailCmd{env: env, n: 10}
	if n, fromStart, ok := tailObsolete(args); ok {
		t.n, t.fromStart = n, fromStart
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
		t.fromStart = strings.HasPrefix(arg, "+")
		t.bytes = c == 'c'
		what := "lines"
		if t.bytes {
			what = "bytes"
		}
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
// [FILE]" (an optional 'l' may follow N), which GNU accepts only with at
// most one FILE and no other option.
func tailObsolete(args []string) (n uint64, fromStart, ok bool) {
	if len(args) == 0 || len(args) > 2 || len(args) == 2 && len(args[1]) > 1 && args[1][0] == '-' {
		return 0, false, false
	}
	a := args[0]
	if len(a) < 2 || a[0] != '-' && a[0] != '+' || !headIsDigit(a[1]) {
		return 0, false, false
	}
	digits := strings.TrimSuffix(a[1:], "l")
	for i := 0; i < len(digits); i++ {
		if !headIsDigit(digits[i]) {
			return 0, false, false
		}
	}
	n, valid, _ := headParseCount(digits)
	if !valid {
		return 0, false, false
	}
	return n, a[0] == '+', true
}

func (t *tailCmd) run(ctx context.Context, p *buffer.Ports) error {
	return headTailRun(t.env, p, "tail", t.names, t.headers, func(src *operand, out *joiner) error {
		switch {
		case t.bytes && t.fromStart:
			return tailBytesFrom(src, out, t.n)
		case t.fromStart:
			return tailFrom(src, out, t.n)
		}
		return tailLast(t.env, src, out, t.n, t.bytes)
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

// tailLast writes the last n lines (or, with bytes, bytes) of src. The
// lines are held in a FIFO of bounded memory (Env.SortMemory, as sort's
// runs): past it, older lines go to disk and lines too old to print are
// dropped unread, so tail reads back at most the lines it prints. For
// bytes, the FIFO keeps the lines that hold the last n bytes, their sizes
// beside them, and the first is cut.
func tailLast(env *Env, src *operand, out *joiner, n uint64, bytes bool) error {
	if n == 0 {
		return nil
	}
	q := recfile.NewFIFO(sortTempDir(env), sortBudget(env))
	defer q.Close()
	var sizes []int // with bytes: of the lines in q, oldest first
	var held uint64 // with bytes: their sum
	for {
		rec, err := src.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := q.Push(rec); err != nil {
			return err
		}
		drop := q.Len() - int64(min(n, math.MaxInt64))
		if bytes {
			sizes = append(sizes, len(rec))
			held += uint64(len(rec))
			drop = 0
			for int(drop) < len(sizes)-1 && held-uint64(sizes[drop]) >= n {
				held -= uint64(sizes[drop])
				drop++
			}
			sizes = sizes[drop:]
		}
		if drop > 0 {
			if err := q.Drop(drop); err != nil {
				return err
			}
		}
	}
	for first := true; q.Len() > 0; first = false {
		rec, err := q.Front()
		if err != nil {
			return err
		}
		if first && bytes && held > n {
			rec = rec[held-n:]
		}
		if err := out.write(rec); err != nil {
			return err
		}
		if err := q.Pop(); err != nil {
			return err
		}
	}
	return nil
}

// tailBytesFrom copies the bytes of src from byte n on (byte 0 counts as
// 1).
func tailBytesFrom(src *operand, out *joiner, n uint64) error {
	skip := max(n, 1) - 1
	for {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if skip >= uint64(len(rec)) {
			skip -= uint64(len(rec))
			continue
		}
		if err := out.write(rec[skip:]); err != nil {
			return err
		}
		skip = 0
	}
}
