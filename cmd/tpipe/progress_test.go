package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tpipe/tpipe/internal/vtscreen"
)

// viewTerm is tpipe with its stderr on a pseudo-terminal and its stdout
// in a file, as in `tpipe 'big job' > out` typed at a terminal: what a
// person sees of it is the terminal's screen.
type viewTerm struct {
	*ptyTerm
	out string // stdout's file
}

func startViewTerm(t *testing.T, args ...string) *viewTerm {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	stdout, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1", "TERM=xterm", "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = stdout, tty
	err = cmd.Start()
	stdout.Close()
	tty.Close()
	if err != nil {
		ptmx.Close()
		t.Fatal(err)
	}
	return &viewTerm{followTerm(t, cmd, ptmx), out}
}

// startAllOnTerm is tpipe typed at a terminal with nothing redirected:
// stdin, stdout and stderr the terminal, run in dir.
func startAllOnTerm(t *testing.T, dir string, args ...string) *viewTerm {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1", "TERM=xterm", "LC_ALL=C")
	cmd.Dir = dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	return &viewTerm{followTerm(t, cmd, ptmx), ""}
}

// screen is what the terminal shows now.
func (vt *viewTerm) screen() string {
	vt.mu.Lock()
	defer vt.mu.Unlock()
	var scr vtscreen.Screen
	scr.Write(vt.ptyTerm.out.Bytes())
	return scr.String()
}

// wait waits for tpipe to end and its last output to be read, and returns
// its exit status.
func (vt *viewTerm) wait() int {
	vt.t.Helper()
	err := waitDone(vt.ptyTerm)
	select {
	case <-vt.done:
	case <-time.After(deadline):
		vt.t.Fatal("the terminal's output did not end")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		vt.t.Fatal(err)
	}
	return 0
}

// A run that lasts is shown on the terminal without being asked for
// (stderr a terminal, stdout not): every task with its rate while it goes.
// Ctrl-C still stops it at once, and the screen is left clean.
func TestProgressTerminal(t *testing.T) {
	vt := startViewTerm(t, "yes | grep -c y")
	rate := regexp.MustCompile(`(?m)^yes +\d[\d.]*[kMG]? rec/s`)
	waitFor(t, "the view with every task and a rate", func() bool {
		s := vt.screen()
		return strings.Contains(s, "grep") && strings.Contains(s, ">stdout") && rate.MatchString(s) && !strings.Contains(s, "yes      0 rec/s")
	})
	t.Logf("the view:\n%s", vt.screen())
	sent := time.Now()
	if err := vt.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := vt.wait(); code != 130 {
		t.Errorf("exit status %d after Ctrl-C, want 130", code)
	}
	t.Logf("ended %v after SIGINT", time.Since(sent))
	if s := vt.screen(); s != "" {
		t.Errorf("the screen after the run:\n%s\nwant it clean", s)
	}
}

// --progress shows the view at once; at the end it is gone and what the
// tasks said stays, readable. (The status is cat's, pipefail.)
func TestProgressTerminalEnds(t *testing.T) {
	vt := startViewTerm(t, "--progress", "sleep 1.5 | wc -l; cat nosuchfile | wc -l")
	waitFor(t, "the view", func() bool {
		s := vt.screen()
		return strings.Contains(s, "sleep") && strings.Contains(s, ">stdout") && strings.Contains(s, "elapsed")
	})
	if code := vt.wait(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if s, want := vt.screen(), "cat: nosuchfile: No such file or directory"; s != want {
		t.Errorf("the screen after the run:\n%s\nwant only\n%s", s, want)
	}
	if out, err := os.ReadFile(vt.out); err != nil || string(out) != "0\n0\n" {
		t.Errorf("stdout %q, %v", out, err)
	}
}

// The README's example, typed at a terminal with nothing redirected: the
// run writes only to a file, so progress auto shows the view although
// tpipe's own stdout is the terminal.
func TestProgressAutoOutputToFile(t *testing.T) {
	dir := t.TempDir()
	vt := startAllOnTerm(t, dir, "yes | grep y | uniq -c > counts")
	waitFor(t, "the view of a run that writes only to a file", func() bool {
		s := vt.screen()
		return strings.Contains(s, "uniq") && strings.Contains(s, ">counts") && strings.Contains(s, "rec/s")
	})
	if err := vt.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := vt.wait(); code != 130 {
		t.Errorf("exit status %d after Ctrl-C, want 130", code)
	}
}

// A run that writes to the terminal, or reads it, gets no view under
// auto: it would draw over what the run prints or what a person types.
func TestProgressAutoKeepsOffTerminal(t *testing.T) {
	for _, c := range []struct{ script, out string }{
		{"sleep 1.5 | wc -l", "0"},
		{"sleep 1.5 | wc -l > /dev/tty", "0"},
		{"sleep 1.5; cat | wc -l > n; cat n", "0"},
	} {
		vt := startAllOnTerm(t, t.TempDir(), c.script)
		if strings.Contains(c.script, "cat |") {
			time.Sleep(2500 * time.Millisecond)
			vt.f.Write([]byte{4}) // Ctrl-D: the end of what was typed
		}
		if code := vt.wait(); code != 0 {
			t.Errorf("%s: exit status %d", c.script, code)
		}
		vt.mu.Lock()
		raw := vt.ptyTerm.out.String()
		vt.mu.Unlock()
		if strings.Contains(raw, "elapsed") || strings.Contains(raw, "rec/s") {
			t.Errorf("%s: the view was drawn on the terminal the run uses:\n%q", c.script, raw)
		}
		if s := vt.screen(); s != c.out {
			t.Errorf("%s: the screen %q, want %q", c.script, s, c.out)
		}
	}
}
