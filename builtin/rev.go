package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "rev",
		Usage: "rev [FILE]...",
		Help: "Reverse the bytes of each line of the FILEs (default the input); the newline " +
			"stays at the end. Bytes, not characters: tpipe's builtins run in the C locale.",
		New: revNew,
	})
}

func revNew(env *Env, args []string) (*Cmd, error) {
	names, err := getopt{cmd: "rev"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		r := task.Map(revLine)
		r.Fresh = func() *task.PerRecord { c := task.Map(revLine); return &c }
		return &Cmd{ReadsInput: true, Rec: &r}, nil
	}
	reads, err := env.edgeOperands("rev", names)
	if err != nil {
		return nil, err
	}
	// As in util-linux rev, "-" is a file name like any other.
	return &Cmd{Reads: reads, Fn: revFiles(env, names)}, nil
}

// revLine appends rec, reversed but for its final '\n', to scratch.
func revLine(rec, scratch []byte) []byte {
	line := record.TrimEOL(rec)
	for i := len(line) - 1; i >= 0; i-- {
		scratch = append(scratch, line[i])
	}
	if len(line) < len(rec) {
		scratch = append(scratch, '\n')
	}
	return scratch
}

func revFiles(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := newJoiner(p)
		var scratch []byte
		failed := false
		for _, name := range names {
			src, err := revOpen(env, p, name)
			if err != nil {
				fmt.Fprintf(env.stderr(), "rev: cannot open %s: %s\n", name, errText(err))
				failed = true
				continue
			}
			for {
				var rec []byte
				rec, err = src.Read()
				if err != nil {
					break
				}
				scratch = revLine(rec, scratch[:0])
				if err = out.write(scratch); err != nil {
					break
				}
			}
			src.Close()
			var rerr *fileError
			switch {
			case err == io.EOF:
			case errors.As(err, &rerr):
				warnFile(env, "rev", name, rerr.err)
				failed = true
			default:
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
}

// revOpen opens FILE operand name, even "-" (a named edge is its port).
func revOpen(env *Env, p *buffer.Ports, name string) (*operand, error) {
	if name != "-" {
		return openOperand(env, p, name)
	}
	src, err := openOperand(env, p, "./-")
	if src != nil {
		src.name = "-"
	}
	return src, err
}
