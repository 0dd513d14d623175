//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spoolCrashScripts are the graphs the crash test kills: chains and a
// graph with a tee, mixing steps run per segment (cut, tr, alone or fused
// in one pass) and whole (rev, grep, sort, uniq, tee), with a '>' file at
// the end of some.
var spoolCrashScripts = []string{
	"cat in.txt | rev | grep -v q | cut -c1-6 | sort | uniq -c | rev",
	"cat in.txt | tee @a | rev | cut -c2-5 > @b\nsort @a @b | uniq -c > out.txt",
	"rev < in.txt | sort -r | cut -c1-3 | uniq > out.txt",
	// cut, tr and cut again run as one pass per segment (virtual places).
	"cat in.txt | cut -c1-12 | tr a-z A-Z | cut -c2- | sort | uniq -c",
	// Stages that write to stderr, kept with their output: cat's message
	// for a file it cannot open (its status, 1, is the run's) and a
	// program's. The run that completes prints what an uninterrupted run
	// does.
	"cat in.txt nothere 2> err.txt | sh -c 'echo warn >&2; cat' | sort | rev",
}

// TestSpoolSurvivesSigkill is issue 14's crash test: a spooled run is
// killed with SIGKILL at random points (after a random number of token
// commits, through killEnv, or after a random time) and started again on
// the same directory until it completes. Its output must be the bytes of
// an uninterrupted in-memory run (nothing lost, nothing twice), and no
// temporary file, claim or lock may be left in the spool. TPIPE_SPOOL_CRASH=N
// runs N iterations; -short runs few.
func TestSpoolSurvivesSigkill(t *testing.T) {
	iterations := 100
	if testing.Short() {
		iterations = 20
	}
	if s := os.Getenv("TPIPE_SPOOL_CRASH"); s != "" {
		iterations, _ = strconv.Atoi(s)
	}
	seed := rand.Uint64()
	t.Logf("seed %d, %d iterations", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 14))
	work := shmDir(t)
	var in strings.Builder
	words := []string{"alpha", "beta", "gamma", "delta", "quux", "epsilon", "zeta", "eta", "theta"}
	for i := range 1200 {
		fmt.Fprintf(&in, "%s %d %s\n", words[rng.IntN(len(words))], i%97, words[i%len(words)])
	}
	if err := os.WriteFile(filepath.Join(work, "in.txt"), []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(spoolCrashScripts))
	wantErr := make([]string, len(spoolCrashScripts))
	wantStatus := make([]int, len(spoolCrashScripts))
	for i, s := range spoolCrashScripts {
		out, stderr, status := tpipeRun(t, work, nil, 0, "--policy", "concurrent", s)
		if status < 0 {
			t.Fatalf("%q under concurrent: status %d", s, status)
		}
		want[i] = out + readIf(filepath.Join(work, "out.txt"))
		wantErr[i] = stderr + readIf(filepath.Join(work, "err.txt"))
		wantStatus[i] = status
		os.Remove(filepath.Join(work, "out.txt"))
		os.Remove(filepath.Join(work, "err.txt"))
	}
	killed, maxRuns := 0, 0
	for it := range iterations {
		n := rng.IntN(len(spoolCrashScripts))
		script := spoolCrashScripts[n]
		dir := filepath.Join(work, fmt.Sprintf("sp%d", it))
		os.Remove(filepath.Join(work, "out.txt"))
		os.Remove(filepath.Join(work, "err.txt"))
		// A SIGKILL loses nothing the kernel has: fsync matters only for a
		// power loss, and costs most of the time on a real disk.
		fsync := "off"
		if rng.IntN(10) == 0 {
			fsync = "on"
		}
		args := []string{"--spool", dir, "--segment", "2K", "--fsync", fsync, script}
		var out, stderr string
		runs, status := 0, -1
		for ; status < 0; runs++ {
			var env []string
			var after time.Duration
			switch k := rng.IntN(10); {
			case runs >= 10:
				// enough: let it finish
			case k < 7:
				env = []string{fmt.Sprintf("%s=%d", killEnv, 1+rng.IntN(60))}
			case k < 9:
				after = time.Duration(1+rng.IntN(30)) * time.Millisecond
			}
			out, stderr, status = tpipeRun(t, work, env, after, args...)
			switch status {
			case wantStatus[n]:
			case -int(syscall.SIGKILL):
				killed++
			default:
				t.Fatalf("iteration %d (%q), run %d: status %d, want %d: %s", it, script, runs, status, wantStatus[n], stderr)
			}
		}
		maxRuns = max(maxRuns, runs)
		if got := out + readIf(filepath.Join(work, "out.txt")); got != want[n] {
			t.Fatalf("iteration %d (%q) after %d runs: output differs from an uninterrupted run:\n got  %d bytes %.200q\n want %d bytes %.200q",
				it, script, runs, len(got), got, len(want[n]), want[n])
		}
		if got := stderr + readIf(filepath.Join(work, "err.txt")); got != wantErr[n] {
			t.Fatalf("iteration %d (%q) after %d runs: stderr %q; an uninterrupted run's is %q", it, script, runs, got, wantErr[n])
		}
		checkSpoolClean(t, dir)
		if left, _ := filepath.Glob(filepath.Join(work, ".out.txt.tpipe*")); len(left) > 0 {
			t.Fatalf("iteration %d: temporary output files left: %v", it, left)
		}
		os.RemoveAll(dir)
	}
	t.Logf("%d kills; at most %d runs to complete one", killed, maxRuns)
	if killed < iterations/2 {
		t.Fatalf("only %d kills in %d iterations: the test barely crashed anything", killed, iterations)
	}
}

// shmDir is a temporary directory in memory (/dev/shm) where there is
// one: a SIGKILL loses nothing the kernel holds, so memory serves the
// crash test as well as a disk, many times faster on a loaded machine.
func shmDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "tpipe-spool-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// checkSpoolClean fails when a spool holds a temporary file, a claim or a
// lock: what a run that completed must not leave.
func checkSpoolClean(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		parent := filepath.Base(filepath.Dir(path))
		if parent == ".tmp" || parent == ".claim" || parent == ".lock" || parent == ".bad" {
			return fmt.Errorf("%s left in the spool", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readIf(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// tpipeRun runs this binary as tpipe in dir and returns its stdout,
// stderr and exit status; it kills the process with SIGKILL after after,
// if after > 0. A process killed by a signal has status -signal.
func tpipeRun(t *testing.T, dir string, env []string, after time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = dir
	// A binary built with -race sleeps a second at exit unless told not to.
	cmd.Env = append(os.Environ(), append(env, "TPIPE_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if after > 0 {
		timer := time.AfterFunc(after, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("tpipe %q did not finish within a minute", args)
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		return stdout.String(), stderr.String(), -int(ws.Signal())
	case err != nil && ws.ExitStatus() <= 0:
		t.Fatalf("tpipe %q: %v", args, err)
	}
	return stdout.String(), stderr.String(), ws.ExitStatus()
}

// gc --intermediate empties the places between stages of a finished run
// and keeps what its output reads: the output stays, the same pipeline
// reruns from its last place alone, a changed one recomputes. It refuses
// a spool no run has finished, and --all with it.
func TestGCIntermediate(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&in, "line %d of the input\n", i*7919%50000)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(dir, "sp")
	run := func(script string) string {
		t.Helper()
		if _, errs, st := tpipeRun(t, dir, nil, 0, "--spool", sp, script); st != 0 {
			t.Fatalf("%s: status %d: %s", script, st, errs)
		}
		return readIf(filepath.Join(dir, "out.txt"))
	}
	if err := os.Mkdir(sp, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, errs, st := tpipeRun(t, dir, nil, 0, "gc", "--intermediate", sp); st != 1 || !strings.Contains(errs, "no run of its graph has finished") {
		t.Errorf("gc --intermediate of a new spool: status %d, %q", st, errs)
	}
	script := "sort in.txt | rev | grep -v 9 | head -n 20000 > out.txt"
	want := run(script)
	before := du(t, sp)
	out, errs, st := tpipeRun(t, dir, nil, 0, "gc", "--intermediate", sp)
	if st != 0 || !strings.HasPrefix(out, "removed ") {
		t.Fatalf("gc --intermediate: status %d, %q %q", st, out, errs)
	}
	after := du(t, sp)
	if after > before/3 {
		t.Errorf("the spool holds %d bytes after gc --intermediate, %d before", after, before)
	}
	t.Logf("%s: %d bytes, then %d", out, before, after)
	if got := readIf(filepath.Join(dir, "out.txt")); got != want {
		t.Errorf("the output changed")
	}
	// The same pipeline reads its last place, and nothing comes back.
	if got := run(script); got != want {
		t.Errorf("the rerun's output differs")
	}
	if n := du(t, sp); n != after {
		t.Errorf("the rerun wrote to the spool: %d bytes, %d before", n, after)
	}
	// A changed stage recomputes from the input file.
	changed := run("sort in.txt | rev | grep -v 9 | head -n 30000 > out.txt")
	if lines := strings.Count(changed, "\n"); lines != 30000 || !strings.HasPrefix(changed, want) {
		t.Errorf("the changed pipeline gave %d lines", lines)
	}
	if _, errs, st := tpipeRun(t, dir, nil, 0, "gc", "--all", "--intermediate", sp); st != 2 || !strings.Contains(errs, "not both") {
		t.Errorf("gc --all --intermediate: status %d, %q", st, errs)
	}
	// A mistyped spool is refused, not made (it was made, and "removed 0
	// tokens" said all was well); a folder of the user's is not a spool.
	if _, errs, st := tpipeRun(t, dir, nil, 0, "gc", "sq"); st != 1 || !strings.Contains(errs, "sq: No such file or directory; give the DIR of a --spool run") {
		t.Errorf("gc of a missing folder: status %d, %q", st, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "sq")); err == nil {
		t.Error("gc made the missing folder")
	}
	if _, errs, st := tpipeRun(t, dir, nil, 0, "gc", "."); st != 1 || !strings.Contains(errs, "it is not the spool of a --spool run; nothing removed") {
		t.Errorf("gc of a folder of files: status %d, %q", st, errs)
	}
}

// du is the bytes of the regular files under dir.
func du(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
