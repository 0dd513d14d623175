package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// The shell's state from one pipeline to the next: what each statement
// prints and the status of the script, with the environment given and
// not the test's.
func TestShellState(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), nil, 0o644); err != nil { // not a program
		t.Fatal(err)
	}
	for _, f := range []string{"a.log", "b.log", "sub/c.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sub, "run.sh"), []byte("#!/bin/sh\necho ran \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sub, "E=exported"}
	for _, tc := range []struct {
		name, script, out, err string
		status                 int
	}{
		{name: "variable for what follows", script: "X=1; echo $X; Y=$X$X; echo ${Y}z", out: "1\n11z\n"},
		{name: "not exported", script: "X=1; sh -c 'echo [$X]'", out: "[]\n"},
		{name: "exported", script: "X=1; export X; sh -c 'echo [$X]'; export Y=2; sh -c 'echo [$Y]'", out: "[1]\n[2]\n"},
		{name: "environment is exported", script: "sh -c 'echo $E'; unset E; sh -c 'echo [$E]'; echo [$E]", out: "exported\n[]\n[]\n"},
		{name: "for one command", script: "X=1 sh -c 'echo $X'; echo [$X]", out: "1\n[]\n"},
		{name: "for one builtin", script: `X=2 awk 'BEGIN { print ENVIRON["X"] }'; awk 'BEGIN { print "[" ENVIRON["X"] "]" }'`, out: "2\n[]\n"},
		{name: "words expand before the command's assignments", script: "X=3; X=5 seq $X", out: "1\n2\n3\n"},
		{name: "status", script: "false; echo $?; echo $?; grep -q nope a.log; echo $?", out: "1\n0\n1\n"},
		{name: "and", script: "true && echo yes; false && echo no; echo $?", out: "yes\n1\n"},
		{name: "or", script: "false || echo yes; true || echo no; echo $?", out: "yes\n0\n"},
		{name: "chain", script: "false && echo a || echo b && echo c", out: "b\nc\n"},
		{name: "bang", script: "! true; echo $?; ! false; echo $?; ! false | true; echo $?", out: "1\n0\n0\n"},
		{name: "pipefail in a list", script: "seq 3 | grep 9 | wc -l && echo ok || echo failed", out: "0\nfailed\n"},
		{name: "last status is the script's", script: "true; false", status: 1},
		{name: "glob", script: "echo *.log; echo *.none; echo '*.log'", out: "a.log b.log\n*.none\n*.log\n"},
		{name: "glob in a redirect", script: "cat < a.*", out: "a.log\n"},
		{name: "ambiguous redirect fails its command", script: "cat < *.log; echo $?", out: "1\n", err: "tpipe: 1:7: *.log: ambiguous redirect (the file name expands to 2 words)\ncat < *.log; echo $?\n      ^\n"},
		{name: "assignments see those before them", script: "A=1 B=$A; echo $B; A=2 B=$A sh -c 'echo $B'; X=a; X+=b; echo $X", out: "1\n2\nab\n"},
		{name: "exit", script: "echo a; exit 3; echo b", out: "a\n", status: 3},
		{name: "exit keeps the status", script: "false; exit", status: 1},
		{name: "pwd is the shell's", script: "cd sub; pwd; cd -P .; pwd", out: sub + "\n" + sub + "\n"},
		{name: "programs follow cd and PATH", script: "cd sub; ./run.sh a; cd ..; sub/run.sh b; PATH=$PWD/sub:$PATH; run.sh c; PATH=/nonexist run.sh d 2>/dev/null; echo $?", out: "ran a\nran b\nran c\n127\n"},
		{name: "an error word in a graph ends the script", script: "seq 2 > @a; cat @a ${NOPE?x}; echo after", status: 1,
			err: "tpipe: 1:20: NOPE: x\nseq 2 > @a; cat @a ${NOPE?x}; echo after\n                   ^\n"},
		{name: "an error word in a pipeline ends only it", script: "echo ${NOPE?x} | cat; echo next", out: "next\n", err: "tpipe: 1:6: NOPE: x\necho ${NOPE?x} | cat; echo next\n     ^\n"},
		{name: "cd", script: "cd sub; cat c.txt; echo *; pwd; cd ..; echo *.log", out: "sub/c.txt\nc.txt run.sh\n" + sub + "\na.log b.log\n"},
		{name: "cd home and back", script: "cd; echo $PWD; cd -; cd - > /dev/null; pwd", out: sub + "\n" + dir + "\n" + sub + "\n"},
		{name: "cd missing", script: "cd nope; echo $?; pwd", out: "1\n" + dir + "\n", err: "tpipe: cd: nope: No such file or directory\n"},
		{name: "cd to a file", script: "cd a.log", err: "tpipe: cd: a.log: Not a directory\n", status: 1},
		{name: "tilde", script: "echo ~ ~/c.txt '~'", out: sub + " " + sub + "/c.txt ~\n"},
		{name: "braces and arithmetic", script: "echo {a,b}{1..2} $((6*7))", out: "a1 a2 b1 b2 42\n"},
		{name: "unset variable is empty", script: "echo [$NOPE] [${NOPE:-d}]", out: "[] [d]\n"},
		{name: "error word ends the script", script: "echo ${NOPE?not given}; echo after",
			err: "tpipe: 1:6: NOPE: not given\necho ${NOPE?not given}; echo after\n     ^\n", status: 1},
		{name: "no word makes an edge", script: "X=@a; seq 2 > $X; cat ./@a", out: "1\n2\n"},
		{name: "redirected shell command", script: "cd sub; cd - > ~/../out; export > /dev/null; cat out", out: dir + "\n"},
		{name: "expands to nothing", script: "$NOPE; echo $?", out: "0\n"},
		{name: "edges and lists", script: "seq 2 > @a && cat @a", status: 2,
			err: "tpipe: 1:1: pipelines linked by named edges run together as one graph, so none of them can be part of && or || or follow !: give each a line of its own\nseq 2 > @a && cat @a\n^\n"},
		{name: "cd in a pipeline", script: "seq 2 | cd sub", status: 2,
			err: "tpipe: 1:9: cd cannot be part of a pipeline: it changes the shell, so give it a statement of its own, before or after the pipeline\nseq 2 | cd sub\n        ^\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			r := runner.New(runner.Config{Dir: dir, Environ: env, Stdout: &out, Stderr: &errb})
			defer r.Close()
			status := r.RunScript(context.Background(), tc.script)
			if out.String() != tc.out || errb.String() != tc.err || status != tc.status {
				t.Errorf("%s\n got %q, stderr %q, status %d\nwant %q, stderr %q, status %d", tc.script, out.String(), errb.String(), status, tc.out, tc.err, tc.status)
			}
		})
	}
}

// The state lasts from one RunScript to the next, as from one line of
// the interactive shell to the next; the settings the shell's set
// changes keep the directory cd gave.
func TestShellStateLasts(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := runner.New(runner.Config{Dir: dir, Environ: []string{"PATH=" + os.Getenv("PATH")}, Stdout: &out, Stderr: &out})
	defer r.Close()
	for _, line := range []string{"X=1", "cd d", "false", "echo $X $? ${PWD##*/}"} {
		r.RunScript(context.Background(), line)
	}
	c := r.Config()
	c.Policy = sched.ROS
	r.SetConfig(c)
	r.RunScript(context.Background(), "pwd")
	want := "1 1 d\n" + filepath.Join(dir, "d") + "\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if got := r.Dir(); got != filepath.Join(dir, "d") {
		t.Errorf("Dir() = %q", got)
	}
}

// Every policy sees the same words: expansion is before the graph.
func TestExpansionUnderEveryPolicy(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"x1", "x2"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused, sched.Serial} {
		var out, errb bytes.Buffer
		r := runner.New(runner.Config{Policy: p, Dir: dir, Environ: []string{"N=2"}, Stdout: &out, Stderr: &errb})
		status := r.RunScript(context.Background(), "cat x* | head -n $N | tr a-z A-Z && echo ok")
		r.Close()
		if got := out.String(); got != "X1\nX2\nok\n" || status != 0 {
			t.Errorf("%s: got %q (%s), status %d", p, got, strings.TrimSpace(errb.String()), status)
		}
	}
}
