package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/front/status"
	"github.com/tpipe/tpipe/progress"
)

// TestPmjqMetrics runs the and-merge worker with --metrics on a real
// listener on 127.0.0.1, drops a job in, and scrapes the worker over HTTP
// until the job shows as done and the output place's token as counted.
func TestPmjqMetrics(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	if err := os.Mkdir(in, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run1, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	status := make(chan int, 1)
	go func() {
		status <- run(run1, []string{"pmjq", "--metrics", "127.0.0.1:0", "--workers", "1", "--inputs", "(.*)", in, "--cmd", "cat $1", "--output", out}, nil, io.Discard, pw)
		pw.Close()
	}()
	stopped := false
	defer func() {
		if !stopped { // a failed check: stop the worker before the folder goes
			stop()
			pr.Close() // its messages would have no reader
			<-status
		}
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("no line from the worker: %v", lines.Err())
	}
	m := regexp.MustCompile(`^tpipe pmjq: metrics on (http://127\.0\.0\.1:\d+/metrics)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q does not say where the metrics are", lines.Text())
	}
	go io.Copy(io.Discard, pr) // the rest of stderr
	// A job arrives whole, by rename, as a producer must hand jobs to a
	// watched folder: a worker may see a file the moment it is created.
	tmp := filepath.Join(root, "job1")
	if err := os.WriteFile(tmp, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(in, "job1")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`tpipe_jobs_done_total{stage="cat"} 1`,
		`tpipe_place_tokens{place="` + out + `"} 1`,
		`tpipe_place_tokens{place="` + in + `"} 0`,
		`tpipe_job_duration_seconds_count{stage="cat"} 1`,
	}
	var body string
	for ctx.Err() == nil {
		body = get(t, m[1])
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(body, w+"\n")
		}
		if !missing {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatalf("the scrape never showed the job done:\n%s", body)
	}
	stop()
	stopped = true
	if s := <-status; s != 130 {
		t.Errorf("status after cancellation = %d, want 130", s)
	}
	if b, err := os.ReadFile(filepath.Join(out, "job1")); err != nil || string(b) != "hello\n" {
		t.Errorf("output: %q, %v", b, err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCommandArgs: tpipe called as pmjq runs tpipe pmjq, as busybox runs
// the command it is called by.
func TestCommandArgs(t *testing.T) {
	for _, tc := range []struct{ argv, want []string }{
		{[]string{"/usr/local/bin/pmjq", "--input=in/"}, []string{"pmjq", "--input=in/"}},
		{[]string{"pmjq"}, []string{"pmjq"}},
		{[]string{"/usr/bin/tpipe", "seq 3"}, []string{"seq 3"}},
		{[]string{"tpipe", "pmjq", "x"}, []string{"pmjq", "x"}},
	} {
		if got := commandArgs(tc.argv); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("commandArgs(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestPmjqLinkSurvivesKill runs the real binary through a link named
// pmjq, as pmjq 1.0's scripts call it, kills it with SIGKILL while its
// command runs, and runs it again: the dead worker's lock is taken back
// at once (its pid is gone on this host), the job is done exactly once,
// and no lock is left (pmjq 1.0 left NAME.lock files behind).
func TestPmjqLinkSurvivesKill(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	pmjq := filepath.Join(dir, "pmjq")
	if err := os.Symlink(bin, pmjq); err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o755)
	os.WriteFile(filepath.Join(in, "job"), []byte("payload\n"), 0o644)
	started, fast := filepath.Join(dir, "started"), filepath.Join(dir, "fast")
	// exec: the sleep is the process that dies with its tpipe.
	script := "touch " + started + "; if [ -e " + fast + " ]; then exec cat; fi; exec sleep 30"
	args := []string{"--quit-when-empty", "--input=" + in + "/", "sh -c '" + script + "'", "--output=" + out + "/"}

	first := exec.Command(pmjq, args...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first worker's command to start", func() bool { _, err := os.Stat(started); return err == nil })
	first.Process.Kill()
	first.Wait()
	if _, err := os.Stat(filepath.Join(out, "job")); err == nil {
		t.Fatal("an output was committed by a worker killed before its command ended")
	}
	if ents, _ := os.ReadDir(filepath.Join(in, ".lock")); len(ents) != 1 {
		t.Fatalf("the killed worker's lock: %d entries in .lock, want 1", len(ents))
	}

	os.WriteFile(fast, nil, 0o644)
	second := exec.Command(pmjq, args...)
	second.Stderr = os.Stderr
	done := make(chan error, 1)
	go func() { done <- second.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("second run: %v", err)
		}
	case <-time.After(deadline):
		second.Process.Kill()
		<-done
		t.Fatal("the second run did not finish: the dead worker's lock was not taken back")
	}
	if b, err := os.ReadFile(filepath.Join(out, "job")); err != nil || string(b) != "payload\n" {
		t.Errorf("output %q, %v", b, err)
	}
	for _, sub := range []string{"", ".lock", ".claim", ".tmp"} {
		ents, _ := os.ReadDir(filepath.Join(in, sub))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left in in/%s: %s", sub, e.Name())
			}
		}
	}
}

// countingWriter cancels its context at the n-th write.
type countingWriter struct {
	n      int
	cancel context.CancelFunc
	b      strings.Builder
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.b.Write(p)
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return len(p), nil
}

// TestWatchStatus: --watch is the live view of package progress; off a
// terminal it writes a line each period, a row per place here (no worker
// writes status files), with its waiting tokens, until interrupted.
func TestWatchStatus(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in", ".claim"), 0o700)
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, "in", name), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := &countingWriter{n: 3, cancel: cancel}
	if got := watchStatus(ctx, dir, w, io.Discard, time.Millisecond); got != 0 {
		t.Errorf("status %d", got)
	}
	lines := strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines, want 3 or more:\n%s", len(lines), w.b.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "tpipe: ") || !strings.Contains(l, " in 0 tokens/s 2 waiting") {
			t.Errorf("line %q does not show place in with its 2 tokens", l)
		}
	}
	if got := watchStatus(context.Background(), filepath.Join(dir, "nothing"), w, io.Discard, time.Millisecond); got != 1 {
		t.Errorf("a folder that is not there: status %d, want 1", got)
	}
}

// TestStatusFrame: a row per stage with its rate, backlog and busy share,
// the bottleneck marked, gauges against the largest backlog; a row per
// place only when the report knows no stage.
func TestStatusFrame(t *testing.T) {
	r := &status.Report{
		Stages: []status.StageReport{
			{Stage: status.Stage{Name: "tr"}, Workers: 2, InFlight: 1, Rate: 12.5, Waiting: 4},
			{Stage: status.Stage{Name: "sort"}, Workers: 1, InFlight: 3, Rate: 2, Waiting: 10},
		},
		Places:     []status.Place{{Name: "in"}},
		Bottleneck: "sort",
	}
	f := statusFrame(r, time.Second)
	want := []progress.Row{
		{Name: "tr", Unit: "jobs", Records: 12.5, Fill: 4, Cap: 10, Busy: 0.5},
		{Name: "sort", Unit: "jobs", Records: 2, Fill: 10, Cap: 10, Busy: 1, Bottleneck: true},
	}
	if !reflect.DeepEqual(f.Rows, want) {
		t.Errorf("rows %+v, want %+v", f.Rows, want)
	}
	r.Stages = nil
	f = statusFrame(r, time.Second)
	if len(f.Rows) != 1 || f.Rows[0].Name != "in" || f.Rows[0].Unit != "tokens" || f.Rows[0].Cap != 1 {
		t.Errorf("rows of places %+v", f.Rows)
	}
}
