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
	"os"
	"runtime/debug"
	"runtime/pprof"
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
	code := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	pprof.StopCPUProfile()
	os.Exit(code)
}
