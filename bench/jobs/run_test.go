package jobs

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// fake is a result of 3 runs of jobs/s each.
func fake(c cell, jobs int, jobsPerSec float64) result {
	r := result{cell: c, jobs: jobs, bytes: int64(jobs) * 4096}
	for range 3 {
		r.samples = append(r.samples, sample{wall: time.Duration(float64(jobs) / jobsPerSec * float64(time.Second)), cpu: time.Second})
	}
	return r
}

// The goal lines, from made-up runs: each goal met or not by the medians.
func TestGoals(t *testing.T) {
	cfg := Config{Small: 100, SmallSize: 4096, Workers: []int{1, 2}, Runs: 3}
	rep := report{cfg: cfg, results: []result{
		fake(cell{ToolTpipeNoSync, FilterBuiltins, 1, false}, 100, 900),
		fake(cell{ToolTpipeNoSync, FilterBuiltins, 2, false}, 100, 1500),
		fake(cell{ToolTpipe, FilterBuiltins, 2, false}, 100, 400),
		fake(cell{ToolBash, FilterBuiltins, 1, false}, 100, 100),
		fake(cell{ToolTpipe, FilterExternal, 2, false}, 100, 150),
	}}
	g := strings.Join(rep.goals(), "\n")
	for _, want := range []string{
		"`tpipe --no-sync`, small jobs of builtins in one process: 1500 jobs/s at 2 workers (goal: at least 1,000 per process): met; 15.0× the bash loop's 100 jobs/s (goal: 10×): met",
		"`tpipe`, small jobs of builtins in one process: 400 jobs/s at 2 workers (goal: at least 1,000 per process): not met; 4.0× the bash loop's 100 jobs/s (goal: 10×): not met",
		"an external filter (`md5sum`, a process per job): 150 jobs/s at 2 workers; pmjq 1.0 did 182 jobs/s",
		": not met",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("goals lack %q:\n%s", want, g)
		}
	}
	var buf bytes.Buffer
	rep.write(&buf)
	if !strings.Contains(buf.String(), "| tpipe --no-sync | 2 | 1500 [1500–1500] |") {
		t.Errorf("report:\n%s", buf.String())
	}
}

// The command lines (argv joined by " ¦ "): the filter braced, so that
// the redirects cover the whole of it.
func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		c    cell
		want string
	}{
		{cell{ToolTpipe, FilterBuiltins, 2, false}, "tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 2 ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolTpipeNoSync, FilterBuiltins, 4, false}, "tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 4 ¦ --no-sync ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolBaseNoSync, FilterBuiltins, 1, false}, "old/tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 1 ¦ --no-sync ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolParallel, FilterExternal, 4, false}, "bash ¦ -c ¦ ls in | parallel --will-cite -j 4 '{ md5sum; } < in/{} > out/{} && rm in/{}'"},
		{cell{ToolBash, FilterBuiltins, 1, false}, `bash ¦ -c ¦ for f in in/*; do { tr a-z A-Z | rev; } < "$f" > "out/${f#in/}" && rm "$f"; done`},
	} {
		if got := strings.Join(tc.c.command("tpipe", "old/tpipe"), " ¦ "); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.c, got, tc.want)
		}
	}
}

// TestRunTiny runs the whole benchmark on a few tiny jobs: every cell
// does every job (Run checks each output), and the report is written.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tpipe and starts GNU parallel")
	}
	for _, tool := range []string{"parallel", "tr", "rev", "md5sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs parallel)", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := Config{Small: 6, Large: 1, SmallSize: 4096, LargeSize: 256 << 10, Workers: []int{2}, Runs: MinRuns}
	var out, progress bytes.Buffer
	cfg.Progress = &progress
	if err := Run(ctx, cfg, t.TempDir(), &out); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if strings.Contains(out.String(), "failed") {
		t.Errorf("a cell failed:\n%s\n%s", out.String(), progress.String())
	}
	for _, want := range []string{"## `tr a-z A-Z | rev`, 6 small jobs of 4 KiB", "| parallel | 2 |", "| bash loop | 1 |", "## Goals (issue 15)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
