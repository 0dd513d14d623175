package corpus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The same arguments make the same bytes, and the log looks like the
// common log format the pipelines cut: ten space-separated fields, the
// request in quotes, a status and a size.
func TestGenerateDeterministic(t *testing.T) {
	sums := func(dir string) [3][32]byte {
		in, err := Generate(dir, 2000, 300)
		if err != nil {
			t.Fatal(err)
		}
		var s [3][32]byte
		for i, name := range []string{in.Log, in.Words, in.Dict} {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			s[i] = sha256.Sum256(data)
		}
		return s
	}
	a, b := sums(t.TempDir()), sums(t.TempDir())
	if a != b {
		t.Error("two runs of Generate with the same arguments differ")
	}
	dir := t.TempDir()
	in, _ := Generate(dir, 500, 10)
	log, _ := os.ReadFile(in.Log)
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	if len(lines) != 500 {
		t.Fatalf("%d log lines, want 500", len(lines))
	}
	for _, l := range lines {
		f := strings.Split(l, " ")
		if len(f) != 10 || !strings.HasPrefix(f[3], "[") || !strings.HasPrefix(f[5], `"`) || len(f[8]) != 3 {
			t.Fatalf("not a common log format line: %q", l)
		}
	}
}

// tinyReport is a report of made-up samples: tpipe twice as fast as bash
// on one pipeline, slower on another, with a wrong output on a third.
func tinyReport() *report {
	mk := func(p Pipeline, tool string, secs ...float64) *cell {
		c := &cell{p: p, tool: tool}
		for _, s := range secs {
			// Half a core busy: CPU time is half the wall time.
			c.samples = append(c.samples, sample{wall: time.Duration(s * float64(time.Second)), cpu: time.Duration(s * float64(time.Second) / 2), rssKiB: 2048})
		}
		return c
	}
	fast, slow, wrong := Pipeline{Name: "fast", Line: "a | b", Everyday: true}, Pipeline{Name: "slow", Line: "c"}, Pipeline{Name: "wrong", Line: "d", Everyday: true}
	cells := []*cell{
		mk(fast, ToolBash, 2, 2, 2), mk(fast, ToolTpipe, 1, 1, 1),
		mk(slow, ToolBash, 1, 1, 1), mk(slow, ToolTpipe, 1.5, 1.5, 1.5),
		mk(wrong, ToolBash, 1, 1, 1), mk(wrong, ToolTpipe, 0.5, 0.5, 0.5),
	}
	cells[5].samples[1].sum[0] = 1
	return newReport(cells, []string{ToolBash, ToolTpipe})
}

func TestReport(t *testing.T) {
	rep := tinyReport()
	var md bytes.Buffer
	rep.write(&md)
	for _, want := range []string{
		"| fast * | 2.000 [2.000–2.000] | 1.000 [1.000–1.000] | 0.50 | 0.50 | 0.50 / 0.50 |",
		"| slow | 1.000 [1.000–1.000] | 1.500 [1.500–1.500] | 1.50 | 1.50 |",
		"NO (tpipe)",
		"Geometric mean of tpipe / bash: 0.50 over the 2 everyday pipelines (CPU time: 0.50), 0.72 over all 3.",
		"no pipeline slower than bash: **not met** (slow (1.50))",
		"no pipeline costs more CPU time than bash's: **not met** (slow (1.50))",
		"geometric mean over the everyday pipelines at most 0.6: 0.50, **met**",
		"same output as bash on every run: **not met** (wrong)",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
	var svg bytes.Buffer
	if err := rep.svg(&svg); err != nil || !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<rect") != 3+1 {
		t.Errorf("svg: %v\n%s", err, svg.String())
	}
	var csv bytes.Buffer
	if err := rep.writeCSV(&csv); err != nil || strings.Count(csv.String(), "\n") != 1+18 || !strings.Contains(csv.String(), "wrong,true,tpipe,1,0.5000,0.2500,2048,false") {
		t.Errorf("csv: %v\n%s", err, csv.String())
	}
}

// A tiny run end to end: inputs made, every pipeline run by bash and by a
// tpipe built from this module, outputs compared, files written.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tpipe and runs 28 processes")
	}
	for _, tool := range []string{"bash", "go", "sort", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	out := t.TempDir()
	var stdout bytes.Buffer
	cfg := Config{LogLines: 3000, TextLines: 300, Runs: MinRuns, Dir: t.TempDir(), Timeout: time.Minute,
		Pipelines: Pipelines[:4]}
	if err := Run(context.Background(), cfg, out, &stdout); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "corpus.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "same output as bash on every run: **met**") {
		t.Errorf("outputs differ:\n%s", md)
	}
	if n := strings.Count(stdout.String(), "\n"); n != 3 {
		t.Errorf("printed %d paths:\n%s", n, stdout.String())
	}
}
