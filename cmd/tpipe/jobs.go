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
	"text/tabwriter"
	"time"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/loadhook"
	"github.com/tpipe/tpipe/spool/place"
	"github.com/tpipe/tpipe/spool/status"
)

const pmjqJobsUsage = `usage: tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]

Runs FILTER, a tpipe pipeline, on every file of INDIR as a job, as pmjq's
daemons do: the job is FILTER's standard input, and its standard output
becomes OUTDIR/<the job's name> (in every OUTDIR given), written under a
temporary name and renamed whole; then the job is removed from INDIR. Any
number of workers, processes and hosts sharing the folders share the jobs.
A job whose FILTER fails is run again --retries times, then moved to
INDIR.failed with NAME.stderr and NAME.status beside it. (tpipe pmjq --help
shows the command's other forms: the and-merge, and pmjq 1.0's.)

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
	// what is observed beside the engine (see workerFlags.observe)
	status, metrics string
	hooks           []loadhook.Hook
}

// parseJobFlags parses the flags of pmjq or serve (name); on a usage
// error it prints one line and ok is false with status 2, on --help the
// usage goes to stdout with status 0.
func parseJobFlags(name, usage string, args []string, stdout, stderr io.Writer) (f jobFlags, rest []string, status int, ok bool) {
	var badSetting error
	bad := func(format string, a ...any) (jobFlags, []string, int, bool) {
		fmt.Fprintf(stderr, "tpipe %s: %s (see tpipe %s --help)\n", name, visible.Controls(fmt.Sprintf(format, a...)), name)
		return f, nil, 2, false
	}
	hooks, args, err := loadhook.Extract(args)
	if err != nil {
		return bad("%v", err)
	}
	f.hooks = hooks
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
	statusHelp := "keep this worker's status file in `DIR`/.status (tpipe status DIR)"
	if name == "serve" {
		statusHelp += "; default the served DIR"
	}
	fs.StringVar(&f.status, "status", "", statusHelp)
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics on http://`ADDR`/metrics")
	for _, s := range runner.Settings {
		help := s.Help
		if !s.IsBool() {
			help += "; default " + s.DefaultHelp()
		}
		fs.Var(settingFlag{s: s, cfg: &f.cfg, bad: &badSetting}, s.Name, help)
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
			fmt.Fprintf(tw, "  --max-load L CMD\trun CMD when the 1-minute load average is above L\n")
			fmt.Fprintf(tw, "  --min-load L CMD\trun CMD when it is below L (each at most once a minute)\n")
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

// pmjqJobs is `tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]`,
// tpipe's own form of pmjq (pmjqCommand tells it from the others).
func pmjqJobs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, rest, status, ok := parseJobFlags("pmjq", pmjqJobsUsage, args, stdout, stderr)
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
	if f.status == "" {
		f.status = dir // tpipe status DIR shows the served net's workers
	}
	return runJobs(ctx, "serve", stages, f, stderr)
}

// runJobs runs the stages until a signal, or until quiet under --once,
// with the status file, metrics and load hooks the flags ask for, and
// returns the command's status: 0, 1 when a job failed (under --once) or
// the run stopped on an error, 128+n on signal n. The caller has set the
// signals up (exitOn).
func runJobs(ctx context.Context, name string, stages []jobs.Stage, f jobFlags, stderr io.Writer) int {
	prog := "tpipe " + name
	w, err := place.NewWorker(place.Options{Host: f.o.Host, Lease: f.o.Lease, NoSync: f.o.NoSync})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer w.Close()
	var seen []status.Stage
	for _, st := range stages {
		s := status.Stage{Name: st.Name, Inputs: st.In, FailedPlaces: st.FailedDirs()}
		for _, ps := range st.Out {
			s.Outputs = append(s.Outputs, ps...)
		}
		seen = append(seen, s)
		for _, dir := range st.In { // the metrics read them at once
			if _, err := w.Open(dir); err != nil {
				fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
				return 1
			}
		}
	}
	wf := workerFlags{workers: f.o.Workers, lease: w.Lease(), status: f.status, metrics: f.metrics, noSync: f.o.NoSync, hooks: f.hooks}
	obs, stop, err := wf.observe(ctx, w, seen, stderr, prog)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer stop()
	f.o.Stderr, f.o.Observer, f.o.Worker = stderr, obs, w
	n, err := jobs.Run(ctx, stages, f.o)
	var se *runner.SignalError
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(oneLine(err)))
		return 1
	case errors.As(context.Cause(ctx), &se):
		return se.Status()
	case ctx.Err() != nil:
		return runner.StatusInterrupted
	case n.Failed > 0:
		fmt.Fprintf(stderr, "%s: %d %s done, %d failed\n", prog, n.Done, plural(n.Done, "job"), n.Failed)
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
