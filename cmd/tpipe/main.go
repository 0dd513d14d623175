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
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	if name := os.Getenv("TPIPE_CPUPROFILE"); name != "" {
		if f, err := os.Create(name); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer pprof.StopCPUProfile()
			}
		} else {
			fmt.Fprintf(os.Stderr, "tpipe: TPIPE_CPUPROFILE: %v\n", err)
		}
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	pprof.StopCPUProfile()
	os.Exit(code)
}
