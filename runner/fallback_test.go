package runner_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// A command line a builtin does not implement runs the system's program
// of that name, with its output, messages and status; --no-fallback
// refuses it; with no such program, the refusal says so. Usage errors
// are GNU's words on the command's own stderr, with GNU's status.
func TestFallback(t *testing.T) {
	for _, tool := range []string{"grep", "head"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	for _, tc := range []struct {
		name, script string
		off          bool // --no-fallback
		out, err     string
		status       int
	}{
		{name: "system grep runs -P", script: `seq 12 | grep -P '1\d'`, out: "10\n11\n12\n"},
		{name: "its status", script: `seq 3 | grep -P 7`, status: 1},
		{name: "its messages", script: "seq 3 | head -Y",
			err: "head: invalid option -- 'Y'\nTry 'head --help' for more information.\n", status: 1},
		{name: "its messages through 2>", script: "seq 3 | head -Y 2> e.txt; cat e.txt",
			out: "head: invalid option -- 'Y'\nTry 'head --help' for more information.\n"},
		{name: "in the middle of a pipeline", script: `seq 15 | grep -P '1\d' | wc -l`, out: "6\n"},
		{name: "off: a refusal", script: `seq 12 | grep -P '1\d'`, off: true, status: 2,
			err: "tpipe: grep -P: not implemented by the builtin, fallback is off (--no-fallback, set fallback off); turn it on to run the system's grep\n"},
		{name: "off: an unknown option in GNU's words", script: "seq 3 | head -Y", off: true, status: 1,
			err: "head: invalid option -- 'Y'\nTry 'head --help' for more information.\n"},
		{name: "no such program", script: "seq 3 | copy -x", status: 1, err: "copy: invalid option -- 'x'\n"},
		{name: "a usage error of the builtin", script: "seq 3 | head -n x | wc -l", out: "0\n",
			err: "head: invalid number of lines: 'x'\n", status: 1},
		{name: "grep's usage status", script: "seq 3 | grep", status: 2,
			err: "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := session{cfg: runner.Config{Dir: t.TempDir(), NoFallback: tc.off}, script: tc.script}.run(t)
			if got.out != tc.out || got.errText != tc.err || got.status != tc.status {
				t.Errorf("%q:\n got  out %q err %q status %d\n want out %q err %q status %d",
					tc.script, got.out, got.errText, got.status, tc.out, tc.err, tc.status)
			}
		})
	}
}

// --explain names each command that falls back, and what it lacks.
func TestExplainFallback(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep is not on PATH")
	}
	var out bytes.Buffer
	r := runner.New(runner.Config{})
	defer r.Close()
	if st := r.Explain(context.Background(), `seq 3 | grep -P '\d' | grep 2`, &out); st != 0 {
		t.Fatalf("status %d", st)
	}
	if !strings.Contains(out.String(), "fallback: grep -P: system grep") {
		t.Errorf("explain does not name the fallback:\n%s", out.String())
	}
	if strings.Count(out.String(), "fallback:") != 1 {
		t.Errorf("explain names a fallback for the builtin grep too:\n%s", out.String())
	}
}
