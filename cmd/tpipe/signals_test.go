package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The binary under test for the signal tests: cmd/tpipe built once per run
// of the tests, into a directory TestMain removes.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func tpipeBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "tpipe-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "tpipe")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// deadline is the generous bound of every wait below: a loaded machine is
// slow, but not this slow.
const deadline = 20 * time.Second

// waitFor polls cond until it holds, failing the test at the deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// children lists the pids of pid's child processes.
func children(pid int) []int {
	var kids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(w); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// running reports whether pid is a process that has not ended: neither
// gone nor a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// command reports the program name of process pid (after its exec).
func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	name, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(name)
}

// inSyscall reports whether a thread of pid is blocked in system call nr.
func inSyscall(pid int, nr uintptr) bool {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if w, _, _ := strings.Cut(string(b), " "); w == strconv.Itoa(int(nr)) {
			return true
		}
	}
	return false
}

// exitStatus is a shell's $? for a process that ended with ps.
func exitStatus(ps *os.ProcessState) int {
	ws := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// waitExit waits for cmd within the deadline and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(deadline):
		cmd.Process.Kill()
		<-errc
		t.Fatalf("tpipe did not exit within %v of the signal", deadline)
	}
	return exitStatus(cmd.ProcessState)
}

// TestSignals starts tpipe, waits until it is where the signal should find
// it (a child `sleep` started, or blocked in a system call), sends the
// signal and checks the status, 128+n as bash reports it, and that no
// child is left running.
func TestSignals(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip(err)
	}
	bin := tpipeBinary(t)
	const (
		child = iota // wait for a child running sleep
		open         // wait for a thread blocked in openat
		write        // wait for a thread blocked in write
	)
	tests := []struct {
		name   string
		script string
		wait   int
		sig    syscall.Signal
	}{
		{"term", "sleep 1000 | cat", child, syscall.SIGTERM},
		{"hup", "sleep 1000 | cat", child, syscall.SIGHUP},
		{"int", "sleep 1000", child, syscall.SIGINT},
		{"quit", "sleep 1000 | head -n 1", child, syscall.SIGQUIT},
		{"kill", "sleep 1000 | cat", child, syscall.SIGKILL},
		{"kill-direct", "sleep 1000", child, syscall.SIGKILL},
		{"int-fifo-redirect", "cat < FIFO", open, syscall.SIGINT},
		{"term-fifo-operand", "cat FIFO", open, syscall.SIGTERM},
		{"term-full-pipe", "seq 100000000", write, syscall.SIGTERM},
		{"int-full-pipe", "seq 100000000 | cat", write, syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, strings.ReplaceAll(tt.script, "FIFO", fifo))
			cmd.Dir = dir
			// stdout is a pipe that nobody reads: it fills.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd.Stdout = w
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			pid := cmd.Process.Pid
			var kids []int
			switch tt.wait {
			case child:
				waitFor(t, "a child running sleep", func() bool {
					kids = children(pid)
					for _, k := range kids {
						if command(k) == "sleep" {
							return true
						}
					}
					return false
				})
			case open:
				waitFor(t, "tpipe blocked in open", func() bool { return inSyscall(pid, syscall.SYS_OPENAT) })
			case write:
				waitFor(t, "tpipe blocked in write", func() bool { return inSyscall(pid, syscall.SYS_WRITE) })
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if got, want := waitExit(t, cmd), 128+int(tt.sig); got != want {
				t.Errorf("status %d, want %d", got, want)
			}
			if strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("a Go trace on stderr:\n%s", stderr.String())
			}
			for _, k := range kids {
				waitFor(t, fmt.Sprintf("child %d (%s) to end", k, command(k)), func() bool { return !running(k) })
			}
		})
	}
}

// The interactive shell, waiting at its prompt in a read of the terminal,
// ends on SIGTERM and SIGHUP (not on SIGINT or SIGQUIT, which a terminal
// sends for Ctrl-C and Ctrl-\).
func TestSignalsAtPrompt(t *testing.T) {
	bin := tpipeBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tm := startTerm(t, bin, filepath.Join(t.TempDir(), "history"))
			tm.expect("tpipe> ")
			tm.cmd.Process.Signal(syscall.SIGINT)
			tm.cmd.Process.Signal(syscall.SIGQUIT)
			tm.cmd.Process.Signal(sig)
			err := waitDone(tm)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || exitStatus(ee.ProcessState) != 128+int(sig) {
				t.Fatalf("exit: %v, want status %d", err, 128+int(sig))
			}
		})
	}
}

// waitDone waits for the shell on the terminal to exit, within the deadline.
func waitDone(tm *ptyTerm) error {
	tm.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- tm.cmd.Wait() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(deadline):
		tm.cmd.Process.Kill()
		<-errc
		tm.t.Fatalf("the shell did not exit within %v of the signal", deadline)
		return nil
	}
}
