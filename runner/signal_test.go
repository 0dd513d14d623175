package runner_test

import (
	"bytes"
	"context"
	"syscall"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// A run cancelled by a signal has the status a shell gives a command that
// the signal ended, whether a builtin or a process was running; any other
// cancellation is Ctrl-C's 130.
func TestSignalStatus(t *testing.T) {
	tests := []struct {
		script string
		cause  error
		want   int
	}{
		{"yes | cat", &runner.SignalError{Signal: syscall.SIGTERM}, 143},
		{"yes | cat", &runner.SignalError{Signal: syscall.SIGHUP}, 129},
		{"sleep 1000 | cat", &runner.SignalError{Signal: syscall.SIGTERM}, 143},
		{"yes | cat", nil, 130},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancelCause(context.Background())
		var stderr bytes.Buffer
		r := runner.New(runner.Config{Stderr: &stderr})
		r.BeforeRun = func(*runner.Job) { cancel(tt.cause) }
		if got := r.RunScript(ctx, tt.script); got != tt.want {
			t.Errorf("%q cancelled by %v: status %d, want %d (stderr %q)", tt.script, tt.cause, got, tt.want, stderr.String())
		}
		if stderr.Len() > 0 {
			t.Errorf("%q: stderr %q, want nothing", tt.script, stderr.String())
		}
		r.Close()
		cancel(nil)
	}
}
