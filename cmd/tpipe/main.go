// Command tpipe runs Unix-style pipelines inside one process, with every
// record in one of B preallocated buffers:
//
//	tpipe 'cat app.log | grep -i error | cut -d" " -f3 | sort | uniq -c'
//
// Run `tpipe --help` for the flags. For developers, TPIPE_CPUPROFILE=FILE
// writes a CPU profile of the run.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
)

func main() {
	if os.Getenv("TPIPE_DEBUG") == "" {
		// A Go crash (a fatal error, a panic no recover caught) prints
		// its message without the goroutine dump, which means nothing to
		// a user.
		debug.SetTraceback("none")
	}
	if name := os.Getenv("TPIPE_CPUPROFILE"); name != "" {
		if f, err := os.Create(name); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer pprof.StopCPUProfile()
			}
		} else {
			fmt.Fprintf(os.Stderr, "tpipe: TPIPE_CPUPROFILE: %v\n", err)
		}
	}
	var stdout io.Writer = os.Stdout
	if closedAtStart(1) {
		stdout = closedStdout{}
	}
	code := run(context.Background(), commandArgs(os.Args), os.Stdin, stdout, os.Stderr)
	pprof.StopCPUProfile()
	os.Exit(code)
}

// closedStdout stands for a standard output that was closed when tpipe
// started: every write fails with EBADF, as it does for a shell's
// commands, and the status says so.
type closedStdout struct{}

func (closedStdout) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EBADF}
}

// commandArgs returns the arguments of run for os.Args: tpipe installed
// (or linked) under the name pmjq runs `tpipe pmjq`, as busybox runs the
// command it is called by, so that pmjq 1.0's scripts run unchanged.
func commandArgs(osArgs []string) []string {
	if len(osArgs) > 0 && filepath.Base(osArgs[0]) == "pmjq" {
		return append([]string{"pmjq"}, osArgs[1:]...)
	}
	return osArgs[1:]
}
