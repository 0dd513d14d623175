package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A spool tpipe may not write is one line that names it and says what to
// do, with status 1. As root, where no permission check can fail, the test
// runs a copy of this binary as the user nobody (uid 65534) on a folder
// only root may enter.
func TestSpoolPermissionDenied(t *testing.T) {
	base := t.TempDir()
	locked := filepath.Join(base, "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := os.Args[0]
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// The test binary's own folder is root's alone: copy it out.
		pub, err := os.MkdirTemp("", "tpipe-perm-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(pub) })
		if err := os.Chmod(pub, 0o755); err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(pub, "tpipe")
		copyFile(t, os.Args[0], bin, 0o755)
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	} else {
		if err := os.Chmod(locked, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(locked, 0o700) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--spool", filepath.Join(locked, "sp"), "seq 3")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatal("tpipe did not finish within a minute")
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("status: %v; want exit 1 (stderr %q)", err, stderr.String())
	}
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "permission denied") ||
		!strings.Contains(msg, filepath.Join(locked, "sp")) || !strings.Contains(msg, "another --spool") {
		t.Errorf("stderr %q; want one line naming the spool, the cause and what to do", msg)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q; want nothing", stdout.String())
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
