package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

const pmjqUsage = `usage: tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]

Runs FILTER, a tpipe pipeline, on every file of INDIR as a job, as pmjq's
daemons do: the job is FILTER's standard input, and its standard output
becomes OUTDIR/<the job's name> (in every OUTDIR given), written under a
temporary name and renamed whole; then the job is removed from INDIR. Any
number of workers, processes and hosts sharing the folders share the jobs.
A job whose FILTER fails is run again --retries times, then moved to
INDIR.failed with NAME.stderr and NAME.status beside it.

flags:
`

const serveUsage = `usage: tpipe serve [flags] DIR 'PIPELINE'

Serves PIPELINE: each file dropped in DIR/in is a job that flows through
the pipeline, each command a stage with its workers and each edge a folder
under DIR, and its result lands in DIR/out/<the job's name>. Any number of
serve processes, on this host or on hosts sharing DIR, share the work.

flags:
`

// jobFlags are the flags pmjq and serve share.
type jobFlags struct {
	cfg        runner.Config
	o          jobs.Options
	retries    int
	atMostOnce bool
	only       string // serve
}

// parseJobFlags parses the flags of pmjq or serve (name); on a usage
// error it prints one line and ok is false with status 2, on --help the
// usage goes to stdout with status 0.
func parseJobFlags(name, usage string, args []string, stdout, stderr io.Writer) (f jobFlags, rest []string, status int, ok bool) {
	var badSetting error
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.o.Once, "once", false, "exit when no job is left to do and no worker anywhere holds one (for scripts); status 1 if a job failed")
	fs.DurationVar(&f.o.Lease, "lease", place.DefaultLease, "a claim not renewed for `D` is taken back by any worker (one of this host whose process is gone: at once)")
	fs.IntVar(&f.o.Workers, "workers", runtime.NumCPU(), "jobs at once in this process")
	fs.IntVar(&f.retries, "retries", 0, "run a failing job `N` more times before it goes to the failed folder")
	fs.DurationVar(&f.o.RetryDelay, "retry-delay", 0, "wait `D` before running a failed job again")
	fs.BoolVar(&f.atMostOnce, "at-most-once", false, "remove a job before its output is committed: a crash loses it instead of running it again")
	fs.BoolVar(&f.o.NoSync, "no-sync", false, "do not fsync outputs and folders: faster; a power cut (not a crash of tpipe) may lose finished jobs")
	fs.StringVar(&f.o.Host, "host", "", "the host `NAME` in this worker's claims (default: the host name); hosts that share folders must have different names")
	if name == "serve" {
		fs.StringVar(&f.only, "only", "", "run the workers of stage `TASK` only (see --explain of the pipeline for the names)")
	}
	// TODO(issue 15, part B): --metrics ADDR and the status writer add
	// their observers here (see observers).
	for _, s := range runner.Settings {
		help := s.Help
		if !s.IsBool() {
			help += "; default " + s.DefaultHelp()
		}
		fs.Var(settingFlag{s, &f.cfg, &badSetting}, s.Name, help)
	}
	bad := func(format string, a ...any) (jobFlags, []string, int, bool) {
		fmt.Fprintf(stderr, "tpipe %s: %s (see tpipe %s --help)\n", name, visible.Controls(fmt.Sprintf(format, a...)), name)
		return f, nil, 2, false
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fs.VisitAll(func(fl *flag.Flag) {
				arg, text := flag.UnquoteUsage(fl)
				if sf, ok := fl.Value.(settingFlag); ok && sf.s.Arg != "" {
					arg = sf.s.Arg
				}
				if arg != "" {
					arg = " " + arg
				}
				fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, arg, text)
			})
			tw.Flush()
			return f, nil, 0, false
		}
		if badSetting != nil {
			return bad("--%s", badSetting)
		}
		return bad("%s", err)
	}
	switch {
	case f.o.Workers < 1:
		return bad("--workers %d: want at least 1", f.o.Workers)
	case f.retries < 0:
		return bad("--retries %d: want 0 or more", f.retries)
	case f.o.Lease < time.Second:
		return bad("--lease %v: want at least 1s (a lease shorter than the time to renew it takes live claims back)", f.o.Lease)
	case f.o.RetryDelay < 0:
		return bad("--retry-delay %v: want 0 or more", f.o.RetryDelay)
	}
	if f.atMostOnce {
		f.o.Delivery = place.AtMostOnce
	}
	return f, fs.Args(), 0, true
}

// observers are what the workers report to. TODO(issue 15, part B): the
// Prometheus metrics of --metrics ADDR and the status files of tpipe
// status are added here.
func observers(f *jobFlags) jobs.Observer { return jobs.Observers(nil) }

// pmjqCommand is `tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]`.
func pmjqCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, rest, status, ok := parseJobFlags("pmjq", pmjqUsage, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) < 3 {
		fmt.Fprintf(stderr, "tpipe pmjq: want INDIR 'FILTER' OUTDIR, got %d %s (see tpipe pmjq --help)\n", len(rest), plural(len(rest), "argument"))
		return 2
	}
	f.cfg.Stderr = stderr
	if st := jobs.CheckScript(rest[1], f.cfg, stderr); st != 0 {
		return st
	}
	in, err := absDir(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "tpipe pmjq: %s\n", fileError(err))
		return 2
	}
	st := jobs.Stage{Name: "pmjq", In: []string{in}, Retries: f.retries, Run: jobs.Script(rest[1], f.cfg)}
	var outs []string
	for _, o := range rest[2:] {
		dir, err := absDir(o)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe pmjq: %s\n", fileError(err))
			return 2
		}
		if dir == in {
			fmt.Fprintf(stderr, "tpipe pmjq: OUTDIR %s is INDIR: every output would be a new job\n", visible.Controls(o))
			return 2
		}
		outs = append(outs, dir)
	}
	st.Out = [][]string{outs}
	return runJobs(ctx, "pmjq", []jobs.Stage{st}, f, stderr)
}

// serveCommand is `tpipe serve [flags] DIR 'PIPELINE'`.
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, rest, status, ok := parseJobFlags("serve", serveUsage, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) != 2 {
		fmt.Fprintf(stderr, "tpipe serve: want DIR 'PIPELINE', got %d %s (see tpipe serve --help)\n", len(rest), plural(len(rest), "argument"))
		return 2
	}
	dir, err := absDir(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "tpipe serve: %s\n", fileError(err))
		return 2
	}
	net, err := jobs.NewNet(dir, rest[1], f.cfg)
	if err != nil {
		var ne *jobs.NetError
		if errors.As(err, &ne) {
			fmt.Fprintf(stderr, "tpipe %s\n", visible.Controls(ne.Error()))
			return 2
		}
		r := runner.New(runner.Config{Stderr: stderr})
		defer r.Close()
		return r.Report(rest[1], err)
	}
	stages := net.Stages
	if f.only != "" {
		var names []string
		stages = nil
		for _, st := range net.Stages {
			names = append(names, st.Name)
			if st.Name == f.only {
				stages = append(stages, st)
			}
		}
		if stages == nil {
			fmt.Fprintf(stderr, "tpipe serve: --only %s: no such stage (the stages: %s)\n", visible.Controls(f.only), strings.Join(names, ", "))
			return 2
		}
	}
	for i := range stages {
		stages[i].Retries = f.retries
	}
	return runJobs(ctx, "serve", stages, f, stderr)
}

// runJobs runs the stages until a signal, or until quiet under --once,
// and returns the command's status: 0, 1 when a job failed (under --once)
// or the run stopped on an error, 128+n on signal n.
func runJobs(ctx context.Context, name string, stages []jobs.Stage, f jobFlags, stderr io.Writer) int {
	ctx, e := exitOn(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer e.stop()
	f.o.Stderr = stderr
	f.o.Observer = observers(&f)
	n, err := jobs.Run(ctx, stages, f.o)
	var se *runner.SignalError
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "tpipe %s: %s\n", name, visible.Controls(oneLine(err)))
		return 1
	case errors.As(context.Cause(ctx), &se):
		return 128 + int(se.Signal)
	case n.Failed > 0:
		fmt.Fprintf(stderr, "tpipe %s: %d %s done, %d failed\n", name, n.Done, plural(n.Done, "job"), n.Failed)
		return 1
	}
	return 0
}

// absDir makes a folder argument absolute, so that its last element names
// the place (".", "..", "dir/" do not).
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("a folder is an empty string")
	}
	return filepath.Abs(dir)
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
