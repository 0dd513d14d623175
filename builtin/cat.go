package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
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
		c := &catRun{out: newJoiner(p), hold: slices.ContainsFunc(names, func(n string) bool { return n == "-" || env.isEdge(n) })}
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
// what follows. Between files the output port does that joining itself:
// the bytes that ScanFrom leaves after the last '\n' of a file stay
// pending in the port's buffer and the next ScanFrom continues them (they
// become a record of their own only at the end). A port ("-" or a named
// edge) is another matter: a read of it that waits hands the pending buffer
// over, and with it such a line, cut from its end. So when a port is an
// operand (hold), the start of a line is never left in the port: files are
// read through a catHold, which keeps it back, and lines are joined in the
// joiner's carry, as the other tools that concatenate do.
type catRun struct {
	out  *joiner
	hold bool
}

// file copies one FILE operand to the output: read straight into the
// output's buffers and cut into lines in place, no copy in between. A file
// that cannot be opened or read is a *fileError, and so is a line over the
// record size: the lines before it are written, the rest of the file is
// not.
func (c *catRun) file(env *Env, name string) error {
	rc, err := env.open(name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer rc.Close()
	r := &catReader{r: rc}
	var h *catHold
	if c.hold {
		h = &catHold{r: rc, max: c.out.max, tail: c.out.carry}
		r.r = h
		defer func() { c.out.carry = h.tail }()
	}
	err = c.out.out.ScanFrom(r, '\n')
	switch {
	case err == nil:
		return nil
	case r.err != nil && err == r.err:
		return &fileError{name: name, err: err}
	case errors.Is(err, record.ErrTooLarge):
		// ScanFrom dropped the start of the line, and nothing of it is
		// left pending in the output.
		err = catExactSize(err, r)
		if h != nil {
			h.tail = h.tail[:0]
		}
		return &fileError{name: name, err: err}
	}
	return err
}

// port copies an input port ("-" or a named edge), forwarding lines without
// a copy when nothing is held back.
func (c *catRun) port(in *buffer.Input) error {
	for {
		rec, err := in.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := c.out.forward(in, rec); err != nil {
			return err
		}
	}
}

// catReader is what ScanFrom reads a file through. It remembers the last
// byte read and the read error, to tell a file that fails from a port that
// fails.
type catReader struct {
	r    io.Reader
	last byte
	err  error
}

func (r *catReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.last = p[n-1]
	}
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// catHold reads a file and hands over whole lines only: the bytes after the
// last '\n' are kept back in tail until their line's end is read, and at
// the end of the file they are what it ends with. tail starts with the
// line the previous operands left open. Most bytes are read straight into
// the caller's buffer; only the start of a line is copied. A line longer
// than max is handed over in pieces (ScanFrom then reports it).
type catHold struct {
	r    io.Reader
	max  int
	tail []byte
	eof  bool
	err  error
}

func (h *catHold) Read(p []byte) (int, error) {
	for {
		whole := bytes.LastIndexByte(h.tail, '\n') + 1
		if whole == 0 && len(h.tail) > h.max {
			whole = len(h.tail) // too long anyway
		}
		if whole > 0 {
			// Whole lines (or part of the first): hand over what fits.
			n := copy(p, h.tail[:whole])
			h.tail = h.tail[:copy(h.tail, h.tail[n:])]
			return n, nil
		}
		// tail is the start of a line.
		switch {
		case h.eof:
			return 0, io.EOF
		case h.err != nil:
			return 0, h.err
		case len(p) == 0:
			return 0, nil
		}
		if len(h.tail) < len(p) {
			// Read on after the start of the line, into p.
			k := copy(p, h.tail)
			m, err := h.r.Read(p[k:])
			h.note(err)
			if last := bytes.LastIndexByte(p[k:k+m], '\n'); last >= 0 {
				end := k + last + 1
				h.tail = append(h.tail[:0], p[end:k+m]...)
				return end, nil
			}
			h.tail = append(h.tail, p[k:k+m]...)
			continue
		}
		// The start of the line fills p: read on into tail to find its end.
		h.tail = slices.Grow(h.tail, 32<<10)
		m, err := h.r.Read(h.tail[len(h.tail):cap(h.tail)])
		h.tail = h.tail[:len(h.tail)+m]
		h.note(err)
	}
}

func (h *catHold) note(err error) {
	switch {
	case err == io.EOF:
		h.eof = true
	case err != nil:
		h.err = err
	}
}

// catExactSize gives the exact size of a line over the record size, as
// record.Scanner reports it: ScanFrom stops at the first byte past a full
// buffer, so the rest of the line is read here, up to a bound (beyond which
// the size stays "at least").
func catExactSize(err error, r *catReader) error {
	var tl *record.TooLargeError
	if !errors.As(err, &tl) || !tl.AtLeast {
		return err
	}
	exact := *tl
	if r.last == '\n' {
		// The byte past the full buffer ended the line.
		exact.AtLeast = false
		return &exact
	}
	buf := make([]byte, 32<<10)
	for limit := max(tl.Max+1, 32<<10); exact.Size < limit; {
		n, rerr := r.Read(buf[:min(len(buf), limit-exact.Size)])
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			exact.Size += i + 1
			exact.AtLeast = false
			return &exact
		}
		exact.Size += n
		if rerr == io.EOF {
			exact.AtLeast = false
			return &exact
		}
		if rerr != nil {
			break
		}
	}
	return &exact
}
