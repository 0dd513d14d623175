package runner_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
	"pgregory.net/rapid"
)

// Commands whose output depends only on their input, for random chains.
var chainCommands = []string{
	"cat", "copy", "prefix HEAD", "grep a", "grep -v b", "grep -c a", "grep -n ab",
	"sort", "sort -r", "sort -u", "uniq", "uniq -c", "head -n 3", "tail -n 2",
	"wc -l", "wc", "tr a-c x-z", "tr -d a", "cut -c1-3", "sed s/a/A/g", "sed -n /b/p",
	"rev", "nl", "tac",
}

type outcome struct {
	out, errText string
	status       int
}

func runWith(policy sched.Policy, script, stdin string, recordSize int) outcome {
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Policy: policy, RecordSize: recordSize, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	defer r.Close()
	status := r.RunScript(context.Background(), script)
	return outcome{out.String(), errb.String(), status}
}

// Theorem 2.2 for real commands: every policy gives the same bytes and the
// same exit status on random chains of builtins and random input. When a
// line is longer than the record size the run fails; every policy must then
// fail with the same status and a one-line message naming a task. Which
// task fails first may differ (several may be about to fail, and the first
// failure stops the run), and so may the output that came before it. With
// an early exit downstream (head), whether the failing record is reached at
// all depends on the interleaving, as it does in bash.
func TestPoliciesAgreeOnRandomChains(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "commands")
		cmds := make([]string, n)
		for i := range cmds {
			cmds[i] = rapid.SampledFrom(chainCommands).Draw(t, "command")
		}
		script := strings.Join(cmds, " | ")
		lines := rapid.SliceOfN(rapid.StringOfN(rapid.SampledFrom([]rune("abcz ")), 0, 12, -1), 0, 30).Draw(t, "lines")
		stdin := strings.Join(lines, "\n")
		if rapid.Bool().Draw(t, "final newline") && stdin != "" {
			stdin += "\n"
		}
		size := rapid.SampledFrom([]int{8, 64, 4096}).Draw(t, "record size")
		want := runWith(sched.Concurrent, script, stdin, size)
		for _, p := range sched.Policies() {
			if p == sched.Concurrent {
				continue
			}
			got := runWith(p, script, stdin, size)
			hard := strings.Contains(want.errText, "exceeds the record size")
			if (hard || strings.Contains(got.errText, "exceeds the record size")) && strings.Contains(script, "head") {
				// A source failing on input a head downstream may never
				// need: whether it gets there first depends on the
				// interleaving, as in bash (SIGPIPE or the error first).
				continue
			}
			if got.status != want.status || !hard && got.errText != want.errText {
				t.Fatalf("%q under %s: status %d %q; concurrent: %d %q", script, p, got.status, got.errText, want.status, want.errText)
			}
			if hard && (strings.Count(got.errText, "\n") != 1 || !strings.Contains(got.errText, "exceeds the record size")) {
				t.Fatalf("%q under %s: message %q", script, p, got.errText)
			}
			if want.status == 0 && got.out != want.out {
				t.Fatalf("%q under %s on %q:\n got  %q\n want %q", script, p, stdin, got.out, want.out)
			}
		}
	})
}
