package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/shell"
	"github.com/tpipe/tpipe/task"
)

// builder holds the state of one build: one graph of a program. Its
// methods are all in this file, in the order a build meets them: the
// pipelines with their redirects, each command by kind (command
// dispatches to builtinCommand, externalCommand or failing), the named
// edges, the byte input of a builtin that reads video, and what the live
// view follows.
type builder struct {
	r    *Runner
	ctx  context.Context
	prog *program
	g    *graph.Graph
	job  *Job
	// spillEnvs are the environments of the builtins that spill, given
	// their share of an automatic budget once all are known (shareMemory).
	spillEnvs []*builtin.Env
	names     map[string]int
	cap       int
	dry       bool                 // --explain: build the graph without touching '>' files
	edges     map[string]*edgeEnds // named edges, connected at the end
	size      sizeNeed             // the record size the graph's video needs
	first     bool                 // building the graph's first pipeline
}

// edgeEnds are the task ports a named edge links.
type edgeEnds struct {
	from    graph.End
	hasFrom bool
	to      []graph.End
}

// Build turns one pipeline into a Job. Redirect targets are opened (and
// '>' files truncated) here, as a shell does before it starts commands. A
// problem that bash reports while running (a missing '<' file, an unknown
// command) becomes a task that prints the message and exits with bash's
// status, so the rest of the pipeline still runs, and so does a bad
// builtin option (a *builtin.UsageError), in GNU's words.
func (r *Runner) Build(ctx context.Context, pl *shell.Pipeline) (*Job, error) {
	pl, err := r.expand(pl)
	if err != nil {
		return nil, err
	}
	p, err := r.compile(&shell.Script{Pipelines: []*shell.Pipeline{pl}})
	if err != nil {
		return nil, err
	}
	return r.build(ctx, p, p.ast.Pipelines, false)
}

// build turns pipelines of p linked by named edges into one Job, planned.
func (r *Runner) build(ctx context.Context, p *program, pls []*shell.Pipeline, dry bool) (*Job, error) {
	c := r.cfg.Cap
	if c == 0 {
		c = r.cfg.Policy.DefaultCap()
	}
	mem, why := r.taskMemory()
	b := &builder{r: r, ctx: ctx, prog: p, g: &graph.Graph{}, job: &Job{TaskMemory: int64(mem), TaskMemoryWhy: why}, names: map[string]int{}, cap: c, dry: dry,
		edges: map[string]*edgeEnds{}}
	if show, _, _ := r.viewMode(); show && !dry {
		b.job.stderr = &outSwitch{w: r.cfg.Stderr}
		if isTerminalWriter(r.cfg.Stdout) {
			b.job.stdout = &outSwitch{w: r.cfg.Stdout}
		}
		b.job.input = &inputMeter{}
	}
	for n, pl := range pls {
		b.first = n == 0
		if err := b.pipeline(pl); err != nil {
			b.job.Close()
			return nil, err
		}
	}
	b.connectEdges()
	b.shareMemory()
	b.job.Graph = b.g
	rs, why, err := r.recordSize(b.size)
	if err != nil {
		b.job.Close()
		return nil, err
	}
	b.job.RecordSizeWhy = why
	o := sched.Options{
		Policy: r.cfg.Policy, Buffers: r.cfg.Buffers, RecordSize: rs, Trace: r.cfg.Trace, SpillBelowBound: true,
		TempDir: r.cfg.TempDir, CapAuto: r.cfg.CapAuto, Replicas: r.cfg.Replicas,
	}
	if r.cfg.Policy.Persistent() {
		o.Spool = r.spoolOptions()
	}
	plan, err := sched.MakePlan(b.g, o)
	if err != nil {
		b.job.Close()
		return nil, err
	}
	b.job.Plan = plan
	b.job.Warning = plan.Warning
	if err := checkTaskMemory(b.job, r.cfg.SortMemory); err != nil {
		b.job.Close()
		return nil, err
	}
	return b.job, nil
}

// unique names tasks after their command, numbering repeats: sort, sort#2.
func (b *builder) unique(name string) string {
	b.names[name]++
	if n := b.names[name]; n > 1 {
		return fmt.Sprintf("%s#%d", name, n)
	}
	return name
}

// path resolves a file name of the script against Config.Dir.
func (r *Runner) path(name string) string {
	if r.cfg.Dir == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(r.cfg.Dir, name)
}

func (b *builder) keep(c io.Closer) { b.job.closers = append(b.job.closers, c) }

// redirs holds a command's redirects after the last of each kind won.
type redirs struct {
	in, out, err    *os.File
	outName         string
	inEdge, outEdge string // '< @a' and '> @a'
	failed          string // the message of a redirect that could not be opened
}

func (b *builder) openRedirs(c *shell.Cmd) redirs {
	var rd redirs
	for _, x := range c.Redirs {
		var (
			f   *os.File
			err error
		)
		name := x.Target.Value
		if isEdgeWord(x.Target) {
			// collectEdges allowed only '<', '>' and '>>'; the last of
			// each kind wins, as for files.
			if x.Op == shell.RedirIn {
				rd.in, rd.inEdge = nil, name
			} else {
				rd.out, rd.outName, rd.outEdge = nil, "", name
			}
			continue
		}
		switch x.Op {
		case shell.RedirIn:
			f, err = openInput(b.r.path(name))
		case shell.RedirOut, shell.RedirErr, shell.RedirAppend, shell.RedirErrAppend:
			flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if x.Op == shell.RedirAppend || x.Op == shell.RedirErrAppend {
				flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			switch {
			case b.dry:
				f, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			case b.r.spooled() && (x.Op == shell.RedirOut || x.Op == shell.RedirAppend):
				var a *atomicOut
				if a, err = openAtomic(b.r.path(name), x.Op == shell.RedirAppend); err == nil {
					b.job.commits = append(b.job.commits, a)
					b.keep(a) // closing drops the temporary file unless committed
					rd.out, rd.outName, rd.outEdge = a.f, name, ""
					continue
				}
			default:
				f, err = os.OpenFile(b.r.path(name), flag, 0o666)
			}
		}
		if err != nil {
			// bash stops at the first redirect it cannot open and does not
			// run the command.
			rd.failed = fmt.Sprintf("%s: %s", name, describe(err))
			return rd
		}
		b.keep(f)
		switch x.Op {
		case shell.RedirIn:
			rd.in, rd.inEdge = f, ""
		case shell.RedirOut, shell.RedirAppend:
			rd.out, rd.outName, rd.outEdge = f, name, ""
		default:
			rd.err = f
		}
	}
	return rd
}

// openInput opens a '<' file. A directory opens, but nothing can read it:
// it is refused here, so that the message names the file as typed ("/tmp:
// Is a directory") instead of coming from the read.
func openInput(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	return f, nil
}

// describe gives the reason of a file error the way a shell says it.
func describe(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// A stage's input: records from the previous command (from >= 0), none
// (from == -1: the previous command's output went to a file), stdin, or
// a file.
type input struct {
	from  int
	stdin bool
	file  *os.File
	edge  string // a named edge ('< @a')
}

func (b *builder) pipeline(pl *shell.Pipeline) error {
	prev := -1 // task whose output port 0 carries records to the next stage
	for i, c := range pl.Cmds {
		rd := b.openRedirs(c)
		in := input{from: prev}
		switch {
		case rd.in != nil:
			in = input{from: -1, file: rd.in}
		case rd.inEdge != "":
			in = input{from: -1, edge: rd.inEdge}
		case i == 0:
			in = input{from: -1, stdin: true}
		}
		if prev >= 0 && in.from < 0 {
			// A '<' wins over the pipe, as in bash: what the previous
			// command writes goes nowhere.
			b.drop(input{from: prev})
		}
		last := i == len(pl.Cmds)-1
		stderr := b.r.cfg.Stderr
		if b.job.stderr != nil {
			stderr = b.job.stderr
		}
		if rd.err != nil {
			stderr = rd.err
		}
		first := b.first && i == 0
		if first {
			b.followInput(in)
		}
		var (
			out int
			err error
		)
		switch {
		case rd.failed != "":
			out = b.failing(c, in, "tpipe: "+rd.failed, 1, stderr)
		default:
			out, err = b.command(c, in, rd, stderr, last, first)
			if err != nil {
				return err
			}
		}
		// Where the stage's records go.
		switch {
		case out < 0:
			prev = -1 // the command wrote straight to a file or stdout
		case rd.outEdge != "":
			b.writeEdge(rd.outEdge, out, 0)
			prev = -1
		case rd.out != nil:
			b.sink(out, ">"+rd.outName, rd.out)
			b.usesTerminal(rd.out)
			prev = -1
		case last && b.job.stdout != nil:
			b.sink(out, ">stdout", b.job.stdout)
			b.usesTerminal(b.r.cfg.Stdout)
		case last:
			b.sink(out, ">stdout", b.r.cfg.Stdout)
			b.usesTerminal(b.r.cfg.Stdout)
		default:
			prev = out
		}
	}
	return nil
}

// sink connects task t's output to a task writing w.
func (b *builder) sink(t int, name string, w io.Writer) {
	s := b.g.Add(b.unique(name), 1, 0, nil)
	b.g.Tasks[s].Sink = task.WriteLines(w)
	b.g.Tasks[s].Ident = name
	b.g.Connect(t, 0, s, 0, b.cap)
}

// feed connects the records of in to input port 0 of task t.
func (b *builder) feed(in input, t int) {
	var src int
	switch {
	case in.from >= 0:
		b.g.Connect(in.from, 0, t, 0, b.cap)
		return
	case in.edge != "":
		b.readEdge(in.edge, t, 0)
		return
	case in.file != nil:
		src = b.g.Add(b.unique("<"+filepath.Base(in.file.Name())), 0, 1, task.ReadFrom(in.file, record.Lines))
		if b.g.Tasks[src].Ident = fileIdent(in.file); b.g.Tasks[src].Ident != "" {
			b.g.Tasks[src].File = in.file.Name()
		}
	case in.stdin && b.r.pump != nil:
		b.usesTerminal(b.r.cfg.Stdin)
		// stdin's bytes are all there is to know of it: no Ident, so the
		// spool names its segments by their content.
		src = b.g.Add(b.unique("<stdin"), 0, 1, b.stdinSource())
		b.g.Tasks[src].Blocking = true // a terminal or pipe may wait long
	default:
		src = b.g.Add(b.unique("<empty"), 0, 1, task.Records())
		b.g.Tasks[src].Ident = "empty"
	}
	b.g.Connect(src, 0, t, 0, b.cap)
}

// drop gives the records of in to a task that stops at once: the writer
// then stops cleanly, as with a reader that exits without reading.
func (b *builder) drop(in input) {
	if in.from < 0 {
		return
	}
	t := b.g.Add(b.unique("discard"), 1, 0, func(context.Context, *buffer.Ports) error { return nil })
	b.g.Tasks[t].Ident = "discard"
	b.g.Connect(in.from, 0, t, 0, b.cap)
}

func (b *builder) stdinSource() task.Func {
	pump := b.r.pump
	return func(ctx context.Context, p *buffer.Ports) error {
		rd := pump.Reader(ctx, p.Out(0).Done())
		err := task.ReadFrom(rd, record.Lines)(ctx, p)
		if errors.Is(err, errStopped) {
			return nil
		}
		return err
	}
}

// failing adds a task that prints msg and exits with code, reading nothing
// and writing nothing: how a shell runs a command it cannot start. It
// still holds the command's named edges, so that the graph stays whole:
// the writers of the edges it would have read see their reader gone (as
// before head), and the edges it would have written end empty.
func (b *builder) failing(c *shell.Cmd, in input, msg string, code int, stderr io.Writer) int {
	b.drop(in)
	reads, writes := b.namedEdges(c)
	t := b.g.Add(b.unique(c.Args[0].Value), len(reads), 1+len(writes), func(context.Context, *buffer.Ports) error {
		for line := range strings.SplitSeq(msg, "\n") {
			fmt.Fprintln(stderr, visible.Controls(line))
		}
		return task.Exit(code)
	})
	for k, e := range reads {
		b.readEdge(e, t, k)
	}
	for k, e := range writes {
		b.writeEdge(e, t, 1+k)
	}
	return t
}

// command adds the tasks of one command and returns the task whose output
// port 0 carries its output, or -1 when it writes straight to a file or
// stdout. A command is of one of these kinds, each with its helper: a
// builtin (builtinCommand), a builtin whose words are refused (failing,
// as bash runs a tool that exits with its usage message), or a program
// (externalCommand), which is also how a builtin's fallback runs.
func (b *builder) command(c *shell.Cmd, in input, rd redirs, stderr io.Writer, last, first bool) (int, error) {
	argv := words(c)
	cc := b.prog.cmds[c]
	if cc.fallback != nil {
		b.job.Fallbacks = append(b.job.Fallbacks, cc.fallback.What+": system "+argv[0])
	}
	var ue *builtin.UsageError
	switch {
	case cc.err != nil && errors.As(cc.err, &ue) && !b.dry:
		// As in bash: the tool says what is wrong, on its own
		// standard error, and exits with its status; the rest
		// of the pipeline runs.
		return b.failing(c, in, strings.TrimSuffix(ue.Message(), "\n"), ue.ExitStatus(), stderr), nil
	case cc.err != nil:
		return 0, cc.err
	case cc.builtin != nil:
		cc.env.Stdout = rd.out
		return b.builtinCommand(c, argv, cc, in, stderr, first), nil
	}
	return b.externalCommand(c, argv, in, rd, stderr, last)
}

// builtinCommand adds the task of builtin command c, whose words are argv
// and whose compiled form is cc.
func (b *builder) builtinCommand(c *shell.Cmd, argv []string, cc *compiled, in input, stderr io.Writer, first bool) int {
	name := argv[0]
	cmd := cc.builtin
	tap := b.stderrTap(stderr)
	cc.env.Stderr = stderr
	if tap != nil {
		cc.env.Stderr = tap
	}
	if first && b.job.input != nil {
		b.followOpens(cc.env)
	}
	readsInput, blocking := b.builtinInput(cmd, cc.env, in)
	cc.env.StdinFile = b.stdinFile(in)
	// Only unquoted words are edges; a builtin finds a quoted '@a'
	// without a port and opens it as a file.
	reads, writes := unquoted(c, cmd.Reads), unquoted(c, cmd.Writes)
	nin, base := len(reads), 0
	if readsInput {
		nin, base = nin+1, 1
	}
	t := b.g.Add(b.unique(name), nin, 1+len(writes), cmd.Fn)
	spec, _ := builtin.Lookup(name)
	if first && spec.DecodesVideo && b.job.input != nil {
		b.job.input.video = b.g.Tasks[t].Name
	}
	b.g.Tasks[t].ReadsAny = cmd.ReadsAny
	b.g.Tasks[t].Blocking = blocking || b.r.namesStream(argv[1:])
	b.g.Tasks[t].Effects = cmd.Effects
	b.noteMemory(b.g.Tasks[t].Name, cmd, cc.env)
	b.g.Tasks[t].Holds = cmd.Holds
	b.g.Tasks[t].Stderr = tap
	b.g.Tasks[t].Ident = b.r.ident("builtin", argv)
	b.builtinForms(b.g.Tasks[t], argv, spec, cmd, nin, len(writes))
	if readsInput {
		b.feed(in, t)
	} else {
		b.drop(in)
	}
	for k, e := range reads {
		b.readEdge(e, t, base+k)
	}
	for k, e := range writes {
		b.writeEdge(e, t, 1+k)
	}
	return t
}

// stdinFile returns what Env.StdinFile reports for a command whose
// standard input is in: a '<' file, or the script's stdin, when it is a
// regular file; nil for a pipe from another command.
func (b *builder) stdinFile(in input) func() (os.FileInfo, bool) {
	f := in.file
	if f == nil && in.stdin {
		f, _ = b.r.cfg.Stdin.(*os.File)
	}
	if f == nil {
		return nil
	}
	return func() (os.FileInfo, bool) {
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false
		}
		return fi, true
	}
}

// builtinInput says whether the builtin cmd reads input port 0 and
// whether its task waits outside tpipe. A command that reads bytes (video)
// may take a '<' file or stdin as it is (readBytes); one that needs a
// record size judged from its input says it here (builtin.Cmd.NeedSize).
func (b *builder) builtinInput(cmd *builtin.Cmd, env *builtin.Env, in input) (readsInput, blocking bool) {
	readsInput, blocking = cmd.ReadsInput, cmd.Blocking
	switch {
	case cmd.ReadsBytes && cmd.ReadsInput && b.readBytes(cmd, env, in):
		// The command reads its '<' file or stdin itself.
		readsInput, blocking = false, blocking || in.stdin
	case cmd.NeedSize != nil:
		b.size.add(cmd.NeedSize(b.ctx, nil, ""))
	}
	return readsInput, blocking
}

// noteMemory notes, for --explain, the memory the builtin task named
// name keeps outside the pool: a top-k cut, or data it spills.
func (b *builder) noteMemory(name string, cmd *builtin.Cmd, env *builtin.Env) {
	if cut := env.Cut; cut.N > 0 {
		which := "first"
		if cut.Last {
			which = "last"
		}
		b.job.Cuts = append(b.job.Cuts, fmt.Sprintf("%s keeps only the %s %d lines of its order, which the next command reads (top-k selection): at most %d lines in memory, no spill",
			name, which, cut.N, cut.N))
	}
	switch {
	case !cmd.Spills || env.Cut.N > 0: // a cut sort keeps N lines and never spills
	case cmd.OwnMemory > 0:
		b.job.OwnBudgets = append(b.job.OwnBudgets, fmt.Sprintf("%s (%s)", name, size(int64(cmd.OwnMemory))))
		b.job.OwnMemory += int64(cmd.OwnMemory)
	default:
		b.job.Spilling = append(b.job.Spilling, name)
		b.spillEnvs = append(b.spillEnvs, env)
	}
	if cmd.Unbounded {
		b.job.Unbounded = append(b.job.Unbounded, name)
	}
}

// shareMemory shares an automatic --sort-memory (builtin.AutoSortMemory,
// the job's) equally among the tasks that spill, each getting at least
// builtin.MinAutoSortMemory: two sorts and a join of one job hold no more
// together than one sort alone. A size given by hand is each task's.
func (b *builder) shareMemory() {
	n := len(b.spillEnvs)
	if b.r.cfg.SortMemory > 0 || n == 0 {
		return
	}
	share := max(b.job.TaskMemory/int64(n), builtin.MinAutoSortMemory)
	if n > 1 {
		b.job.TaskMemoryWhy = fmt.Sprintf(" auto: %s for the job (%s), shared by %d tasks",
			size(b.job.TaskMemory), strings.TrimPrefix(b.job.TaskMemoryWhy, " auto: "), n)
	}
	b.job.TaskMemory = share
	for _, e := range b.spillEnvs {
		e.SortMemory = int(share)
	}
}

// builtinForms gives the builtin's task tk the forms some policies run
// instead of its Fn: the file it copies as it is, which the spool reads in
// place (graph.Task.File), and its per-record forms, which ros calls
// (graph.Task.Rec, graph.Task.Source). nin and nwrites count its inputs
// and its named edges written.
func (b *builder) builtinForms(tk *graph.Task, argv []string, spec *builtin.Spec, cmd *builtin.Cmd, nin, nwrites int) {
	if nin == 0 && nwrites == 0 && len(argv) == 2 && spec.CopiesFile && !strings.HasPrefix(argv[1], "-") && b.r.stamp(argv[1]) != "" {
		tk.File = b.r.path(argv[1]) // cat FILE: the file's lines as they are
	}
	if cmd.Rec != nil && nin == 1 && nwrites == 0 {
		tk.Rec = cmd.Rec
	}
	if cmd.Source != nil && nin == 0 && nwrites == 0 {
		// The task is its per-record form, which ros calls.
		tk.Fn, tk.Source = nil, cmd.Source
	}
}

// externalCommand adds the tasks of a program: the reader of its output,
// the feeder of its input and those of its /dev/fd edges, which run
// together as one process.
func (b *builder) externalCommand(c *shell.Cmd, argv []string, in input, rd redirs, stderr io.Writer, last bool) (int, error) {
	name := argv[0]
	path, err := b.r.lookPath(name, c.Assigns)
	if err != nil {
		msg, code := "tpipe: "+err.Error(), StatusNotFound
		var ee *task.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		}
		if code == StatusNotFound {
			if s := suggest(name); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
		}
		return b.failing(c, in, msg, code, stderr), nil
	}
	if sw, ok := stderr.(*outSwitch); ok {
		stderr = sw.w // a program's stderr stays the file it was
	}
	o := ext.Options{Args: argv, Path: path, Dir: b.r.cfg.Dir, Env: b.r.state.environ(c.Assigns), Stderr: stderr}
	switch {
	case in.file != nil:
		o.Stdin = in.file
	case in.stdin:
		// A file or pipe goes to the process as is. A terminal does not:
		// the process runs in its own process group (so cancelling can kill
		// all of it) and would be stopped by SIGTTIN reading a terminal it
		// does not own; tpipe reads the terminal for it instead.
		if f, ok := b.r.cfg.Stdin.(*os.File); ok && !isTerminal(f) {
			o.Stdin = f
		}
	}
	direct := rd.out
	if direct == nil && last && rd.outEdge == "" {
		direct, _ = b.r.cfg.Stdout.(*os.File)
	}
	o.Stdout = direct
	b.usesTerminal(direct)
	var tap *task.Stderr
	if direct == nil {
		// Its stderr then goes through a pipe, which the spool keeps.
		if tap = b.stderrTap(stderr); tap != nil {
			o.Stderr = tap
		}
	}
	fds, err := b.extEdges(c, &o, name)
	if err != nil {
		return 0, err
	}
	x := ext.New(o)
	nout := 1
	if direct != nil {
		nout = 0
	}
	out := b.g.Add(b.unique(name), 0, nout, x.Output())
	b.g.Tasks[out].Blocking = true
	id := b.r.programIdent(path, argv, o.Env)
	b.g.Tasks[out].Ident = id
	b.g.Tasks[out].Stderr = tap
	// One process: its tasks (the reader of its output, the feeder of its
	// input, those of its /dev/fd edges) run at the same time, and deadlock
	// detection sees them as bridges to one program.
	b.g.Tasks[out].Together = b.g.Tasks[out].Name
	if f := x.Input(); f != nil {
		t := b.g.Add(b.unique(name+":stdin"), 1, 0, f)
		b.g.Tasks[t].Blocking = true
		b.g.Tasks[t].Ident = id
		b.g.Tasks[t].Together = b.g.Tasks[out].Name
		b.g.Tasks[t].Stderr = tap
		b.feed(in, t)
	} else {
		b.drop(in)
	}
	for _, fd := range fds {
		b.addFdEdge(fd, b.g.Tasks[out].Name)
	}
	if direct != nil {
		return -1, nil
	}
	return out, nil
}

// stderrTap returns the stderr a command's tasks write through under the
// spool policy, which keeps what passes with their outputs and writes it
// again on a rerun that finds them cached (graph.Task.Stderr); nil under
// any other policy, where a command writes to w itself.
func (b *builder) stderrTap(w io.Writer) *task.Stderr {
	if !b.r.cfg.Policy.Persistent() || b.dry {
		return nil
	}
	return task.NewStderr(w)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Named edges: the builder notes which task ports read and write each
// edge while it builds, and connects them once the graph is whole (see
// the rules in edges.go).

// readEdge notes that input port port of task t reads the named edge.
func (b *builder) readEdge(name string, t, port int) {
	e := b.edge(name)
	e.to = append(e.to, graph.End{Task: t, Port: port})
}

// writeEdge notes that output port port of task t writes the named edge.
func (b *builder) writeEdge(name string, t, port int) {
	e := b.edge(name)
	e.from, e.hasFrom = graph.End{Task: t, Port: port}, true
}

// edge returns the ends of the named edge, noting it on first use.
func (b *builder) edge(name string) *edgeEnds {
	e := b.edges[name]
	if e == nil {
		e = &edgeEnds{}
		b.edges[name] = e
	}
	return e
}

// connectEdges adds the queues of the named edges, once every pipeline of
// the graph is built. An edge with several readers goes through a tee
// that gives each reader every record. The queues keep the edge's name, so
// a builtin finds its ports by name (buffer.Input.Name).
func (b *builder) connectEdges() {
	names := make([]string, 0, len(b.edges))
	for n := range b.edges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		e := b.edges[name]
		if !e.hasFrom || len(e.to) == 0 {
			continue // collectEdges has reported it
		}
		if len(e.to) == 1 {
			b.g.Connect(e.from.Task, e.from.Port, e.to[0].Task, e.to[0].Port, b.cap).Name = name
			continue
		}
		tee := b.g.Add(b.unique("tee:"+name), 1, len(e.to), task.Tee())
		b.g.Tasks[tee].Ident = "tee"
		b.g.Connect(e.from.Task, e.from.Port, tee, 0, b.cap).Name = name
		for k, to := range e.to {
			b.g.Connect(tee, k, to.Task, to.Port, b.cap).Name = name
		}
	}
}

// fdEdge is a named edge an external command reads or writes through a
// pipe it knows as /dev/fd/N.
type fdEdge struct {
	name  string
	write bool     // the command writes the edge
	ours  *os.File // tpipe's end of the pipe
}

// extEdges turns each @name argument of external command c into
// /dev/fd/N, with one end of a pipe given to the process as fd N.
func (b *builder) extEdges(c *shell.Cmd, o *ext.Options, name string) ([]*fdEdge, error) {
	var fds []*fdEdge
	for i, w := range c.Args {
		if i == 0 || !isEdgeWord(w) {
			continue
		}
		if fds == nil {
			o.Args = append([]string(nil), o.Args...) // the caller's argv stays
		}
		r, wr, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("%s: pipe for %s: %w", name, w.Value, err)
		}
		fe := &fdEdge{name: w.Value, write: b.prog.edges.extWrites(w.Value, w.Pos)}
		child := r
		fe.ours = wr
		if fe.write {
			child, fe.ours = wr, r
		}
		b.keep(closeOnce(fe.ours))
		b.keep(closeOnce(child)) // ext closes it once the process has it
		o.ExtraFiles = append(o.ExtraFiles, child)
		o.Args[i] = fmt.Sprintf("/dev/fd/%d", 2+len(o.ExtraFiles))
		fds = append(fds, fe)
	}
	return fds, nil
}

// addFdEdge adds the task that moves records between fe and its pipe;
// it runs together with the process's other tasks (named group).
func (b *builder) addFdEdge(fe *fdEdge, group string) {
	var t int
	if fe.write {
		t = b.g.Add(b.unique(group+":"+fe.name), 0, 1, ext.Drain(fe.ours, group))
		b.writeEdge(fe.name, t, 0)
	} else {
		t = b.g.Add(b.unique(group+":"+fe.name), 1, 0, ext.Feed(fe.ours, group))
		b.readEdge(fe.name, t, 0)
	}
	b.g.Tasks[t].Blocking = true
	b.g.Tasks[t].Together = group
}

// namedEdges returns the named edges command c reads and those it
// writes: a builtin's as it said when it was compiled, an external
// command's as the script's edge rules decide (see extWrites).
func (b *builder) namedEdges(c *shell.Cmd) (reads, writes []string) {
	if cc := b.prog.cmds[c]; cc != nil && cc.builtin != nil {
		return unquoted(c, cc.builtin.Reads), unquoted(c, cc.builtin.Writes)
	}
	for _, w := range c.Args[1:] {
		switch {
		case !isEdgeWord(w):
		case b.prog.edges.extWrites(w.Value, w.Pos):
			writes = append(writes, w.Value)
		default:
			reads = append(reads, w.Value)
		}
	}
	return reads, writes
}

// Byte input: a builtin that reads bytes (video) may take a '<' file or
// stdin as it is (see video.go for the record size it needs).

// readBytes gives cmd, which reads bytes (builtin.Cmd.ReadsBytes), the '<'
// file or stdin of in as they are, after asking it what record size the
// stream's start needs. It reports false when in is neither (a pipe from
// another command), which then feeds port 0 as usual.
func (b *builder) readBytes(cmd *builtin.Cmd, env *builtin.Env, in input) bool {
	switch {
	case in.file != nil:
		f := in.file
		var head []byte
		if cmd.NeedSize != nil {
			head = b.peek(cmd, f, filepath.Base(f.Name()))
		}
		env.Input = func(context.Context, <-chan struct{}) io.Reader {
			return io.MultiReader(bytes.NewReader(head), f)
		}
		return true
	case in.stdin && b.r.pump == nil:
		env.Input = func(context.Context, <-chan struct{}) io.Reader { return eofReader{} }
		return true
	case in.stdin:
		b.usesTerminal(b.r.cfg.Stdin)
		pump := b.r.pump
		var (
			head []byte
			err  error
		)
		if f, ok := b.r.cfg.Stdin.(*os.File); cmd.NeedSize != nil && !(ok && isTerminal(f)) {
			// Not a terminal: waiting here for the header is waiting for
			// the input the run would wait for anyway.
			pr := &pumpReader{p: pump, ctx: b.ctx}
			head = b.peek(cmd, pr, "stdin")
			head, err = append(head, pr.rest...), pr.err
		}
		env.Input = func(ctx context.Context, stop <-chan struct{}) io.Reader {
			rest := pump.Reader(ctx, stop)
			if err != nil {
				rest = errorReader{err}
			}
			return io.MultiReader(bytes.NewReader(head), rest)
		}
		return true
	}
	return false
}

// peek asks cmd what record size the start of r needs, and returns the
// bytes it read.
func (b *builder) peek(cmd *builtin.Cmd, r io.Reader, from string) []byte {
	var head bytes.Buffer
	need, why := cmd.NeedSize(b.ctx, io.TeeReader(r, &head), from)
	b.size.add(need, why)
	return head.Bytes()
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// The live view: what the builder tells it to follow.

// usesTerminal notes that a task of the job writes to f or reads it: if
// f is a terminal, progress auto shows no view (runner/progress.go).
func (b *builder) usesTerminal(f any) {
	if file, ok := f.(*os.File); ok && file != nil && isTerminal(file) {
		b.job.terminalIO = true
	}
}

// followInput makes the live view follow in, the input of the graph's
// first command, when it is a '<' file or a stdin that is a file.
func (b *builder) followInput(in input) {
	m := b.job.input
	switch {
	case m == nil:
	case in.file != nil:
		m.add(in.file)
	case in.stdin:
		if f, ok := b.r.cfg.Stdin.(*os.File); ok {
			m.add(f)
		}
	}
}

// followOpens makes the live view follow the files env's command opens
// (its FILE operands) while the run goes.
func (b *builder) followOpens(env *builtin.Env) {
	m, open := b.job.input, env.Open
	env.Open = func(name string) (io.ReadCloser, error) {
		rc, err := open(name)
		if f, ok := rc.(*os.File); ok && err == nil {
			m.opened(f)
		}
		return rc, err
	}
}

// suggest returns the builtin closest to name, if one is close.
func suggest(name string) string {
	best, bestD := "", 3
	names := builtin.Names()
	sort.Strings(names)
	for _, n := range names {
		if d := EditDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b: the fewest byte
// insertions, deletions and substitutions that make one the other.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
