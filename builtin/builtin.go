// Package builtin holds tpipe's in-process commands: coreutils-compatible
// text tools (cat, grep, sed, sort, ...) and the paper's COPY and PREFIX.
// Each runs as a task; its output is byte-identical to GNU coreutils run
// under LC_ALL=C for every option it implements.
//
// A builtin's input port 0, if it reads one, is the previous command's
// output or stdin, and its output port 0 is its output. A named edge
// (@name, listed in Env.Edges) given as a FILE operand is a port of its own, after
// those (Cmd.Reads, Cmd.Writes): tee, route, merge and join build graphs
// with them, and every command that reads FILEs reads an edge as it reads
// "-".
//
// Like a GNU tool, a builtin reports a problem with a file or a failed
// match as a message on Env.Stderr ("grep: x: No such file or directory")
// and a *task.ExitError, which sets the run's exit status without stopping
// the other commands.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/tpipe/tpipe/internal/sysmem"
	"github.com/tpipe/tpipe/task"
)

// Env is what a builtin may use besides its ports. The zero Env is usable:
// files open with os.Open and os.OpenFile, messages are discarded, and sort
// spills to os.TempDir().
type Env struct {
	// Stderr receives the builtin's messages, each prefixed with its name
	// as GNU tools do.
	Stderr io.Writer
	// Open opens a file argument for reading; nil means os.Open.
	Open func(name string) (io.ReadCloser, error)
	// Create opens a file argument for writing (tee FILE), truncating it or
	// appending to it; nil means os.OpenFile.
	Create func(name string, append bool) (io.WriteCloser, error)
	// TempDir is where sort spills sorted runs; "" means os.TempDir().
	TempDir string
	// SortMemory is the bytes sort holds in memory before it spills a run
	// to disk (and join, tail and head hold before they spill); 0 means
	// AutoSortMemory's.
	SortMemory int
	// Cut, set by the runner, says that a sort's output goes straight to a
	// head or tail that keeps a fixed number of lines (see CutOf).
	Cut Cut
	// Edges are the command's words that name edges of its graph, as the
	// shell marked them (shell.Word.Edge): an operand listed here is read
	// from (or, for tee and route, written to) the port of that name.
	// Any other operand, '@a' quoted included, is a file.
	Edges []string
	// Environ is the command's environment, NAME=value each, as a
	// program would get it (awk's ENVIRON); nil: the process's own.
	Environ []string
	// Dir is where a program a builtin starts (decode's and encode's
	// ffmpeg) runs, so that it finds relative file names where Open
	// does; "" is the current directory.
	Dir string
	// Input, if set by the runner before the run, returns the command's
	// standard input as bytes (a '<' file, the script's stdin), for a
	// command that reads bytes (Cmd.ReadsBytes). The command then reads
	// it instead of input port 0, which it does not have. stop is closed
	// when the command's reader has gone, and ends a read that waits.
	Input func(ctx context.Context, stop <-chan struct{}) io.Reader
	// StdinFile, if set by the runner, describes the command's standard
	// input when that is a regular file (a '<' file, or the script's stdin
	// redirected from one): wc sizes its columns by it, as GNU's does by
	// fstat, and cat checks that it is not its output.
	StdinFile func() (os.FileInfo, bool)
	// Stdout, if set by the runner, is the file the command's standard
	// output is redirected to ('>' or '>>'), for cat's check that it does
	// not append a file to itself.
	Stdout *os.File
}

// environValue is the value of k in environ (NAME=value each, the last
// one winning), or in the process's environment when environ is nil.
func environValue(environ []string, k string) string {
	if environ == nil {
		return os.Getenv(k)
	}
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// DefaultSortMemory is the in-memory budget of a task that spills when
// Env.SortMemory is 0 and the memory the machine can give is unknown.
const DefaultSortMemory = 64 << 20

// The bounds of AutoSortMemory.
const (
	MinAutoSortMemory = 16 << 20
	MaxAutoSortMemory = 192 << 20
)

// AutoSortMemory is the in-memory budget of the tasks that spill when
// Env.SortMemory is 0, all of a job's together (the runner shares it out
// among them; a task run on its own has it all): an eighth of the memory
// this process may use (sysmem.Available: MemAvailable, or a lower cgroup
// limit), at least MinAutoSortMemory and at most MaxAutoSortMemory;
// DefaultSortMemory when that is unknown. GNU sort takes a larger share
// (up to all of what is available), but a larger budget does not make a
// sort faster here: on a 2-core machine, sort -n of 20M shuffled numbers
// (169 MB) took 8.7 s with 1 GiB and 7.8 s with 192 MiB, and sort -k7 of a
// 88 MB log the same 1.0-1.1 s with either (bench/README.md). It leaves
// room for the other tasks of the pipeline and for the garbage
// collector's slack. why says where the figure came from, for --explain.
func AutoSortMemory() (n int, why string) {
	l, ok := sysmem.Available()
	if !ok {
		return DefaultSortMemory, "the memory available is unknown"
	}
	n = int(min(max(l.Bytes/8, MinAutoSortMemory), MaxAutoSortMemory))
	return n, fmt.Sprintf("1/8 of %d MiB available (%s), within [%d MiB, %d MiB]",
		l.Bytes>>20, l.From, MinAutoSortMemory>>20, MaxAutoSortMemory>>20)
}

// sortPhysicalMemory is the machine's memory, for sort -S N%.
func sortPhysicalMemory() uint64 {
	if n, ok := sysmem.Total(); ok {
		return n
	}
	return DefaultSortMemory
}

func (e *Env) stderr() io.Writer {
	if e == nil || e.Stderr == nil {
		return io.Discard
	}
	return e.Stderr
}

func (e *Env) open(name string) (io.ReadCloser, error) {
	if e != nil && e.Open != nil {
		return e.Open(name)
	}
	return os.Open(name)
}

func (e *Env) create(name string, appendTo bool) (io.WriteCloser, error) {
	if e != nil && e.Create != nil {
		return e.Create(name, appendTo)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	return os.OpenFile(name, flag, 0o666)
}

// Cmd is a builtin invocation with its arguments parsed, ready to run.
type Cmd struct {
	Name string
	// ReadsInput is false for a command that never reads its input port
	// (seq, yes, cat with file arguments): the task then has no input port
	// and nothing is connected to it, so tpipe does not wait on stdin.
	ReadsInput bool
	// Fn is the general form. It uses p.In(0) only if ReadsInput, and
	// always p.Out(0).
	Fn task.Func
	// Rec, when the command is a per-record map or filter, is its
	// per-record form (for fusion); Fn is then Rec.Func(), or a faster
	// equivalent that works on whole buffers (grep with a literal).
	Rec *task.PerRecord
	// Source, when the command is a source (no input) that makes its
	// records one at a time, is its per-record form (task.Source), which
	// the ros policy runs as calls from its scheduler; Fn, if not set, is
	// then Source.Func().
	Source *task.Source
	// Reads lists the named edges ("@name" operands) the command reads,
	// each once, in operand order. The runner connects each to an input
	// port whose Name() is that word, numbered after port 0 when
	// ReadsInput is set. Writes lists the named edges it writes (tee @a,
	// route RE @yes @no): output ports after port 0, named the same way.
	Reads, Writes []string
	// ReadsAny is set for a command that reads its inputs in the order
	// records arrive (merge, join; see buffer.Ports.Ready).
	ReadsAny bool
	// TakesCut is set for a command that, told its output is cut
	// (Env.Cut), keeps only the lines the cut lets through: sort without
	// -u, -o or -c.
	TakesCut bool
	// Spills is set for a command that holds data outside the pool's
	// buffers (sort's runs, tail's lines, join's waiting records): it keeps
	// at most Env.SortMemory of it in memory and moves the rest to
	// unlinked files in Env.TempDir.
	Spills bool
	// OwnMemory, with Spills, is the budget the command's own options set
	// (sort -S): it keeps that much in memory whatever Env.SortMemory
	// says. 0 when it takes Env.SortMemory.
	OwnMemory int
	// Unbounded is set for a command whose memory grows with what it is
	// given and has no budget: awk's arrays (GoAWK's, or the group
	// form's values). The runner then leaves the GC no memory limit,
	// which such a program would pass and make collect without end.
	Unbounded bool
	// ReadsBytes marks a command that reads its input as one byte stream
	// (decode reads y4m video) rather than as lines: the runner may give
	// it a '<' file or stdin as it is through Env.Input, not cut into
	// records.
	ReadsBytes bool
	// Blocking marks a command that waits outside tpipe (on a program it
	// started), as graph.Task.Blocking.
	Blocking bool
	// Effects marks a command that acts outside its output port: it
	// writes files (tee FILE, sort -o, uniq's OUTPUT, sed's w and -i,
	// awk's print > FILE, encode FILE). It runs on when its output's
	// reader has stopped (graph.Task.Effects), where any other command
	// is stopped then, even while it waits for input.
	Effects bool
	// NeedSize, if set, says how large records must be for this command,
	// judged from the start of its input (decode: one frame of the video
	// its header describes). The runner calls it before the run, with r
	// the '<' file or stdin when the command reads one (Env.Input), named
	// by from ("in.y4m", "stdin"), and r nil otherwise (the command looks
	// at its FILE operand itself). It returns 0 when it cannot tell; the
	// run then says what went wrong. why says where the size comes from,
	// for --explain: "one 1280x720 4:2:0 frame (from in.y4m's header)".
	NeedSize func(ctx context.Context, r io.Reader, from string) (need int, why string)
	// Holds is how many buffers of its input the command keeps besides
	// the one it reads (buffer.Input.Hold: stabilize's lookahead of
	// frames); the plan counts them in B (graph.Task.Holds) and --explain
	// states them.
	Holds int
}

// Spec describes one builtin.
type Spec struct {
	Name string
	// Usage is one line: the synopsis, as in "head [-n N | -c N] [FILE]...".
	Usage string
	// Help is a short paragraph for `help NAME` and `NAME --help`
	// (HelpText wraps it).
	Help string
	// New parses args (without the command name) and returns the command.
	// A bad option or operand is a *UsageError; --help where an option
	// may stand is errHelp, which getopt returns.
	New func(env *Env, args []string) (*Cmd, error)
	// EdgesOnly marks a builtin that is one only when a named edge (@name)
	// is among its words; otherwise the program of the same name runs
	// (join: the graph builtin shadows coreutils' join only in graphs).
	EdgesOnly bool
	// CopiesFile marks a builtin that, given one FILE operand and no
	// option, writes the file's lines as they are (cat FILE): the runner
	// lets the spool read the file in place (graph.Task.File) rather
	// than keep a copy of it.
	CopiesFile bool
	// DecodesVideo marks a builtin that decodes video frames from its
	// input (decode): when it reads the pipeline's '<' file or stdin, the
	// live view counts frames of it.
	DecodesVideo bool
	// ShellWord marks one of the shell's own commands (true, :, false) in
	// its form as a task of a pipeline: Lookup finds it, but Names leaves
	// it out of the builtins a user is shown, and it takes no --help.
	ShellWord bool
}

var registry = map[string]*Spec{}

// register adds s; each builtin's file calls it from init.
func register(s *Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("builtin: " + s.Name + " registered twice")
	}
	registry[s.Name] = s
}

// Lookup returns the builtin named name.
func Lookup(name string) (*Spec, bool) {
	s, ok := registry[name]
	return s, ok
}

// Names returns the names of all builtins, sorted, but for the shell's
// words (Spec.ShellWord).
func Names() []string {
	names := make([]string, 0, len(registry))
	for n, s := range registry {
		if !s.ShellWord {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// New parses a command line whose first word names a builtin. With the
// word --help where an option may stand, the command prints the
// builtin's help (Spec.HelpText) to its output and exits 0, as GNU's
// tools do.
func New(env *Env, argv []string) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("builtin: empty command")
	}
	s, ok := registry[argv[0]]
	if !ok {
		return nil, fmt.Errorf("builtin: %s: no such builtin", argv[0])
	}
	c, err := s.New(env, stdinAsDash(argv[1:]))
	if errors.Is(err, errHelp) {
		c, err = helpCmd(s), nil
	}
	if err != nil {
		return nil, err
	}
	if c.Name == "" {
		c.Name = s.Name
	}
	switch {
	case c.Fn != nil:
	case c.Rec != nil:
		c.Fn = c.Rec.Func()
	case c.Source != nil:
		c.Fn = c.Source.Func()
	}
	return c, nil
}

// stdinAsDash returns args with every word /dev/stdin replaced by "-". In
// a shell's pipeline /dev/stdin is the pipe from the command before, which
// for an in-process command is its input port ("-"); opened as a file it
// would be tpipe's own standard input instead.
func stdinAsDash(args []string) []string {
	if !slices.Contains(args, "/dev/stdin") {
		return args
	}
	out := slices.Clone(args)
	for i, a := range out {
		if a == "/dev/stdin" {
			out[i] = "-"
		}
	}
	return out
}
