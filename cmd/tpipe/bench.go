package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/tpipe/tpipe/bench/suite"
)

// benchCommand is `tpipe bench [-quick] [-out DIR] [-runs N]`: the
// benchmark suite, the same code as `go run ./bench` (see
// bench/README.md). Ctrl-C stops it between runs. `tpipe bench -video`
// and `tpipe bench -jobs` run this tpipe, not one built from a checkout
// (a -tpipe given after bench still wins).
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if exe, err := os.Executable(); err == nil {
		args = append([]string{"-tpipe", exe}, args...)
	}
	return suite.Main(ctx, args, stdout, stderr)
}
