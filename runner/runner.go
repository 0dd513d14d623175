// Package runner runs tpipe scripts: it turns each parsed pipeline into a
// task graph (builtins in process, external commands as processes, files
// and stdio attached as a shell would), plans it, and runs it with package
// sched; pipelines run one after another. It is the library behind the
// tpipe command, for Go programs that want the same language.
//
// A Runner is not safe for concurrent use; run one script at a time.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/syncio"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/shell"
	"github.com/tpipe/tpipe/task"
)

// Config is how pipelines run. The zero Config runs the concurrent policy
// with default sizes, no stdin, and discards output.
type Config struct {
	Policy     sched.Policy
	Buffers    int  // B; 0 means the bound of each graph
	Cap        int  // queue capacity; 0 means the policy's default (ros: 1, else graph.DefaultCap)
	CapAuto    bool // size capacities at run time (sched.Options.CapAuto); Cap is then ignored
	RecordSize int  // S; 0 means sched.DefaultRecordSize
	SortMemory int  // sort's memory before it spills; 0: builtin.AutoSortMemory
	Replicas   int  // copies of a stateless per-record stage (sched.Options.Replicas); 0: auto
	// Stats prints the statistics of each pipeline (WriteStats) on Stderr
	// when it ends.
	Stats bool
	// Progress says when a run shows the live view on Stderr. The zero
	// value is auto, as for the tpipe command: a program whose Stderr is
	// a terminal and Stdout is not shows it; ProgressOff never does.
	Progress Progress
	// Spool is the directory of the spool policy (sched.SpoolOptions.Dir);
	// Segment its segment size (0: sched.DefaultSegment); NoSync turns its
	// fsyncs off; Compress is its tokens' codec (the zero value, none, is
	// spool.DefaultCodec).
	Spool    string
	Segment  int
	NoSync   bool
	Compress recfile.Codec

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Dir            string              // where relative paths resolve; "" the current directory (cd changes it)
	Getenv         func(string) string // answers $NAME for names the script has not set; nil: the environment
	Environ        []string            // the shell's exported variables at start; nil: os.Environ()
	Trace          io.Writer           // task switches under ros (sched.Options.Trace)
	// Params are the script's arguments, $1 $2 ... ($@); Arg0 is $0
	// ("" : tpipe).
	Params []string
	Arg0   string
	// NoFallback refuses a command line that a builtin does not
	// implement, instead of running the program of that name on PATH
	// (builtin.UnsupportedError).
	NoFallback bool
	TempDir    string // where stalled graphs spill queues; "" os.TempDir()
}

// Runner runs scripts with one Config. Its Stats field collects the
// statistics of every pipeline run.
type Runner struct {
	cfg   Config
	pump  *Pump
	state *shellState
	// aborted is set when a word could not be expanded, exited by exit:
	// the script stops there, as bash's does.
	aborted, exited bool
	// OnStats, if set, is called after each pipeline with its statistics.
	OnStats func(*sched.Stats)
	// BeforeRun, if set, is called with each job just before it runs (the
	// tpipe command sets the GC's memory limit from the job's B x S).
	BeforeRun func(*Job)
	// AfterCommit, if set, is called after each token the spool policy
	// commits (sched.SpoolOptions.AfterCommit): tests kill tpipe there.
	AfterCommit func()
	// Advise, if set, words the advice after an error that a setting
	// would avoid (a record over the record size, too few buffers): the
	// setting's name in Settings and a value for it. The default speaks
	// of flags: "try --record-size 1M".
	Advise func(setting, value string) string
}

// New returns a Runner. Call Close when done with it.
func New(cfg Config) *Runner {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if _, ok := cfg.Stderr.(*os.File); !ok {
		// Tasks and processes write messages at the same time; a file is
		// safe for that, an arbitrary writer (a bytes.Buffer) is not.
		cfg.Stderr = syncio.NewLockedWriter(cfg.Stderr)
	}
	r := &Runner{cfg: cfg, state: newShellState(&cfg, cfg.Getenv)}
	if cfg.Stdin != nil {
		r.pump = NewPump(cfg.Stdin)
	}
	return r
}

// Close releases the Runner's stdin reader. It does not wait for a read of
// stdin in progress (a terminal read ends only when a line is typed).
func (r *Runner) Close() {
	if r.pump != nil {
		r.pump.Close()
	}
}

// Config returns the Runner's configuration.
func (r *Runner) Config() Config { return r.cfg }

// SetConfig changes the settings used by later pipelines (the interactive
// shell's `set`); stdio is kept.
func (r *Runner) SetConfig(c Config) {
	c.Stdin, c.Stdout, c.Stderr = r.cfg.Stdin, r.cfg.Stdout, r.cfg.Stderr
	r.cfg = c
}

// Status codes, as bash uses them.
const (
	StatusUsage       = 2   // usage and syntax errors
	StatusCannotExec  = 126 // found but not executable
	StatusNotFound    = 127 // command not found
	StatusInterrupted = 130 // Ctrl-C; other signals: SignalError
)

// Parse parses src. Its words are expanded when each pipeline runs.
func (r *Runner) Parse(src string) (*shell.Script, error) {
	return shell.Parse(src, shell.Options{})
}

// Status is $?: the status of the last pipeline run.
func (r *Runner) Status() int { return r.state.status }

// Exited reports whether a script ran exit: the interactive shell then
// ends with Status.
func (r *Runner) Exited() bool { return r.exited }

// RunScript parses src and runs its statements one after another, as a
// shell does: each pipeline's words are expanded just before it runs,
// with the variables, directory and $? left by those before it; && and
// || run a pipeline on the status of the one before. Pipelines linked by
// named edges (@name) run together as one graph, where the first of them
// stands. It returns the exit status of the last pipeline run (or 2 for a
// syntax error or a broken edge rule, reported on Stderr with a caret).
// Ctrl-C (ctx cancelled) stops the script with 130, or 128+n when ctx's
// cause is a *SignalError.
func (r *Runner) RunScript(ctx context.Context, src string) int {
	p, err := r.compileSource(src)
	if err != nil {
		return r.reportCompile(src, err)
	}
	p.src = src
	return r.runProgram(ctx, p)
}

// runProgram runs the statements of a compiled script one after another
// and returns the status of the last pipeline run.
func (r *Runner) runProgram(ctx context.Context, p *program) int {
	if r.spooled() && len(p.groups) > 1 {
		r.sayf("%v; this script has %d", errSpoolGraphs, len(p.groups))
		return StatusUsage
	}
	r.exited = false
	done := map[int]bool{} // groups of several pipelines already run
	for _, st := range p.script.Stmts {
		if ctx.Err() != nil {
			return cancelStatus(context.Cause(ctx))
		}
		first := p.index[st.Pipelines[0]]
		if g := p.groupOf(first); g != nil {
			// Pipelines linked by edges run as one graph, where the
			// first of them stands (checkGroup: each is a statement).
			if !done[g[0]] {
				done[g[0]] = true
				r.state.status = r.runGroup(ctx, p, g)
			}
			if r.aborted {
				r.aborted = false
				break
			}
			continue
		}
		status := r.runPipeline(ctx, p, st.Pipelines[0])
		r.state.status = status
		for i, op := range st.Ops {
			if r.aborted || r.exited {
				break
			}
			if (op == shell.AndOp) != (status == 0) {
				continue // the status so far stands
			}
			if ctx.Err() != nil {
				return cancelStatus(context.Cause(ctx))
			}
			r.state.status = status
			status = r.runPipeline(ctx, p, st.Pipelines[i+1])
		}
		r.state.status = status
		if r.aborted || r.exited {
			// As bash without a terminal: a word that cannot be
			// expanded ends the script, and so does exit.
			r.aborted = false
			break
		}
	}
	return r.state.status
}

// runPipeline expands pl with the shell's state as it is now and runs it:
// in the shell for its own commands, as a graph otherwise. It returns the
// status, inverted for a '!'.
func (r *Runner) runPipeline(ctx context.Context, p *program, pl *shell.Pipeline) int {
	status := r.runExpanded(ctx, p, pl)
	if pl.Negated {
		if status == 0 {
			return 1
		}
		return 0
	}
	return status
}

func (r *Runner) runExpanded(ctx context.Context, p *program, pl *shell.Pipeline) int {
	epl, err := r.expand(pl)
	if err != nil {
		status := r.reportExpand(p.src, err)
		if len(pl.Cmds) > 1 {
			r.aborted = false // bash runs a pipeline's commands in subshells
		}
		return status
	}
	if shellCommand(pl) {
		return r.runShellCommand(epl.Cmds[0])
	}
	for _, c := range epl.Cmds {
		if len(c.Args) == 0 {
			if len(epl.Cmds) == 1 && len(c.Redirs) == 0 {
				// bash: the words were all empty expansions, so
				// nothing runs and the assignments stay.
				return r.runShellCommand(c)
			}
			r.sayf("%s: the command's words expand to nothing", c.Pos)
			return 1
		}
	}
	ep, err := r.compile(&shell.Script{Pipelines: []*shell.Pipeline{epl}})
	if err != nil {
		return r.reportCompile(p.src, err)
	}
	return r.runJob(ctx, func() (*Job, error) { return r.build(ctx, ep, ep.ast.Pipelines, false) })
}

// runGroup expands the pipelines of group g of p, which named edges link,
// and runs them as one graph.
func (r *Runner) runGroup(ctx context.Context, p *program, g []int) int {
	var pls []*shell.Pipeline
	for _, i := range g {
		epl, err := r.expand(p.script.Pipelines[i])
		if err != nil {
			return r.reportExpand(p.src, err)
		}
		pls = append(pls, epl)
	}
	gp, err := r.compile(&shell.Script{Pipelines: pls})
	if err != nil {
		return r.reportCompile(p.src, err)
	}
	status := 0
	for _, grp := range gp.groups {
		status = r.runJob(ctx, func() (*Job, error) { return r.build(ctx, gp, grp, false) })
	}
	return status
}

// expand returns pl with every command's words expanded in the shell's
// state, in the shell's directory.
func (r *Runner) expand(pl *shell.Pipeline) (*shell.Pipeline, error) {
	x := r.state.expander(r.Dir())
	out := &shell.Pipeline{Pos: pl.Pos, Negated: pl.Negated}
	for _, c := range pl.Cmds {
		ec, err := x.Cmd(c)
		if err != nil {
			return nil, err
		}
		out.Cmds = append(out.Cmds, ec)
	}
	return out, nil
}

// reportExpand reports a word of src that cannot be expanded, at the
// word with a caret, and returns bash's status for it, 1.
func (r *Runner) reportExpand(src string, err error) int {
	var ee *shell.ExpandError
	if !errors.As(err, &ee) {
		return r.report(err)
	}
	fmt.Fprintf(r.cfg.Stderr, "tpipe: %s%s: %s\n", r.where(), ee.Pos, visible.Controls(ee.Msg))
	if src != "" {
		fmt.Fprintf(r.cfg.Stderr, "%s\n", strings.TrimSuffix(ee.Pos.Caret(src), "\n"))
	}
	r.aborted = ee.Fatal
	return 1
}

// where is the script file's name and a colon before a position, for a
// script given with -f (Config.Arg0); "" otherwise.
func (r *Runner) where() string {
	if r.cfg.Arg0 == "" {
		return ""
	}
	return r.cfg.Arg0 + ":"
}

// compileSource parses and compiles src.
func (r *Runner) compileSource(src string) (*program, error) {
	s, err := r.Parse(src)
	if err != nil {
		return nil, err
	}
	return r.precompile(s)
}

// Explain prints the settings and then the plan of every graph of src
// (see Explain) without running anything or touching output files; it
// returns an exit status.
func (r *Runner) Explain(ctx context.Context, src string, w io.Writer) int {
	fmt.Fprintf(w, "settings: %s\n", SettingsLine(&r.cfg))
	return r.eachPlan(ctx, src, w, Explain)
}

// Dot prints every graph of src in Graphviz's DOT language (see graph.Dot)
// without running anything; it returns an exit status.
func (r *Runner) Dot(ctx context.Context, src string, w io.Writer) int {
	return r.eachPlan(ctx, src, w, func(w io.Writer, j *Job) {
		o := graph.DotOptions{Title: j.title, Policy: j.Plan.Runs.String(), Buffers: j.Plan.Buffers, RecordSize: j.Plan.RecordSize}
		if kept := j.Plan.Kept(); kept != nil && kept.Dir != "" {
			o.Places = func(k int) string {
				e := kept.Edges[k]
				switch {
				case e.File != "":
					return e.File + " (in place)"
				case e.Virtual:
					return filepath.Join(kept.Dir, e.Place) + "/ (virtual)"
				}
				return filepath.Join(kept.Dir, e.Place) + "/"
			}
		}
		graph.Dot(w, j.Graph, o)
	})
}

func (r *Runner) eachPlan(ctx context.Context, src string, w io.Writer, show func(io.Writer, *Job)) int {
	p, err := r.compileSource(src)
	if err != nil {
		return r.reportCompile(src, err)
	}
	for i, g := range p.groups {
		job, err := r.build(ctx, p, g, true)
		if err != nil {
			return r.report(err)
		}
		if len(p.groups) > 1 {
			job.title = fmt.Sprintf("graph %d (%s)", i+1, lines(g))
			fmt.Fprintf(w, "%s:\n", job.title)
		}
		show(w, job)
		job.Close()
	}
	return 0
}

// lines says where a group of pipelines is: "line 3" or "lines 1, 2, 4".
func lines(g []*shell.Pipeline) string {
	var ls []string
	for _, pl := range g {
		ls = append(ls, fmt.Sprint(pl.Pos.Line))
	}
	if len(ls) == 1 {
		return "line " + ls[0]
	}
	return "lines " + strings.Join(ls, ", ")
}

// reportCompile reports an error of parsing or compiling src: a syntax
// error or a broken edge rule at its word with a caret (status 2), or a
// builtin's usage error.
func (r *Runner) reportCompile(src string, err error) int {
	var (
		pe *shell.ParseError
		ee *EdgeError
	)
	pos, msg := shell.Pos{}, ""
	switch {
	case errors.As(err, &ee):
		pos, msg = ee.Pos, ee.Msg
	case errors.As(err, &pe):
		pos, msg = pe.Pos, "syntax error: "+pe.Msg
	default:
		return r.report(err)
	}
	// The caret's lines escape control bytes themselves (shell.Pos.Caret).
	fmt.Fprintf(r.cfg.Stderr, "tpipe: %s%s: %s\n", r.where(), pos, visible.Controls(msg))
	r.state.status = StatusUsage
	if src != "" {
		fmt.Fprintf(r.cfg.Stderr, "%s\n", strings.TrimSuffix(pos.Caret(src), "\n"))
	}
	return StatusUsage
}

// RunPipeline builds and runs one pipeline and returns its exit status
// (bash's pipefail: the rightmost non-zero status). Errors are reported on
// Stderr, one line each.
func (r *Runner) RunPipeline(ctx context.Context, pl *shell.Pipeline) int {
	return r.runJob(ctx, func() (*Job, error) { return r.Build(ctx, pl) })
}

// runJob builds a job, runs it and returns its exit status.
func (r *Runner) runJob(ctx context.Context, build func() (*Job, error)) int {
	job, err := build()
	if err != nil {
		var ee *EdgeError
		if errors.As(err, &ee) {
			r.sayf("%s", ee)
			return StatusUsage
		}
		return r.report(err)
	}
	defer job.Close()
	if job.Warning != "" {
		r.sayf("warning: %s", job.Warning)
	}
	if r.BeforeRun != nil {
		r.BeforeRun(job)
	}
	view := r.startView(job)
	st, err := job.Plan.Run(ctx)
	if view != nil {
		view.Stop()
	}
	if st != nil {
		if r.cfg.Stats {
			WriteStats(r.cfg.Stderr, st)
		}
		if r.OnStats != nil {
			r.OnStats(st)
		}
	}
	if err == nil {
		for _, a := range job.commits {
			if cerr := a.commit(); err == nil && cerr != nil {
				err = cerr
			}
		}
	}
	if cerr := job.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// A task may say only "canceled"; the cause says why.
		err = context.Cause(ctx)
	}
	if err != nil {
		return r.report(err)
	}
	return 0
}

// report prints err as one line and returns the exit status it means.
func (r *Runner) report(err error) int {
	var (
		ee *task.ExitError
		ue *builtin.UsageError
		te *sched.TaskError
		d  *buffer.DeadlockError
		me *sched.MemoryError
		tm *TaskMemoryError
		rs *RecordSizeError
	)
	switch {
	case errors.As(err, &me):
		r.sayf("%s%s", me.Error(), r.advice(err))
		return StatusUsage
	case errors.As(err, &tm):
		r.sayf("%s%s", tm.Error(), r.advice(err))
		return StatusUsage
	case errors.As(err, &rs):
		r.sayf("%s%s", rs.Error(), r.advice(err))
		return StatusUsage
	case errors.Is(err, context.Canceled):
		return cancelStatus(err)
	case errors.As(err, &ee) && errors.As(err, &te):
		// The command has said why, if it had something to say.
		if ee.Err != nil {
			r.sayf("%s", ee.Err)
		}
		return ee.Code
	case errors.As(err, &ue):
		r.sayf("%s", strings.TrimPrefix(ue.Error(), "tpipe: "))
		return StatusUsage
	case errors.As(err, &d):
		r.sayf("%s%s", d.Error(), r.advice(err))
		return 1
	default:
		r.sayf("%s%s", say.OneLine(err.Error()), r.advice(err))
		return 1
	}
}

// advice names the setting that would avoid err, and a value for it, in
// the words of whoever set the Config (Runner.Advise); "" when no setting
// would help.
func (r *Runner) advice(err error) string {
	var (
		tl *record.TooLargeError
		d  *buffer.DeadlockError
		me *sched.MemoryError
		tm *TaskMemoryError
		rs *RecordSizeError
	)
	setting, value := "", ""
	switch {
	case errors.As(err, &tm):
		setting, value = "sort-memory", budgetAdvice(tm)
		if value == "" {
			return ""
		}
	case errors.As(err, &rs):
		setting, value = "record-size", record.FormatSize(int64(rs.Need))
	case errors.As(err, &me):
		setting, value = r.memoryAdvice(me)
		if setting == "" {
			return ""
		}
	case errors.As(err, &tl) && tl.Limit == "":
		// Only a limit of S is a setting; the longest whole record is not.
		need := tl.Size
		if tl.AtLeast {
			need = max(need, 2*tl.Max)
		}
		setting, value = "record-size", record.FormatSize(int64(roundUpPow2(need)))
	case errors.As(err, &d) && d.Need > 0:
		setting, value = "buffers", strconv.Itoa(d.Need)
	default:
		return ""
	}
	if r.Advise != nil {
		return "; " + r.Advise(setting, value)
	}
	return fmt.Sprintf("; try --%s %s", setting, value)
}

// memoryAdvice proposes a setting that brings B x S within half of what the
// machine can hold: fewer buffers if B was asked for, else (B is the bound
// of the graph, which fewer buffers would break) a smaller record size, a
// power of two of at least 4 KiB. It returns "" when neither would do.
func (r *Runner) memoryAdvice(me *sched.MemoryError) (setting, value string) {
	room := me.Available / 2
	if r.cfg.Buffers > 0 {
		if n := room / uint64(me.RecordSize); n >= 1 {
			return "buffers", strconv.FormatUint(n, 10)
		}
	}
	size := uint64(1) << 30
	for size >= 4<<10 && size*uint64(me.Buffers) > room {
		size >>= 1
	}
	if size < 4<<10 || size >= uint64(me.RecordSize) {
		return "", ""
	}
	return "record-size", record.FormatSize(int64(size))
}

// roundUpPow2 is the least power of two at least n (n >= 1).
func roundUpPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// sayf prints a message on Stderr after "tpipe: ", with the control bytes
// of what the user typed (a file name, a command) escaped.
func (r *Runner) sayf(format string, a ...any) {
	fmt.Fprintf(r.cfg.Stderr, "tpipe: %s\n", visible.Controls(fmt.Sprintf(format, a...)))
}

// Job is a pipeline ready to run: its graph with the plan to run it, and
// the files it opened.
type Job struct {
	Graph   *graph.Graph
	Plan    *sched.Plan
	Warning string // B below the bound
	// Spilling names the tasks that hold data outside the pool, each up
	// to TaskMemory bytes in memory before it spills to disk.
	Spilling   []string
	TaskMemory int64
	// OwnBudgets are the tasks that spill at a budget of their own (sort
	// -S), "name (N)" each for --explain, and OwnMemory their sum. They
	// take no share of TaskMemory.
	OwnBudgets []string
	OwnMemory  int64
	// Unbounded names the tasks whose memory has no budget
	// (builtin.Cmd.Unbounded): an interpreter's arrays.
	Unbounded []string
	// TaskMemoryWhy says how TaskMemory was chosen when --sort-memory is
	// auto: ": auto, 1/8 of ... available".
	TaskMemoryWhy string
	// Cuts says which sorts keep only the lines a head or tail after them
	// reads (builtin.Cut), one sentence each, for --explain.
	Cuts []string
	// RecordSizeWhy says why S is above the default, when the graph's
	// video decided it: "record size 1.5 MiB = one 1280x720 4:2:0 frame
	// (from in.y4m's header)".
	RecordSizeWhy string
	// Fallbacks says which commands run the system's program because
	// their builtin does not implement the command line: "grep -P:
	// system grep".
	Fallbacks []string
	title     string       // "graph 2 (lines 3, 4)" when a script has several
	commits   []*atomicOut // '>' files of a spooled run, renamed in when it ends well
	closers   []io.Closer
	closed    bool
	// With the live view on: the stderr of the job's in-process tasks,
	// their stdout if it is a terminal, and what follows the input of the
	// first command.
	stderr, stdout *outSwitch
	input          *inputMeter
	// terminalIO: a task of the job writes to a terminal or reads one
	// (the run's stdout or stdin, a '>' /dev/tty), so that progress auto
	// keeps the live view out of its way.
	terminalIO bool
}

// Close closes the files the job opened; it returns the first error (a
// full disk shows up here for a '>' file).
func (j *Job) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	var first error
	for _, c := range j.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Dir returns the directory relative names resolve against: the shell's
// current directory (changed by cd), absolute.
func (r *Runner) Dir() string {
	if r.cfg.Dir != "" {
		if abs, err := filepath.Abs(r.cfg.Dir); err == nil {
			return abs
		}
		return r.cfg.Dir
	}
	wd, _ := os.Getwd()
	return wd
}
