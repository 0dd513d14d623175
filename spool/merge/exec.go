package merge

import (
	"context"
	"io"
	"sync"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/shell"
)

// Command is one command to run for a job: argv words, never a shell's
// text, so that a file name in a word stays one argument whatever it
// holds. It runs as a command of tpipe's language: a builtin in-process
// (no process per job), any other program from PATH.
type Command struct {
	Argv []string
	// Stdin and Stdout are files the command reads and writes ("": none).
	Stdin, Stdout string
	// Out receives the output when Stdout is ""; nil discards it.
	Out io.Writer
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
	if c.Stdout != "" {
		cmd.Redirs = append(cmd.Redirs, &shell.Redir{Op: shell.RedirOut, Target: shell.Word{Value: c.Stdout, Quoted: true}})
	}
	cfg := c.Config
	cfg.Stdin, cfg.Stdout, cfg.Stderr = nil, c.Out, c.Stderr
	r := runner.New(cfg)
	defer r.Close()
	return r.RunPipeline(ctx, &shell.Pipeline{Cmds: []*shell.Cmd{cmd}})
}

// Tail keeps the last Max bytes written to it: a failed job's stderr,
// kept beside it without holding a runaway log in memory. It is safe for
// concurrent use.
type Tail struct {
	Max int
	mu  sync.Mutex
	b   []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.Max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}
