package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "uniq",
		Usage: "uniq [-cdiuz] [-f N] [-s N] [-w N] [INPUT [OUTPUT]]",
		Help: "Write one line of each run of equal adjacent lines of INPUT (default the input) " +
			"to OUTPUT (default the output): -c prefixes the run's length, -d writes only " +
			"runs of two or more, -u only single lines. Lines compare after skipping N fields " +
			"(-f) and then N characters (-s), on at most N characters (-w), ignoring case (-i); " +
			"-z ends lines with NUL.",
		New: uniqNew,
	})
}

// uniqCmd is a parsed uniq command line.
type uniqCmd struct {
	env            *Env
	count          bool // -c
	dups, singles  bool // -d, -u
	skipFields     int  // -f
	skipChars      int  // -s
	checkChars     int  // -w; -1: the whole line
	ignoreCase     bool // -i
	eol            byte // '\n', or 0 with -z
	input, output  string
	outputToFile   bool
	streamingPlain bool // no option: a run's first line is written at once
}

var uniqLongs = []longOpt{
	{"count", 'c', false},
	{"repeated", 'd', false},
	{"unique", 'u', false},
	{"skip-fields", 'f', true},
	{"skip-chars", 's', true},
	{"check-chars", 'w', true},
	{"ignore-case", 'i', false},
	{"zero-terminated", 'z', false},
}

func uniqNew(env *Env, args []string) (*Cmd, error) {
	u := &uniqCmd{env: env, input: "-", checkChars: -1, eol: '\n'}
	names, err := getopt{cmd: "uniq", shorts: "cdiuzf:s:w:", longs: uniqLongs}.parse(args, func(c byte, arg string) error {
		var err error
		switch c {
		case 'c':
			u.count = true
		case 'd':
			u.dups = true
		case 'u':
			u.singles = true
		case 'i':
			u.ignoreCase = true
		case 'z':
			u.eol = 0
		case 'f':
			u.skipFields, err = uniqCount(arg, "invalid number of fields to skip")
		case 's':
			u.skipChars, err = uniqCount(arg, "invalid number of bytes to skip")
		case 'w':
			u.checkChars, err = uniqCount(arg, "invalid number of bytes to compare")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(names) > 2 {
		return nil, usagef("uniq", "extra operand '%s'", names[2])
	}
	if len(names) > 0 {
		u.input = names[0]
	}
	if len(names) > 1 && names[1] != "-" {
		if env.isEdge(names[1]) {
			return nil, usagef("uniq", "%s: OUTPUT cannot be a named edge; pipe the output into 'tee %s'", names[1], names[1])
		}
		u.output, u.outputToFile = names[1], true
	}
	u.streamingPlain = !u.count && !u.dups && !u.singles && !u.outputToFile && u.eol == '\n'
	reads, err := env.edgeOperands("uniq", names[:min(len(names), 1)])
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: u.input == "-", Reads: reads, Fn: u.run, Effects: u.output != ""}, nil
}

// uniqCount parses the N of -f, -s and -w as GNU uniq does: digits, after
// blanks and an optional '+'; too large a count saturates.
func uniqCount(arg, what string) (int, error) {
	t := strings.TrimLeft(arg, " \t\n\v\f\r")
	t = strings.TrimPrefix(t, "+")
	if t == "" {
		return 0, usagef("uniq", "%s: %s", arg, what)
	}
	n := 0
	for i := range len(t) {
		if !sortIsDigit(t[i]) {
			return 0, usagef("uniq", "%s: %s", arg, what)
		}
		n = min(n*10+int(t[i]-'0'), 1<<40)
	}
	return n, nil
}

// key returns the part of line that uniq compares: after -f fields (runs
// of blanks, then of other bytes) and -s bytes, at most -w bytes.
func (u *uniqCmd) key(line []byte) []byte {
	i := 0
	for f := 0; f < u.skipFields && i < len(line); f++ {
		for i < len(line) && sortBlank(line[i]) {
			i++
		}
		for i < len(line) && !sortBlank(line[i]) {
			i++
		}
	}
	i += min(u.skipChars, len(line)-i)
	k := line[i:]
	if u.checkChars >= 0 && u.checkChars < len(k) {
		k = k[:u.checkChars]
	}
	return k
}

// same reports whether two lines belong to one run.
func (u *uniqCmd) same(a, b []byte) bool {
	if u.skipFields == 0 && u.skipChars == 0 && u.checkChars < 0 && !u.ignoreCase {
		return bytes.Equal(a, b)
	}
	ka, kb := u.key(a), u.key(b)
	if !u.ignoreCase || len(ka) != len(kb) {
		return bytes.Equal(ka, kb)
	}
	for i := range ka {
		if sortUpper(ka[i]) != sortUpper(kb[i]) {
			return false
		}
	}
	return true
}

func (u *uniqCmd) run(ctx context.Context, p *buffer.Ports) (err error) {
	src, err := openOperand(u.env, p, u.input)
	if err != nil {
		warnFile(u.env, "uniq", quote(u.input), err)
		return task.Exit(1)
	}
	defer src.Close()
	emit := p.Out(0).Write
	if u.eol != '\n' {
		// -z: a record may hold newlines, and the next task reads lines,
		// as it would from a pipe.
		emit = p.Out(0).WriteText
	}
	if u.outputToFile {
		f, cerr := u.env.create(u.output, false)
		if cerr != nil {
			warnFile(u.env, "uniq", quote(u.output), cerr)
			return task.Exit(1)
		}
		bw := bufio.NewWriter(f)
		emit = func(rec []byte) error { _, werr := bw.Write(rec); return werr }
		defer func() {
			if ferr := bw.Flush(); ferr != nil && err == nil {
				warnFile(u.env, "uniq", quote(u.output), ferr)
				err = task.Exit(1)
			}
			f.Close()
		}()
	}
	err = u.scan(src, p.Out(0), emit)
	var rerr *fileError
	if errors.As(err, &rerr) {
		fmt.Fprintf(u.env.stderr(), "uniq: error reading '%s'\n", u.input)
		err = task.Exit(1)
	}
	return err
}

// scan reads src and writes the runs' lines with emit. prev holds a copy of
// the current run's first line (its memory is reused from run to run, so
// nothing is allocated per line once it has grown); in the plain mode that
// line is forwarded to out as the run starts. With -z the records are
// joined and cut again at NUL.
func (u *uniqCmd) scan(src *operand, out *buffer.Output, emit func([]byte) error) error {
	var prev, scratch, pending []byte
	var n uint64 // length of the current run; 0 before the first line
	in := src.Port()
	flush := func() error {
		if n == 0 || u.dups && n == 1 || u.singles && n > 1 {
			return nil
		}
		scratch = scratch[:0]
		if u.count {
			// GNU's "%7lu ": the count right-aligned in seven columns.
			var num [20]byte
			digits := strconv.AppendUint(num[:0], n, 10)
			for k := len(digits); k < 7; k++ {
				scratch = append(scratch, ' ')
			}
			scratch = append(scratch, digits...)
			scratch = append(scratch, ' ')
		}
		scratch = append(scratch, prev...)
		scratch = append(scratch, u.eol)
		return emit(scratch)
	}
	next := func(line, rec []byte) error {
		if n > 0 && u.same(prev, line) {
			n++
			return nil
		}
		if !u.streamingPlain {
			if err := flush(); err != nil {
				return err
			}
		}
		prev = append(prev[:0], line...)
		n = 1
		if !u.streamingPlain {
			return nil
		}
		if in != nil && len(line) < len(rec) {
			return out.Forward(in)
		}
		scratch = append(append(scratch[:0], line...), '\n')
		return out.Write(scratch)
	}
	lineOnly := func(line []byte) error { return next(line, nil) }
	for {
		rec, err := src.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if u.eol == '\n' {
			err = next(record.TrimEOL(rec), rec)
		} else {
			pending, err = sortSplitNUL(pending, rec, lineOnly)
		}
		if err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		if err := lineOnly(pending); err != nil {
			return err
		}
	}
	if u.streamingPlain {
		return nil
	}
	return flush()
}
