package runner

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/shell"
)

// shellState is what a POSIX shell keeps from one command to the next: its
// variables (some exported to the programs it starts), its directory, the
// status of the last pipeline and the script's arguments. A Runner has
// one; the interactive shell keeps it from line to line.
type shellState struct {
	vars     map[string]string
	exported map[string]bool
	assigned map[string]bool // set by the script
	unset    map[string]bool // unset by the script
	// getenv, if the Runner's caller gave one (Config.Getenv), answers
	// in expansions for the names the script has not set, instead of
	// the environment.
	getenv func(string) string
	status int
	params []string
	arg0   string
}

func newShellState(cfg *Config, getenv func(string) string) *shellState {
	st := &shellState{vars: map[string]string{}, exported: map[string]bool{}, assigned: map[string]bool{}, unset: map[string]bool{},
		getenv: getenv, params: cfg.Params, arg0: cmp.Or(cfg.Arg0, "tpipe")}
	env := cfg.Environ
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			st.vars[k], st.exported[k] = v, true
		}
	}
	return st
}

// lookup is a variable's value for expansions.
func (st *shellState) lookup(name string) (string, bool) {
	switch {
	case st.unset[name]:
		return "", false
	case st.getenv != nil && !st.assigned[name]:
		v := st.getenv(name)
		return v, v != ""
	}
	v, ok := st.vars[name]
	return v, ok
}

func (st *shellState) set(name, value string) {
	st.vars[name] = value
	st.assigned[name] = true
	delete(st.unset, name)
}

// clone is a copy to try assignments on (see precompile).
func (st *shellState) clone() *shellState {
	c := *st
	c.vars, c.exported, c.assigned, c.unset = maps.Clone(st.vars), maps.Clone(st.exported), maps.Clone(st.assigned), maps.Clone(st.unset)
	return &c
}

// environ is the environment of a program the shell starts: the exported
// variables, then the command's own assignments (which win).
func (st *shellState) environ(assigns []*shell.Assign) []string {
	var env []string
	names := slices.Sorted(maps.Keys(st.exported))
	own := map[string]bool{}
	for _, a := range assigns {
		own[a.Name] = true
	}
	for _, k := range names {
		if v, ok := st.vars[k]; ok && !own[k] {
			env = append(env, k+"="+v)
		}
	}
	for _, a := range assigns {
		env = append(env, a.Name+"="+a.Value.Value)
	}
	return env
}

// expander is the shell's state as package shell reads it, in dir.
func (st *shellState) expander(dir string) *shell.Expander {
	return &shell.Expander{Lookup: st.lookup, Assign: st.set, Names: st.names, Params: st.params, Arg0: st.arg0, Status: st.status, Dir: dir}
}

// names lists the shell's variables, sorted.
func (st *shellState) names() []string {
	var ns []string
	for k := range st.vars {
		if _, ok := st.lookup(k); ok {
			ns = append(ns, k)
		}
	}
	slices.Sort(ns)
	return ns
}

// The shell's own commands: they change the shell's state, so they run in
// the shell and not as tasks of a graph, and only as a pipeline of their
// own (in bash, a pipeline's commands run in subshells, and a cd there
// changes nothing).
var shellCommands = map[string]bool{"cd": true, "export": true, "unset": true, "exit": true, "pwd": true, ":": true, "true": true, "false": true}

// shellTopics are the help of the shell's own commands, for help NAME in
// a script and in the interactive shell (the builtins' help is the help
// builtin's).
var shellTopics = map[string]struct{ usage, text string }{
	"cd": {"cd [-L|-P] [DIR | -]", "Changes the shell's directory, which relative names, patterns, redirects " +
		"and programs then follow: to DIR, to $HOME without one, or back to the one before (printing it) " +
		"with -. -P resolves symbolic links. cd runs on its own, never inside a pipeline."},
	"export": {"export [-n|-p] [NAME[=VALUE]]...", "Gives each variable NAME, set to VALUE if one is given, to the " +
		"programs run from then on (-n takes it back); alone or with -p, lists the variables given."},
	"unset": {"unset NAME...", "Removes the variables NAME, from expansions and from the programs' environment."},
	"pwd":   {"pwd", "Prints the shell's directory, as cd named it."},
	"exit":  {"exit [N]", "Ends the script (or the interactive shell) with status N, or with the status of the last pipeline."},
}

// ShellHelp returns the help of one of the shell's own commands (cd,
// export, unset, pwd, exit): its usage line and a paragraph.
func ShellHelp(name string) (usage, text string, ok bool) {
	t, ok := shellTopics[name]
	return t.usage, t.text, ok
}

// shellCommand reports whether pl is run by the shell itself: one
// command, only assignments or one of shellCommands by a name that is
// written as it is.
func shellCommand(pl *shell.Pipeline) bool {
	if len(pl.Cmds) != 1 {
		return false
	}
	c := pl.Cmds[0]
	if len(c.Args) == 2 && !c.Args[0].Expands() && c.Args[0].Value == "help" && !c.Args[1].Expands() {
		_, ok := shellTopics[c.Args[1].Value]
		return ok // help cd: the shell's; help sort: the builtin's
	}
	if len(c.Args) == 0 {
		return true
	}
	if c.Args[0].Expands() || !shellCommands[c.Args[0].Value] {
		return false
	}
	// true, : and false (and pwd) redirected to a named edge write that
	// edge, empty, as a task of the graph: : > @c gives @c's reader an
	// end at once. cd, export, unset and exit write nothing an edge
	// could carry, and stay the shell's.
	switch c.Args[0].Value {
	case "true", ":", "false", "pwd":
		for _, x := range c.Redirs {
			if isEdgeWord(x.Target) {
				return false
			}
		}
	}
	return true
}

// checkShellCommands refuses a shell command inside a longer pipeline,
// where it could change nothing.
func checkShellCommands(pl *shell.Pipeline) error {
	if len(pl.Cmds) == 1 {
		return nil
	}
	for _, c := range pl.Cmds {
		switch {
		case len(c.Args) == 0:
			return &EdgeError{Pos: c.Pos, Msg: "an assignment alone cannot be part of a pipeline: write it on its own, before the pipeline, or before a command (X=1 cmd)"}
		case !c.Args[0].Expands() && (c.Args[0].Value == "cd" || c.Args[0].Value == "export" || c.Args[0].Value == "unset" || c.Args[0].Value == "exit"):
			return &EdgeError{Pos: c.Pos, Msg: fmt.Sprintf("%s cannot be part of a pipeline: it changes the shell, so give it a statement of its own, before or after the pipeline", c.Args[0].Value)}
		}
	}
	return nil
}

// runShellCommand runs c, an expanded shell command, and returns its
// status; messages go to r's stderr as bash words them.
func (r *Runner) runShellCommand(c *shell.Cmd) int {
	if len(c.Redirs) == 0 {
		return r.shellCommand(c)
	}
	// Its redirections are opened (and '>' files truncated) as for any
	// command, then its output and messages go there.
	saved := r.cfg
	defer func() { r.cfg.Stdout, r.cfg.Stderr = saved.Stdout, saved.Stderr }()
	for _, rd := range c.Redirs {
		name := rd.Target.Value
		var f *os.File
		var err error
		switch rd.Op {
		case shell.RedirIn:
			f, err = os.Open(r.path(name))
		case shell.RedirOut, shell.RedirErr:
			f, err = os.OpenFile(r.path(name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		default:
			f, err = os.OpenFile(r.path(name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
		}
		if err != nil {
			r.sayf("%s: %s", name, describe(err))
			return 1
		}
		defer f.Close()
		switch rd.Op {
		case shell.RedirOut, shell.RedirAppend:
			r.cfg.Stdout = f
		case shell.RedirErr, shell.RedirErrAppend:
			r.cfg.Stderr = f
		}
	}
	return r.shellCommand(c)
}

func (r *Runner) shellCommand(c *shell.Cmd) int {
	st := r.state
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			st.set(a.Name, a.Value.Value)
		}
		return 0
	}
	args := make([]string, len(c.Args))
	for i, w := range c.Args {
		args[i] = w.Value
	}
	if _, ok := shellTopics[args[0]]; ok && slices.Contains(args[1:], "--help") {
		args = []string{"help", args[0]} // cd --help, as GNU's tools answer
	}
	switch args[0] {
	case ":", "true":
		return 0
	case "false":
		return 1
	case "help":
		t := shellTopics[args[1]]
		fmt.Fprintf(r.cfg.Stdout, "Usage: %s\n%s\n", t.usage, strings.Join(say.Wrap(t.text, 79), "\n"))
		return 0
	case "pwd":
		// The shell's directory as cd named it (bash's pwd -L); the
		// program of that name would resolve symbolic links.
		fmt.Fprintln(r.cfg.Stdout, r.Dir())
		return 0
	case "exit":
		status := st.status
		if len(args) > 1 {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				r.sayf("exit: %s: numeric argument required", args[1])
				n = StatusUsage
			}
			status = n & 0xff
		}
		r.exited = true
		return status
	case "cd":
		return r.cd(args[1:])
	case "export":
		unexport, list := false, len(args) == 1
		for _, a := range args[1:] {
			switch a {
			case "-n":
				unexport = true
				continue
			case "-p":
				list = true
				continue
			}
			name, value, hasValue := strings.Cut(a, "=")
			if !shell.IsName(name) {
				r.sayf("export: `%s': not a valid identifier", a)
				return 1
			}
			if hasValue {
				st.set(name, value)
			}
			st.exported[name] = !unexport
			if unexport {
				delete(st.exported, name)
			}
		}
		if list {
			for _, k := range slices.Sorted(maps.Keys(st.exported)) {
				if v, ok := st.lookup(k); ok {
					fmt.Fprintf(r.cfg.Stdout, "declare -x %s=%s\n", k, strconv.Quote(v))
				}
			}
		}
		return 0
	case "unset":
		for _, name := range args[1:] {
			if name == "-v" || name == "-f" {
				continue // tpipe has no functions to unset
			}
			if !shell.IsName(name) {
				r.sayf("unset: `%s': not a valid identifier", name)
				return 1
			}
			delete(st.vars, name)
			delete(st.exported, name)
			delete(st.assigned, name)
			st.unset[name] = true
		}
		return 0
	}
	panic("runner: not a shell command: " + args[0])
}

// cd changes the shell's directory: to $HOME without an operand, to
// $OLDPWD (printing it) for "-". Later relative names, patterns and
// programs follow it; the process's own directory does not change.
func (r *Runner) cd(args []string) int {
	st := r.state
	physical := false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for _, o := range args[0][1:] {
			switch o {
			case 'L':
				physical = false
			case 'P':
				physical = true
			default:
				r.sayf("cd: %s: invalid option (cd [-L|-P] [DIR | -]; cd --help)", args[0])
				return StatusUsage
			}
		}
		args = args[1:]
	}
	var dir string
	switch len(args) {
	case 0:
		home, ok := st.lookup("HOME")
		if !ok || home == "" {
			r.sayf("cd: HOME not set")
			return 1
		}
		dir = home
	case 1:
		dir = args[0]
	default:
		r.sayf("cd: too many arguments")
		return 1
	}
	print := false
	if dir == "-" {
		old, ok := st.lookup("OLDPWD")
		if !ok || old == "" {
			r.sayf("cd: OLDPWD not set")
			return 1
		}
		dir, print = old, true
	}
	target := dir
	if !filepath.IsAbs(target) {
		target = filepath.Join(r.Dir(), target)
	}
	fi, err := os.Stat(target)
	switch {
	case err != nil:
		r.sayf("cd: %s: %s", dir, describe(err))
		return 1
	case !fi.IsDir():
		r.sayf("cd: %s: Not a directory", dir)
		return 1
	}
	if err := syscall.Access(target, 1); err != nil { // search permission
		r.sayf("cd: %s: %s", dir, describe(&os.PathError{Op: "chdir", Path: target, Err: err}))
		return 1
	}
	if physical {
		if t, err := filepath.EvalSymlinks(target); err == nil {
			target = t
		}
	}
	old := r.Dir()
	r.cfg.Dir = filepath.Clean(target)
	st.set("OLDPWD", old)
	st.set("PWD", r.cfg.Dir)
	if print {
		fmt.Fprintln(r.cfg.Stdout, r.cfg.Dir)
	}
	return 0
}

// lookPath finds the program of a command: on the shell's PATH (the
// command's own PATH= first), a name with a slash relative to the
// shell's directory. A shell with no PATH variable uses tpipe's own.
func (r *Runner) lookPath(name string, assigns []*shell.Assign) (string, error) {
	path, ok := r.state.vars["PATH"]
	if !ok && !r.state.unset["PATH"] {
		path = os.Getenv("PATH")
	}
	for _, a := range assigns {
		if a.Name == "PATH" {
			path = a.Value.Value
		}
	}
	return ext.LookPathIn(name, path, r.Dir())
}

// Var returns a variable of the shell as expansions see it ($HOME, $PATH
// after the script or session changed them), and whether it is set.
func (r *Runner) Var(name string) (string, bool) { return r.state.lookup(name) }
