package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/sedlang"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "sed",
		Usage: "sed [-n] [-E|-r] [-e SCRIPT]... [SCRIPT] [FILE]...",
		Help: "Edit a stream of lines with a script of commands separated by ';' or " +
			"newlines: s/RE/REPL/[gpNI], y/SRC/DST/, p, d, q [CODE], Q [CODE], = and " +
			"{ ... } blocks, each with an optional address (N, $, /RE/, \\cREc, " +
			"FIRST~STEP) or range (A,B with B also +N or ~N; 0,/RE/), negated by !. " +
			"-n prints only what the script prints; -E uses extended regular expressions.",
		New: newSed,
	})
}

var sedLongs = []longOpt{
	{"quiet", 'n', false},
	{"silent", 'n', false},
	{"regexp-extended", 'E', false},
	{"expression", 'e', true},
}

func newSed(env *Env, args []string) (*Cmd, error) {
	var pieces []string
	quiet, ere := false, false
	operands, err := getopt{cmd: "sed", shorts: "nErsiuze:", longs: sedLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'n':
			quiet = true
		case 'E', 'r':
			ere = true
		case 'e':
			pieces = append(pieces, arg)
		case 's', 'i', 'z':
			// Separate files, editing in place and NUL-separated lines.
			return usagef("sed", "option -%c is not supported", c)
		case 'u':
			// Unbuffered: output flows a line at a time anyway when input
			// does.
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pieces == nil {
		if len(operands) == 0 {
			return nil, usagef("sed", "no script; usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...")
		}
		pieces = []string{operands[0]}
		operands = operands[1:]
	}
	sc, err := sedlang.Parse(pieces, sedlang.Options{Extended: ere, Quiet: quiet})
	if err != nil {
		return nil, usagef("sed", "%s", err)
	}
	reads, err := env.edgeOperands("sed", operands)
	if err != nil {
		return nil, err
	}
	c := &Cmd{Name: "sed", ReadsInput: readsInput(operands), Reads: reads}
	if len(operands) == 0 && !sc.Quits() {
		r := sedlang.NewRun(sc)
		c.Rec = &task.PerRecord{
			Start: func(task.Emit) error { r.Reset(); return nil },
			Each: func(rec []byte, emit task.Emit) error {
				return sedWarn(env, r.Line(rec, emit))
			},
			End: func(emit task.Emit) error { return sedEnd(env, r, emit) },
		}
		return c, nil
	}
	files := operands
	if len(files) == 0 {
		files = []string{"-"}
	}
	c.Fn = func(ctx context.Context, p *buffer.Ports) error {
		r := sedlang.NewRun(sc)
		emit := task.Emit(p.Out(0).Write)
		failed := false
		for _, name := range files {
			err := eachRecord(ctx, env, p, name, func(rec []byte) error {
				if err := sedWarn(env, r.Line(rec, emit)); err != nil {
					return err
				}
				if r.Done() {
					return errSedQuit
				}
				return nil
			})
			if err == errSedQuit {
				break
			}
			if fe, ok := err.(*fileError); ok {
				shown := fe.name
				if fe.atOpen {
					shown = "can't read " + shown
				}
				warnFile(env, "sed", shown, fe.err)
				failed = true
				continue
			}
			if err != nil {
				return err
			}
		}
		if err := sedEnd(env, r, emit); err != nil {
			return err // an error, or q's exit status
		}
		if failed {
			return task.Exit(2)
		}
		return nil
	}
	return c, nil
}

// errSedQuit stops the reading loop after q or Q.
var errSedQuit = errors.New("sed: quit")

// sedWarn prints a script error found while running (GNU's "no previous
// regular expression") and lets the run end normally: it has stopped, and
// its status says so.
func sedWarn(env *Env, err error) error {
	if err == nil {
		return nil // before errors.As, which would cost an allocation a line
	}
	var se *sedlang.Error
	if errors.As(err, &se) {
		fmt.Fprintf(env.stderr(), "sed: %s\n", se)
		return nil
	}
	return err
}

// sedEnd finishes a run and turns the status it asks for into an exit.
func sedEnd(env *Env, r *sedlang.Run, emit task.Emit) error {
	if err := sedWarn(env, r.End(emit)); err != nil {
		return err
	}
	if code := r.Status(); code != 0 {
		return task.Exit(code)
	}
	return nil
}
