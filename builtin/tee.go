package builtin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "tee",
		Usage: "tee [-ai] [FILE]...",
		Help: "Copy the input to the output and to each FILE, truncated first (-a: appended " +
			"to); a FILE @name is a named edge of the graph. -i is accepted and ignored. A " +
			"FILE that cannot be written is reported and dropped (status 1). tee goes on " +
			"while the output or some edge is still read.",
		New: teeNew,
	})
}

func teeNew(env *Env, args []string) (*Cmd, error) {
	appendTo := false
	names, err := getopt{cmd: "tee", shorts: "ai"}.parse(args, func(c byte, _ string) error {
		if c == 'a' {
			appendTo = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	edges, err := env.edgeOperands("tee", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: true, Writes: edges, Effects: len(names) > len(edges), Fn: func(ctx context.Context, p *buffer.Ports) error {
		return teeRun(env, p, names, appendTo)
	}}, nil
}

// teeFile is one FILE being written; w is nil once it failed.
type teeFile struct {
	name string
	f    io.WriteCloser
	w    *bufio.Writer
}

func teeRun(env *Env, p *buffer.Ports, names []string, appendTo bool) (err error) {
	failed := false
	var files []*teeFile
	fail := func(tf *teeFile, e error) {
		warnFile(env, "tee", quote(tf.name), e)
		failed = true
		tf.w = nil
	}
	// Close every file however tee ends, so that what was read reaches the
	// files even when the reader of the output stopped first.
	defer func() {
		for _, tf := range files {
			if tf.w != nil {
				if e := tf.w.Flush(); e != nil {
					fail(tf, e)
				}
			}
			if e := tf.f.Close(); e != nil && tf.w != nil {
				fail(tf, e)
			}
		}
		if err == nil && failed {
			err = task.Exit(1)
		}
	}()
	// The ports: the named edges, then the output, which is last so that it
	// can take a record by Forward.
	var live []*buffer.Output
	for _, name := range names {
		if !env.isEdge(name) {
			continue
		}
		if o := edgeOut(p, name); o != nil {
			live = append(live, o)
		}
	}
	live = append(live, p.Out(0))
	for _, name := range names {
		if env.isEdge(name) && edgeOut(p, name) != nil {
			continue // an edge; '@a' quoted has no port and is a file
		}
		f, e := env.create(name, appendTo)
		if e != nil {
			warnFile(env, "tee", quote(name), e)
			failed = true
			continue
		}
		files = append(files, &teeFile{name: name, f: f, w: bufio.NewWriterSize(f, 64<<10)})
	}
	in := p.In(0)
	for {
		if in.Buffered() == 0 {
			// About to wait for input: let the files catch up, as a pipe
			// reader would see them do.
			for _, tf := range files {
				if tf.w != nil {
					if e := tf.w.Flush(); e != nil {
						fail(tf, e)
					}
				}
			}
		}
		// Pieces, not whole lines: tee copies bytes, and a line longer
		// than the record size goes to every output in its pieces.
		rec, more, e := in.ReadChunk()
		if e == io.EOF {
			return nil
		}
		if e != nil {
			return e
		}
		for _, tf := range files {
			if tf.w != nil {
				if _, e := tf.w.Write(rec); e != nil {
					fail(tf, e)
				}
			}
		}
		for k := 0; k < len(live); {
			if k == len(live)-1 {
				e = live[k].Forward(in)
			} else {
				e = live[k].WriteChunk(rec, more)
			}
			switch {
			case errors.Is(e, buffer.ErrReaderGone):
				// Nobody reads this one any more; the others go on.
				live = slices.Delete(live, k, k+1)
			case e != nil:
				return e
			default:
				k++
			}
		}
		if len(live) == 0 {
			return buffer.ErrReaderGone
		}
	}
}
