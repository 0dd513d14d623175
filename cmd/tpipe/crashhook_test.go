package main

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// The crash hook is in a test file, so that tpipe as shipped neither reads
// killEnv nor carries its name: only the test binary, run as tpipe
// (TPIPE_TEST_MAIN=1, see spool_test.go), has it.
func init() { killAfterCommits = killAfterCommitsEnv }

// killEnv makes the test binary, run as tpipe, kill itself with SIGKILL after
// that many tokens committed under the spool policy: the crash tests stop
// a run at every point of its commit protocol, not only where a timer
// happens to fall.
const killEnv = "TPIPE_TEST_KILL_AFTER_COMMITS"

// killAfterCommitsEnv returns the hook of killEnv, or nil.
func killAfterCommitsEnv() func() {
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
