package stages

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tpipe/tpipe/spool/jobs"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/shell"
)

// Net is a pipeline served as a net (tpipe serve DIR 'PIPELINE'): each
// command a stage, each of its inputs and outputs a place under Dir, whole
// jobs as tokens. A job dropped in Dir/in flows through the stages and its
// result lands in Dir/out under the same name. A command's job is what it
// reads and writes when the pipeline runs on that one job, so the result
// is the output of `tpipe 'PIPELINE' < job`.
//
// The places are named after the edges of the graph:
//
//	in              the jobs, read by the first command
//	out             the results, written by the last
//	A-B             the pipe from command A to command B (tr-rev)
//	@e              the named edge @e, when one command reads it
//	@e-B            its copy for reader B, when several do (each reader
//	                gets every record, as in a run in memory)
//
// Stages are named as in --explain: by their command's name, with #2, #3
// for repeats (sort, sort#2); in the names of places, a command's name is
// its last path element, with what a file name cannot hold made '_'.
type Net struct {
	Dir    string
	Stages []jobs.Stage // upstream first
	// script is each stage's script for a job, as its Run runs it.
	script map[string]func(*jobs.Job) string
}

// NetError is a pipeline that cannot be served, and why.
type NetError struct{ Msg string }

func (e *NetError) Error() string { return "serve: " + e.Msg }

// NewNet makes the net of src under dir. cfg gives the runner's settings
// with which each stage runs its command (its stdio is the job's). A
// script that does not compile returns the runner's error, for
// runner.Runner.Report; one that compiles but cannot be served, a
// *NetError.
func NewNet(dir, src string, cfg runner.Config) (*Net, error) {
	r := runner.New(runner.Config{Getenv: cfg.Getenv})
	cmds, groups, err := r.Commands(src)
	r.Close()
	if err != nil {
		return nil, err
	}
	if len(groups) != 1 {
		return nil, &NetError{fmt.Sprintf("the script is %d graphs that run one after another; a served pipeline is one graph (link its pipelines with named edges)", len(groups))}
	}
	n := &netBuilder{dir: dir, cmds: cmds, cfg: cfg}
	return n.build()
}

// netBuilder holds what NewNet learns about the commands.
type netBuilder struct {
	dir    string
	cmds   []runner.Command
	cfg    runner.Config
	names  []string // the commands' stage names
	labels []string // the same made fit for place names (see label)
	ports  []ports
}

// ports are where one command's records come from and go.
type ports struct {
	inEdge, outEdge string   // '< @a', '> @b'
	inPipe, outPipe int      // the command before or after, -1 if none
	stdin, stdout   bool     // first or last of its pipeline, no redirect
	inFile, outFile bool     // a '<' or '>' file of the script's, kept
	reads, writes   []string // edges given as operands
	readIn          []int    // the index in the stage's In of each of reads
}

func (n *netBuilder) build() (*Net, error) {
	count := map[string]int{}
	for _, c := range n.cmds {
		name := c.Cmd.Args[0].Value
		count[name]++
		if k := count[name]; k > 1 {
			name = fmt.Sprintf("%s#%d", name, k)
		}
		n.names = append(n.names, name)
	}
	used := map[string]bool{}
	for _, name := range n.names {
		l := label(name)
		for k := 2; used[l]; k++ {
			l = fmt.Sprintf("%s#%d", label(name), k)
		}
		used[l] = true
		n.labels = append(n.labels, l)
	}
	for i, c := range n.cmds {
		n.ports = append(n.ports, n.portsOf(i, c))
	}
	var stdin, stdout []string
	net := &Net{Dir: n.dir, script: map[string]func(*jobs.Job) string{}}
	for i, c := range n.cmds {
		p := n.ports[i]
		st := jobs.Stage{Name: n.names[i]}
		switch {
		case !c.ReadsInput || p.inFile:
		case p.inEdge != "":
			st.In = append(st.In, n.edgePlace(p.inEdge, i))
		case p.inPipe >= 0:
			st.In = append(st.In, n.place(n.labels[p.inPipe]+"-"+n.labels[i]))
		case p.stdin:
			st.In = append(st.In, n.place("in"))
			stdin = append(stdin, n.names[i])
		}
		inPort := len(st.In) > 0
		for _, e := range p.reads {
			if inPort && e == p.inEdge {
				// Read both ways ('< @a' and an operand @a): one token.
				p.readIn = append(p.readIn, 0)
				continue
			}
			p.readIn = append(p.readIn, len(st.In))
			st.In = append(st.In, n.edgePlace(e, i))
		}
		if len(st.In) == 0 {
			return nil, &NetError{fmt.Sprintf("%s (at %s) reads no job: every command of a served pipeline reads its input or a named edge, and a command that makes its own records (seq, cat FILE) would make them again for every job", n.names[i], c.Cmd.Pos)}
		}
		switch {
		case p.outFile:
		case p.outEdge != "":
			st.Out = append(st.Out, n.edgeReaders(p.outEdge))
		case p.outPipe >= 0:
			st.Out = append(st.Out, []string{n.place(n.labels[i] + "-" + n.labels[p.outPipe])})
		case p.stdout:
			st.Out = append(st.Out, []string{n.place("out")})
			stdout = append(stdout, n.names[i])
		}
		outPort := len(st.Out) > 0
		for _, e := range p.writes {
			st.Out = append(st.Out, n.edgeReaders(e))
		}
		script := func(j *jobs.Job) string { return stageScript(c.Cmd, p, inPort, outPort, j) }
		st.Run, net.script[st.Name] = n.run(script), script
		if len(p.reads)+len(p.writes) == 0 {
			// Port 0 alone: the command reads the job on stdin and
			// writes its output on stdout, so it is prepared once and
			// run per job with the job's files as its stdio, as
			// tpipe pmjq's filter is.
			if f, err := Script(commandText(c.Cmd), n.cfg); err == nil {
				st.Run = f
			}
		}
		net.Stages = append(net.Stages, st)
	}
	switch {
	case len(stdin) == 0:
		return nil, &NetError{"no command reads the job from standard input (DIR/in)"}
	case len(stdin) > 1:
		return nil, &NetError{fmt.Sprintf("%s all read standard input: only one command may read the jobs of DIR/in", strings.Join(stdin, ", "))}
	case len(stdout) > 1:
		return nil, &NetError{fmt.Sprintf("%s all write standard output: only one command may write the results to DIR/out (send the others' to a named edge and merge them, or to /dev/null)", strings.Join(stdout, ", "))}
	}
	order, err := n.order(net.Stages)
	if err != nil {
		return nil, err
	}
	net.Stages = order
	return net, nil
}

// portsOf works out where command i's records come from and go, the last
// redirect of each kind winning as in a run.
func (n *netBuilder) portsOf(i int, c runner.Command) ports {
	p := ports{inPipe: -1, outPipe: -1}
	for _, x := range c.Cmd.Redirs {
		switch x.Op {
		case shell.RedirIn:
			p.inEdge, p.inFile = "", false
			if x.Target.Edge {
				p.inEdge = x.Target.Value
			} else {
				p.inFile = true
			}
		case shell.RedirOut, shell.RedirAppend:
			p.outEdge, p.outFile = "", false
			if x.Target.Edge {
				p.outEdge = x.Target.Value
			} else {
				p.outFile = true
			}
		}
	}
	last := i+1 == len(n.cmds) || n.cmds[i+1].Pipeline != c.Pipeline
	switch {
	case p.inEdge != "" || p.inFile:
	case c.Index > 0:
		p.inPipe = i - 1
	default:
		p.stdin = true
	}
	if p.outEdge == "" && !p.outFile {
		if last {
			p.stdout = true
		} else if next := n.readsPipe(i + 1); next {
			p.outPipe = i + 1
		}
	}
	// Operands only: the redirects' edges are port 0's.
	operand := func(e string) bool {
		return slices.ContainsFunc(c.Cmd.Args[1:], func(w shell.Word) bool { return w.Edge && w.Value == e })
	}
	for _, e := range c.Reads {
		if operand(e) {
			p.reads = append(p.reads, e)
		}
	}
	for _, e := range c.Writes {
		if operand(e) {
			p.writes = append(p.writes, e)
		}
	}
	return p
}

// readsPipe reports whether command i reads the pipe from the one before it:
// it reads its input and no '<' takes the pipe's place.
func (n *netBuilder) readsPipe(i int) bool {
	c := n.cmds[i]
	if !c.ReadsInput {
		return false
	}
	for _, x := range c.Cmd.Redirs {
		if x.Op == shell.RedirIn {
			return false
		}
	}
	return true
}

func (n *netBuilder) place(name string) string { return filepath.Join(n.dir, name) }

// readers are the commands that read edge e.
func (n *netBuilder) readers(e string) []int {
	var out []int
	for i, c := range n.cmds {
		if slices.Contains(c.Reads, e) {
			out = append(out, i)
		}
	}
	return out
}

// edgePlace is the place where command i reads edge e.
func (n *netBuilder) edgePlace(e string, i int) string {
	if len(n.readers(e)) == 1 {
		return n.place(e)
	}
	return n.place(e + "-" + n.labels[i])
}

// label makes a command's name fit in a place's name (place.ValidName):
// its last path element, with what ValidName refuses replaced by '_',
// short enough that two of them and a '-' fit.
func label(name string) string {
	name = filepath.Base(name)
	var b strings.Builder
	for _, r := range name {
		if r == '/' || unicode.IsControl(r) || r == utf8.RuneError {
			r = '_'
		}
		b.WriteRune(r)
	}
	l := strings.ReplaceAll(b.String(), "..", "__")
	if l == "" || l[0] == '.' || l[0] == '-' {
		l = "_" + l
	}
	for len(l) > 100 {
		_, size := utf8.DecodeLastRuneInString(l)
		l = l[:len(l)-size]
	}
	return l
}

// edgeReaders are the places a writer of edge e puts its token in: one
// per reader.
func (n *netBuilder) edgeReaders(e string) []string {
	var out []string
	for _, i := range n.readers(e) {
		out = append(out, n.edgePlace(e, i))
	}
	return out
}

// order sorts the stages upstream first (a topological order of the
// places they read and write), keeping the script's order among equals.
func (n *netBuilder) order(stages []jobs.Stage) ([]jobs.Stage, error) {
	writer := map[string]int{}
	for i, st := range stages {
		for _, ps := range st.Out {
			for _, p := range ps {
				writer[p] = i
			}
		}
	}
	done := make([]bool, len(stages))
	var out []jobs.Stage
	for len(out) < len(stages) {
		progress := false
		for i, st := range stages {
			if done[i] {
				continue
			}
			ready := true
			for _, p := range st.In {
				if w, ok := writer[p]; ok && !done[w] {
					ready = false
				}
			}
			if ready {
				done[i], progress = true, true
				out = append(out, st)
			}
		}
		if !progress {
			return nil, &NetError{"the graph has a cycle"} // the runner refuses cycles first
		}
	}
	return out, nil
}

// run returns the jobs.Func of a stage that runs one command on one job: the
// command with its claimed inputs and pending outputs put where its edges
// were, as a small script of its own (see stageScript).
func (n *netBuilder) run(script func(*jobs.Job) string) jobs.Func {
	cfg := n.cfg
	return func(ctx context.Context, j *jobs.Job) (int, error) {
		src := script(j)
		k := cfg
		k.Stdin, k.Stdout, k.Stderr = nil, io.Discard, j.Stderr
		r := runner.New(k)
		defer r.Close()
		return r.RunScript(ctx, src), nil
	}
}

// stageScript is command c of the served pipeline for job j: its edges
// and pipes are the job's files. Port 0 is redirected from the claimed
// input and to the pending output; an edge operand keeps its word, fed by
// `cat INPUT > @e` or drained by `cat @e > OUTPUT`, so that a builtin
// that takes only edges (merge, route, join) and a program that sees
// /dev/fd/N run as they do in memory.
func stageScript(c *shell.Cmd, p ports, inPort, outPort bool, j *jobs.Job) string {
	var b strings.Builder
	b.WriteString(commandText(c))
	out := 0
	if inPort {
		fmt.Fprintf(&b, " < %s", quote(j.In[0]))
	}
	if outPort {
		fmt.Fprintf(&b, " > %s", quote(j.Out[0].Name()))
		out = 1
	}
	for k, e := range p.reads {
		fmt.Fprintf(&b, "\ncat %s > %s", quote(j.In[p.readIn[k]]), e)
	}
	for k, e := range p.writes {
		fmt.Fprintf(&b, "\ncat %s > %s", e, quote(j.Out[out+k].Name()))
	}
	return b.String()
}

// commandText is command c as the script has it, without the redirects
// of its edges: its words, and its redirects to files of the script's.
func commandText(c *shell.Cmd) string {
	var b strings.Builder
	for k, w := range c.Args {
		if k > 0 {
			b.WriteByte(' ')
		}
		if w.Edge {
			b.WriteString(w.Value)
		} else {
			b.WriteString(quote(w.Value))
		}
	}
	// The script's own files stay; the job's come after them (in
	// stageScript) and win, as the last redirect of a kind does.
	for _, x := range c.Redirs {
		if !x.Target.Edge {
			fmt.Fprintf(&b, " %s %s", x.Op, quote(x.Target.Value))
		}
	}
	return b.String()
}

// quote makes s one word of tpipe's shell, as sh's single quotes do.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
