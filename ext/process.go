package ext

import (
	"context"
	"io"
	"sync"
)

// Process is a program whose standard input or output a task reads or
// writes itself, as bytes, instead of through the two tasks of a Cmd: a
// builtin that hands a stream to a program (decode reading what ffmpeg
// writes, encode feeding ffmpeg). It runs as a Cmd's process does: in a
// process group of its own, killed if tpipe dies (Linux), and its group
// killed when the run's context is cancelled.
//
// A Process belongs to the task that started it, which must call Wait.
type Process struct {
	// Stdin is the write end of the program's standard input, nil when
	// Options.Stdin was set. Wait closes it.
	Stdin io.WriteCloser
	// Stdout is the read end of its standard output, nil when
	// Options.Stdout was set. It is closed by Wait, and early when ctx is
	// cancelled, which ends a read in progress.
	Stdout io.ReadCloser

	c           *Cmd
	ctx         context.Context
	abort, done chan struct{}
	guard       sync.WaitGroup
}

// Start starts the program of o. The error of a program that cannot start
// is a *task.ExitError with a shell's status (127, 126), as for a Cmd.
func Start(ctx context.Context, o Options) (*Process, error) {
	c := New(o)
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	p := &Process{c: c, ctx: ctx, abort: make(chan struct{}), done: make(chan struct{})}
	if c.stdin != nil {
		p.Stdin = c.stdin
	}
	if c.stdout != nil {
		p.Stdout = c.stdout
	}
	p.guard.Go(func() { c.guard(ctx, p.abort, p.done) })
	return p, nil
}

// Wait closes Stdin, waits for the program to exit and reaps it, and then
// closes Stdout. It returns nil for status 0, a *task.ExitError for any
// other (128+n for a signal n), and ctx's cause when the run was cancelled.
// With kill set, the caller has given up on the program (its reader went
// away, or it failed): the group gets SIGTERM, then SIGKILL, and Wait
// returns nil, the caller having its own error to report.
func (p *Process) Wait(kill bool) error {
	c := p.c
	if kill {
		close(p.abort)
	}
	if c.stdin != nil {
		c.stdin.Close()
	}
	werr := c.reap(p.done, &p.guard)
	switch {
	case kill:
		return nil
	case c.killed.Load():
		return context.Cause(p.ctx)
	}
	return c.exitStatus(werr, false)
}
