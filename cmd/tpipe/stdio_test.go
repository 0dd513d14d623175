package main

import (
	"os/exec"
	"strings"
	"testing"
)

// A closed standard output makes writing to it fail with status 1 and a
// message, as bash's commands do (`seq 3 >&-`); a /dev/null given on
// purpose, even a daemon's read-write one, is written to as ever.
func TestClosedStdout(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	bin := tpipeBinary(t)
	tests := []struct {
		redirs, script string
		want           int
		stderr         string
	}{
		{">&-", "seq 3", 1, "tpipe: >stdout: write /dev/stdout: bad file descriptor\n"},
		{">&-", "seq 3 | cat", 1, "bad file descriptor"},
		{">&-", "seq 2 | /bin/cat", 1, "bad file descriptor"},
		{">&-", "true", 0, ""},
		{">/dev/null", "seq 3", 0, ""},
		{"1<>/dev/null 0>&1", "seq 3", 0, ""},
	}
	for _, tt := range tests {
		cmd := exec.Command(sh, "-c", `exec "$0" "$1" `+tt.redirs, bin, tt.script)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != tt.want || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("tpipe %q %s: status %d, stderr %q; want %d, %q", tt.script, tt.redirs, got, stderr.String(), tt.want, tt.stderr)
		}
	}
}
