package runner

import (
	"context"
	"io"
	"os"

	"github.com/tpipe/tpipe/shell"
)

// Prepared is a script parsed and checked once, to run many times, each
// run with standard input, output and error of its own: tpipe pmjq runs
// its filter once per job. Parsing, the edge rules and the builtins'
// usage errors are done by Prepare; a run makes its builtins again from
// the syntax tree (a builtin keeps the state of one run, so two runs never
// share one), builds its graphs and plans them.
//
// A Prepared is safe for concurrent use: each Run has a Runner of its own
// and only reads what Prepare made.
type Prepared struct {
	src string
	ast *shell.Script
	cfg Config
}

// Prepare parses and compiles src under cfg (whose stdio Run replaces). A
// script that does not compile is an error for Runner.Report: a syntax
// error, a broken edge rule, a bad option of a builtin with edges.
func Prepare(src string, cfg Config) (*Prepared, error) {
	r := New(Config{Getenv: cfg.Getenv, NoFallback: cfg.NoFallback, SortMemory: cfg.SortMemory, TempDir: cfg.TempDir, Dir: cfg.Dir})
	defer r.Close()
	s, err := r.Parse(src)
	if err != nil {
		return nil, err
	}
	if _, err := r.precompile(s); err != nil {
		return nil, err
	}
	return &Prepared{src: src, ast: s, cfg: cfg}, nil
}

// RunFile is Run with the file at path as stdin; an error is a file that
// cannot be opened, when the status means nothing.
func (p *Prepared) RunFile(ctx context.Context, path string, stdout, stderr io.Writer) (int, error) {
	in, err := os.Open(path)
	if err != nil {
		return -1, err
	}
	defer in.Close()
	return p.Run(ctx, in, stdout, stderr), nil
}

// Run runs the script with stdin (nil: none), stdout and stderr, and
// returns its exit status as RunScript does. A regular file as stdin is
// read in the sources' own calls, with no goroutine in between (see
// Pump).
func (p *Prepared) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	c := p.cfg
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	r := New(c)
	defer r.Close()
	prog, err := r.precompile(p.ast)
	if err != nil {
		return r.reportCompile(p.src, err)
	}
	prog.src = p.src
	return r.runProgram(ctx, prog)
}
