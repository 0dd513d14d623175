package sched

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/tpipe/tpipe/spool"
)

// This file words the spool's errors: a failure of its disk so that a
// person can act on it, a task's failure so that it names the task.

// diskErr words a failure of the spool's disk so that a person can act on
// it: a full disk is resumable, a permission is theirs to grant.
func (r *spoolRun) diskErr(err error) error { return spoolDiskErr(r.so.Dir, err) }

func spoolDiskErr(dir string, err error) error {
	var ce *spool.CorruptError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	where := "spool " + dir + ": "
	var de *spool.DirError
	if errors.As(err, &de) {
		where = "" // package spool has said where
	}
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%sdisk full (%v); free space and run again: the run resumes where it stopped", where, err)
	case errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%s%v; give tpipe write access to it, or another --spool directory", where, err)
	}
	return err
}

// taskErr is err as task i's.
func (r *spoolRun) taskErr(i int, err error) error {
	t := r.g.Tasks[i]
	return &TaskError{Task: t.Name, Index: t.Index, Err: err}
}

// chainErr is an error of task j of a map stage's chain.
type chainErr struct {
	j   int
	err error
}

func (e *chainErr) Error() string { return e.err.Error() }

func (e *chainErr) Unwrap() error { return e.err }

// errEmit is the emit of a stateless form's Start and End, which promise
// to emit nothing.
func errEmit([]byte) error {
	return errors.New("a stateless per-record task emitted a record from Start or End")
}
