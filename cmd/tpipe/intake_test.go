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
