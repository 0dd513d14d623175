package main

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// killEnv, set only by tests, makes tpipe kill itself with SIGKILL after
// that many tokens committed under the spool policy: the crash tests stop
// a run at every point of its commit protocol, not only where a timer
// happens to fall.
const killEnv = "TPIPE_TEST_KILL_AFTER_COMMITS"

// killAfterCommits returns the hook of killEnv, or nil.
func killAfterCommits() func() {
	n, err := strconv.ParseInt(os.Getenv(killEnv), 10, 64)
	if err != nil || n <= 0 {
		return nil
	}
	var left atomic.Int64
	left.Store(n)
	return func() {
		if left.Add(-1) == 0 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}
