package builtin_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

func TestHeadSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	seq := seqLines(1, 30)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("head", seq),
		filesC("head", ""),
		filesC("head", "a\nb"),
		filesC("head -n 3", seq),
		filesC("head -n3", seq),
		filesC("head -3", seq),
		filesC("head -1", "only"),
		filesC("head -n 0", seq),
		filesC("head -n 100", seq),
		filesC("head -n +5", seq),
		filesC("head -n 1K", seq),
		filesC("head -n 1b", seq),
		filesC("head -n -3", seq),
		filesC("head -n -0", seq),
		filesC("head -n -100", seq),
		filesC("head -n -1", "a\nb"),
		filesC("head -c 5", seq),
		filesC("head -c 0", seq),
		filesC("head -c 1000", seq),
		filesC("head -c 4", "ab\ncd\n"),
		filesC("head -c -5", seq),
		filesC("head -c -1", "a\nb"),
		filesC("head -c -1000", seq),
		filesC("head -c -3", "abcdef\n"),
		filesC("head -2c", seq),
		filesC("head -2q f2 nonl", ""),
		filesC("head f2", ""),
		filesC("head nonl f2", ""),
		filesC("head -n 1 nonl f2", ""),
		filesC("head -c 3 nonl - f2", "stdin\n"),
		filesC("head -q f2 nonl", ""),
		filesC("head -v f2", ""),
		filesC("head -n 2 empty long f2", ""),
		filesC("head missing f2", ""),
		filesC("head f2 missing nonl", ""),
		filesC("head d f2", ""),
		filesC("head -n -2 long nonl", ""),
		filesC("head -c -2 nonl f2", ""),
	})
}

func TestHeadErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("head missing", ""),
		filesC("head f2 missing", ""),
		filesC("head d", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("head -n x", ""),
		filesC("head -c x", ""),
		filesC("head -n -x", ""),
		filesC("head -c -1.5", ""),
		filesC("head -n 1.5", ""),
		filesC("head -n 1g", ""),
		filesC("head -n 99999999999999999999999", ""),
		filesC("head -n 1Z", ""),
		filesC("head -n", ""),
		filesC("head -5x", ""),
		filesC("head -x", ""),
		filesC("head --bogus", ""),
	})
}

// yes | head -n 1 ends: head returns after its line, which stops yes.
func TestHeadStopsUpstream(t *testing.T) {
	for _, argv := range [][]string{{"head", "-n", "1"}, {"head", "-c", "3"}, {"head", "-n", "5000"}} {
		out := headRun(t, [][]string{{"yes"}, argv})
		want := runGNU(t, "", argv, strings.Repeat("y\n", 10000)).out
		if out != want {
			t.Errorf("yes | %q = %q, want %q", argv, out, want)
		}
	}
	out := headRun(t, [][]string{{"seq", "1", "1000000000"}, {"head", "-n", "2"}})
	if out != "1\n2\n" {
		t.Errorf("seq | head -n 2 = %q", out)
	}
}

// headRun runs a chain of builtins (the first reading nothing) to a
// buffer, and fails the test if it does not end within a few seconds.
func headRun(t *testing.T, cmds [][]string) string {
	t.Helper()
	g := &graph.Graph{}
	prev := -1
	for _, argv := range cmds {
		c, err := builtin.New(nil, argv)
		if err != nil {
			t.Fatal(err)
		}
		in := 0
		if prev >= 0 {
			in = 1
		}
		me := g.Add(c.Name, in, 1, c.Fn)
		if prev >= 0 {
			g.Connect(prev, 0, me, 0, 2)
		}
		prev = me
	}
	var out bytes.Buffer
	sink := g.Add("out", 1, 0, task.WriteTo(&out, record.Lines))
	g.Connect(prev, 0, sink, 0, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := sched.Run(ctx, g, sched.Options{RecordSize: 4096}); err != nil {
		t.Fatalf("%q: %v", cmds, err)
	}
	return out.String()
}

// seqLines returns the lines from..to, as seq writes them.
func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}
