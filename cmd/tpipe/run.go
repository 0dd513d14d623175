package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

const usage = `usage: tpipe [flags] 'PIPELINE'
       tpipe [flags] -f SCRIPT
       tpipe [flags] < SCRIPT      (a script on stdin that is not a terminal)
       tpipe [flags]               (an interactive shell, on a terminal)
       tpipe bench [-quick] [-out DIR] [-runs N]
                                   (the benchmark suite: see bench/README.md)

Runs pipelines such as 'cat app.log | grep -i error | sort | uniq -c' inside
one process. Every record (a line) travels in one of B buffers of S bytes
allocated before the run, so record memory is B x S whatever the input.

flags:
`

// options are the command-line settings.
type options struct {
	policy     string
	buffers    int
	cap        int
	capAuto    bool
	recordSize int
	sortMemory int
	stats      bool
	statsJSON  string
	explain    bool
	dot        bool
	file       string
	trace      string
}

// capFlag parses --cap: a capacity, or auto.
type capFlag struct {
	n    *int
	auto *bool
}

func (c capFlag) String() string {
	if c.auto != nil && *c.auto {
		return "auto"
	}
	if c.n == nil {
		return ""
	}
	return fmt.Sprint(*c.n)
}

func (c capFlag) Set(v string) error {
	if v == "auto" {
		*c.n, *c.auto = 0, true
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want a capacity of at least 1, or auto")
	}
	*c.n, *c.auto = n, false
	return nil
}

// sizeFlag parses sizes such as 64K and 4M.
type sizeFlag struct{ v *int }

func (s sizeFlag) String() string {
	if s.v == nil {
		return ""
	}
	return fmt.Sprint(*s.v)
}

func (s sizeFlag) Set(v string) error {
	n, err := record.ParseSize(v)
	if err != nil {
		return errors.New("want a positive size such as 65536, 64K or 4M")
	}
	*s.v = n
	return nil
}

// parseFlags parses args; on a usage error it prints one line and the
// status is 2; on --help the usage goes to stdout and the status is 0.
func parseFlags(args []string, stdout, stderr io.Writer) (options, []string, int, bool) {
	var o options
	fs := flag.NewFlagSet("tpipe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.policy, "policy", sched.DefaultPolicy, "scheduling policy `NAME`: "+strings.Join(sched.Policies, ", ")+"; default "+sched.DefaultPolicy)
	fs.IntVar(&o.buffers, "buffers", 0, "number of record buffers `B`; default: the bound, the sum of queue capacities")
	fs.Var(capFlag{&o.cap, &o.capAuto}, "cap", fmt.Sprintf("capacity of every queue, in buffers `N`, or auto: sized at run time to keep the slowest stage busy; default %d (1 under ros)", graph.DefaultCap))
	o.recordSize = sched.DefaultRecordSize
	fs.Var(sizeFlag{&o.recordSize}, "record-size", "bytes per buffer `S`, the longest record (64K, 4M, ...); default 256K")
	fs.Var(sizeFlag{&o.sortMemory}, "sort-memory", "bytes `S` sort keeps in memory before it spills to disk; default 4M")
	fs.BoolVar(&o.stats, "stats", false, "print per-queue and per-task statistics on stderr")
	fs.StringVar(&o.statsJSON, "stats-json", "", "write the statistics as JSON to `FILE`")
	fs.BoolVar(&o.explain, "explain", false, "print the graph, capacities, the bound, B x S and the policy, and exit")
	fs.BoolVar(&o.dot, "dot", false, "print the graph in Graphviz DOT (tasks as transitions, queues as places) and exit")
	fs.StringVar(&o.file, "f", "", "run the script in `FILE`")
	fs.StringVar(&o.trace, "trace", "", "under --policy ros, write each task switch to `FILE`")
	help := func(w io.Writer) {
		fmt.Fprint(w, usage)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fs.VisitAll(func(f *flag.Flag) {
			name, text := flag.UnquoteUsage(f)
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			if name != "" {
				name = " " + name
			}
			fmt.Fprintf(tw, "  %s%s%s\t%s\n", dash, f.Name, name, text)
		})
		tw.Flush()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(stdout)
			return o, nil, 0, false
		}
		fmt.Fprintf(stderr, "tpipe: %v (see tpipe --help)\n", err)
		return o, nil, 2, false
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	bad := func(format string, a ...any) (options, []string, int, bool) {
		fmt.Fprintf(stderr, "tpipe: "+format+"\n", a...)
		return o, nil, 2, false
	}
	switch {
	case set["buffers"] && o.buffers < 1:
		return bad("--buffers %d: need at least 1 buffer", o.buffers)
	case set["cap"] && !o.capAuto && o.cap < 1:
		return bad("--cap %d: need a capacity of at least 1, or auto", o.cap)
	case !known(o.policy):
		return bad("--policy %s: unknown policy (known: %s)", o.policy, strings.Join(sched.Policies, ", "))
	case o.explain && o.dot:
		return bad("give --explain or --dot, not both")
	case o.file != "" && fs.NArg() > 0:
		return bad("give a pipeline or -f FILE, not both")
	case fs.NArg() > 1:
		return bad("too many arguments: quote the pipeline as one argument, as in tpipe 'a | b'")
	}
	return o, fs.Args(), 0, true
}

func known(p string) bool {
	for _, k := range sched.Policies {
		if p == k {
			return true
		}
	}
	return false
}

// run is the whole command; main only adds signals and os.Exit.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	// Tasks' panics are already errors (package sched); this catches a bug
	// in tpipe's own code, so that no Go panic trace reaches a user.
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "tpipe: internal error: %v (please report it; TPIPE_DEBUG=1 shows where)\n", v)
			if os.Getenv("TPIPE_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
			status = 70 // EX_SOFTWARE
		}
	}()
	if len(args) > 0 && args[0] == "bench" {
		return benchCommand(ctx, args[1:], stdout, stderr)
	}
	o, rest, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	cfg := runner.Config{
		Policy: o.policy, Buffers: o.buffers, Cap: o.cap, CapAuto: o.capAuto, RecordSize: o.recordSize, SortMemory: o.sortMemory,
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
	}
	if o.trace != "" {
		f, err := os.Create(o.trace)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe: --trace: %s\n", fileError(err))
			return 2
		}
		defer f.Close()
		cfg.Trace = f
	}
	var src string
	switch {
	case o.file != "":
		b, err := os.ReadFile(o.file)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe: %s\n", fileError(err))
			return 2
		}
		src = string(b)
	case len(rest) == 1:
		src = rest[0]
	case isTerminal(stdin):
		return interactive(ctx, cfg, o, stdin, stdout, stderr)
	default:
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe: read script from stdin: %v\n", err)
			return 2
		}
		src = string(b)
		cfg.Stdin = nil // the script was stdin; commands get none
	}
	// Ctrl-C cancels the run: tasks stop, child processes are killed and
	// reaped, and the status is 130 as in a shell.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	r := runner.New(cfg)
	defer r.Close()
	if o.explain {
		return r.Explain(ctx, src, stdout)
	}
	if o.dot {
		return r.Dot(ctx, src, stdout)
	}
	r.BeforeRun = func(j *runner.Job) { limitMemory(j.Plan.Memory(), o.sortMemory) }
	var runs []*sched.Stats
	r.OnStats = func(st *sched.Stats) {
		runs = append(runs, st)
		if o.stats {
			runner.WriteStats(stderr, st)
		}
	}
	status = r.RunScript(ctx, src)
	if o.statsJSON != "" {
		if err := writeJSON(o.statsJSON, runs); err != nil {
			fmt.Fprintf(stderr, "tpipe: --stats-json: %s\n", fileError(err))
			if status == 0 {
				status = 1
			}
		}
	}
	return status
}

// limitMemory sets the GC's soft memory limit to the record memory B x S
// plus sort's budget plus room for the rest, so that the heap's growth
// between collections does not double what tpipe promised to use. A
// GOMEMLIMIT set by the user wins.
func limitMemory(recordMemory int64, sortMemory int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if sortMemory == 0 {
		sortMemory = builtin.DefaultSortMemory
	}
	debug.SetMemoryLimit(recordMemory + int64(sortMemory) + 8<<20)
}

func writeJSON(name string, runs []*sched.Stats) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := runner.WriteStatsJSON(f, runs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileError says "NAME: reason" as a shell does.
func fileError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		return pe.Path + ": " + strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
