package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/front/loadhook"
	"github.com/tpipe/tpipe/front/metrics"
	"github.com/tpipe/tpipe/front/stages"
	"github.com/tpipe/tpipe/front/status"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/natsq"
	"github.com/tpipe/tpipe/spool/place"
)

// The commands that run the job engine (package jobs) share one set of
// flags, parsed here: tpipe pmjq in its forms, tpipe serve, and pmjq 1.0's
// command line, which takes tpipe's flags beside its own options.

// jobForm is a command that runs the job engine.
type jobForm int

const (
	formPmjq  jobForm = iota // tpipe pmjq: INDIR 'FILTER' OUTDIR, or --inputs
	formServe                // tpipe serve DIR 'PIPELINE'
	formPmjq1                // pmjq 1.0's command line
)

// prog is how the form names itself in messages.
func (form jobForm) prog() string {
	return [...]string{"tpipe pmjq", "tpipe serve", "pmjq"}[form]
}

// jobFlags are the flags of the job engine's commands.
type jobFlags struct {
	form       jobForm
	cfg        runner.Config
	o          jobs.Options
	retries    int
	atMostOnce bool
	only       string // serve
	replace    bool   // serve on NATS: another pipeline than the net's
	cmd        string // pmjq --inputs
	output     string // pmjq --inputs
	stdout     io.Writer
	create     bool // make missing input folders
	explain    bool // say what would run, and how jobs are taken, and exit
	// what is observed beside the engine (see observe)
	status, metrics string
	hooks           []loadhook.Hook
	badSetting      error
}

// flagSet returns form's flags, bound to f. Only pmjq 1.0's command line
// lacks --once (it has --quit-when-empty).
func (f *jobFlags) flagSet(form jobForm) *flag.FlagSet {
	f.form = form
	fs := flag.NewFlagSet(form.prog(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if form != formPmjq1 {
		fs.BoolVar(&f.o.Once, "once", false, "exit when no job is left to do and no worker anywhere holds one (for scripts); status 1 if a job failed")
	}
	fs.DurationVar(&f.o.Lease, "lease", place.DefaultLease, "a claim not renewed for `D` is taken back by any worker (one of this host whose process is gone: at once)")
	fs.IntVar(&f.o.Workers, "workers", runtime.NumCPU(), "run `N` jobs at once in this process (default: the number of CPUs)")
	fs.IntVar(&f.retries, "retries", 0, "run a failing job `N` more times before it goes to the failed folder")
	fs.DurationVar(&f.o.RetryDelay, "retry-delay", 0, "wait `D` before running a failed job again")
	fs.BoolVar(&f.atMostOnce, "at-most-once", false, "remove a job before its output is committed: a crash loses it instead of running it again")
	fs.BoolVar(&f.o.NoSync, "no-sync", false, "do not fsync outputs and folders: faster; a power cut (not a crash of tpipe) may lose finished jobs")
	fs.StringVar(&f.o.Host, "host", "", "the host `NAME` in this worker's claims (default: the host name); hosts that share folders must have different names")
	fs.DurationVar(&f.o.Settle, "settle", place.DefaultSettle, "a file no event says is complete (found at start; on NFS or sshfs, every file) is a job once its size and modification time have stayed the same for `D` (on a network file system, 1s more)")
	fs.BoolVar(&f.create, "create", false, "make an input folder that does not exist (without it, a missing one is refused as a typo)")
	fs.BoolVar(&f.explain, "explain", false, "print the stages, their folders and how files there become jobs, and exit")
	switch form {
	case formServe:
		fs.StringVar(&f.only, "only", "", "run the workers of stage `TASK` only (see --explain of the pipeline for the names)")
		fs.BoolVar(&f.replace, "replace", false, "on NATS: serve the net with this pipeline though it was served with another (stop the other workers first)")
	case formPmjq:
		fs.StringVar(&f.cmd, "cmd", "", "the and-merge's command, argv words with `CMD` $1 $2... the paths of a set's files (with --inputs)")
		fs.StringVar(&f.output, "output", "", "the and-merge's output folder `OUTDIR` (with --inputs); without it CMD's stdout is tpipe's")
	}
	statusHelp := "keep this worker's status file in `DIR`/.status (tpipe status DIR)"
	if form == formServe {
		statusHelp += "; default the served DIR"
	}
	fs.StringVar(&f.status, "status", "", statusHelp)
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics on http://`ADDR`/metrics")
	bindSettings(fs, &f.cfg, &f.badSetting, nil)
	return fs
}

// arity says how many values the flag --name of fs takes, for pmjq 1.0's
// parser, which reads its options and tpipe's together.
func arity(fs *flag.FlagSet) func(name string) (int, bool) {
	return func(name string) (int, bool) {
		if name == "--max-load" || name == "--min-load" {
			return 2, true
		}
		fl := fs.Lookup(strings.TrimPrefix(name, "--"))
		if fl == nil || !strings.HasPrefix(name, "--") {
			return 0, false
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return 0, true
		}
		return 1, true
	}
}

// parse parses args with fs (from flagSet); on a usage error it prints one
// line and ok is false with status 2, on --help usage and the flags go to
// stdout with status 0.
func (f *jobFlags) parse(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (rest []string, status int, ok bool) {
	bad := func(format string, a ...any) ([]string, int, bool) {
		return nil, pmjqUsageError(stderr, f.form.prog(), format, a...), false
	}
	f.stdout = stdout
	hooks, args, err := loadhook.Extract(args)
	if err != nil {
		return bad("%v", err)
	}
	f.hooks = hooks
	// Flags may come after the folders too (tpipe pmjq in 'wc -l' out
	// --once), as people type them.
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			printFlags(stdout, fs)
			return nil, 0, false
		}
		if f.badSetting != nil {
			return bad("--%s", f.badSetting)
		}
		return bad("%s", durationHint(err))
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
	case f.o.Settle <= 0:
		return bad("--settle %v: want a positive time, such as 1s", f.o.Settle)
	}
	if f.atMostOnce {
		f.o.Delivery = place.AtMostOnce
	}
	f.o.Prog = "tpipe"
	if f.form == formPmjq1 {
		f.o.Prog = "pmjq"
	}
	return pos, 0, true
}

// durationHint adds to a flag's error what to do: for a time given
// without its unit (--settle 5), what a time looks like; for an unknown
// one, that a filter's options go inside its quotes.
func durationHint(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "flag provided but not defined: ") {
		msg += " (an option of the filter? quote the whole filter or pipeline: 'wc -l')"
	}
	if strings.Contains(msg, "parse error") && (strings.Contains(msg, "-settle") || strings.Contains(msg, "-lease") || strings.Contains(msg, "-retry-delay")) {
		msg += ": a time is a number with its unit, such as 5s, 500ms or 2m"
	}
	return msg
}

// missingProgram returns an error naming the first command of the
// pipeline src that is neither a builtin nor a program on PATH, with its
// position: every job would fail with it (127), so it is said at start.
// With the fallback off, a command line its builtin does not implement
// is said at start the same way: every job would fail with it too.
func missingProgram(src string, cfg runner.Config) error {
	r := runner.New(runner.Config{Getenv: cfg.Getenv, NoFallback: cfg.NoFallback})
	defer r.Close()
	cmds, _, err := r.Commands(src)
	if err != nil {
		var usage *builtin.UsageError
		if cfg.NoFallback && errors.As(err, &usage) {
			if usage.Cmd == "tpipe" {
				return errors.New(usage.Msg) // (the line says whose it is)
			}
			return err
		}
		return nil // (the caller's compile reports it)
	}
	for _, c := range cmds {
		if c.Builtin {
			continue
		}
		if _, err := ext.LookPath(c.Cmd.Args[0].Value); err != nil {
			return fmt.Errorf("%v (at %d:%d)", err, c.Cmd.Pos.Line, c.Cmd.Pos.Col)
		}
	}
	return nil
}

// badPipeline says that the pipeline argument what ('FILTER' or
// 'PIPELINE') is not one to run, and what the order of the arguments is;
// the status is 2.
func badPipeline(stderr io.Writer, prog, what, src, order string, err error) int {
	hint := ""
	if fi, serr := os.Stat(src); serr == nil && fi.IsDir() {
		hint = fmt.Sprintf(" (%s is a folder)", visible.Controls(src))
	}
	// The order is pointed out where the arguments may have been given
	// in another order: the pipeline is one word (a folder's name?).
	if strings.ContainsAny(strings.TrimSpace(src), " \t|;") {
		order = ""
	}
	if order != "" {
		order = "; the order is " + order
	}
	fmt.Fprintf(stderr, "%s: %s %s: %v%s%s\n", prog, what, visible.Controls(strconv.Quote(src)), visible.Controls(err.Error()), hint, order)
	return 2
}

// printFlags lists the flags of fs, and the load hooks, which
// loadhook.Extract reads before fs does.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	rows := append(flagRows(fs),
		row{"  --max-load L CMD", "run CMD when the 1-minute load average is above L"},
		row{"  --min-load L CMD", "run CMD when it is below L (each at most once a minute)"})
	writeRows(w, termColumn(rows, 28), rows)
}

// pmjqUsageError prints a usage error of the job commands (and status and
// scripts); the status is 2.
func pmjqUsageError(stderr io.Writer, prog, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: %s (see %s --help)\n", prog, visible.Controls(fmt.Sprintf(format, a...)), prog)
	return 2
}

var pmjqJobsUsage = `usage: tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]
       tpipe pmjq [flags] --inputs PATTERN DIR1 DIR2... --cmd 'CMD $1 $2...'
                  [--output OUTDIR]
       pmjq [--quit-when-empty] --input=DIR/REGEX... [--invariant=TEMPLATE]
            CMDTEMPLATE --output=TEMPLATE... [--stderr=TEMPLATE]
            [--error=TEMPLATE...]

The first form runs FILTER, a tpipe pipeline, on every file of INDIR as a
job, as pmjq's daemons do: the job is FILTER's standard input, and its
standard output becomes OUTDIR/<the job's name> (in every OUTDIR given),
written under a temporary name and renamed whole; then the job is removed
from INDIR. Any number of workers, processes and hosts sharing the folders
share the jobs.

The second is the and-merge: when every DIRi holds a file whose name
matches PATTERN with the same first group, CMD runs with $1, $2... the
paths of those files (argv words, never a shell; $1 is also its stdin);
its stdout goes to OUTDIR/<group> atomically, then the files are removed.

The third is pmjq 1.0's command line, run unchanged (docs/scale-out.md); it
takes the flags below too, but --once (it has --quit-when-empty).

A job whose command fails is run again --retries times, then moved to the
failed folder beside its input folder, INDIR.failed, with NAME.stderr and
NAME.status beside it (pmjq 1.0's form: to its --error names, or left in
place without them).
` + intakeHelp + `
flags:
`

var serveUsage = `usage: tpipe serve [flags] DIR 'PIPELINE'
       tpipe serve [flags] nats://HOST:PORT/NAME 'PIPELINE'

Serves PIPELINE: each file dropped in DIR/in is a job that flows through
the pipeline, each command a stage with its workers and each edge a folder
under DIR, and its result lands in DIR/out/<the job's name>. Any number of
serve processes, on this host or on hosts sharing DIR, share the work.
DIR must exist (--create makes it); serve makes the folders under it.

On NATS JetStream, the net NAME is a stream: jobs come from NAME.in
(tpipe put nats://HOST:PORT/NAME FILE...), each edge is a subject, and
results go to NAME.out (tpipe get nats://HOST:PORT/NAME DIR). Workers on
any hosts that reach the server share the work; a job whose worker died
is delivered again after --lease.
` + intakeHelp + `
flags:
`

// intakeHelp is how files dropped in a folder become jobs, for the help
// of pmjq and serve. It is wrapped here because the partial names it lists
// come from package place.
var intakeHelp = "\n" + wrapped("A file in an input folder is a job only once it is complete: on a local "+
	"folder, once its writer closes it or it is moved in; otherwise (a file found at start, every "+
	"file on NFS or sshfs) once its size and modification time have stayed the same for --settle "+
	"(1s; on a network file system 1s more). Hidden names (.x), #x# and names ending in "+
	place.PartialNames()+" are never jobs: write under such a name, then rename. From a program, "+
	"submit with tpipe put INDIR FILE..., or write elsewhere on the same file system and mv. A job "+
	"whose file changes while it runs is put back and done again: nothing is removed that was not "+
	"processed whole. An input folder that does not exist is refused (a typo), unless --create.")

// pmjqJobs is `tpipe pmjq [flags] INDIR 'FILTER' OUTDIR [OUTDIR...]`,
// tpipe's own form of pmjq (pmjqCommand tells it from the others).
func pmjqJobs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f jobFlags
	rest, status, ok := f.parse(f.flagSet(formPmjq), pmjqJobsUsage, args, stdout, stderr)
	if !ok {
		return status
	}
	if f.cmd != "" || f.output != "" {
		return pmjqUsageError(stderr, "tpipe pmjq", "--cmd and --output go with --inputs PATTERN DIR...")
	}
	if len(rest) < 3 {
		return pmjqUsageError(stderr, "tpipe pmjq", "want INDIR 'FILTER' OUTDIR, got %d %s", len(rest), say.Plural(len(rest), "argument"))
	}
	f.cfg.Stderr = stderr
	filter, err := stages.Script(rest[1], f.cfg)
	if err != nil {
		r := runner.New(runner.Config{Stderr: stderr})
		defer r.Close()
		return r.Report(rest[1], err)
	}
	if err := missingProgram(rest[1], f.cfg); err != nil {
		return badPipeline(stderr, "tpipe pmjq", "FILTER", rest[1], "INDIR 'FILTER' OUTDIR", err)
	}
	for _, a := range append([]string{rest[0]}, rest[2:]...) {
		if m := mistypedAddr(a); m != "" {
			return pmjqUsageError(stderr, "tpipe pmjq", "%s", m)
		}
	}
	if natsq.IsAddr(rest[0]) {
		return f.pmjqNATS(ctx, rest, filter, stderr)
	}
	for _, o := range rest[2:] {
		if natsq.IsAddr(o) {
			return pmjqUsageError(stderr, "tpipe pmjq", "OUTDIR %s is on NATS and INDIR is a folder: one run uses one kind of place", o)
		}
	}
	in, err := absDir(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "tpipe pmjq: %s\n", fileError(err))
		return 2
	}
	st := jobs.Stage{Name: "pmjq", In: []string{in}, Retries: f.retries, Run: filter}
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
	return f.run(ctx, []jobs.Stage{st}, nil, stderr)
}

// serveCommand is `tpipe serve [flags] DIR 'PIPELINE'`.
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f jobFlags
	rest, status, ok := f.parse(f.flagSet(formServe), serveUsage, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) != 2 {
		return pmjqUsageError(stderr, "tpipe serve", "want DIR 'PIPELINE', got %d %s", len(rest), say.Plural(len(rest), "argument"))
	}
	if m := mistypedAddr(rest[0]); m != "" {
		return pmjqUsageError(stderr, "tpipe serve", "%s", m)
	}
	if natsq.IsAddr(rest[0]) {
		return f.serveNATS(ctx, rest[0], rest[1], stderr)
	}
	dir, err := absDir(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "tpipe serve: %s\n", fileError(err))
		return 2
	}
	net, err := stages.NewNet(dir, rest[1], f.cfg)
	if err != nil {
		var ne *stages.NetError
		if errors.As(err, &ne) {
			fmt.Fprintf(stderr, "tpipe %s\n", visible.Controls(ne.Error()))
			return 2
		}
		r := runner.New(runner.Config{Stderr: stderr})
		defer r.Close()
		return r.Report(rest[1], err)
	}
	if err := missingProgram(rest[1], f.cfg); err != nil {
		return badPipeline(stderr, "tpipe serve", "PIPELINE", rest[1], "DIR 'PIPELINE'", err)
	}
	if status := f.inputFolder("tpipe serve", "folder", rest[0], dir, stderr); status != 0 {
		return status
	}
	strayJobs(dir, rest[0], stderr)
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
	if f.status == "" && !f.explain {
		f.status = dir // tpipe status DIR shows the served net's workers
	}
	// The net's own folders are serve's to make, its intake DIR/in too.
	if !f.explain {
		if err := os.MkdirAll(filepath.Join(dir, "in"), 0o700); err != nil {
			fmt.Fprintf(stderr, "tpipe serve: %s\n", fileError(err))
			return 1
		}
	}
	return f.run(ctx, stages, nil, stderr)
}

// strayJobs says once of each file in a served folder dir itself (given
// as shown) that it is not a job: jobs go to dir/in (a job put there
// before serve had made in/).
func strayJobs(dir, shown string, stderr io.Writer) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Type().IsRegular() && place.ValidName(e.Name()) == nil {
			fmt.Fprintf(stderr, "tpipe serve: %s is not a job: jobs go in %s (mv it there)\n",
				visible.Controls(filepath.Join(shown, e.Name())), visible.Controls(filepath.Join(shown, "in")+"/"))
		}
	}
}

// inputFolder checks that the input folder dir (abs its absolute path)
// exists, or makes it under --create; a missing one is a typo, refused
// with status 2 (under --explain, only said).
func (f *jobFlags) inputFolder(prog, what, dir, abs string, stderr io.Writer) int {
	label := strings.TrimSpace(what + " " + visible.Controls(dir))
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return 0
	case err == nil:
		fmt.Fprintf(stderr, "%s: %s is not a folder\n", prog, label)
		return 2
	case !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
		return 2
	case f.explain:
		return 0
	case f.create:
		if err := os.MkdirAll(abs, 0o700); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "%s: %s does not exist (a typo? --create makes it)\n", prog, label)
	return 2
}

// intakes returns the input folders of stages that no stage writes: where
// jobs come from outside, judged by the intake's rule.
func intakes(stages []jobs.Stage) []string {
	written := map[string]bool{}
	for _, st := range stages {
		for _, ps := range st.Out {
			for _, p := range ps {
				written[filepath.Clean(p)] = true
			}
		}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, st := range stages {
		for _, in := range st.In {
			in = filepath.Clean(in)
			if !written[in] && !seen[in] {
				seen[in] = true
				dirs = append(dirs, in)
			}
		}
	}
	return dirs
}

// explainJobs prints the stages, their folders and the intake's rule.
func (f *jobFlags) explainJobs(stages []jobs.Stage, stdout io.Writer) int {
	fmt.Fprintf(stdout, "stages (upstream first):\n")
	for _, st := range stages {
		var outs []string
		for _, ps := range st.Out {
			for _, p := range ps {
				outs = append(outs, jobs.ShortPath(p))
			}
		}
		var ins []string
		for _, in := range st.In {
			ins = append(ins, jobs.ShortPath(in))
		}
		out := "its stdout"
		if len(outs) > 0 {
			out = strings.Join(outs, ", ")
		}
		fmt.Fprintf(stdout, "  %s: %s -> %s", visible.Controls(st.Name), visible.Controls(strings.Join(ins, ", ")), visible.Controls(out))
		if dirs := st.FailedDirs(); len(dirs) > 0 {
			var failed []string
			for _, d := range dirs {
				failed = append(failed, jobs.ShortPath(d))
			}
			fmt.Fprintf(stdout, "; failed jobs to %s", visible.Controls(strings.Join(failed, ", ")))
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "intake (where jobs come from outside; the other folders are written by the stages, whole):\n")
	for _, dir := range intakes(stages) {
		rule := "does not exist: refused unless --create"
		if fi, err := os.Stat(filepath.Dir(dir)); f.form == formServe && err == nil && fi.IsDir() {
			rule = "does not exist yet: made at start, as the net's other folders are"
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			rule = place.IntakeRule(dir, f.o.Settle, f.o.Watch.NoEvents)
		}
		fmt.Fprintf(stdout, "  %s: %s\n", visible.Controls(jobs.ShortPath(dir)), rule)
	}
	fmt.Fprintf(stdout, "never jobs: hidden names (.x), #x#, and names ending in %s\n", place.PartialNames())
	fmt.Fprintf(stdout, "checked: a job's input is stamped (size, modification time) when claimed and again before it is removed; one that changed is put back and done again\n")
	fmt.Fprintf(stdout, "delivery: %s; %d workers in this process\n", f.o.Delivery, f.o.Workers)
	return 0
}

// run runs the stages until a signal, or until quiet under --once, with
// the status file, metrics and load hooks the flags ask for, and returns
// the command's status: 0; 1 when the run stopped on an error, or a job
// failed (under --once; for pmjq 1.0's command line, a job left in place
// for want of --error); 128+n on signal n. w is the claims' owner, if the
// caller made one to open places of its own with (pmjq 1.0's log); run
// makes one otherwise. The caller has set the signals up (exitOn).
func (f *jobFlags) run(ctx context.Context, stages []jobs.Stage, w *place.Worker, stderr io.Writer) int {
	prog := f.form.prog()
	for _, dir := range intakes(stages) {
		if status := f.inputFolder(prog, "input folder", jobs.ShortPath(dir), dir, stderr); status != 0 {
			return status
		}
	}
	if f.explain {
		return f.explainJobs(stages, f.stdout)
	}
	if w == nil {
		var err error
		if w, err = f.worker(); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
			return 1
		}
		defer w.Close()
	}
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
	obs, stop, err := f.observe(ctx, w, seen, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer stop()
	f.o.Stderr, f.o.Observer, f.o.Worker = stderr, obs, w
	n, err := jobs.Run(ctx, stages, f.o)
	return f.runStatus(ctx, n, err, stderr)
}

// worker makes the claims' owner the flags ask for.
func (f *jobFlags) worker() (*place.Worker, error) {
	return place.NewWorker(place.Options{Host: f.o.Host, Lease: f.o.Lease, NoSync: f.o.NoSync})
}

// observe starts what the flags ask for beside the engine: the status
// file, the metrics server, the load hooks. stop ends them and waits.
func (f *jobFlags) observe(ctx context.Context, w *place.Worker, stages []status.Stage, stderr io.Writer) (jobs.Observer, func(), error) {
	var dirs []string
	for _, s := range stages {
		dirs = append(dirs, s.Inputs...)
		dirs = append(dirs, s.Outputs...)
	}
	return f.observeWith(ctx, w.Owner(), w.Lease(), stages, dirs, metrics.FolderCounts, stderr)
}

// observeWith is observe for places of any backend: owner and lease are
// the status file's, places are the metrics' places, which inspect reads.
func (f *jobFlags) observeWith(ctx context.Context, owner place.Owner, lease time.Duration, stages []status.Stage, places []string, inspect metrics.Inspector, stderr io.Writer) (jobs.Observer, func(), error) {
	prog := f.form.prog()
	var obs jobs.Observers
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if f.status != "" {
		sw, err := status.NewWriter(f.status, owner, lease, stages, status.Options{})
		if err != nil {
			return nil, stop, fmt.Errorf("--status: %w", err)
		}
		obs = append(obs, sw)
		stops = append(stops, func() { sw.Close() })
	}
	if f.metrics != "" {
		srv, err := metrics.ListenWith(f.metrics, places, inspect)
		if err != nil {
			stop()
			return nil, func() {}, fmt.Errorf("--metrics: %w", err)
		}
		for _, s := range stages {
			srv.Declare(s.Name)
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

// absDir makes a folder argument absolute, so that its last element names
// the place (".", "..", "dir/" do not).
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("a folder is an empty string")
	}
	return filepath.Abs(dir)
}
