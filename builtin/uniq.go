package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "uniq",
		Usage: "uniq [-c] [-d] [-u] [INPUT [OUTPUT]]",
		Help: "Write one line of each run of equal adjacent lines of INPUT (default the input) " +
			"to OUTPUT (default the output): -c prefixes the run's length, -d writes only " +
			"runs of two or more, -u only single lines.",
		New: uniqNew,
	})
}

// uniqCmd is a parsed uniq command line.
type uniqCmd struct {
	env            *Env
	count          bool // -c
	dups, singles  bool // -d, -u
	input, output  string
	outputToFile   bool
	streamingPlain bool // no option: a run's first line is written at once
}

func uniqNew(env *Env, args []string) (*Cmd, error) {
	u := &uniqCmd{env: env, input: "-"}
	names, err := getopt{cmd: "uniq", shorts: "cdu"}.parse(args, func(c byte, _ string) error {
		switch c {
		case 'c':
			u.count = true
		case 'd':
			u.dups = true
		case 'u':
			u.singles = true
		}
		return nil
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
	u.streamingPlain = !u.count && !u.dups && !u.singles && !u.outputToFile
	reads, err := env.edgeOperands("uniq", names[:min(len(names), 1)])
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: u.input == "-", Reads: reads, Fn: u.run}, nil
}

func (u *uniqCmd) run(ctx context.Context, p *buffer.Ports) (err error) {
	src, err := openOperand(u.env, p, u.input)
	if err != nil {
		warnFile(u.env, "uniq", quote(u.input), err)
		return task.Exit(1)
	}
	defer src.Close()
	emit := p.Out(0).Write
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
// line is forwarded to out as the run starts.
func (u *uniqCmd) scan(src *operand, out *buffer.Output, emit func([]byte) error) error {
	var prev, scratch []byte
	var n uint64 // length of the current run; 0 before the first line
	in := src.Port()
	flush := func() error {
		if n == 0 || u.dups && n == 1 || u.singles && n > 1 {
			return nil
		}
		scratch = scratch[:0]
		if u.count {
			var num [20]byte
			digits := strconv.AppendUint(num[:0], n, 10)
			for k := len(digits); k < 7; k++ {
				scratch = append(scratch, ' ')
			}
			scratch = append(scratch, digits...)
			scratch = append(scratch, ' ')
		}
		scratch = append(scratch, prev...)
		scratch = append(scratch, '\n')
		return emit(scratch)
	}
	for {
		rec, err := src.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line := record.TrimEOL(rec)
		if n > 0 && bytes.Equal(line, prev) {
			n++
			continue
		}
		if !u.streamingPlain {
			if err := flush(); err != nil {
				return err
			}
		}
		prev = append(prev[:0], line...)
		n = 1
		if u.streamingPlain {
			if in != nil && len(line) < len(rec) {
				err = out.Forward(in)
			} else {
				scratch = append(append(scratch[:0], line...), '\n')
				err = out.Write(scratch)
			}
			if err != nil {
				return err
			}
		}
	}
	if u.streamingPlain {
		return nil
	}
	return flush()
}
