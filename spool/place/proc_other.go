//go:build !linux

package place

import (
	"os"
	"syscall"
)

// procStart has nothing to read without /proc: a lease decides.
func procStart(pid int) (uint64, bool) { return 0, false }

func bootID() string { return "0" }

// pidExists reports whether a process pid exists.
func pidExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || err == syscall.EPERM
}
