package runner

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/shell"
)

// A script goes from text to runs in three steps, each done once:
//
//   - parse (package shell): the syntax tree, with every word's position
//     and named edges marked (shell.Word.Edge);
//   - compile (this file): every builtin command is parsed with its
//     options and operands (builtin.New), the named edges are checked
//     against their rules, and the pipelines are grouped into the graphs
//     that run as one;
//   - build (build.go): per group, redirect files are opened, the graph is
//     made from the compiled commands, and sched plans it; the plan is what
//     runs.

// program is a compiled script.
type program struct {
	ast    *shell.Script
	cmds   map[*shell.Cmd]*compiled
	edges  *scriptEdges
	groups [][]*shell.Pipeline

	// A program made by precompile also keeps the script as parsed, whose
	// pipelines are expanded and compiled again when they run: ast then
	// holds its pipelines that are not the shell's own commands, expanded
	// as far as can be known before anything runs. index is the place of
	// each pipeline of script in script.Pipelines; multi lists, as
	// indexes in script.Pipelines, the groups of several pipelines that
	// named edges link.
	script *shell.Script
	src    string
	index  map[*shell.Pipeline]int
	multi  [][]int
}

// groupOf returns the group of several pipelines that the pipeline at
// index i of p.script belongs to, or nil.
func (p *program) groupOf(i int) []int {
	for _, g := range p.multi {
		if slices.Contains(g, i) {
			return g
		}
	}
	return nil
}

// precompile compiles a parsed script before anything of it runs, to
// report its syntax, its edge rules and its builtins' usage errors up
// front. Its words are expanded with the shell's state as it would be
// after the assignments and cd's before them (a copy: nothing changes);
// a word that cannot be expanded yet (${X?}, $? is not known) is taken
// as written. What runs is expanded again when it runs.
func (r *Runner) precompile(s *shell.Script) (*program, error) {
	sim, dir := r.state.clone(), r.Dir()
	var pls []*shell.Pipeline
	at := make([]int, len(s.Pipelines)) // index in pls, or -1
	index := make(map[*shell.Pipeline]int, len(s.Pipelines))
	for i, pl := range s.Pipelines {
		index[pl] = i
		if err := checkShellCommands(pl); err != nil {
			return nil, err
		}
		x := sim.expander(dir)
		if shellCommand(pl) {
			at[i] = -1
			c, err := x.Cmd(pl.Cmds[0])
			if err != nil {
				continue
			}
			switch {
			case len(c.Args) == 0:
				for _, a := range c.Assigns {
					sim.set(a.Name, a.Value.Value)
				}
			case c.Args[0].Value == "cd" && len(c.Args) == 2:
				d := c.Args[1].Value
				if !filepath.IsAbs(d) {
					d = filepath.Join(dir, d)
				}
				if fi, err := os.Stat(d); err == nil && fi.IsDir() {
					dir = d
				}
			}
			continue
		}
		epl := &shell.Pipeline{Pos: pl.Pos, Negated: pl.Negated}
		for _, c := range pl.Cmds {
			ec, err := x.Cmd(c)
			if err != nil || len(ec.Args) == 0 {
				ec = c // taken as written
			}
			epl.Cmds = append(epl.Cmds, ec)
		}
		at[i] = len(pls)
		pls = append(pls, epl)
	}
	p, err := r.compile(&shell.Script{Pipelines: pls})
	if err != nil {
		return nil, err
	}
	p.script, p.index = s, index
	from := make([]int, 0, len(pls)) // index in s.Pipelines of pls[k]
	for i, k := range at {
		if k >= 0 {
			from = append(from, i)
		}
	}
	for _, g := range p.edges.groups(len(pls)) {
		if len(g) < 2 {
			continue
		}
		var m []int
		for _, k := range g {
			m = append(m, from[k])
		}
		if err := checkGroup(s, m, p.edges); err != nil {
			return nil, err
		}
		p.multi = append(p.multi, m)
	}
	return p, nil
}

// checkGroup refuses pipelines linked by named edges that are not each a
// statement of their own: run together as one graph, they cannot also be
// run on the status of another (&&, ||) or have their status inverted.
func checkGroup(s *shell.Script, g []int, se *scriptEdges) error {
	for _, st := range s.Stmts {
		if len(st.Pipelines) == 1 && !st.Pipelines[0].Negated {
			continue
		}
		for _, pl := range st.Pipelines {
			for _, i := range g {
				if s.Pipelines[i] == pl {
					return &EdgeError{Pos: pl.Pos, Msg: "pipelines linked by named edges run together as one graph, so none of them can be part of && or || or follow !: give each a line of its own"}
				}
			}
		}
	}
	return nil
}

// compiled is one command of a program. A builtin's problem with its own
// words (a bad option) is kept in err and reported when its pipeline is
// built, after the pipelines before it have run, as a shell would; unless
// the command has named edges, in which case the graph itself is unknown
// and compile fails at once.
type compiled struct {
	builtin *builtin.Cmd // nil for a program on PATH
	// env is the builtin's environment; the builder sets its Stderr,
	// which a '2>' of the command decides, before anything runs.
	env *builtin.Env
	err error
	// fallback is set when the builtin does not implement the command
	// line and the program of its name on PATH runs it instead (builtin
	// is then nil, as for any program): what the builtin lacks, for
	// --explain.
	fallback *builtin.UnsupportedError
}

// compile compiles a parsed script.
func (r *Runner) compile(s *shell.Script) (*program, error) {
	p := &program{ast: s, cmds: map[*shell.Cmd]*compiled{}}
	for _, pl := range s.Pipelines {
		for _, c := range pl.Cmds {
			cc := r.compileCmd(c)
			if cc.err != nil && (slices.ContainsFunc(c.Args[1:], isEdgeWord) || isRefusal(cc.err)) {
				return nil, cc.err
			}
			p.cmds[c] = cc
		}
		cutSorts(p, pl)
	}
	se, err := collectEdges(p)
	if err != nil {
		return nil, err
	}
	p.edges = se
	for _, idx := range se.groups(len(s.Pipelines)) {
		var g []*shell.Pipeline
		for _, i := range idx {
			g = append(g, s.Pipelines[i])
		}
		p.groups = append(p.groups, g)
	}
	return p, nil
}

// cutSorts tells each sort of pl whose output goes straight to a head or
// tail that keeps N lines (builtin.CutOf) that only those lines are read:
// it then keeps them alone (a top-k selection) rather than sorting all.
// Straight: the sort's output is not redirected, nor the head's input.
func cutSorts(p *program, pl *shell.Pipeline) {
	for i := 0; i+1 < len(pl.Cmds); i++ {
		sc, next := p.cmds[pl.Cmds[i]], p.cmds[pl.Cmds[i+1]]
		if sc.builtin == nil || sc.err != nil || next.builtin == nil || next.err != nil ||
			!sc.builtin.TakesCut || redirects(pl.Cmds[i], shell.RedirOut, shell.RedirAppend) ||
			redirects(pl.Cmds[i+1], shell.RedirIn) {
			continue
		}
		if cut, ok := builtin.CutOf(words(pl.Cmds[i+1])); ok {
			sc.env.Cut = cut
		}
	}
}

// redirects reports whether c has a redirection with one of ops.
func redirects(c *shell.Cmd, ops ...shell.RedirOp) bool {
	return slices.ContainsFunc(c.Redirs, func(r *shell.Redir) bool { return slices.Contains(ops, r.Op) })
}

// compileCmd parses one command's builtin, if it runs one.
func (r *Runner) compileCmd(c *shell.Cmd) *compiled {
	if !isBuiltin(c) {
		return &compiled{}
	}
	env := &builtin.Env{
		Stderr:     r.cfg.Stderr,
		SortMemory: r.cfg.SortMemory,
		TempDir:    r.cfg.TempDir,
		Dir:        r.cfg.Dir,
		Environ:    r.state.environ(c.Assigns),
		Open:       func(n string) (io.ReadCloser, error) { return os.Open(r.path(n)) },
		Create: func(n string, app bool) (io.WriteCloser, error) {
			flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if app {
				flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			return os.OpenFile(r.path(n), flag, 0o666)
		},
	}
	for _, w := range c.Args[1:] {
		if w.Edge {
			env.Edges = append(env.Edges, w.Value)
		}
	}
	bc, err := builtin.New(env, words(c))
	var ue *builtin.UnsupportedError
	if errors.As(err, &ue) {
		if !r.cfg.NoFallback {
			if _, lerr := r.lookPath(c.Args[0].Value, c.Assigns); lerr == nil {
				return &compiled{fallback: ue}
			}
		}
		err = r.refusal(ue)
	}
	return &compiled{builtin: bc, env: env, err: err}
}

// isRefusal reports whether err is tpipe's refusal of a command line its
// builtin does not implement and no program runs instead (see refusal):
// the script is refused before anything runs, rather than run with that
// command failing, which would leave the others' output looking whole.
func isRefusal(err error) bool {
	var ue *builtin.UsageError
	return errors.As(err, &ue) && ue.Cmd == "tpipe"
}

// refusal is what an unsupported command line is when no program runs it
// instead: GNU's usage error where the builtin could not tell whether
// GNU's tool has the option, else a refusal that says what to do.
func (r *Runner) refusal(ue *builtin.UnsupportedError) error {
	if ue.Usage != nil {
		return ue.Usage
	}
	why := "fallback is off (--no-fallback, set fallback off); turn it on to run the system's " + ue.Cmd
	if !r.cfg.NoFallback {
		why = "and no " + ue.Cmd + " on PATH to run instead"
	}
	return &builtin.UsageError{Cmd: "tpipe", Msg: ue.What + ": not implemented by the builtin, " + why, Status: StatusUsage}
}

// taskMemory is the budget of each task that spills (builtin.Cmd.Spills),
// and how it was chosen when that was auto.
func (r *Runner) taskMemory() (int, string) {
	if r.cfg.SortMemory > 0 {
		return r.cfg.SortMemory, ""
	}
	n, why := builtin.AutoSortMemory()
	return n, " auto: " + why
}
