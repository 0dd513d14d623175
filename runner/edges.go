package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/shell"
)

// Named edges. A word @name (unquoted) in a redirect or as an operand of a
// builtin is an in-memory queue between two commands, usually of two
// pipelines of one script:
//
//	seq 10 | tee @a @b > /dev/null
//	cat @a | grep 1 > @ones
//	merge @ones @b
//
// Pipelines that share an edge form one graph and run at once, at the
// place of the first of them; pipelines that share none still run one
// after another, as in a shell. Every edge has exactly one writer and at
// least one reader; an edge with several readers gets each record once per
// reader (an implicit tee). An @name argument of an external command is a
// /dev/fd/N path: the command reads the edge if something else writes it,
// and writes it otherwise.

// EdgeError is a broken rule of named edges, found before anything runs:
// where (the word, line:column) and what is wrong.
type EdgeError struct {
	Pos shell.Pos
	Msg string
}

func (e *EdgeError) Error() string { return e.Pos.String() + ": " + e.Msg }

// edgeUse is one mention of a named edge.
type edgeUse struct {
	pos      shell.Pos
	pipeline int
	cmd      int // position of the command in its pipeline
	write    bool
}

// scriptEdges is what a script does with its named edges.
type scriptEdges struct {
	uses  map[string][]edgeUse
	order []string // names in order of first use
}

// isEdgeWord reports whether w names an edge (the shell marks them).
func isEdgeWord(w shell.Word) bool { return w.Edge }

// collectEdges finds every use of a named edge in the compiled script p
// and checks the rules; a broken rule is an *EdgeError at the offending
// word.
func collectEdges(p *program) (*scriptEdges, error) {
	s := p.ast
	se := &scriptEdges{uses: map[string][]edgeUse{}}
	add := func(name string, u edgeUse) {
		if _, seen := se.uses[name]; !seen {
			se.order = append(se.order, name)
		}
		se.uses[name] = append(se.uses[name], u)
	}
	type extUse struct {
		name string
		u    edgeUse
	}
	var extUses []extUse
	for i, pl := range s.Pipelines {
		for j, c := range pl.Cmds {
			for _, x := range c.Redirs {
				if !isEdgeWord(x.Target) {
					continue
				}
				switch x.Op {
				case shell.RedirIn:
					add(x.Target.Value, edgeUse{x.Target.Pos, i, j, false})
				case shell.RedirOut, shell.RedirAppend:
					add(x.Target.Value, edgeUse{x.Target.Pos, i, j, true})
				default:
					return nil, &EdgeError{Pos: x.Pos, Msg: fmt.Sprintf("standard error cannot go to a named edge (%s); records travel on standard output", x.Target.Value)}
				}
			}
			if cc := p.cmds[c]; cc.builtin != nil || cc.err != nil {
				cmd := cc.builtin
				if cmd == nil {
					continue // a usage error, reported when its pipeline is built
				}
				for _, w := range c.Args[1:] {
					if !isEdgeWord(w) {
						continue
					}
					switch {
					case slices.Contains(cmd.Writes, w.Value):
						add(w.Value, edgeUse{w.Pos, i, j, true})
					case slices.Contains(cmd.Reads, w.Value):
						add(w.Value, edgeUse{w.Pos, i, j, false})
					}
				}
				continue
			}
			for _, w := range c.Args[1:] {
				if isEdgeWord(w) {
					extUses = append(extUses, extUse{w.Value, edgeUse{w.Pos, i, j, false}})
				}
			}
		}
	}
	// An external command reads an edge that something else writes, and
	// writes one that nothing else does.
	for _, x := range extUses {
		u := x.u
		u.write = se.writer(x.name) == nil
		add(x.name, u)
	}
	for _, name := range se.order {
		uses := se.uses[name]
		var w *edgeUse
		readers := 0
		for k := range uses {
			u := &uses[k]
			if !u.write {
				readers++
				continue
			}
			if w != nil {
				return nil, &EdgeError{Pos: u.pos, Msg: fmt.Sprintf("%s already has a writer at %s; a named edge has exactly one (merge several with merge)", name, w.pos)}
			}
			w = u
		}
		if w == nil {
			return nil, &EdgeError{Pos: uses[0].pos, Msg: fmt.Sprintf("%s is read but nothing writes it (write it with '> %s' or 'tee %s')", name, name, name)}
		}
		if readers == 0 {
			return nil, &EdgeError{Pos: w.pos, Msg: fmt.Sprintf("%s is written but never read (read it with '< %s' or 'cat %s')", name, name, name)}
		}
		for _, u := range uses {
			if !u.write && u.pipeline == w.pipeline && u.cmd <= w.cmd {
				return nil, &EdgeError{Pos: u.pos, Msg: fmt.Sprintf("%s is read here and written downstream at %s: a cycle", name, w.pos)}
			}
		}
	}
	return se, nil
}

func (se *scriptEdges) writer(name string) *edgeUse {
	for k, u := range se.uses[name] {
		if u.write {
			return &se.uses[name][k]
		}
	}
	return nil
}

// groups splits the pipelines of s into the sets that run as one graph:
// those linked by named edges. Sets are in the order of their first
// pipeline, and pipelines keep their order within a set.
func (se *scriptEdges) groups(n int) [][]int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, uses := range se.uses {
		for _, u := range uses[1:] {
			a, b := find(uses[0].pipeline), find(u.pipeline)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	byRoot := map[int][]int{}
	for i := range n {
		r := find(i)
		byRoot[r] = append(byRoot[r], i)
	}
	var out [][]int
	for _, g := range byRoot {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// extWrites reports whether the external command's @name argument at pos
// writes the edge (see collectEdges).
func (se *scriptEdges) extWrites(name string, pos shell.Pos) bool {
	for _, u := range se.uses[name] {
		if u.pos == pos {
			return u.write
		}
	}
	return false
}

func words(c *shell.Cmd) []string {
	argv := make([]string, len(c.Args))
	for i, w := range c.Args {
		argv[i] = w.Value
	}
	return argv
}

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

// add adds the task that moves records between the edge and the pipe; it
// runs together with the process's other tasks (named group).
func (fe *fdEdge) add(b *builder, group string) {
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

// closeOnce makes a second Close of f a no-op, for files both a task and
// the job close.
func closeOnce(f *os.File) io.Closer { return &onceCloser{f: f} }

type onceCloser struct {
	once sync.Once
	f    *os.File
}

func (c *onceCloser) Close() error {
	var err error
	c.once.Do(func() {
		err = c.f.Close()
		if errors.Is(err, os.ErrClosed) {
			err = nil
		}
	})
	return err
}

// isBuiltin reports whether c runs a builtin: its name is one, and the
// builtin is not one that needs a named edge among the words to be itself
// (see builtin.Spec.EdgesOnly).
func isBuiltin(c *shell.Cmd) bool {
	spec, ok := builtin.Lookup(c.Args[0].Value)
	return ok && (!spec.EdgesOnly || slices.ContainsFunc(c.Args[1:], isEdgeWord))
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

// unquoted returns the names in edges that c spells as unquoted words.
func unquoted(c *shell.Cmd, edges []string) []string {
	var out []string
	for _, e := range edges {
		if slices.ContainsFunc(c.Args[1:], func(w shell.Word) bool { return isEdgeWord(w) && w.Value == e }) {
			out = append(out, e)
		}
	}
	return out
}
