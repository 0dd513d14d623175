package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/runner"
)

// signalGrace is how long a run has to end after a signal before tpipe
// leaves without it. It leaves room for package ext's SIGTERM-then-SIGKILL
// (ext.KillDelay) and still ends within a second.
const signalGrace = 750 * time.Millisecond

// exiter ends tpipe on a signal as a shell's command ends: with status
// 128+n and no child process left.
//
// The first signal cancels the run with a *runner.SignalError as the cause:
// tasks stop, package ext sends SIGTERM then SIGKILL to the process groups,
// files are closed, and the status comes back through the runner. But a
// run blocked in a system call that no cancellation ends (open of a FIFO
// with no writer, write to a pipe nobody reads, the interactive shell's
// read of the terminal) would never notice. So if the run has not handed
// back within signalGrace, or a second signal comes, the exiter sends
// SIGKILL to every child's group, runs the cleanups (the terminal's mode)
// and exits with 128+n itself.
//
// An exiter is owned by the run that made it: stop ends its goroutine.
type exiter struct {
	sigs   chan os.Signal
	cancel context.CancelCauseFunc
	quit   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	cleanups []func()
}

// exitOn returns a context cancelled by the first of sigs, and the exiter
// that watches for them.
func exitOn(ctx context.Context, sigs ...os.Signal) (context.Context, *exiter) {
	ctx, cancel := context.WithCancelCause(ctx)
	e := &exiter{sigs: make(chan os.Signal, 2), cancel: cancel, quit: make(chan struct{})}
	signal.Notify(e.sigs, sigs...)
	e.wg.Go(e.watch)
	return ctx, e
}

// atExit adds f to what a forced exit runs first.
func (e *exiter) atExit(f func()) {
	e.mu.Lock()
	e.cleanups = append(e.cleanups, f)
	e.mu.Unlock()
}

// stop stops watching: the run has returned.
func (e *exiter) stop() {
	signal.Stop(e.sigs)
	close(e.quit)
	e.wg.Wait()
	e.cancel(nil)
}

func (e *exiter) watch() {
	var sig syscall.Signal
	select {
	case s := <-e.sigs:
		sig = s.(syscall.Signal)
	case <-e.quit:
		return
	}
	e.cancel(&runner.SignalError{Signal: sig})
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	select {
	case <-e.quit:
		return
	case <-t.C:
	case <-e.sigs:
	}
	ext.KillAll(syscall.SIGKILL)
	e.mu.Lock()
	for _, f := range e.cleanups {
		f()
	}
	e.mu.Unlock()
	os.Exit(128 + int(sig))
}
