package ext

import (
	"os/exec"
	"sync"
	"syscall"
)

// procs are the processes ext started and has not yet reaped, by pid
// (which is also the id of each one's process group). A pid stays here
// until Wait has reaped it, so a signal to -pid cannot reach a group that
// reused the number.
var procs struct {
	mu   sync.Mutex
	live map[int]struct{}
}

// KillAll sends sig to the process group of every process started by a
// Cmd and not yet reaped. It is for a program leaving without waiting for
// its runs to end (tpipe when a signal ends it and a run does not return in
// time): os.Exit does not stop child processes, and a process killed this
// way is reaped by whoever inherits it.
func KillAll(sig syscall.Signal) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	for pid := range procs.live {
		syscall.Kill(-pid, sig)
	}
}

// startProcess starts cmd (in its own process group) and records it as
// live; the caller calls forget once Wait has reaped it.
func startProcess(cmd *exec.Cmd) error {
	if err := start(cmd); err != nil {
		return err
	}
	procs.mu.Lock()
	if procs.live == nil {
		procs.live = map[int]struct{}{}
	}
	procs.live[cmd.Process.Pid] = struct{}{}
	procs.mu.Unlock()
	return nil
}

// forget records that the process pid, started by startProcess, has been
// reaped.
func forget(pid int) {
	procs.mu.Lock()
	delete(procs.live, pid)
	procs.mu.Unlock()
	release()
}
