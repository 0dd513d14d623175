package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// about is what tpipe --help says after the forms (cmdForms).
const about = "Runs pipelines such as 'cat app.log | grep -i error | sort | uniq -c' inside " +
	"one process. Every record (a line) travels in one of B buffers of S bytes, " +
	"so record memory is at most B x S whatever the input; a B x S the machine " +
	"cannot hold is refused before the run."

// options are the command line: the settings of the runner (from the
// table runner.Settings) and what the command itself does.
type options struct {
	cfg       runner.Config
	statsJSON string
	explain   bool
	dot       bool
	file      string
	trace     string
	version   bool
}

// flagSet returns the main form's flags, bound to o; see bindSettings
// for bad and raw.
func (o *options) flagSet(bad *error, raw map[string]string) *flag.FlagSet {
	fs := flag.NewFlagSet("tpipe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindSettings(fs, &o.cfg, bad, raw)
	fs.StringVar(&o.statsJSON, "stats-json", "", "write the statistics as JSON to `FILE`")
	fs.BoolVar(&o.explain, "explain", false, "print the graph, capacities, the bound, B x S and the policy, and exit")
	fs.BoolVar(&o.dot, "dot", false, "print the graph in Graphviz DOT (tasks as transitions, queues as places) and exit")
	fs.StringVar(&o.file, "f", "", "run the script in `FILE`")
	fs.StringVar(&o.trace, "trace", "", "under --policy ros, write each task switch to `FILE`")
	fs.BoolVar(&o.version, "version", false, "print the version and the revision tpipe was built from, and exit")
	return fs
}

// parseFlags parses args; on a usage error it prints one line and the
// status is 2; on --help the usage goes to stdout and the status is 0.
func parseFlags(args []string, stdout, stderr io.Writer) (options, []string, int, bool) {
	var o options
	var badSetting error
	raw := map[string]string{}
	fs := o.flagSet(&badSetting, raw)
	help := func(w io.Writer) {
		writeForms(w, nil)
		fmt.Fprintln(w)
		writeWrapped(w, "", about)
		fmt.Fprint(w, "\nflags:\n")
		rows := flagRows(fs)
		writeRows(w, termColumn(rows, 28), rows)
		fmt.Fprintf(w, "\npolicies (--policy):\n")
		writePolicies(w)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(stdout)
			return o, nil, 0, false
		}
		if badSetting != nil {
			fmt.Fprintf(stderr, "tpipe: --%s\n", visible.Controls(badSetting.Error()))
			return o, nil, 2, false
		}
		fmt.Fprintf(stderr, "tpipe: %s (see tpipe --help)\n", visible.Controls(unknownFlag(fs, err)))
		return o, nil, 2, false
	}
	bad := func(format string, a ...any) (options, []string, int, bool) {
		fmt.Fprintf(stderr, "tpipe: "+format+"\n", a...)
		return o, nil, 2, false
	}
	switch p, given := raw["policy"]; {
	case o.cfg.Policy.Persistent() && o.cfg.Spool == "":
		return bad("--policy %s keeps its edges in a directory: give it with --%s DIR", o.cfg.Policy, o.cfg.Policy.FolderSetting())
	case o.cfg.Spool != "" && given && p != spoolPolicy.String():
		o.cfg.Policy = spoolPolicy
		return bad("--spool runs the spool policy: drop --policy %s", visible.Controls(p))
	case o.explain && o.dot:
		return bad("give --explain or --dot, not both")
	case o.file == "" && fs.NArg() > 1:
		if v := fs.Arg(0); v == "on" || v == "off" {
			// --fallback off: an on/off flag takes its value after '='.
			for i, a := range args[:len(args)-fs.NArg()] {
				if f := fs.Lookup(strings.TrimLeft(a, "-")); f != nil && isBoolFlag(f) && i == len(args)-fs.NArg()-1 {
					return bad("too many arguments: %s takes its value after '=', as in %s=%s", a, a, v)
				}
			}
		}
		return bad("too many arguments: quote the pipeline as one argument, as in tpipe 'a | b'")
	}
	return o, fs.Args(), 0, true
}

// unknownFlag words the flag package's error for a flag tpipe has not,
// with its two dashes and the flag it may be a typo of: "unknown flag
// --stat (--stats?)".
func unknownFlag(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err.Error()
	}
	msg := "unknown flag --" + name
	best, dist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := runner.EditDistance(name, f.Name); d < dist || d == dist && strings.HasPrefix(f.Name, name) {
			best, dist = f.Name, d
		}
	})
	if best != "" && dist <= 2 {
		msg += " (--" + best + "?)"
	}
	return msg
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isScriptFile reports whether the one argument given as a pipeline is
// the name of a regular file that is no program: a script meant for -f.
func isScriptFile(arg string) bool {
	if strings.ContainsAny(arg, " \t\n|;<>&") {
		return false
	}
	if _, ok := builtin.Lookup(arg); ok {
		return false
	}
	if _, err := exec.LookPath(arg); err == nil && !strings.Contains(arg, "/") {
		return false
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 == 0
}

// spoolPolicy is the policy whose folder --spool gives.
var spoolPolicy, _ = sched.FolderPolicy("spool")

// exitSignals end tpipe with status 128+n (see exiter).
var exitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// run is the whole command; main only adds os.Exit. On a signal of
// exitSignals run may itself exit (see exiter).
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
	if len(args) > 0 {
		switch args[0] {
		case "gc":
			return gcCommand(args[1:], stdout, stderr)
		case "bench":
			ctx, e := exitOn(ctx, exitSignals...)
			defer e.stop()
			return benchCommand(ctx, args[1:], stdout, stderr)
		case "pmjq":
			return pmjqCommand(ctx, args[1:], stdout, stderr)
		case "serve":
			ctx, e := exitOn(ctx, exitSignals...)
			defer e.stop()
			return serveCommand(ctx, args[1:], stdout, stderr)
		case "status":
			return statusCommand(ctx, args[1:], stdout, stderr)
		case "put":
			return putCommand(args[1:], stdin, stdout, stderr)
		case "get":
			return getCommand(ctx, args[1:], stdout, stderr)
		case "scripts":
			return scriptsCommand(args[1:], stdout, stderr)
		case "help":
			return helpCommand(ctx, args[1:], stdout, stderr)
		case "version":
			return versionCommand(args[1:], stdout, stderr)
		}
	}
	o, rest, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if o.version {
		return versionCommand(rest, stdout, stderr)
	}
	// The interactive shell keeps SIGINT (Ctrl-C) for itself: it stops
	// the running pipeline, not the shell. Like bash it ignores SIGQUIT
	// (Ctrl-\), which would otherwise end it.
	repl := o.file == "" && len(rest) == 0 && isTerminal(stdin)
	sigs := exitSignals
	if repl {
		sigs = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
		signal.Ignore(syscall.SIGQUIT)
	}
	ctx, e := exitOn(ctx, sigs...)
	defer e.stop()
	cfg := o.cfg
	cfg.Stdin, cfg.Stdout, cfg.Stderr = stdin, stdout, stderr
	var trace *outFile
	if o.trace != "" {
		trace = &outFile{name: o.trace}
		cfg.Trace = trace
		defer func() {
			if err := trace.close(); err != nil {
				fmt.Fprintf(stderr, "tpipe: --trace: %s\n", fileError(err))
				if status == 0 {
					status = 1
				}
			}
		}()
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
		cfg.Params, cfg.Arg0 = rest, o.file
	case len(rest) == 1:
		src = rest[0]
		if isScriptFile(src) {
			fmt.Fprintf(stderr, "tpipe: %s is a file, not a pipeline: to run the script in it, give tpipe -f %s\n", visible.Controls(src), visible.Controls(src))
			return 2
		}
	case repl:
		return interactive(ctx, e, cfg, o, stdin, stdout, stderr)
	default:
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe: read script from stdin: %v\n", err)
			return 2
		}
		src = string(b)
		cfg.Stdin = nil // the script was stdin; commands get none
	}
	r := runner.New(cfg)
	defer r.Close()
	r.AfterCommit = killAfterCommits()
	if o.explain {
		return r.Explain(ctx, src, stdout)
	}
	if o.dot {
		return r.Dot(ctx, src, stdout)
	}
	r.BeforeRun = func(j *runner.Job) {
		limitMemory(j.Plan.Memory(), j.TaskMemory*int64(len(j.Spilling))+j.OwnMemory, len(j.Unbounded) > 0)
	}
	var runs []*sched.Stats
	r.OnStats = func(st *sched.Stats) { runs = append(runs, st) }
	status = r.RunScript(ctx, src)
	if o.statsJSON != "" && len(runs) > 0 {
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
// (the buffers tasks keep among them) plus the budgets of the tasks that spill (runner.Job.Spilling) plus room
// for the rest, so that the heap's growth between collections does not
// double what tpipe promised to use. A run with a task whose memory has
// no budget (unbounded: awk's arrays) gets no limit: its live heap may
// pass any, and the GC would then collect without end (a program
// holding 250 MB of array ran 2.8x slower). A GOMEMLIMIT set by the user
// wins.
func limitMemory(recordMemory, taskMemory int64, unbounded bool) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if unbounded {
		debug.SetMemoryLimit(math.MaxInt64) // the default: none
		return
	}
	debug.SetMemoryLimit(recordMemory + max(taskMemory, builtin.DefaultSortMemory) + 8<<20)
}

// writeJSON writes the statistics of runs to the file name (see outFile).
func writeJSON(name string, runs []*sched.Stats) error {
	f := &outFile{name: name}
	err := runner.WriteStatsJSON(f, runs)
	if cerr := f.close(); err == nil {
		err = cerr
	}
	return err
}

// fileError says "NAME: reason" as a shell does.
func fileError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		return visible.Controls(pe.Path) + ": " + strings.ToUpper(s[:1]) + s[1:]
	}
	return visible.Controls(err.Error())
}
