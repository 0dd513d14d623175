package sched

import (
	"errors"

	"github.com/tpipe/tpipe/task"
)

// pipefail is the rule that picks a run's error out of its tasks' errors,
// as bash's set -o pipefail does: the first hard failure, else the exit
// status of the rightmost task (the greatest index) that ended with a
// non-zero one, else none. Every policy keeps its run's errors in one, and
// the fused policy keeps its stages' statuses in one (the index is then the
// stage's).
//
// The zero value is ready to use. A pipefail is not safe for concurrent
// use: a run that records from several goroutines holds its lock around
// the calls.
type pipefail struct {
	first  error // the first hard failure
	status error // the rightmost non-zero exit status
	at     int   // the index of status's task or stage
}

// exit keeps err, a non-zero exit status of the task or stage at index at,
// if it is the rightmost so far.
func (p *pipefail) exit(at int, err error) {
	if p.status == nil || at > p.at {
		p.status, p.at = err, at
	}
}

// fail keeps err, a hard failure, if it is the first, and reports whether
// it is.
func (p *pipefail) fail(err error) bool {
	if p.first != nil {
		return false
	}
	p.first = err
	return true
}

// err returns the error of the run: the first hard failure, else the
// rightmost non-zero exit status, else nil.
func (p *pipefail) err() error {
	if p.first != nil {
		return p.first
	}
	return p.status
}

// exitStatus reports err's exit status when err is a *TaskError whose
// task ended with a *task.ExitError: a status, not a hard failure.
func exitStatus(err error) (te *TaskError, code int, ok bool) {
	var exit *task.ExitError
	if errors.As(err, &te) && errors.As(te.Err, &exit) {
		return te, exit.Code, true
	}
	return nil, 0, false
}
