package builtin

import (
	"bytes"
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
			"stays at the end. Bytes, not characters: tpipe's builtins run in the C locale. " +
			"As in util-linux rev, a NUL ends what is read of a line, which goes on after " +
			"the next newline.",
		New: revNew,
	})
}

func revNew(env *Env, args []string) (*Cmd, error) {
	names, err := getopt{cmd: "rev"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		var r revLines
		rec := task.PerRecord{
			Start: func(task.Emit) error {
				r = revLines{}
				return nil
			},
			Each: func(rec []byte, emit task.Emit) error {
				if out, ok := r.line(rec); ok {
					return emit(out)
				}
				return nil
			},
			End: func(emit task.Emit) error {
				if out, ok := r.end(); ok {
					return emit(out)
				}
				return nil
			},
		}
		return &Cmd{ReadsInput: true, Rec: &rec}, nil
	}
	reads, err := env.edgeOperands("rev", names)
	if err != nil {
		return nil, err
	}
	// As in util-linux rev, "-" is a file name like any other.
	return &Cmd{Reads: reads, Fn: revFiles(env, names)}, nil
}

// revLines reverses the lines of one input as util-linux rev does. It
// reads a line as a C string: a NUL ends the text of the read, and the
// line goes on with the next read, so "ab\0cd\nxy\n" is the one line
// "abxy". A last line without '\n' is written without one. The zero value
// is ready for an input.
type revLines struct {
	held    []byte // the line so far, when a NUL cut a read short
	scratch []byte
}

// line takes the next record of the input and returns the line to write,
// valid until the next call, if the record ends one.
func (r *revLines) line(rec []byte) ([]byte, bool) {
	if i := bytes.IndexByte(rec, 0); i >= 0 {
		r.held = append(r.held, rec[:i]...)
		return nil, false
	}
	text := record.TrimEOL(rec)
	if len(text) == len(rec) {
		// The input's last line, without '\n': its end says more.
		r.held = append(r.held, text...)
		return nil, false
	}
	if len(r.held) > 0 {
		r.held = append(r.held, text...)
		text = r.held
	}
	r.scratch = revAppend(r.scratch[:0], text)
	r.scratch = append(r.scratch, '\n')
	r.held = r.held[:0]
	return r.scratch, true
}

// end returns what is left to write at the end of the input: a last line
// without its '\n'.
func (r *revLines) end() ([]byte, bool) {
	if len(r.held) == 0 {
		return nil, false
	}
	r.scratch = revAppend(r.scratch[:0], r.held)
	r.held = r.held[:0]
	return r.scratch, true
}

// revAppend appends line, reversed, to dst.
func revAppend(dst, line []byte) []byte {
	for i := len(line) - 1; i >= 0; i-- {
		dst = append(dst, line[i])
	}
	return dst
}

func revFiles(env *Env, names []string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := newJoiner(p)
		failed := false
		for _, name := range names {
			src, err := revOpen(env, p, name)
			if err != nil {
				fmt.Fprintf(env.stderr(), "rev: cannot open %s: %s\n", name, errText(err))
				failed = true
				continue
			}
			var r revLines
			for {
				var rec []byte
				rec, err = src.Read()
				if err != nil {
					break
				}
				if line, ok := r.line(rec); ok {
					if err = out.write(line); err != nil {
						break
					}
				}
			}
			src.Close()
			if line, ok := r.end(); ok && (err == io.EOF || isFileErr(err)) {
				if werr := out.write(line); werr != nil {
					return werr
				}
			}
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

func isFileErr(err error) bool {
	var fe *fileError
	return errors.As(err, &fe)
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
