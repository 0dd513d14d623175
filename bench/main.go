package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run parses args, runs the matrix and writes the report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "small inputs and fewer B points (under a minute on 2 cores)")
	out := fs.String("out", "bench/out", "directory for report.md, results.csv and the plots")
	runs := fs.Int("runs", 5, "runs per cell (at least 5); the median is reported with min and max")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 5 {
		return fmt.Errorf("-runs %d: at least 5 runs per cell", *runs)
	}
	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	cfg.runs = *runs
	cfg.progress = stderr
	res, err := runMatrix(ctx, cfg)
	if err != nil {
		return err
	}
	files, err := writeReport(*out, cfg, res)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}
