package runner_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// TestCommands: each command with what it reads and writes, as tpipe serve
// sees a graph.
func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // per command: name in/builtin reads writes; groups
	}{
		{"tr a-z A-Z | rev", "tr in b [] []; rev in b [] []; [[0]]"},
		{"seq 3 | wc -l", "seq - b [] []; wc in b [] []; [[0]]"},
		{"md5sum", "md5sum in x [] []; [[0]]"},
		{"tee @a @b | cat > /dev/null\ncat @b @a | sort", "tee in b [] [@a @b]; cat in b [] []; cat - b [@b @a] []; sort in b [] []; [[0 1]]"},
		{"grep x > @a; tr a b < @a", "grep in b [] [@a]; tr in b [@a] []; [[0 1]]"},
		{"seq 3 | tee @a @b > /dev/null; paste @a @b", "seq - b [] []; tee in b [] [@a @b]; paste in x [@a @b] []; [[0 1]]"},
		{"cat; cat", "cat in b [] []; cat in b [] []; [[0] [1]]"},
	} {
		r := runner.New(runner.Config{})
		cmds, groups, err := r.Commands(tc.src)
		r.Close()
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		var got strings.Builder
		for _, c := range cmds {
			in, kind := "-", "x"
			if c.ReadsInput {
				in = "in"
			}
			if c.Builtin {
				kind = "b"
			}
			fmt.Fprintf(&got, "%s %s %s %v %v; ", c.Cmd.Args[0].Value, in, kind, c.Reads, c.Writes)
		}
		fmt.Fprint(&got, groups)
		if got.String() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, got.String(), tc.want)
		}
	}
}

// TestCommandsReport: a broken script is reported as RunScript reports it.
func TestCommandsReport(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cat @a", "tpipe: 1:5: @a is read but nothing writes it"},
		{"tr a", "tr: missing operand after 'a'"},
		{"cat 'x", "tpipe: 1:5: syntax error"},
	} {
		var errb bytes.Buffer
		r := runner.New(runner.Config{Stderr: &errb})
		_, _, err := r.Commands(tc.src)
		if err == nil {
			t.Errorf("%q: no error", tc.src)
			continue
		}
		if st := r.Report(tc.src, err); st != runner.StatusUsage {
			t.Errorf("%q: status %d", tc.src, st)
		}
		r.Close()
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: reported %q, want %q", tc.src, errb.String(), tc.want)
		}
	}
}
