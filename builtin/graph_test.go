package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/shell"
	"github.com/tpipe/tpipe/task"
)

// net builds a graph of builtins joined by named edges, as the runner
// does: a command's Reads and Writes are ports after port 0, each named by
// its word, and the writer and reader of a name are connected.
type net struct {
	t        *testing.T
	g        graph.Graph
	env      *builtin.Env
	stderr   bytes.Buffer
	from, to map[string]graph.End
}

func newNet(t *testing.T) *net {
	n := &net{t: t, from: map[string]graph.End{}, to: map[string]graph.End{}}
	n.env = &builtin.Env{Stderr: &n.stderr, TempDir: t.TempDir()}
	return n
}

// src adds a task that writes text, cut into lines, to edge name.
func (n *net) src(name, text string) {
	i := n.g.Add("src "+name, 0, 1, task.ReadFrom(strings.NewReader(text), record.Lines))
	n.from[name] = graph.End{Task: i}
}

// sink adds a task that writes what edge name carries to the buffer it
// returns.
func (n *net) sink(name string) *bytes.Buffer {
	var out bytes.Buffer
	i := n.g.Add("sink "+name, 1, 0, task.WriteTo(&out, record.Lines))
	n.to[name] = graph.End{Task: i}
	return &out
}

// cmd adds the builtin argv. If it reads its input, port 0 reads edge in.
// Its output goes to edge out, or if out is "" to the buffer returned.
func (n *net) cmd(in, out string, argv ...string) *bytes.Buffer {
	n.t.Helper()
	c, err := builtin.New(edgeEnv(n.env, argv), argv)
	if err != nil {
		n.t.Fatalf("%q: %v", argv, err)
	}
	nin := len(c.Reads)
	if c.ReadsInput {
		nin++
	}
	i := n.g.Add(strings.Join(argv, " "), nin, 1+len(c.Writes), c.Fn)
	n.g.Tasks[i].ReadsAny = c.ReadsAny
	if c.ReadsInput {
		n.to[in] = graph.End{Task: i}
	}
	for k, name := range c.Reads {
		n.to[name] = graph.End{Task: i, Port: nin - len(c.Reads) + k}
	}
	for k, name := range c.Writes {
		n.from[name] = graph.End{Task: i, Port: 1 + k}
	}
	if out != "" {
		n.from[out] = graph.End{Task: i}
		return nil
	}
	var buf bytes.Buffer
	sink := n.g.Add("stdout", 1, 0, task.WriteTo(&buf, record.Lines))
	n.g.Connect(i, 0, sink, 0, 1)
	return &buf
}

// run connects the named edges, each of capacity 1 so that queues fill
// up, and runs the graph. It returns the exit status of a run that ended
// with one.
func (n *net) run(policy sched.Policy) (int, error) {
	n.t.Helper()
	names := make([]string, 0, len(n.from))
	for name := range n.from {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		to, ok := n.to[name]
		if !ok {
			n.t.Fatalf("%s is written and not read", name)
		}
		n.g.Connect(n.from[name].Task, n.from[name].Port, to.Task, to.Port, 1).Name = name
	}
	_, err := sched.Run(context.Background(), &n.g, sched.Options{Policy: policy, RecordSize: 64, TempDir: n.t.TempDir()})
	var ee *task.ExitError
	if errors.As(err, &ee) {
		return ee.Code, nil
	}
	return 0, err
}

// graphPolicies are run by every graph test: a goroutine per task, and
// one task at a time.
var graphPolicies = []sched.Policy{sched.Concurrent, sched.ROS}

// eachPolicy runs test under every policy, with a fresh net.
func eachPolicy(t *testing.T, test func(t *testing.T, n *net, policy sched.Policy)) {
	for _, pol := range graphPolicies {
		t.Run(pol.String(), func(t *testing.T) { test(t, newNet(t), pol) })
	}
}

// numbered returns n lines "prefix000\n", "prefix001\n", ...
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%03d\n", prefix, i)
	}
	return b.String()
}

// edgeEnv is env with Edges set as the shell would mark argv's words:
// every word of an edge's form, none of them quoted. env may be nil.
func edgeEnv(env *builtin.Env, argv []string) *builtin.Env {
	e := builtin.Env{}
	if env != nil {
		e = *env
	}
	e.Edges = nil
	for _, w := range argv[1:] {
		if shell.IsEdgeName(w) {
			e.Edges = append(e.Edges, w)
		}
	}
	return &e
}

// A word of an edge's form that the shell did not mark (it was quoted) is
// an ordinary FILE operand: the command reads the file of that name.
func TestUnmarkedEdgeIsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "@a"), []byte("from the file\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"cat", "@a"}, {"grep", "file", "@a"}, {"wc", "-l", "@a"}} {
		env := &builtin.Env{Open: func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }}
		c, err := builtin.New(env, argv)
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if len(c.Reads) != 0 {
			t.Errorf("%q: Reads %q, want none: the word was not marked as an edge", argv, c.Reads)
		}
		var stdout, stderr bytes.Buffer
		got := runWithEnv(t, env, &stdout, &stderr, argv, "")
		want := runGNU(t, dir, argv, "")
		if got.out != want.out || got.code != want.code {
			t.Errorf("%q: got %q (status %d), GNU %q (status %d)", argv, got.out, got.code, want.out, want.code)
		}
	}
	// route, merge and join take named edges only.
	if _, err := builtin.New(nil, []string{"merge", "@a"}); err == nil || err.Error() != "merge: @a: not a named edge (@name)" {
		t.Errorf("merge '@a': err = %v", err)
	}
}

// Every builtin that takes FILE operands lists its named edges in Reads,
// and reads port 0 only for "-" or no operand.
func TestEdgeOperands(t *testing.T) {
	for _, tc := range []struct {
		cmd        string
		readsInput bool
		reads      []string
		writes     []string
	}{
		{"cat @a @b", false, []string{"@a", "@b"}, nil},
		{"cat @a - @b", true, []string{"@a", "@b"}, nil},
		{"cat @ @1x f", false, nil, nil},
		{"head -n 2 @a", false, []string{"@a"}, nil},
		{"tail @a -", true, []string{"@a"}, nil},
		{"grep x @b @a", false, []string{"@b", "@a"}, nil},
		{"grep -e @a @b", false, []string{"@b"}, nil}, // a pattern is no operand
		{"sed p @a", false, []string{"@a"}, nil},
		{"cut -c1 @a f", false, []string{"@a"}, nil},
		{"wc -l @a", false, []string{"@a"}, nil},
		{"sort @a @b", false, []string{"@a", "@b"}, nil},
		{"uniq @a", false, []string{"@a"}, nil},
		{"uniq @a out", false, []string{"@a"}, nil},
		{"nl @a", false, []string{"@a"}, nil},
		{"rev @a -", false, []string{"@a"}, nil}, // rev reads "-" as a file
		{"tee f @a @b", true, nil, []string{"@a", "@b"}},
		{"route x @y @n", true, nil, []string{"@y", "@n"}},
		{"merge @a @b", false, []string{"@a", "@b"}, nil},
		{"join \\(x\\) @a @b", false, []string{"@a", "@b"}, nil},
	} {
		argv := strings.Fields(tc.cmd)
		c, err := builtin.New(edgeEnv(nil, argv), argv)
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		if c.ReadsInput != tc.readsInput || !slices.Equal(c.Reads, tc.reads) || !slices.Equal(c.Writes, tc.writes) {
			t.Errorf("%s: ReadsInput %v, Reads %q, Writes %q; want %v, %q, %q",
				tc.cmd, c.ReadsInput, c.Reads, c.Writes, tc.readsInput, tc.reads, tc.writes)
		}
		if want := strings.HasPrefix(tc.cmd, "merge") || strings.HasPrefix(tc.cmd, "join"); c.ReadsAny != want {
			t.Errorf("%s: ReadsAny %v", tc.cmd, c.ReadsAny)
		}
	}
}

func TestGraphUsage(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"cat @a @a", "cat: @a: named twice; a named edge has one reader and one writer"},
		{"grep x @a - @a", "grep: @a: named twice; a named edge has one reader and one writer"},
		{"tee @a f @a", "tee: @a: named twice; a named edge has one reader and one writer"},
		{"uniq @a @b", "uniq: @b: OUTPUT cannot be a named edge; pipe the output into 'tee @b'"},
		{"route", "route: missing RE"},
		{"route x @a", "route: needs at least 2 named edges (@name), got 1"},
		{"route x @a @b @c", "route: extra operand '@c'"},
		{"route x @a b", "route: b: not a named edge (@name)"},
		{"route x @a @a", "route: @a: named twice; a named edge has one reader and one writer"},
		{"route \\( @a @b", "route: Unmatched ( or \\("},
		{"route -x y @a @b", "route: invalid option -- 'x'"},
		{"merge", "merge: needs at least 1 named edges (@name), got 0"},
		{"merge x @a", "merge: x: not a named edge (@name)"},
		{"merge - @a", "merge: -: not a named edge (@name)"},
		{"merge @a @1x", "merge: @1x: not a named edge (@name)"},
		{"merge -v @a", "merge: invalid option -- 'v'"},
		{"join \\(k\\) @a", "join: needs at least 2 named edges (@name), got 1"},
		{"join k @a @b", "join: RE has 0 groups: it needs exactly one, the key"},
		{"join \\(k\\)\\(v\\) @a @b", "join: RE has 2 groups: it needs exactly one, the key"},
		{"join -E (k @a @b", "join: Unmatched ( or \\("},
		{"join (k) @a f", "join: f: not a named edge (@name)"},
	} {
		argv := strings.Fields(tc.cmd)
		_, err := builtin.New(edgeEnv(nil, argv), argv)
		var ue *builtin.UsageError
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want usage error %q", tc.cmd, err, tc.want)
		}
	}
}

// The FILE builtins read a named edge as GNU reads a file of that name.
func TestFileBuiltinsReadEdges(t *testing.T) {
	a, b, stdin := "a1\nalpha e\na3\nno newline", "b1\nbeta e\nb1\n", "in 1\nin e\n"
	dir := t.TempDir()
	for name, data := range map[string]string{"@a": a, "@b": b, "f": "file e\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{
		"cat @a @b", "cat @b - @a f", "cat f @a",
		"head -n 2 @a @b", "head -n 1 @b - @a", "head -c 5 @a",
		"tail -n 2 @a @b", "tail -n +2 @b",
		"grep e @a @b", "grep -c e f @b @a", "grep -n e - @b",
		"sed -n 2p @a @b", "sed s/e/E/ @b",
		"cut -c1-2 @a @b",
		"wc -l @a",
		"sort @b @a", "sort -r - @a",
		"uniq @b", "uniq -c @b",
		"nl @a @b",
		"rev @a",
	} {
		argv := strings.Fields(cmd)
		want := runGNU(t, dir, argv, stdin)
		for _, pol := range graphPolicies {
			n := newNet(t)
			n.env.Open = func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }
			n.src("@a", a)
			n.src("@b", b)
			n.src("stdin", stdin)
			out := n.cmd("stdin", "", argv...)
			for _, name := range []string{"@a", "@b", "stdin"} {
				if _, ok := n.to[name]; !ok {
					n.sink(name) // the command does not read it
				}
			}
			code, err := n.run(pol)
			if err != nil {
				t.Fatalf("%s, %s: %v", cmd, pol, err)
			}
			if out.String() != want.out || code != want.code {
				t.Errorf("%s, %s:\n tpipe: status %d, %q\n   GNU: status %d, %q", cmd, pol, code, out, want.code, want.out)
			}
		}
	}
}

// tee writes named edges as it writes files; an edge whose reader stops
// early (head) does not stop the others.
func TestTeeEdges(t *testing.T) {
	in := numbered("line ", 300)
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		file := filepath.Join(t.TempDir(), "copy")
		n.src("stdin", in)
		out := n.cmd("stdin", "", "tee", "@a", file, "@b")
		a := n.sink("@a")
		head := n.cmd("", "", "head", "-n", "3", "@b")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		data, _ := os.ReadFile(file)
		if out.String() != in || a.String() != in || string(data) != in || head.String() != "line 000\nline 001\nline 002\n" {
			t.Errorf("out %d bytes, @a %d, file %d, head %q", out.Len(), a.Len(), len(data), head)
		}
	})
}

// tee stops once its output and every edge have stopped reading, and so
// does yes before it.
func TestTeeEdgesAllGone(t *testing.T) {
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.cmd("", "yes", "yes")
		n.cmd("yes", "tee", "tee", "@a")
		out := n.cmd("tee", "", "head", "-n", "2")
		a := n.cmd("", "", "head", "-n", "1", "@a")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		if out.String() != "y\ny\n" || a.String() != "y\n" {
			t.Errorf("out %q, @a %q", out, a)
		}
	})
}

// route splits the lines by the pattern; the output gets nothing.
func TestRoute(t *testing.T) {
	in := numbered("line ", 300)
	var yes, no strings.Builder
	for _, l := range strings.SplitAfter(in, "\n") {
		switch {
		case strings.HasSuffix(l, "5\n"), strings.HasSuffix(l, "7\n"):
			yes.WriteString(l)
		default:
			no.WriteString(l)
		}
	}
	for _, re := range [][]string{{"[57]$"}, {"-E", "(5|7)$"}, {"-i", "LINE [0-9]*[57]$"}} {
		eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
			n.src("stdin", in)
			out := n.cmd("stdin", "", slices.Concat([]string{"route"}, re, []string{"@yes", "@no"})...)
			y, o := n.sink("@yes"), n.sink("@no")
			if code, err := n.run(policy); code != 0 || err != nil {
				t.Fatalf("status %d, %v", code, err)
			}
			if out.Len() != 0 || y.String() != yes.String() || o.String() != no.String() {
				t.Errorf("route %q: out %q, @yes %d bytes, @no %d", re, out, y.Len(), o.Len())
			}
		})
	}
}

// An edge whose reader stops drops its lines; the other gets all of its
// own. Once both stop, route stops, and an endless source with it.
func TestRouteEdgeGone(t *testing.T) {
	in := numbered("line ", 300)
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("stdin", in)
		n.cmd("stdin", "", "route", "5$", "@five", "@other")
		head := n.cmd("", "", "head", "-n", "2", "@five")
		wc := n.cmd("", "", "wc", "-l", "@other")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		if head.String() != "line 005\nline 015\n" || wc.String() != "270 @other\n" {
			t.Errorf("head %q, wc %q", head, wc)
		}
	})
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		// Endless lines a, b, a, b, ...
		ab := n.g.Add("ab", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
			for {
				if err := p.Out(0).Write([]byte("a\n")); err != nil {
					return err
				}
				if err := p.Out(0).Write([]byte("b\n")); err != nil {
					return err
				}
			}
		})
		n.from["ab"] = graph.End{Task: ab}
		n.cmd("ab", "", "route", "a", "@a", "@b")
		a := n.cmd("", "", "head", "-n", "1", "@a")
		b := n.cmd("", "", "head", "-n", "2", "@b")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		if a.String() != "a\n" || b.String() != "b\nb\n" {
			t.Errorf("@a %q, @b %q", a, b)
		}
	})
}

// linesWith returns the lines of s that start with prefix, in order.
func linesWith(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// merge writes every line of every edge once, each edge's in order, and
// ends a last line that lacks a newline.
func TestMerge(t *testing.T) {
	a, b, c := numbered("a", 250), numbered("b", 120), numbered("c", 30)+"c-last"
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("@a", a)
		n.src("@b", b)
		n.src("@c", c)
		out := n.cmd("", "", "merge", "@c", "@a", "@b")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		got := out.String()
		if len(got) != len(a)+len(b)+len(c)+1 || linesWith(got, "a") != a || linesWith(got, "b") != b || linesWith(got, "c") != c+"\n" {
			t.Errorf("merged %d bytes:\n%s", len(got), got)
		}
	})
}

// merge behind a tee: a graph that is safe, as merge reads what arrives.
func TestMergeAfterTee(t *testing.T) {
	in := numbered("line ", 300)
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("stdin", in)
		n.cmd("stdin", "tee", "tee", "@a")
		n.cmd("tee", "@b", "cat")
		out := n.cmd("", "", "merge", "@a", "@b")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		got := strings.SplitAfter(out.String(), "\n")
		sort.Strings(got)
		want := strings.SplitAfter(in+in, "\n")
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("merged %d bytes, want every line twice", out.Len())
		}
	})
}

// cat reads edges in operand order, each to its end, with "-" among them.
func TestCatEdges(t *testing.T) {
	x, y, stdin := numbered("x", 200), numbered("y", 150)+"y-last", numbered("in", 100)
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("@x", x)
		n.src("@y", y)
		n.src("stdin", stdin)
		out := n.cmd("stdin", "", "cat", "@y", "-", "@x")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		// As GNU cat does, y's last line runs into the next operand.
		if want := y + stdin + x; out.String() != want {
			t.Errorf("got %d bytes, want %d", out.Len(), len(want))
		}
	})
}

// `tee @x @y | ...; cat @x @y` reads @x to its end while tee fills @y: no
// fixed B is enough, and the run relies on the pool resolving the stall
// (growing @y, or spilling it to disk).
func TestCatEdgesAfterTee(t *testing.T) {
	in := numbered("line ", 500)
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("stdin", in)
		out := n.cmd("stdin", "", "tee", "@x", "@y")
		cat := n.cmd("", "", "cat", "@x", "@y")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v", code, err)
		}
		if out.String() != in || cat.String() != in+in {
			t.Errorf("out %d bytes, cat %d bytes", out.Len(), cat.Len())
		}
	})
}

// join pairs lines by key as they arrive, whatever order the keys come in
// on each edge, and reports what it could not pair.
func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		argv       []string
		a, b, c    string
		want       string // sorted
		stderr     string
		wantStatus int
	}{{
		argv: []string{"join", `^\(k[0-9]\) `, "@a", "@b"},
		a:    "k1 a\nk3 a\nnokey\nk2 a\nk1 b\n",
		b:    "k2 B\nk1 B\nk3 B\nk9 B",
		want: "k1 a\tk1 B\nk2 a\tk2 B\nk3 a\tk3 B\n",
		// nokey has no key, the second k1 of @a and k9 of @b no partner.
		stderr:     "join: 3 unmatched lines (first on @a: \"nokey\")\n",
		wantStatus: 1,
	}, {
		argv: []string{"join", "-E", `^(k[0-9]) `, "@a", "@b"},
		a:    "k1 a\n",
		b:    "k2 b\nk1 b\n",
		want: "k1 a\tk1 b\n", stderr: "join: 1 unmatched line (first on @b: \"k2 b\")\n", wantStatus: 1,
	}, {
		// Three edges; a key seen twice on each is paired in arrival order.
		argv: []string{"join", `=\(.*\)`, "@c", "@a", "@b"},
		a:    "a1=x\na2=y\na3=x\n",
		b:    "b1=y\nb2=x\nb3=x\n",
		c:    "c1=x\nc2=x\nc3=y\n",
		want: "c1=x\ta1=x\tb2=x\nc2=x\ta3=x\tb3=x\nc3=y\ta2=y\tb1=y\n",
	}} {
		eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
			n.src("@a", tc.a)
			n.src("@b", tc.b)
			if tc.c != "" {
				n.src("@c", tc.c)
			}
			out := n.cmd("", "", tc.argv...)
			code, err := n.run(policy)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.SplitAfter(out.String(), "\n")
			sort.Strings(got)
			if strings.Join(got, "") != tc.want || n.stderr.String() != tc.stderr || code != tc.wantStatus {
				t.Errorf("%q: status %d, out %q, stderr %q", tc.argv, code, got, n.stderr.String())
			}
		})
	}
}

// Keys that arrive in opposite orders on the two edges: every line waits
// for its partner, and all are paired.
func TestJoinReversed(t *testing.T) {
	var a, b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&a, "%03d a\n", i)
		fmt.Fprintf(&b, "%03d b\n", 399-i)
	}
	eachPolicy(t, func(t *testing.T, n *net, policy sched.Policy) {
		n.src("@a", a.String())
		n.src("@b", b.String())
		out := n.cmd("", "", "join", "^\\([0-9]*\\)", "@a", "@b")
		if code, err := n.run(policy); code != 0 || err != nil {
			t.Fatalf("status %d, %v, stderr %q", code, err, n.stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		sort.Strings(lines)
		if len(lines) != 400 || lines[7] != "007 a\t007 b" {
			t.Errorf("%d lines, first %q", len(lines), lines[:min(3, len(lines))])
		}
	})
}
