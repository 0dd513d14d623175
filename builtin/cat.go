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
	names, err := filesGetopt{cmd: "cat"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(names, func(n string) bool { return n != "-" }) {
		// Plain cat (or cat -) is COPY: a filter that keeps everything, so lines pass
		// without a copy and the fused policy can drop it from a chain.
		r := task.Copy()
		return &Cmd{ReadsInput: true, Rec: &r}, nil
	}
	return &Cmd{ReadsInput: filesReadsInput(names), Fn: catFiles(env, names)}, nil
}

func catFiles(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Proc) error {
		out := filesNewJoin(p)
		failed := false
		for _, name := range names {
			err := catOne(env, p, out, name)
			var rerr *filesReadError
			switch {
			case errors.As(err, &rerr):
				filesWarn(env, "cat", name, rerr.Err)
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
// is a *filesReadError.
func catOne(env *Env, p *buffer.Proc, out *filesJoin, name string) error {
	src, err := filesOpen(env, p, name)
	if err != nil {
		return &filesReadError{Name: name, Err: err}
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
