//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 13: a SIGKILL during a spilling sort left hundreds of run files in
// TMPDIR. Temporary files have no name once open, so a killed tpipe leaves
// nothing. The test runs this binary as tpipe on a sort far larger than
// its memory, waits (through /proc) until the process holds a file in the
// empty TMPDIR, kills it and looks at the directory.
func TestSigkillLeavesNoTempFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a large sort in a child process")
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "--sort-memory", "64K", "seq 100000000 | sort -r > /dev/null")
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1", "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Minute)
	}
	fds := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd")
	for spilling := false; !spilling; {
		select {
		case err := <-exited:
			t.Fatalf("tpipe ended before it was seen spilling: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline.Add(-10 * time.Second)) {
			cmd.Process.Kill()
			<-exited
			t.Fatal("tpipe never held a file in TMPDIR")
		}
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && strings.HasPrefix(target, tmp+"/") {
				spilling = true
				t.Logf("tpipe holds %s", target)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("tpipe did not die of SIGKILL: %v", err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("%d files left in TMPDIR after SIGKILL: %v", len(left), names[:min(5, len(names))])
	}
}
