package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/tpipe/tpipe/front/status"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/progress"
	"github.com/tpipe/tpipe/spool/natsq"
)

const statusUsage = `usage: tpipe status [--watch] [--dot | --pnml] DIR
       tpipe status [--watch] nats://HOST:PORT/NAME

Shows the spool folder DIR: each place with its tokens, the claims in
flight (owner, when last renewed), failed jobs, each stage's workers,
rate (EWMA of deliveries per second) and latency, and the bottleneck.
The rates come from the status files that workers started with
--status DIR (serve writes them in its folder). On NATS: each place of
the net NAME with its jobs waiting, in flight, done, failed and
redelivered (read from the server: every worker's jobs).

  --watch   a live view, redrawn until interrupted: each stage's rate,
            backlog and busy workers, the bottleneck marked (each place's
            tokens where no worker writes status files, as in a --spool
            DIR); plain lines, one a second, when stdout is not a terminal
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
	if m := mistypedAddr(dir); m != "" {
		return pmjqUsageError(stderr, prog, "%s", m)
	}
	if natsq.IsAddr(dir) {
		if *dot || *pnml {
			return pmjqUsageError(stderr, prog, "--dot and --pnml draw a folder's net; on NATS status shows the places' counts")
		}
		return statusNATS(ctx, dir, *watch, stdout, stderr)
	}
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
	return watchStatus(ctx, dir, stdout, stderr, time.Second)
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

// watchStatus shows dir's report until ctx is done, in the live view of
// package progress (the one --progress shows for a run): a row per stage
// with its rate, its backlog and how busy its workers are, the
// bottleneck marked; a row per place when no worker writes status files
// there (a --spool directory). On a terminal the view redraws in place
// and the whole report is printed once at the end; elsewhere it writes a
// plain line every period, for a log.
func watchStatus(ctx context.Context, dir string, stdout, stderr io.Writer, period time.Duration) int {
	f, isFile := stdout.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	start := time.Now()
	var mu sync.Mutex
	var failed error
	src := progress.SourceFunc(func() progress.Frame {
		r, err := status.Read(dir, time.Now())
		if err != nil {
			mu.Lock()
			failed = err
			mu.Unlock()
			return progress.Frame{Elapsed: time.Since(start)}
		}
		return statusFrame(r, time.Since(start))
	})
	// The first report is read here, so that a folder that is not one
	// fails at once rather than as an empty view.
	if _, err := status.Read(dir, time.Now()); err != nil {
		fmt.Fprintf(stderr, "tpipe status: %s\n", visible.Controls(fileError(err)))
		return 1
	}
	v := progress.Start(stdout, src, progress.Options{Terminal: tty, Interval: period})
	<-ctx.Done()
	v.Stop()
	mu.Lock()
	err := failed
	mu.Unlock()
	if err != nil {
		fmt.Fprintf(stderr, "tpipe status: %s\n", visible.Controls(fileError(err)))
		return 1
	}
	if tty {
		if err := statusReport(dir, stdout, false, false); err != nil {
			return 1
		}
	}
	return 0
}

// statusFrame is the live view's frame of report r: one row per stage,
// or per place when r knows no stage. A place has no capacity, so a
// row's gauge is its backlog against the largest backlog of the frame:
// the bottleneck's is full.
func statusFrame(r *status.Report, elapsed time.Duration) progress.Frame {
	fr := progress.Frame{Elapsed: elapsed}
	for _, st := range r.Stages {
		row := progress.Row{Name: st.Name, Unit: "jobs", Records: st.Rate, Fill: st.Waiting, Bottleneck: st.Name == r.Bottleneck}
		if st.Workers > 0 {
			row.Busy = min(1, float64(st.InFlight)/float64(st.Workers))
		}
		fr.Rows = append(fr.Rows, row)
	}
	if len(fr.Rows) == 0 {
		for _, p := range r.Places {
			row := progress.Row{Name: p.Name, Unit: "tokens"}
			if p.Marking != nil {
				row.Fill = p.Marking.Tokens
			}
			fr.Rows = append(fr.Rows, row)
		}
	}
	most := 1
	for _, row := range fr.Rows {
		most = max(most, row.Fill)
	}
	for i := range fr.Rows {
		fr.Rows[i].Cap = most
	}
	return fr
}
