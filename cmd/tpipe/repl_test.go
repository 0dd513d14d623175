package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tpipe/tpipe/internal/vtscreen"
)

// ptyTerm is tpipe running on a pseudo-terminal, as a person would use it.
type ptyTerm struct {
	t    *testing.T
	f    *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // output before this offset has been matched
	done chan struct{}
}

// startTerm starts the shell on a pseudo-terminal: the program exe, or
// with exe "" this test binary as tpipe.
func startTerm(t *testing.T, exe, hist string) *ptyTerm {
	t.Helper()
	return startTermIn(t, exe, hist, "")
}

// startTermIn is startTerm in the directory dir ("": this one).
func startTermIn(t *testing.T, exe, hist, dir string) *ptyTerm {
	t.Helper()
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1", "TERM=xterm", "TPIPE_HISTORY="+hist, "LC_ALL=C")
	cmd.Dir = dir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	return followTerm(t, cmd, f)
}

// followTerm reads what cmd, started, writes to the terminal whose other
// side is f, until the end; at the end of the test it kills cmd.
func followTerm(t *testing.T, cmd *exec.Cmd, f *os.File) *ptyTerm {
	tm := &ptyTerm{t: t, f: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		<-tm.done
	})
	return tm
}

// expect waits for want to appear in output not matched yet.
func (tm *ptyTerm) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tm.mu.Lock()
		s := tm.out.String()[tm.seen:]
		tm.mu.Unlock()
		if i := strings.Index(s, want); i >= 0 {
			tm.seen += i + len(want)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.t.Fatalf("no %q in terminal output:\n%s", want, tm.out.String()[tm.seen:])
}

func (tm *ptyTerm) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.f, s); err != nil {
		tm.t.Fatal(err)
	}
}

func TestInteractiveShell(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	tm := startTerm(t, "", hist)
	tm.expect("tpipe> ")

	tm.send("seq 3 | wc -l\r")
	tm.expect("3\r\n")
	tm.expect("tpipe> ")

	// An unfinished pipeline asks for more.
	tm.send("seq 4 |\r")
	tm.expect("> ")
	tm.send("wc -l\r")
	tm.expect("4\r\n")
	tm.expect("tpipe> ")

	// A syntax error is reported with a caret and the shell goes on.
	tm.send("seq 3 | | wc\r")
	tm.expect("1:9: syntax error")
	tm.expect("tpipe> ")

	// Ctrl-C stops a pipeline that would run forever, not the shell.
	tm.send("yes | grep -c y\r")
	time.Sleep(300 * time.Millisecond)
	tm.send("\x03")
	tm.expect("tpipe> ")

	// Settings change between pipelines.
	tm.send("set buffers 3\r")
	tm.expect("tpipe> ")
	tm.send("set\r")
	tm.expect("buffers 3")
	tm.send("set buffers x\r")
	tm.expect("tpipe: set: buffers x")
	// set fallback off refuses what a builtin lacks; on runs the system's.
	tm.send("set fallback off\r")
	tm.expect("tpipe> ")
	tm.send("seq 2 | grep -P 2\r")
	tm.expect("grep -P: not implemented by the builtin, fallback is off")
	tm.send("set fallback on\r")
	tm.expect("tpipe> ")
	tm.send("seq 12 | grep -P '^1\\d$' | wc -l\r")
	tm.expect("3\r\n")
	// help alone is the shell's; help NAME is the help builtin's, in a
	// pipeline too.
	tm.send("help\r")
	tm.expect("settings, and the values they take:")
	tm.expect("tpipe> ")
	tm.send("help head\r")
	tm.expect("Usage: head")
	tm.send("help decode | head -1\r")
	tm.expect("Usage: decode [--pix-fmt FMT] [FILE]\r\n")
	tm.expect("tpipe> ")
	tm.send("help set\r")
	tm.expect("Usage: set [NAME VALUE]")

	// Ctrl-D leaves with status 0 and the history is saved.
	tm.send("\x04")
	select {
	case <-tm.done:
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not exit on Ctrl-D")
	}
	err := tm.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("exit status %d", ee.ExitCode())
	}
	h, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(h), "seq 3 | wc -l") {
		t.Fatalf("history %q, %v", h, err)
	}
	// Fixed: the history was created 0644, for anyone to read.
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

// An older history file that others could read is made private.
func TestHistoryFileMode(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(hist, []byte("seq 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(hist, 0o644) // whatever the umask
	tm := startTerm(t, "", hist)
	tm.expect("tpipe> ")
	tm.send("\x04")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

// since returns the terminal's output after the first n bytes, and its
// length now.
func (tm *ptyTerm) since(n int) (string, int) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	s := tm.out.String()
	return s[min(n, len(s)):], len(s)
}

// `set progress` turns the live view on and off between pipelines. The
// shell's output is the terminal the view is on, so a pipeline's output
// goes above the view, and the view is gone before the prompt.
func TestInteractiveProgress(t *testing.T) {
	tm := startTerm(t, "", filepath.Join(t.TempDir(), "history"))
	tm.expect("tpipe> ")
	tm.send("set progress on\r")
	tm.expect("tpipe> ")
	_, mark := tm.since(0)
	tm.send("sleep 1.5 | wc -l\r")
	tm.expect("rec/s")
	tm.expect("elapsed")
	tm.expect("0\r\n")
	tm.expect("tpipe> ")
	tm.send("set\r")
	tm.expect("progress on")
	tm.expect("tpipe> ")
	out, _ := tm.since(mark)
	var scr vtscreen.Screen
	scr.Write([]byte(out))
	if strings.Contains(scr.String(), "rec/s") {
		t.Errorf("the view is left on the screen:\n%s", scr.String())
	}

	tm.send("set progress off\r")
	tm.expect("tpipe> ")
	_, mark = tm.since(0)
	tm.send("sleep 1.2 | wc -l\r")
	tm.expect("0\r\n")
	tm.expect("tpipe> ")
	if out, _ := tm.since(mark); strings.Contains(out, "rec/s") {
		t.Errorf("progress off, yet the view showed:\n%q", out)
	}
	tm.send("set progress sometimes\r")
	tm.expect("tpipe: set: progress sometimes: want on, off or auto")
	tm.send("seq 2 | wc -l\r")
	tm.expect("2\r\n")
	tm.send("\x04")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
}

// Tab completes the word before the cursor on the terminal: a builtin's
// name, a file of the shell's directory (cd's), a named edge of the line,
// a setting and its value. Each line is then run, which shows what it held.
func TestInteractiveCompletion(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sample-lines.txt"), []byte("x\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "inner-file.txt"), []byte("z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := startTermIn(t, "", filepath.Join(t.TempDir(), "history"), dir)
	tm.expect("tpipe> ")

	tm.send("stabi\t--help\r")
	tm.expect("Usage: stabilize [-w N]")
	tm.expect("tpipe> ")

	tm.send("wc -l sam\t\r")
	tm.expect("2 sample-lines.txt\r\n")
	tm.expect("tpipe> ")

	// After cd, names are the new directory's.
	tm.send("cd su\t\r")
	tm.expect("tpipe> ")
	tm.send("wc -l inn\t\r")
	tm.expect("1 inner-file.txt\r\n")
	tm.expect("tpipe> ")

	tm.send("seq 3 > @numbers; wc -l < @nu\t\r")
	tm.expect("wc -l < @numbers")
	tm.expect("3\r\n")
	tm.expect("tpipe> ")

	tm.send("set poli\tro\t\r")
	tm.expect("set policy ros")
	tm.expect("tpipe> ")
	tm.send("set\r")
	tm.expect("policy ros\r\n")
	tm.expect("tpipe> ")

	tm.send("\x04")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
}

// A history path that is not a regular file (TPIPE_HISTORY=/dev/null, as
// with bash's HISTFILE) keeps no history and is left as it was: the
// shell made /dev/null 0600 when root ran it so. A named pipe stands in
// for /dev/null here: opening it would also block the shell.
func TestHistoryNotAFile(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mkfifo(hist, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	os.Chmod(hist, 0o644)
	tm := startTerm(t, "", hist)
	tm.expect("tpipe> ")
	tm.send("seq 2 | wc -l\r")
	tm.expect("2\r\n")
	tm.send("\x04")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(hist); err != nil || fi.Mode()&os.ModeNamedPipe == 0 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("history path after the session: %v, %v; want the named pipe as it was", fi.Mode(), err)
	}
}

// A history file that cannot be written (its folder is missing) is said
// at the end, not lost without a word; a line ended by a completion's
// blank is kept once with the same line typed without it.
func TestHistoryNotKeptSaid(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "nodir", "history")
	tm := startTerm(t, "", hist)
	tm.expect("tpipe> ")
	tm.send("\x04")
	tm.expect("tpipe: history not kept: " + hist + ": No such file or directory")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
	hist = filepath.Join(t.TempDir(), "history")
	tm = startTerm(t, "", hist)
	tm.expect("tpipe> ")
	tm.send("seq 2 | wc -l \r")
	tm.expect("2\r\n")
	tm.send("seq 2 | wc -l\r")
	tm.expect("2\r\n")
	tm.send("\x04")
	if err := waitDone(tm); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hist); err != nil || string(b) != "seq 2 | wc -l\n" {
		t.Errorf("history %q, %v; want the statement once", b, err)
	}
}
