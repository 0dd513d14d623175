// Package stages makes the Funcs of the job engine's stages that run
// tpipe's commands: a script per job (Script: tpipe pmjq's FILTER), argv
// words with the job's paths (Argv, Command: the and-merge's --cmd, pmjq
// 1.0's templates), a pipeline served as a net of stages (NewNet: tpipe
// serve). It stands above both the engine (package spool/jobs), which
// knows places and Funcs only, and the runner.
package stages

import (
	"context"
	"io"

	"github.com/tpipe/tpipe/spool/jobs"

	"github.com/tpipe/tpipe/internal/argv"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/shell"
)

// Command is one command to run for a job: argv words, never a shell's
// text, so that a file name in a word stays one argument whatever it
// holds. It runs as a command of tpipe's language: a builtin in-process
// (no process per job), any other program from PATH.
type Command struct {
	Argv []string
	// Stdin is the file the command reads ("": none).
	Stdin string
	// Stdout receives its output; nil discards it.
	Stdout io.Writer
	// Stderr receives the command's messages and tpipe's about it (a
	// command not found); nil discards them.
	Stderr io.Writer
	// Config is the runner's configuration (policy, sizes); its stdio is
	// replaced by the fields above.
	Config runner.Config
}

// Run runs the command and returns its exit status as bash reports it
// (127: not found; 128+n: killed by signal n).
func (c *Command) Run(ctx context.Context) int {
	words := make([]shell.Word, len(c.Argv))
	for i, a := range c.Argv {
		// Quoted: a word like @a is a file name here, not a named edge.
		words[i] = shell.Word{Value: a, Quoted: true}
	}
	cmd := &shell.Cmd{Args: words}
	if c.Stdin != "" {
		cmd.Redirs = append(cmd.Redirs, &shell.Redir{Op: shell.RedirIn, Target: shell.Word{Value: c.Stdin, Quoted: true}})
	}
	cfg := c.Config
	cfg.Stdin, cfg.Stdout, cfg.Stderr = nil, c.Stdout, c.Stderr
	r := runner.New(cfg)
	defer r.Close()
	return r.RunPipeline(ctx, &shell.Pipeline{Cmds: []*shell.Cmd{cmd}})
}

// Argv returns the jobs.Func of tpipe's --inputs form: words with $1..$n
// replaced by the paths of the job's tokens (argv.Substitute), run with
// $1 on stdin; its stdout is the stage's first output, or stdout when
// the stage has none. cfg is the runner's configuration for the command.
func Argv(words []string, stdout io.Writer, cfg runner.Config) jobs.Func {
	return func(ctx context.Context, j *jobs.Job) (int, error) {
		c := &Command{Argv: argv.Substitute(words, j.In), Stdin: j.In[0], Stdout: stdout, Stderr: j.Stderr, Config: cfg}
		if len(j.Out) > 0 {
			c.Stdout = j.Out[0]
		}
		return c.Run(ctx), nil
	}
}
