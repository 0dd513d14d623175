package runner_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// Control bytes that the user typed (in a file name, a command name, a
// script with a syntax error) are escaped in messages, never sent to the
// terminal raw.
func TestMessagesEscapeControlBytes(t *testing.T) {
	tests := []struct{ script, want string }{
		{"cat < '/nonexistent\x1b[31mred'", `tpipe: /nonexistent\x1b[31mred: No such file or directory`},
		{"'nosuchcmd\a\x1b[2J'", `tpipe: nosuchcmd\a\x1b[2J: command not found`},
		{"cat '/nonexistent\x1b[1m'", `/nonexistent\x1b[1m`},
		{"cat \x1b[1m | |", `cat \x1b[1m | |`},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		r := runner.New(runner.Config{Stderr: &stderr})
		r.RunScript(context.Background(), tt.script)
		r.Close()
		got := stderr.String()
		if !strings.Contains(got, tt.want) {
			t.Errorf("%q: stderr %q, want it to hold %q", tt.script, got, tt.want)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) {
			t.Errorf("%q: stderr %q holds a control byte", tt.script, got)
		}
	}
}
