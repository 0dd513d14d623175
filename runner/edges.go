package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"

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
