package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/spool/status"
)

const statusUsage = `usage: tpipe status [--watch] [--dot | --pnml] DIR

Shows the spool folder DIR: each place with its tokens, the claims in
flight (owner, when last renewed), failed jobs, each stage's workers,
rate (EWMA of deliveries per second) and latency, and the bottleneck.
The rates come from the status files that workers started with
--status DIR (serve writes them in its folder).

  --watch   show it again every second, until interrupted
  --dot     print the Petri net in Graphviz DOT and exit
  --pnml    print the Petri net in PNML (places with their marking) and exit
`

// statusCommand is `tpipe status`.
func statusCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "tpipe status"
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	watch := fs.Bool("watch", false, "")
	dot := fs.Bool("dot", false, "")
	pnml := fs.Bool("pnml", false, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, statusUsage)
			return 0
		}
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	switch {
	case fs.NArg() != 1:
		return pmjqUsageError(stderr, prog, "want one folder")
	case *dot && *pnml:
		return pmjqUsageError(stderr, prog, "give --dot or --pnml, not both")
	case *watch && (*dot || *pnml):
		return pmjqUsageError(stderr, prog, "--watch shows the tables; --dot and --pnml print once")
	}
	dir := fs.Arg(0)
	show := func(w io.Writer) error { return statusReport(dir, w, *dot, *pnml) }
	if !*watch {
		if err := show(stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
			return 1
		}
		return 0
	}
	ctx, e := exitOn(ctx, exitSignals...)
	defer e.stop()
	return watchStatus(ctx, show, stdout, stderr, time.Second)
}

// statusReport writes the report of dir: as DOT, PNML or tables.
func statusReport(dir string, w io.Writer, dot, pnml bool) error {
	r, err := status.Read(dir, time.Now())
	if err != nil {
		return err
	}
	switch {
	case dot:
		return r.WriteDot(w)
	case pnml:
		return r.WritePNML(w)
	}
	return r.WriteText(w)
}

// watchStatus shows the report every period until ctx is done. On a
// terminal each report replaces the last (the screen is cleared); else
// they follow one another, a blank line between.
func watchStatus(ctx context.Context, show func(io.Writer) error, stdout, stderr io.Writer, period time.Duration) int {
	f, isFile := stdout.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		var b bytes.Buffer
		if tty {
			b.WriteString("\x1b[H\x1b[2J")
		}
		if err := show(&b); err != nil {
			fmt.Fprintf(stderr, "tpipe status: %s\n", visible.Controls(fileError(err)))
			return 1
		}
		if !tty {
			b.WriteString("\n")
		}
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return 1
		}
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
	}
}
