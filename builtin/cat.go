package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "cat",
		Usage: "cat [-AbeEnstTuv] [FILE]...",
		Help: "Concatenate the FILEs (\"-\" is the input, @name a named edge) to the " +
			"output, each to its end; with no FILE, copy the input. A FILE that cannot be read is reported and skipped (status 1). " +
			"-n numbers the lines, -b the non-empty ones; -s squeezes runs of empty lines into one; -E ends each line " +
			"with $, -T shows tabs as ^I, -v other control bytes as ^X and M-X; -A is -vET, -e is -vE, -t is -vT.",
		New:        catNew,
		CopiesFile: true,
	})
}

var catLongs = []longOpt{
	{name: "show-all", short: 'A'},
	{name: "number-nonblank", short: 'b'},
	{name: "show-ends", short: 'E'},
	{name: "number", short: 'n'},
	{name: "squeeze-blank", short: 's'},
	{name: "show-tabs", short: 'T'},
	{name: "show-nonprinting", short: 'v'},
}

func catNew(env *Env, args []string) (*Cmd, error) {
	var o catOptions
	names, err := getopt{cmd: "cat", shorts: "AbeEnstTuv", longs: catLongs}.parse(args, func(c byte, _ string) error {
		switch c {
		case 'A':
			o.nonprinting, o.ends, o.tabs = true, true, true
		case 'b':
			o.number, o.nonblank = true, true
		case 'e':
			o.nonprinting, o.ends = true, true
		case 'E':
			o.ends = true
		case 'n':
			o.number = true
		case 's':
			o.squeeze = true
		case 't':
			o.nonprinting, o.tabs = true, true
		case 'T':
			o.tabs = true
		case 'v':
			o.nonprinting = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o != (catOptions{}) {
		reads, err := env.edgeOperands("cat", names)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			names = []string{"-"}
		}
		return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: o.run(env, names)}, nil
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
			case name == "-" && stdinIsOutput(env):
				err = &fileError{name: name, err: errInputIsOutput}
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

// errInputIsOutput is GNU cat's word for cat f >> f.
var errInputIsOutput = errors.New("input file is output file")

// catIntoItself reports whether in, a file cat reads, still holding bytes,
// is the one the command's output is redirected to (cat f >> f): copying
// it would append to it what it reads, and so on until the disk is full.
// GNU cat refuses it the same way.
func catIntoItself(env *Env, in os.FileInfo) bool {
	if env == nil || env.Stdout == nil || !in.Mode().IsRegular() || in.Size() == 0 {
		return false
	}
	out, err := env.Stdout.Stat()
	return err == nil && os.SameFile(in, out)
}

// stdinIsOutput is catIntoItself for cat's standard input (cat - < f >> f).
func stdinIsOutput(env *Env) bool {
	if env == nil || env.StdinFile == nil {
		return false
	}
	fi, ok := env.StdinFile()
	return ok && catIntoItself(env, fi)
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
	if f, ok := rc.(*os.File); ok {
		if in, err := f.Stat(); err == nil && catIntoItself(env, in) {
			return &fileError{name: name, err: errInputIsOutput}
		}
	}
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

// catOptions are cat's options that change what it writes. Under any of
// them cat works a line at a time, and holds each line whole.
type catOptions struct {
	number, nonblank bool // -n, -b
	squeeze          bool // -s
	ends, tabs       bool // -E, -T
	nonprinting      bool // -v
}

// catLines is the state of one run of cat with options. As in GNU cat,
// the operands are one stream: a file's last line without '\n' goes on
// in the next, with no new number.
type catLines struct {
	catOptions
	n         int
	mid       bool // the last line written lacked its '\n'
	prevBlank bool
	buf       []byte
}

func (o catOptions) run(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		c := &catLines{catOptions: o}
		out := newJoiner(p)
		failed := false
		for _, name := range names {
			err := eachRecord(ctx, env, p, name, func(rec []byte) error {
				b, keep := c.line(rec)
				if !keep {
					return nil
				}
				return out.write(b)
			})
			var fe *fileError
			switch {
			case errors.As(err, &fe):
				warnFile(env, "cat", quote(name), fe.err)
				failed = true
			case err != nil:
				return err
			}
		}
		if failed {
			return task.Exit(1)
		}
		return nil
	}
}

// line returns what cat writes for rec, a line or the end of one that
// went on from the previous operand; keep is false for a line that -s
// drops. The result is valid until the next call.
func (c *catLines) line(rec []byte) (out []byte, keep bool) {
	text := rec
	hasNL := len(text) > 0 && text[len(text)-1] == '\n'
	if hasNL {
		text = text[:len(text)-1]
	}
	b := c.buf[:0]
	if !c.mid {
		blank := len(text) == 0
		if c.squeeze {
			if blank && c.prevBlank {
				return nil, false
			}
			c.prevBlank = blank
		}
		if c.number && !(c.nonblank && blank) {
			c.n++
			b = fmt.Appendf(b, "%6d\t", c.n)
		}
	}
	for _, ch := range text {
		b = c.show(b, ch)
	}
	c.mid = !hasNL
	if hasNL {
		if c.ends {
			b = append(b, '$')
		}
		b = append(b, '\n')
	}
	c.buf = b
	return b, true
}

// show appends byte ch as -v and -T show it.
func (c *catLines) show(b []byte, ch byte) []byte {
	switch {
	case ch == '\t':
		if c.tabs {
			return append(b, '^', 'I')
		}
		return append(b, ch)
	case !c.nonprinting:
		return append(b, ch)
	case ch >= 128:
		b = append(b, 'M', '-')
		ch -= 128
		if ch == '\t' {
			return append(b, '^', 'I')
		}
	}
	switch {
	case ch < 32:
		return append(b, '^', ch+64)
	case ch == 127:
		return append(b, '^', '?')
	}
	return append(b, ch)
}
