package ext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

// KillDelay is how long a cancelled process group has between SIGTERM and
// SIGKILL.
const KillDelay = 500 * time.Millisecond

// Cmd is one external process and the two tasks that connect it to a
// pipeline. Its tasks are meant to run once each, in the same run (both
// must run: the output task is the one that waits for the process). A Cmd
// is safe for use by its two tasks at once; it is not reusable.
//
// The pipes between tpipe and the process are made and closed by the Cmd.
// The files of Options (Stdin, Stdout, an *os.File Stderr) stay the
// caller's: the Cmd never closes them, and the caller must keep them open
// until the run has returned.
type Cmd struct {
	o    Options
	once sync.Once
	err  error // why the process did not start; set by once

	// Set by once when the process started, then read-only.
	cmd    *exec.Cmd
	stdin  *os.File // write end of the stdin pipe; nil with Options.Stdin
	stdout *os.File // read end of the stdout pipe; nil with Options.Stdout
	stderr *os.File // read end of the stderr pipe; nil unless Stderr is a plain io.Writer

	pid    atomic.Int64
	copier sync.WaitGroup // the stderr copy; waited for by the output task
	killed atomic.Bool    // the group was sent SIGTERM by the output task's guard
	// exited is closed once the process has been reaped: the input task
	// then stops waiting for records nobody will read.
	exited chan struct{}
}

// New returns a Cmd for o. Nothing starts until one of its tasks runs.
func New(o Options) *Cmd { return &Cmd{o: o, exited: make(chan struct{})} }

// Pid returns the process id, which is also the id of its process group,
// or 0 if the process has not started (yet).
func (c *Cmd) Pid() int { return int(c.pid.Load()) }

// Input returns the input task: one input port, no output port. It copies
// the records of its input to the process's standard input and closes it
// at eof. If the process stops reading (it exited, or closed its input),
// the task stops reading too and returns nil, so the tasks upstream stop as
// they do before `head`. It returns nil at once if the process could not
// start; the output task reports why.
//
// Input returns nil if Options.Stdin is set: the command then has no input
// task.
func (c *Cmd) Input() task.Func {
	if c.o.Stdin != nil {
		return nil
	}
	return c.input
}

// Output returns the output task: no input port, and one output port unless
// Options.Stdout is set. It cuts the process's standard output into
// records, handing over what it has read whenever the pipe is empty so that
// a slow process's lines flow at once, and then waits for the process. It returns
// only once the process has been reaped.
//
// It returns nil if the process exited with status 0, and a *task.ExitError
// otherwise: the exit status n, or 128+s for a process killed by signal s.
// A process killed by SIGPIPE after the task's reader went away exited
// normally, as far as the pipeline goes (it is how `yes | head` ends), and
// gives nil. A process that could not start gives a *task.ExitError with
// status 127 (not found) or 126 and a message naming the command. When ctx
// is cancelled the task kills the process group and returns ctx's cause;
// when the task itself fails (a line longer than the record size) it kills
// the group too and returns its error.
func (c *Cmd) Output() task.Func { return c.output }

// start starts the process the first time it is called; every call returns
// the same error.
func (c *Cmd) start(ctx context.Context) error {
	c.once.Do(func() { c.err = c.startOnce(ctx) })
	return c.err
}

func (c *Cmd) startOnce(ctx context.Context) (err error) {
	o := c.o
	// The child's ends of the pipes are closed in any case once the child
	// has them, or once it is clear that it never will (a cancelled run, a
	// program not found): a bridge on the other end of one of its /dev/fd
	// pipes then sees eof or EPIPE instead of waiting for ever. Ours are
	// closed only if the process did not start.
	child := append([]*os.File(nil), o.ExtraFiles...)
	var ours []*os.File
	defer func() {
		for _, f := range child {
			f.Close()
		}
		if err != nil {
			for _, f := range ours {
				f.Close()
			}
		}
	}()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if len(o.Args) == 0 {
		return errors.New("ext: no command")
	}
	name := o.Args[0]
	path := o.Path
	if path == "" {
		if path, err = LookPath(name); err != nil {
			return err
		}
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        o.Args,
		Dir:         o.Dir,
		Env:         o.Env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		ExtraFiles:  o.ExtraFiles,
	}
	pipe := func(what string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s pipe: %w", name, what, err)
		}
		return r, w, nil
	}

	var stdin, stdout, stderr *os.File
	if o.Stdin != nil {
		cmd.Stdin = o.Stdin
	} else {
		r, w, err := pipe("stdin")
		if err != nil {
			return err
		}
		cmd.Stdin, stdin = r, w
		child, ours = append(child, r), append(ours, w)
	}
	if o.Stdout != nil {
		cmd.Stdout = o.Stdout
	} else {
		r, w, err := pipe("stdout")
		if err != nil {
			return err
		}
		cmd.Stdout, stdout = w, r
		child, ours = append(child, w), append(ours, r)
	}
	switch f, ok := o.Stderr.(*os.File); {
	case o.Stderr == nil:
		// exec gives the process /dev/null.
	case ok:
		cmd.Stderr = f
	default:
		r, w, err := pipe("stderr")
		if err != nil {
			return err
		}
		cmd.Stderr, stderr = w, r
		child, ours = append(child, w), append(ours, r)
	}

	// Every Stdin, Stdout and Stderr is nil or an *os.File, so exec starts
	// no copying goroutine of its own.
	if err := startProcess(cmd); err != nil {
		return commandError(name, err)
	}
	c.cmd, c.stdin, c.stdout, c.stderr = cmd, stdin, stdout, stderr
	c.pid.Store(int64(cmd.Process.Pid))
	if stderr != nil {
		c.copier.Go(func() {
			defer stderr.Close()
			if _, err := io.Copy(o.Stderr, stderr); err != nil {
				// Keep draining: a process blocked on a full stderr
				// pipe would never end.
				io.Copy(io.Discard, stderr)
			}
		})
	}
	return nil
}

// input is the input task.
func (c *Cmd) input(ctx context.Context, p *buffer.Ports) error {
	if c.start(ctx) != nil {
		return nil // the output task reports it
	}
	w := c.stdin
	defer w.Close()
	// Closing the pipe is what ends a write blocked on a process that
	// does not read.
	stop := afterFunc(ctx, func() { w.Close() })
	defer stop()
	// A process that has exited reads nothing more: the wait for the
	// next record ends then, not when it comes (which, for a program
	// that never reads tpipe's stdin at a terminal, is the next line the
	// user types).
	fed := make(chan struct{})
	defer close(fed)
	go func() {
		select {
		case <-c.exited:
			p.ReaderGone()
		case <-fed:
		}
	}()

	err := feed(p, w, c.o.Args[0])
	switch {
	case errors.Is(err, os.ErrClosed) && ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, syscall.EPIPE), errors.Is(err, os.ErrClosed), errors.Is(err, buffer.ErrReaderGone):
		// The process stopped reading: so do we.
		return nil
	}
	return err
}

// output is the output task.
func (c *Cmd) output(ctx context.Context, p *buffer.Ports) error {
	if err := c.start(ctx); err != nil {
		return err
	}

	// The guard kills the process group when ctx is cancelled or abort is
	// closed, until done is closed: once the process is reaped and its
	// stderr drained.
	abort, done := make(chan struct{}), make(chan struct{})
	var guard sync.WaitGroup
	guard.Go(func() { c.guard(ctx, abort, done) })

	var err error
	if c.stdout != nil {
		err = drain(p, c.stdout, c.o.Args[0])
	}
	gone := errors.Is(err, buffer.ErrReaderGone)
	// A failure of our own, not an effect of the guard closing stdout.
	failed := err != nil && !gone && !c.killed.Load()
	switch {
	case gone:
		// The process learns it too, by EPIPE or SIGPIPE at its next
		// write, as it would in a shell pipeline.
		c.stdout.Close()
	case failed:
		close(abort)
	}
	// The process may live on after closing its output: hand over its
	// last records before waiting.
	p.Flush()
	// Waiting for the process is a wait on the program, and the pool must
	// see it as one: a task blocked in wait(2) looks busy to deadlock
	// detection, and as a bridge of the program it would make the program
	// look able to act for ever. A command whose output goes straight to
	// a file waits here from the start (`tee @a @b > /dev/null`).
	p.WaitOutside(buffer.OpRead)
	werr := c.reap(done, &guard)
	p.Moved()

	switch {
	case failed:
		return err
	case c.killed.Load():
		// Only a cancelled ctx makes the guard kill when we did not fail.
		return context.Cause(ctx)
	}
	return c.exitStatus(werr, gone)
}

// reap waits for the process to exit and its stderr to be copied, stops
// the guard (closing done, then waiting for it), forgets the process and
// closes stdout. It returns Wait's error.
func (c *Cmd) reap(done chan struct{}, guard *sync.WaitGroup) error {
	werr := c.cmd.Wait()
	close(c.exited)
	c.copier.Wait()
	close(done)
	guard.Wait()
	forget(c.Pid())
	if c.stdout != nil {
		c.stdout.Close()
	}
	return werr
}

// exitStatus turns how the reaped process ended into the task's error: nil
// for status 0, a *task.ExitError for any other (128+n for signal n), and
// nil for SIGPIPE when its reader was gone (sigpipeOK), as in a shell.
func (c *Cmd) exitStatus(werr error, sigpipeOK bool) error {
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return fmt.Errorf("wait for %s: %w", c.o.Args[0], werr)
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		if sigpipeOK && ws.Signal() == syscall.SIGPIPE {
			return nil
		}
		return task.Exit(128 + int(ws.Signal()))
	case ws.ExitStatus() != 0:
		return task.Exit(ws.ExitStatus())
	}
	return nil
}

// guard runs in a goroutine of the output task. Once ctx is cancelled or
// abort closed, it sends SIGTERM to the process group and closes the read
// ends of the pipes, so that the output task's reads end; if the group is
// not empty after KillDelay, it sends SIGKILL. It returns at once when
// done is closed first, and otherwise once the group is empty or killed.
func (c *Cmd) guard(ctx context.Context, abort, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	case <-abort:
	}
	c.killed.Store(true)
	c.signal(syscall.SIGTERM)
	c.signal(syscall.SIGCONT) // a stopped process acts on SIGTERM only once continued
	if c.stdout != nil {
		c.stdout.Close()
	}
	if c.stderr != nil {
		c.stderr.Close()
	}
	t := time.NewTimer(KillDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
		// The process is reaped, but what it started may still be
		// there, in its group.
		if !c.groupAlive() {
			return
		}
		<-t.C
	}
	c.signal(syscall.SIGKILL)
}

// signal sends sig to the process group.
func (c *Cmd) signal(sig syscall.Signal) {
	// kill(0, sig) would signal our own group.
	if pid := c.Pid(); pid > 0 {
		syscall.Kill(-pid, sig)
	}
}

// groupAlive reports whether the process group has a member (a zombie
// counts).
func (c *Cmd) groupAlive() bool {
	pid := c.Pid()
	return pid > 0 && syscall.Kill(-pid, 0) == nil
}

// afterFunc is context.AfterFunc with an owner: the stop it returns keeps f
// from running or, if f has started, waits for it to return.
func afterFunc(ctx context.Context, f func()) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	cancel := context.AfterFunc(ctx, func() {
		defer wg.Done()
		f()
	})
	return func() {
		if cancel() {
			wg.Done()
		}
		wg.Wait()
	}
}
