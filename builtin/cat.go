package builtin

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "cat",
		Usage: "cat [FILE]...",
		Help: "Concatenate the FILEs (\"-\" is the input) to the output; with no FILE, " +
			"copy the input. A FILE that cannot be read is reported and skipped (status 1).",
		New: catNew,
	})
}

func catNew(env *Env, args []string) (*Cmd, error) {
	names, err := getopt{cmd: "cat"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(names, func(n string) bool { return n != "-" }) {
		// Plain cat (or cat -) is COPY: a filter that keeps everything, so lines pass
		// without a copy and the fused policy can drop it from a chain.
		r := task.Copy()
		return &Cmd{ReadsInput: true, Rec: &r}, nil
	}
	return &Cmd{ReadsInput: readsInput(names), Fn: catFiles(env, names)}, nil
}

func catFiles(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Proc) error {
		out := newJoiner(p)
		failed := false
		for _, name := range names {
			err := catOne(env, p, out, name)
			var rerr *fileError
			switch {
			case errors.As(err, &rerr):
				warnFile(env, "cat", quote(name), rerr.err)
				failed = true
			case err != nil:
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

// catOne copies one operand to out. A file that cannot be opened or read
// is a *fileError.
func catOne(env *Env, p *buffer.Proc, out *joiner, name string) error {
	src, err := openOperand(env, p, name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer src.Close()
	in := src.Port()
	for {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
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
