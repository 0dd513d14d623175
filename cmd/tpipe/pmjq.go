package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/loadhook"
	"github.com/tpipe/tpipe/spool/merge"
	"github.com/tpipe/tpipe/spool/metrics"
	"github.com/tpipe/tpipe/spool/place"
	"github.com/tpipe/tpipe/spool/pmjq1"
	"github.com/tpipe/tpipe/spool/status"
)

// pmjqCommand is `tpipe pmjq ...`, and tpipe called as pmjq. Three forms
// share the name: pmjq 1.0's (--input=DIR/REGEX ...), tpipe's and-merge
// (--inputs PATTERN DIR... --cmd CMD), and tpipe's own INDIR 'FILTER'
// OUTDIR (pmjqJobs).
func pmjqCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, e := exitOn(ctx, exitSignals...)
	defer e.stop()
	switch {
	case pmjq1.IsPmjq1(args) || len(args) == 1 && args[0] == "--version":
		return pmjq1Command(ctx, args, stdout, stderr)
	case hasArg(args, "--inputs"):
		return inputsCommand(ctx, args, stdout, stderr)
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprint(stdout, pmjqUsage)
		return 0
	}
	return pmjqJobs(ctx, args, stdout, stderr)
}

const pmjqUsage = `usage: tpipe pmjq [flags] INDIR 'FILTER' OUTDIR
       tpipe pmjq [flags] --inputs PATTERN DIR1 DIR2... --cmd 'CMD $1 $2...' [--output OUTDIR]
       pmjq [--quit-when-empty] --input=DIR/REGEX... [--invariant=TEMPLATE] CMDTEMPLATE
            --output=TEMPLATE... [--stderr=TEMPLATE] [--error=TEMPLATE...]

The second form is the and-merge: when every DIRi holds a file whose name
matches PATTERN with the same first group, CMD runs with $1, $2... the
paths of those files (argv words, never a shell; $1 is also its stdin);
its stdout goes to OUTDIR/<group> atomically, then the files are removed.
The third is pmjq 1.0's command line, run unchanged (see README).

flags of the and-merge form:
  --once            exit when no complete set remains and nobody holds one
  --workers N       sets run at once (default: the number of CPUs)
  --lease D         a claim not renewed within D is taken back (default 30s)
  --retries N       a failing set is tried N more times, then moved to
                    DIR.failed/ with NAME.stderr and NAME.status beside it
  --at-most-once    remove the inputs before the output is committed
  --status DIR      keep this worker's status file in DIR/.status (tpipe status DIR)
  --metrics ADDR    serve Prometheus metrics on http://ADDR/metrics
  --no-sync         do not fsync outputs and folders: faster, but a power
                    loss may lose outputs already committed
  --max-load L CMD  run CMD when the 1-minute load average is above L
  --min-load L CMD  run CMD when it is below L (each at most once a minute)
`

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// pmjqUsageError prints a usage error of a pmjq form; the status is 2.
func pmjqUsageError(stderr io.Writer, prog, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: %s (see %s --help)\n", prog, visible.Controls(fmt.Sprintf(format, a...)), prog)
	return 2
}

// workerFlags are the flags of tpipe's workers that both and-merge forms
// take.
type workerFlags struct {
	workers int
	lease   time.Duration
	status  string
	metrics string
	noSync  bool
	hooks   []loadhook.Hook
}

func (f *workerFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "")
	fs.DurationVar(&f.lease, "lease", place.DefaultLease, "")
	fs.StringVar(&f.status, "status", "", "")
	fs.StringVar(&f.metrics, "metrics", "", "")
	fs.BoolVar(&f.noSync, "no-sync", false, "")
}

// place returns the place options the flags ask for.
func (f *workerFlags) place() place.Options {
	return place.Options{Lease: f.lease, NoSync: f.noSync}
}

func (f *workerFlags) check() error {
	if f.workers < 1 {
		return fmt.Errorf("--workers %d: want 1 or more", f.workers)
	}
	if f.lease <= 0 {
		return fmt.Errorf("--lease %v: want a duration such as 30s", f.lease)
	}
	return nil
}

// observe starts what the flags ask for beside the engine: the status
// file, the metrics server, the load hooks. stop ends them and waits.
func (f *workerFlags) observe(ctx context.Context, w *place.Worker, stages []status.Stage, stderr io.Writer, prog string) (jobs.Observer, func(), error) {
	var obs jobs.Observers
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if f.status != "" {
		sw, err := status.NewWriter(f.status, w.Owner(), w.Lease(), stages, status.Options{})
		if err != nil {
			return nil, stop, fmt.Errorf("--status: %w", err)
		}
		obs = append(obs, sw)
		stops = append(stops, func() { sw.Close() })
	}
	if f.metrics != "" {
		var dirs []string
		for _, s := range stages {
			dirs = append(dirs, s.Inputs...)
			dirs = append(dirs, s.Outputs...)
		}
		srv, err := metrics.Listen(f.metrics, dirs)
		if err != nil {
			stop()
			return nil, func() {}, fmt.Errorf("--metrics: %w", err)
		}
		fmt.Fprintf(stderr, "%s: metrics on http://%s/metrics\n", prog, srv.Addr())
		obs = append(obs, srv.Metrics)
		stops = append(stops, func() { srv.Close() })
	}
	if len(f.hooks) > 0 {
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		hw := &loadhook.Watcher{Hooks: f.hooks, Log: &prefixWriter{w: stderr, prefix: prog + ": "}}
		wg.Go(func() { hw.Loop(ctx) })
		stops = append(stops, func() { cancel(); wg.Wait() })
	}
	return obs, stop, nil
}

// prefixWriter writes each line with a prefix. It is safe for concurrent
// use; a line is written whole.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []byte
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			out = append(out, p.prefix+visible.Controls(strings.TrimSuffix(line, "\n"))+"\n"...)
		}
	}
	_, err := p.w.Write(out)
	return len(b), err
}

// runEngine runs e with what the flags observe and returns the status:
// 128+n after a signal, 1 after an error or a failure left in place (a
// failure moved to an error or failed place is dealt with: 0).
func runEngine(ctx context.Context, c merge.Config, f *workerFlags, stages []status.Stage, stderr io.Writer, prog string) int {
	// The input places exist before the metrics say where they are.
	for _, in := range c.Inputs {
		if _, err := c.Worker.Open(in.Dir); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
			return 1
		}
	}
	obs, stop, err := f.observe(ctx, c.Worker, stages, stderr, prog)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer stop()
	c.Observer = obs
	e, err := merge.New(c)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	res, err := e.Run(ctx)
	if ctx.Err() != nil {
		var se *runner.SignalError
		if errors.As(context.Cause(ctx), &se) {
			return se.Status()
		}
		return runner.StatusInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	if res.Kept > 0 {
		fmt.Fprintf(stderr, "%s: %d done, %d failed\n", prog, res.Done, res.Failed)
		return 1
	}
	return 0
}

// pmjq1Command runs pmjq 1.0's command line.
func pmjq1Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "pmjq"
	a, err := pmjq1.Parse(args)
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	if a.Help {
		fmt.Fprint(stdout, pmjq1.Usage)
		return 0
	}
	if a.Version {
		fmt.Fprintln(stdout, "pmjq 1.0.0 command line, run by tpipe")
		return 0
	}
	spec, err := a.Compile()
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	var f workerFlags
	f.workers, f.lease = runtime.NumCPU(), place.DefaultLease
	for _, x := range a.Extra {
		var err error
		switch x[0] {
		case "--workers":
			f.workers, err = strconv.Atoi(x[1])
		case "--lease":
			f.lease, err = time.ParseDuration(x[1])
		case "--status":
			f.status = x[1]
		case "--metrics":
			f.metrics = x[1]
		case "--no-sync":
			f.noSync = true
		case "--max-load", "--min-load":
			var h loadhook.Hook
			h, err = loadhook.Parse(x[0], x[1], x[2])
			f.hooks = append(f.hooks, h)
		}
		if err != nil {
			return pmjqUsageError(stderr, prog, "%s %s: %v", x[0], x[1], err)
		}
	}
	if err := f.check(); err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	w, err := place.NewWorker(f.place())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer w.Close()
	c := merge.Config{Workers: f.workers, Log: &prefixWriter{w: stderr, prefix: prog + ": "}}
	if err := spec.Configure(&c, w, runner.Config{}); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
		return 1
	}
	st := status.Stage{Name: c.Stage}
	for _, in := range spec.Inputs {
		st.Inputs = append(st.Inputs, in.Dir)
	}
	for _, o := range spec.Outputs {
		st.Outputs = append(st.Outputs, o.Dir)
	}
	for _, e := range spec.Errors {
		st.FailedPlaces = append(st.FailedPlaces, e.Dir)
	}
	return runEngine(ctx, c, &f, []status.Stage{st}, stderr, prog)
}

// inputsCommand runs tpipe's and-merge form:
// [flags] --inputs PATTERN DIR1 DIR2 ... --cmd 'CMD $1 $2' [--output OUTDIR].
func inputsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "tpipe pmjq"
	hooks, args, err := loadhook.Extract(args)
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	// --inputs PATTERN DIR... is cut out first: its folders are the
	// words up to the next flag.
	var pattern string
	var dirs, flags []string
	for i := 0; i < len(args); i++ {
		if args[i] != "--inputs" {
			flags = append(flags, args[i])
			continue
		}
		if i+1 >= len(args) {
			return pmjqUsageError(stderr, prog, "--inputs needs a PATTERN and folders")
		}
		pattern = args[i+1]
		for i += 2; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
			dirs = append(dirs, args[i])
		}
		i--
	}
	f := workerFlags{hooks: hooks}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	once := fs.Bool("once", false, "")
	retries := fs.Int("retries", 0, "")
	atMostOnce := fs.Bool("at-most-once", false, "")
	cmdText := fs.String("cmd", "", "")
	output := fs.String("output", "", "")
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, pmjqUsage)
			return 0
		}
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return pmjqUsageError(stderr, prog, "unexpected %q: the folders go right after --inputs PATTERN", fs.Arg(0))
	case len(dirs) == 0:
		return pmjqUsageError(stderr, prog, "--inputs %s: no folder", pattern)
	case *cmdText == "":
		return pmjqUsageError(stderr, prog, "no --cmd 'CMD $1 $2...'")
	case *retries < 0:
		return pmjqUsageError(stderr, prog, "--retries %d: want 0 or more", *retries)
	}
	if err := f.check(); err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return pmjqUsageError(stderr, prog, "--inputs %s: %v", pattern, err)
	}
	if re.NumSubexp() < 1 {
		return pmjqUsageError(stderr, prog, "--inputs %s: the pattern needs a group, such as (.*)\\.txt, whose value pairs the files", pattern)
	}
	words, err := merge.Words(*cmdText)
	if err != nil {
		return pmjqUsageError(stderr, prog, "--cmd: %v", err)
	}
	w, err := place.NewWorker(f.place())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer w.Close()
	st := status.Stage{Name: filepath.Base(words[0])}
	c := merge.Config{
		Stage: st.Name, Worker: w, Workers: f.workers, Once: *once,
		Log:       &prefixWriter{w: stderr, prefix: prog + ": "},
		OnFailure: merge.RetryThenAside(*retries),
	}
	if *atMostOnce {
		c.Delivery = place.AtMostOnce
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return pmjqUsageError(stderr, prog, "%s: %v", d, err)
		}
		c.Inputs = append(c.Inputs, merge.Input{Dir: abs, Pattern: re, Key: merge.GroupKey})
		st.Inputs = append(st.Inputs, abs)
		st.FailedPlaces = append(st.FailedPlaces, merge.FailedDir(abs))
	}
	var out *place.Place
	passOut := &lockedWriter{w: stdout}
	if *output != "" {
		if out, err = w.Open(*output); err != nil {
			fmt.Fprintf(stderr, "%s: --output: %s\n", prog, fileError(err))
			return 1
		}
		st.Outputs = []string{out.Dir()}
	}
	c.Run = merge.CommandRun(words, out, passOut, runner.Config{})
	return runEngine(ctx, c, &f, []status.Stage{st}, stderr, prog)
}

// lockedWriter serializes writes: jobs without --output share stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
