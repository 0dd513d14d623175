package jobs

import (
	"context"
	"io"

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

// Argv returns the Func of tpipe's --inputs form: words with $1..$n
// replaced by the paths of the job's tokens (argv.Substitute), run with
// $1 on stdin; its stdout is the stage's first output, or stdout when
// the stage has none. cfg is the runner's configuration for the command.
func Argv(words []string, stdout io.Writer, cfg runner.Config) Func {
	return func(ctx context.Context, j *Job) (int, error) {
		c := &Command{Argv: argv.Substitute(words, j.In), Stdin: j.In[0], Stdout: stdout, Stderr: j.Stderr, Config: cfg}
		if len(j.Out) > 0 {
			c.Stdout = j.Out[0]
		}
		return c.Run(ctx), nil
	}
}
