// Command tpipe runs Unix-style pipelines inside one process, with every
// record in one of B preallocated buffers:
//
//	tpipe 'cat app.log | grep -i error | cut -d" " -f3 | sort | uniq -c'
//
// Run `tpipe --help` for the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
