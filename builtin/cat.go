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
		Help: "Concatenate the FILEs (\"-\" is the input, @name a named edge) to the " +
			"output, each to its end; with no FILE, copy the input. A FILE that cannot be read is reported and skipped (status 1).",
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
	reads, err := env.edgeOperands("cat", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: catFiles(env, names)}, nil
}

func catFiles(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		c := &catRun{out: newJoiner(p)}
		failed := false
		for _, name := range names {
			var err error
			switch {
			case name == "-":
				err = c.port(p.In(0))
			case env.isEdge(name) && edgeIn(p, name) != nil:
				err = c.port(edgeIn(p, name))
			default:
				// A file; '@a' quoted is a file name, not an edge.
				err = c.file(env, name)
			}
			var rerr *fileError
			switch {
			case errors.As(err, &rerr):
				warnFile(env, "cat", quote(name), rerr.err)
				failed = true
			case err != nil:
				return err
			}
		}
		if err := c.out.flush(); err != nil {
			return err
		}
		if failed {
			return task.Exit(1)
		}
		return nil
	}
}

// catRun is the state of one run of cat with FILE operands.
//
// GNU cat writes bytes, so the last line of a file without '\n' runs into
// what follows. The output port does that joining itself: the bytes that
// ScanFrom leaves after the last '\n' of a file are an unfinished record,
// which the next operand's bytes go on with (across buffers, as a chain,
// if the port hands them over meanwhile), and the end of the output ends.
// cat never holds a line whole: files are read straight into the output's
// buffers and ports are copied piece by piece, so no line is too long.
type catRun struct {
	out *joiner
}

// file copies one FILE operand to the output: read straight into the
// output's buffers and cut into lines in place, no copy in between. A file
// that cannot be opened or read is a *fileError.
func (c *catRun) file(env *Env, name string) error {
	rc, err := env.open(name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer rc.Close()
	r := &catReader{r: rc}
	err = c.out.out.ScanFrom(r, '\n')
	if err != nil && r.err != nil && err == r.err {
		return &fileError{name: name, err: err}
	}
	return err
}

// port copies an input port ("-" or a named edge) piece by piece, moving
// buffers without a copy where it can (see buffer.Output.Forward); its
// last line, if it lacks '\n', stays open for the next operand.
func (c *catRun) port(in *buffer.Input) error {
	for {
		piece, _, err := in.ReadChunk()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := c.out.forward(in, piece); err != nil {
			return err
		}
	}
}

// catReader is what ScanFrom reads a file through. It remembers the read
// error, to tell a file that fails from a port that fails.
type catReader struct {
	r   io.Reader
	err error
}

func (r *catReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}
