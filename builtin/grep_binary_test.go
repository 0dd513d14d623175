package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// Fixed: grep printed the matching lines of binary input. GNU grep 3 says
// "binary file matches" on stderr instead; -a prints the lines. Stdout,
// stderr and the status are compared byte for byte, for the Func form
// and, where there is one, the per-record form that fusion runs.
func TestGrepBinarySameAsGNU(t *testing.T) {
	dir := textFiles(t, "bin.txt", "a\x00b\n", "text.txt", "a\n")
	inputs := []string{
		"a\x00b\n",
		"x\na\x00b\nc\n",
		"a\nb\x00\n",     // the NUL after a matching line, in the first 32 KiB
		"a\nb\n\x00",     // a final NUL ends the last line
		"a\x00a\n",       // a NUL ends a line: -c counts two
		"x\x00\nab\nb\n", // an empty line from a NUL
		"b\na\x00",       // no final newline
		"plain a\nb\n",   // text
		strings.Repeat("a\n", 20000) + "z\x00\na\n", // a NUL past the probe
	}
	argvs := [][]string{
		{"grep", "a"}, {"grep", "-v", "a"}, {"grep", "a.b"}, {"grep", "-F", "a"},
		{"grep", "-n", "a"}, {"grep", "-o", "a"}, {"grep", "-c", "a"}, {"grep", "-c", "-v", "b"},
		{"grep", "-q", "a"}, {"grep", "-a", "a"}, {"grep", "--text", "-v", "a"}, {"grep", "-c", "-a", "a.b"},
	}
	for _, in := range inputs {
		for _, argv := range argvs {
			if len(in) > 30000 && argv[1] != "-c" && argv[1] != "-a" {
				// GNU decides per read past the first buffer, and prints
				// the lines before it: compare only what does not depend
				// on where its reads end.
				continue
			}
			checkGrepBinary(t, "", argv, in)
		}
	}
	for _, argv := range [][]string{
		{"grep", "a", "bin.txt"}, {"grep", "a", "bin.txt", "text.txt"}, {"grep", "-c", "a", "bin.txt", "text.txt"},
		{"grep", "-n", "a", "text.txt", "bin.txt"}, {"grep", "-a", "a", "bin.txt"},
	} {
		checkGrepBinary(t, dir, argv, "")
	}
}

func checkGrepBinary(t *testing.T, dir string, argv []string, in string) {
	t.Helper()
	want := runGNU(t, dir, argv, in)
	want.err = strings.ReplaceAll(want.err, gnuPath("grep")+": ", "grep: ")
	got := runBuiltin(t, dir, argv, in)
	if got != want {
		t.Errorf("%q on %.40q:\n tpipe: status %d, %.60q, stderr %q\n   GNU: status %d, %.60q, stderr %q", argv, in, got.code, got.out, got.err, want.code, want.out, want.err)
	}
	// The per-record form cannot look ahead: it agrees with GNU when the
	// first line holds the first NUL, or there is none.
	z := strings.IndexByte(in, 0)
	if dir == "" && (z < 0 || z < strings.IndexByte(in, '\n') || !strings.Contains(in, "\n")) {
		if rec, ok := runRec(t, argv, in); ok && rec != want {
			t.Errorf("%q on %.40q, per-record form:\n tpipe: status %d, %.60q, stderr %q\n   GNU: status %d, %.60q, stderr %q", argv, in, rec.code, rec.out, rec.err, want.code, want.out, want.err)
		}
	}
}

// runRec runs the per-record form of argv, if it has one, on in.
func runRec(t *testing.T, argv []string, in string) (result, bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c, err := builtin.New(&builtin.Env{Stderr: &stderr}, argv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rec == nil {
		return result{}, false
	}
	g := &graph.Graph{}
	src := g.Add("stdin", 0, 1, task.ReadFrom(strings.NewReader(in), record.Lines))
	me := g.Add(c.Name, 1, 1, c.Rec.Func())
	sink := g.Add("stdout", 1, 0, task.WriteTo(&stdout, record.Lines))
	g.Connect(src, 0, me, 0, 2)
	g.Connect(me, 0, sink, 0, 2)
	_, err = sched.Run(context.Background(), g, sched.Options{})
	res := result{out: stdout.String(), err: stderr.String()}
	var ee *task.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.Code
	default:
		t.Fatalf("%q: run: %v", argv, err)
	}
	return res, true
}
