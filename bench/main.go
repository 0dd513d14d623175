// Command bench runs tpipe's benchmark suite (package
// github.com/tpipe/tpipe/bench/suite), as `tpipe bench` does:
//
//	go run ./bench [-quick] [-out DIR] [-runs N]
//
// See README.md in this directory.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/tpipe/tpipe/bench/suite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := suite.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
