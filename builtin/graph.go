package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/posixre"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

// route, merge and join, with tee, are the builtins that make a pipeline a
// graph: they read or write named edges (@name). They follow no GNU tool
// (this join is pmjq's, not coreutils' join of sorted files); their
// patterns are grep's (internal/posixre).

func init() {
	register(&Spec{
		Name:  "route",
		Usage: "route [-Ei] RE @yes @no",
		Help: "Send each input line that matches RE (a POSIX basic regular expression, " +
			"extended with -E; -i ignores case) to the named edge @yes, and every other " +
			"line to @no. The output gets nothing. route stops when neither edge is read " +
			"any more.",
		New: routeNew,
	})
	register(&Spec{
		Name:  "merge",
		Usage: "merge @name...",
		Help: "Write the lines of the named edges to the output as they arrive, a batch at " +
			"a time; the lines of one edge keep their order. A last line without a newline " +
			"gets one.",
		New: mergeNew,
	})
	register(&Spec{
		Name:  "join",
		Usage: "join [-Ei] RE @name @name...",
		Help: "Join the lines of the named edges by key, as they arrive. RE (as in route) " +
			"has exactly one group, whose match is a line's key. Once a line with some key " +
			"has arrived on every edge, join writes them as one line, in operand order, " +
			"separated by tabs; lines with the same key on one edge are paired first come, " +
			"first served. Lines waiting for partners are held in memory, and past " +
			"--sort-memory on disk. Lines without a " +
			"key, and those left without partners at the end, are counted on stderr " +
			"(status 1). Without a named edge among its words, join is the program of that " +
			"name on PATH (coreutils' join of sorted files).",
		New:       joinNew,
		EdgesOnly: true,
	})
}

var graphLongs = []longOpt{
	{"extended-regexp", 'E', false},
	{"ignore-case", 'i', false},
}

// graphArgs parses the options and operands of route and join: [-Ei] RE
// and then named edges only, at least least of them.
func graphArgs(env *Env, cmd string, args []string, least int) (*regexp.Regexp, []string, error) {
	syn, fl := posixre.Basic, posixre.Flags(0)
	operands, err := getopt{cmd: cmd, shorts: "Ei", longs: graphLongs}.parse(args, func(c byte, _ string) error {
		if c == 'E' {
			syn = posixre.Extended
		} else {
			fl = posixre.IgnoreCase
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(operands) == 0 {
		return nil, nil, usagef(cmd, "missing RE")
	}
	edges, err := graphEdges(env, cmd, operands[1:], least)
	if err != nil {
		return nil, nil, err
	}
	re, err := posixre.Compile(operands[0], syn, fl)
	if err != nil {
		return nil, nil, usagef(cmd, "%s", err)
	}
	return re, edges, nil
}

// graphEdges checks that every operand is a named edge, each once, and
// that there are at least least of them.
func graphEdges(env *Env, cmd string, operands []string, least int) ([]string, error) {
	for _, n := range operands {
		if !env.isEdge(n) {
			return nil, usagef(cmd, "%s: not a named edge (@name)", n)
		}
	}
	if len(operands) < least {
		return nil, usagef(cmd, "needs at least %d named edges (@name), got %d", least, len(operands))
	}
	return env.edgeOperands(cmd, operands)
}

// graphPort returns the port of a named edge, or an error that fails the
// run: the edges are all these commands are about.
func graphPort(p *buffer.Ports, name string) (*buffer.Output, error) {
	o := edgeOut(p, name)
	if o == nil {
		return nil, fmt.Errorf("%s: %w", name, errNotConnected)
	}
	return o, nil
}

func routeNew(env *Env, args []string) (*Cmd, error) {
	re, edges, err := graphArgs(env, "route", args, 2)
	if err != nil {
		return nil, err
	}
	if len(edges) > 2 {
		return nil, usagef("route", "extra operand '%s'", edges[2])
	}
	m := posixre.NewMatcher(re)
	return &Cmd{ReadsInput: true, Writes: edges, Fn: func(ctx context.Context, p *buffer.Ports) error {
		// Nothing goes to the output: let its reader finish now.
		p.Out(0).Close()
		var outs [2]*buffer.Output
		for k, name := range edges {
			o, err := graphPort(p, name)
			if err != nil {
				return err
			}
			outs[k] = o
		}
		// task.Route would go on reading for the output, which never
		// stops; route stops once both edges have.
		var gone [2]bool
		in := p.In(0)
		for !gone[0] || !gone[1] {
			rec, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			k := 1
			if m.Match(record.TrimEOL(rec)) {
				k = 0
			}
			if gone[k] {
				continue
			}
			err = outs[k].Forward(in)
			switch {
			case errors.Is(err, buffer.ErrReaderGone):
				gone[k] = true
			case err != nil:
				return err
			}
		}
		return buffer.ErrReaderGone
	}}, nil
}

func mergeNew(env *Env, args []string) (*Cmd, error) {
	operands, err := getopt{cmd: "merge"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	edges, err := graphEdges(env, "merge", operands, 1)
	if err != nil {
		return nil, err
	}
	return &Cmd{Reads: edges, ReadsAny: true, Fn: mergeRun}, nil
}

// mergeRun is task.Merge for lines: a line without a newline (an edge's
// last) gets one, so that it does not run into a line of another edge.
func mergeRun(ctx context.Context, p *buffer.Ports) error {
	out := p.Out(0)
	// held is such a line and whatever follows it in its batch, copied,
	// to be written after the batch, in order.
	var held [][]byte
	keep := func(rec []byte) bool {
		ended := len(rec) == 0 || rec[len(rec)-1] == '\n'
		if ended && len(held) == 0 {
			return true
		}
		r := slices.Clone(rec)
		if !ended {
			r = append(r, '\n')
		}
		held = append(held, r)
		return false
	}
	for {
		i, err := p.Ready()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := out.Pass(p.In(i), keep); err != nil && err != io.EOF {
			return err
		}
		for _, r := range held {
			if err := out.Write(r); err != nil {
				return err
			}
		}
		held = held[:0]
	}
}

func joinNew(env *Env, args []string) (*Cmd, error) {
	re, edges, err := graphArgs(env, "join", args, 2)
	if err != nil {
		return nil, err
	}
	if n := re.NumSubexp(); n != 1 {
		return nil, usagef("join", "RE has %d groups: it needs exactly one, the key", n)
	}
	key := joinKey(re)
	return &Cmd{Reads: edges, ReadsAny: true, Spills: true, Fn: func(ctx context.Context, p *buffer.Ports) error {
		// Fields follow the ports' order, which must be the operands'.
		for i, name := range edges {
			if i >= p.NumIn() || p.In(i).Name() != name {
				return fmt.Errorf("%s: %w as input %d", name, errNotConnected, i)
			}
		}
		// Report the first unmatched line of the first edge that has one:
		// which lines are unmatched does not depend on the schedule, and
		// each edge's are reported in a fixed order (task.Join).
		count, firstOn := 0, -1
		var first []byte
		unmatched := func(i int, rec []byte) {
			count++
			if firstOn < 0 || i < firstOn {
				firstOn, first = i, append(first[:0], record.TrimEOL(rec)...)
			}
		}
		if err := task.Join(key, unmatched, task.JoinOptions{Memory: sortBudget(env), Dir: sortTempDir(env)})(ctx, p); err != nil {
			return err
		}
		if count == 0 {
			return nil
		}
		s := "s"
		if count == 1 {
			s = ""
		}
		fmt.Fprintf(env.stderr(), "join: %d unmatched line%s (first on %s: %q)\n", count, s, edges[firstOn], first)
		return task.Exit(1)
	}}, nil
}
