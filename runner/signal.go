package runner

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// SignalError is the cause to cancel a run with (context.WithCancelCause)
// when a signal ends it: the run's status is then 128 plus the signal's
// number, as a shell reports a command that a signal ended (SIGINT 130,
// SIGTERM 143, SIGHUP 129). errors.Is(err, context.Canceled) holds for it,
// so code that only asks whether a run was cancelled need not know it.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string { return fmt.Sprintf("cancelled by %v", e.Signal) }

// Is makes a SignalError a context.Canceled.
func (e *SignalError) Is(target error) bool { return target == context.Canceled }

// Status is 128 plus the signal's number.
func (e *SignalError) Status() int { return 128 + int(e.Signal) }

// cancelStatus is the status of a run cancelled with cause: 128+n for a
// SignalError, StatusInterrupted for any other cancellation.
func cancelStatus(cause error) int {
	var se *SignalError
	if errors.As(cause, &se) {
		return se.Status()
	}
	return StatusInterrupted
}
