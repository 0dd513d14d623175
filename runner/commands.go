package runner

import (
	"cmp"
	"slices"

	"github.com/tpipe/tpipe/shell"
)

// Command is one command of a compiled script and the records it moves
// besides its arguments' files: for a caller that runs each command of a
// graph on its own (tpipe serve makes each a stage with places for its
// inputs and outputs).
type Command struct {
	Cmd      *shell.Cmd
	Pipeline int // index of its pipeline in the script
	Index    int // its position in the pipeline
	// Builtin is false for a program on PATH.
	Builtin bool
	// ReadsInput is set when the command reads its input: the pipe from
	// the command before it, its '<' redirect or, first in its pipeline,
	// standard input. A builtin that makes records (seq) or reads only
	// its FILE operands (cat FILE) does not; a program always does.
	ReadsInput bool
	// Reads and Writes are the named edges ("@a") the command reads and writes,
	// as '<' and '>' redirects and as operands, in the order of its words.
	Reads, Writes []string
}

// Commands parses and compiles src, as RunScript would before running it,
// and describes its commands in order; groups are the indexes of the
// pipelines that run together as one graph. A parse error, a broken edge
// rule or a builtin's usage error is returned for Report.
func (r *Runner) Commands(src string) (cmds []Command, groups [][]int, err error) {
	p, err := r.compileSource(src)
	if err != nil {
		return nil, nil, err
	}
	for i, pl := range p.ast.Pipelines {
		for j, c := range pl.Cmds {
			cc := p.cmds[c]
			if cc.err != nil {
				return nil, nil, cc.err
			}
			cmd := Command{Cmd: c, Pipeline: i, Index: j, Builtin: cc.builtin != nil, ReadsInput: cc.builtin == nil || cc.builtin.ReadsInput}
			var uses []edgeUse
			names := map[shell.Pos]string{}
			for name, us := range p.edges.uses {
				for _, u := range us {
					if u.pipeline == i && u.cmd == j {
						uses = append(uses, u)
						names[u.pos] = name
					}
				}
			}
			slices.SortFunc(uses, func(a, b edgeUse) int {
				return cmp.Or(cmp.Compare(a.pos.Line, b.pos.Line), cmp.Compare(a.pos.Col, b.pos.Col))
			})
			for _, u := range uses {
				list := &cmd.Reads
				if u.write {
					list = &cmd.Writes
				}
				if name := names[u.pos]; !slices.Contains(*list, name) {
					*list = append(*list, name)
				}
			}
			cmds = append(cmds, cmd)
		}
	}
	for _, g := range p.edges.groups(len(p.ast.Pipelines)) {
		groups = append(groups, g)
	}
	return cmds, groups, nil
}

// Report prints err, from Commands, as RunScript would (a syntax error or
// a broken edge rule at its word with a caret) and returns the exit status
// it means.
func (r *Runner) Report(src string, err error) int { return r.reportCompile(src, err) }
