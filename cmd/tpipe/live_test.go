package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
)

// startOnTerm starts tpipe (the built command, whose main handles
// signals) with args, its stdin, stdout and stderr a pseudo-terminal, as
// typed at a prompt.
func startOnTerm(t *testing.T, args ...string) *ptyTerm {
	t.Helper()
	cmd := exec.Command(tpipeBinary(t), args...)
	cmd.Env = append(os.Environ(), "TERM=xterm", "LC_ALL=C")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	return followTerm(t, cmd, f)
}

func appendTo(t *testing.T, name, text string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// A log followed on a terminal shows each matching line as it is
// written: the next line is appended only once the terminal shows the
// last one, so a line held back would fail the test at its deadline.
// Then an early exit on the idle log returns at once, with status 0.
func TestFollowedLogOnTerminal(t *testing.T) {
	log := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(log, []byte("boot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{"concurrent", "ros", "fused"} {
		t.Run(pol, func(t *testing.T) {
			tm := startOnTerm(t, "--policy", pol, "tail -n +1 -f '"+log+"' | grep ERROR | cut -d' ' -f2-")
			for _, line := range []string{"disk full", "disk still full", "gave up"} {
				appendTo(t, log, "debug: nothing\nERROR "+line+"\n")
				tm.expect(line + "\r\n")
			}
			tm.cmd.Process.Signal(os.Interrupt)
			if err := waitDone(tm); err == nil {
				t.Fatal("tpipe ended with status 0 on Ctrl-C; want 130")
			}

			wait := startOnTerm(t, "--policy", pol, "tail -f '"+log+"' | grep -m1 READY")
			appendTo(t, log, "READY at last\n")
			wait.expect("READY at last\r\n")
			err := waitDone(wait)
			var ee *exec.ExitError
			if errors.As(err, &ee) || err != nil {
				t.Fatalf("grep -m1 on a followed log: %v, want status 0", err)
			}
		})
	}
}
