package task

import "fmt"

// ExitError is a task's exit status, as a Unix command has one: the task
// ran to its end and its outputs are closed normally, but it reports
// failure (grep found nothing, a file could not be opened). Unlike any other
// error it does not stop the other tasks; the run's status is that of the
// rightmost task with a non-zero status (bash's pipefail).
type ExitError struct {
	Code int
	// Err says why, or is nil when the task already told the user (as
	// GNU tools print "cat: x: No such file or directory" and go on).
	Err error
}

// Exit returns an *ExitError with the given code and no message.
func Exit(code int) *ExitError { return &ExitError{Code: code} }

// ExitCode returns the status.
func (e *ExitError) ExitCode() int { return e.Code }

func (e *ExitError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

func (e *ExitError) Unwrap() error { return e.Err }
