package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The job intake's tests with real processes: the built binary serving
// folders, writers that take their time, scrapes over HTTP.

// TestServeMetricsThreeStages scrapes a tpipe serve of a three-stage net
// over HTTP on 127.0.0.1 and parses the exposition, as Prometheus does:
// a place between two stages is both one's output and the next one's
// input, and was collected twice, which failed every scrape with 500.
func TestServeMetricsThreeStages(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--metrics", "127.0.0.1:0", "--workers", "1", dir, "sort | uniq -c | sort -rn")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatalf("no line from serve: %v", lines.Err())
	}
	m := regexp.MustCompile(`^tpipe serve: metrics on (http://127\.0\.0\.1:\d+/metrics)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q does not say where the metrics are", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	put(t, filepath.Join(dir, "in"), "words", "b\na\nb\n")
	var body string
	waitFor(t, "the job to come out", func() bool {
		_, err := os.Stat(filepath.Join(dir, "out", "words"))
		return err == nil
	})
	body = get(t, m[1])
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	tokens := fams["tpipe_place_tokens"]
	if tokens == nil {
		t.Fatalf("no tpipe_place_tokens in:\n%s", body)
	}
	seen := map[string]int{}
	for _, mt := range tokens.GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "place" {
				seen[filepath.Base(l.GetValue())]++
			}
		}
	}
	for _, want := range []string{"in", "sort-uniq", "uniq-sort#2", "out"} {
		if seen[want] != 1 {
			t.Errorf("place %s reported %d times, want once (all: %v)", want, seen[want], seen)
		}
	}
	done := fams["tpipe_jobs_done_total"]
	if done == nil || len(done.GetMetric()) != 3 {
		t.Errorf("tpipe_jobs_done_total: want one series per stage, got %v", done)
	}
}

// put hands a job to a watched folder as a producer should: written
// beside it, then renamed in.
func put(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(dir), "."+name+".put")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// protocolLeft lists the protocol's entries (.claim, .lock, .tmp, .bad)
// left in dir and in the folders under it.
func protocolLeft(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		switch d.Name() {
		case ".claim", ".lock", ".tmp", ".bad":
			rel, _ := filepath.Rel(dir, path)
			left = append(left, rel)
			return filepath.SkipDir
		case ".status":
			return filepath.SkipDir // serve's status files stay, marked stopped
		}
		return nil
	})
	return left
}

// TestFoldersLeftAsFound: after workers end, cleanly or after one was
// killed with SIGKILL and a second took its claims back, no folder they
// touched keeps the protocol's entries; every job is done once.
func TestFoldersLeftAsFound(t *testing.T) {
	bin := tpipeBinary(t)
	t.Run("pmjq", func(t *testing.T) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		for _, n := range []string{"a", "b", "c"} {
			put(t, in, n, n+"\n")
		}
		if b, err := exec.Command(bin, "pmjq", "--once", in, "wc -l", out).CombinedOutput(); err != nil {
			t.Fatalf("pmjq: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		for _, n := range []string{"a", "b", "c"} {
			if b, _ := os.ReadFile(filepath.Join(out, n)); string(b) != "1\n" {
				t.Errorf("out/%s = %q", n, b)
			}
		}
	})
	t.Run("serve", func(t *testing.T) {
		dir := t.TempDir()
		put(t, filepath.Join(dir, "in"), "j", "b\na\nb\n")
		if b, err := exec.Command(bin, "serve", "--once", dir, "sort | uniq -c | sort -rn").CombinedOutput(); err != nil {
			t.Fatalf("serve: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "out", "j")); string(b) != "      2 b\n      1 a\n" {
			t.Errorf("out/j = %q", b)
		}
	})
	t.Run("killed", func(t *testing.T) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		for _, n := range []string{"a", "b", "c", "d"} {
			put(t, in, n, n+"\n")
		}
		first := exec.Command(bin, "pmjq", "--workers", "2", in, "sh -c 'sleep 5; cat'", out)
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the first worker to claim jobs", func() bool {
			ents, _ := os.ReadDir(filepath.Join(in, ".claim"))
			for _, e := range ents {
				if jobs, _ := os.ReadDir(filepath.Join(in, ".claim", e.Name())); len(jobs) > 1 {
					return true
				}
			}
			return false
		})
		first.Process.Kill()
		first.Wait()
		if b, err := exec.Command(bin, "pmjq", "--once", in, "cat", out).CombinedOutput(); err != nil {
			t.Fatalf("second pmjq: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind after the killed worker's claims were taken back: %v", left)
		}
		for _, n := range []string{"a", "b", "c", "d"} {
			if b, _ := os.ReadFile(filepath.Join(out, n)); string(b) != n+"\n" {
				t.Errorf("out/%s = %q", n, b)
			}
		}
	})
}
