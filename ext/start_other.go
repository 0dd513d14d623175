//go:build !linux

package ext

import "os/exec"

// start starts cmd. Outside Linux there is no parent-death signal: a
// child outlives a tpipe killed by SIGKILL.
func start(cmd *exec.Cmd) error { return cmd.Start() }

// release has nothing to release outside Linux.
func release() {}
