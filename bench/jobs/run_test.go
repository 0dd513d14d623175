package jobs

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
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
		fake(cell{ToolTpipeNoSync, FilterBuiltins, 1, small}, 100, 900),
		fake(cell{ToolTpipeNoSync, FilterBuiltins, 2, small}, 100, 1500),
		fake(cell{ToolTpipe, FilterBuiltins, 2, small}, 100, 400),
		fake(cell{ToolBash, FilterBuiltins, 1, small}, 100, 100),
		fake(cell{ToolTpipe, FilterExternal, 2, small}, 100, 150),
	}}
	g := strings.Join(rep.goals(), "\n")
	for _, want := range []string{
		"Issue 15, `tpipe --no-sync`, small jobs of builtins in one process: 1500 jobs/s at 2 workers (goal: at least 1,000 per process): met; 15.0× the bash loop's 100 jobs/s (goal: 10×): met",
		"Issue 15, `tpipe`, small jobs of builtins in one process: 400 jobs/s at 2 workers (goal: at least 1,000 per process): not met; 4.0× the bash loop's 100 jobs/s (goal: 10×): not met",
		"Issue 15, `tpipe`, an external filter (`md5sum`, a process per job): 150 jobs/s at 2 workers; pmjq 1.0 did 182 jobs/s",
		": not met",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("goals lack %q:\n%s", want, g)
		}
	}
	if strings.Contains(g, "Issue 25") {
		t.Errorf("a tiny jobs' goal with no tiny jobs run:\n%s", g)
	}
	var buf bytes.Buffer
	rep.write(&buf)
	for _, want := range []string{"| tpipe --no-sync | 2 | 1500 [1500–1500] |", "## Goals\n", "## `tr a-z A-Z | rev`, 100 small jobs of 4 KiB"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "tiny") || strings.Contains(buf.String(), "sort -r") {
		t.Errorf("report of no tiny jobs names them:\n%s", buf.String())
	}
}

// Issue 25's goal, from made-up runs of tiny jobs alone (TinyOnly): the
// best tpipe with fsync against 2,000 jobs/s, met or not by its median,
// with its ratio to the bash loop and to GNU parallel; --no-sync does not
// count. Only the tiny jobs' section is printed.
func TestGoalsTiny(t *testing.T) {
	for _, tc := range []struct {
		tpipe float64 // jobs/s of tpipe at 2 workers
		want  string
	}{
		{2500, "Issue 25, `tpipe` (fsync on), 50 tiny jobs of `tr a-z A-Z | sort -r` in process through one `tpipe pmjq --once`: 2500 jobs/s at 2 workers (goal: at least 2,000): met; 25.0× the bash loop's 100 jobs/s; 5.0× GNU parallel's 500 jobs/s at 2 workers"},
		{1900, "Issue 25, `tpipe` (fsync on), 50 tiny jobs of `tr a-z A-Z | sort -r` in process through one `tpipe pmjq --once`: 1900 jobs/s at 2 workers (goal: at least 2,000): not met; 19.0× the bash loop's 100 jobs/s; 3.8× GNU parallel's 500 jobs/s at 2 workers"},
	} {
		cfg := Config{Tiny: 50, TinySize: 40, Workers: []int{1, 2}, Runs: 3, TinyOnly: true}
		rep := report{cfg: cfg, results: []result{
			fake(cell{ToolTpipe, FilterSort, 1, tiny}, 50, 1200),
			fake(cell{ToolTpipeNoSync, FilterSort, 1, tiny}, 50, 5000),
			fake(cell{ToolTpipe, FilterSort, 2, tiny}, 50, tc.tpipe),
			fake(cell{ToolTpipeNoSync, FilterSort, 2, tiny}, 50, 6000),
			fake(cell{ToolParallel, FilterSort, 2, tiny}, 50, 500),
			fake(cell{ToolBash, FilterSort, 1, tiny}, 50, 100),
		}}
		g := rep.goals()
		if len(g) != 1 || g[0] != tc.want {
			t.Errorf("goals:\n%s\nwant\n%s", strings.Join(g, "\n"), tc.want)
		}
		var buf bytes.Buffer
		rep.write(&buf)
		out := buf.String()
		for _, want := range []string{"## `tr a-z A-Z | sort -r`, 50 tiny jobs of 40 B\n", "| tpipe | 2 |", "| parallel | 2 |", "| bash loop | 1 | 100 [100–100] |", "## Goals\n\n- " + tc.want + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "\n## "); n != 2 {
			t.Errorf("report has %d sections, want the tiny jobs' and the goals:\n%s", n, out)
		}
	}
}

// The cells: every kind of job by default, the tiny jobs' alone with
// TinyOnly; tpipe on tiny jobs at each worker count, GNU parallel at the
// most, the bash loop once, all with FilterSort.
func TestCells(t *testing.T) {
	cfg := Config{Small: 10, Large: 1, Tiny: 20, Workers: []int{1, 4}, Runs: 3}
	count := func(cs []cell) map[kind]int {
		n := map[kind]int{}
		for _, c := range cs {
			n[c.kind]++
		}
		return n
	}
	all := cells(cfg)
	if n := count(all); n[small] != 2*3+1+3 || n[large] != 2*3+1 || n[tiny] != 2*2+2 {
		t.Errorf("cells by kind %v:\n%v", n, all)
	}
	cfg.TinyOnly = true
	only := cells(cfg)
	want := []cell{
		{ToolTpipe, FilterSort, 1, tiny}, {ToolTpipeNoSync, FilterSort, 1, tiny},
		{ToolTpipe, FilterSort, 4, tiny}, {ToolTpipeNoSync, FilterSort, 4, tiny},
		{ToolParallel, FilterSort, 4, tiny}, {ToolBash, FilterSort, 1, tiny},
	}
	if !slices.Equal(only, want) {
		t.Errorf("TinyOnly cells:\n got %v\nwant %v", only, want)
	}
	if !slices.Equal(only, all[len(all)-len(only):]) {
		t.Errorf("the tiny jobs' cells differ with TinyOnly:\n%v\n%v", only, all)
	}
	cfg.Base = "old/tpipe"
	if n := count(cells(cfg)); len(n) != 1 || n[tiny] != 2*4+2 {
		t.Errorf("TinyOnly with a base: cells by kind %v", n)
	}
}

// A tiny job: one line of 39 letters and spaces, and a newline.
func TestJobText(t *testing.T) {
	if got := string(jobText(40)); got != "the quick brown fox jumps over the lazy\n" {
		t.Errorf("jobText(40) = %q", got)
	}
	if b := jobText(4096); len(b) != 4096 || bytes.Count(b, []byte("\n")) != 64 || b[63] != '\n' {
		t.Errorf("jobText(4096): %d bytes, %d lines", len(b), bytes.Count(b, []byte("\n")))
	}
}

// The command lines (argv joined by " ¦ "): the filter braced, so that
// the redirects cover the whole of it.
func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		c    cell
		want string
	}{
		{cell{ToolTpipe, FilterBuiltins, 2, small}, "tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 2 ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolTpipeNoSync, FilterBuiltins, 4, small}, "tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 4 ¦ --no-sync ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolBaseNoSync, FilterBuiltins, 1, small}, "old/tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 1 ¦ --no-sync ¦ in ¦ tr a-z A-Z | rev ¦ out"},
		{cell{ToolParallel, FilterExternal, 4, small}, "bash ¦ -c ¦ ls in | parallel --will-cite -j 4 '{ md5sum; } < in/{} > out/{} && rm in/{}'"},
		{cell{ToolBash, FilterBuiltins, 1, small}, `bash ¦ -c ¦ for f in in/*; do { tr a-z A-Z | rev; } < "$f" > "out/${f#in/}" && rm "$f"; done`},
		{cell{ToolTpipe, FilterSort, 4, tiny}, "tpipe ¦ pmjq ¦ --once ¦ --workers ¦ 4 ¦ in ¦ tr a-z A-Z | sort -r ¦ out"},
		{cell{ToolParallel, FilterSort, 2, tiny}, "bash ¦ -c ¦ ls in | parallel --will-cite -j 2 '{ tr a-z A-Z | sort -r; } < in/{} > out/{} && rm in/{}'"},
		{cell{ToolBash, FilterSort, 1, tiny}, `bash ¦ -c ¦ for f in in/*; do { tr a-z A-Z | sort -r; } < "$f" > "out/${f#in/}" && rm "$f"; done`},
	} {
		if got := strings.Join(tc.c.command("tpipe", "old/tpipe"), " ¦ "); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.c, got, tc.want)
		}
	}
}

// TestRunTiny runs the whole benchmark on a few jobs of each kind: every
// cell does every job (Run checks each output), and the report is
// written. (TestCells and TestGoalsTiny cover TinyOnly.)
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tpipe and starts GNU parallel")
	}
	for _, tool := range []string{"parallel", "tr", "rev", "sort", "md5sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs parallel)", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := Config{Small: 6, Large: 1, Tiny: 8, SmallSize: 4096, LargeSize: 256 << 10, TinySize: 40, Workers: []int{2}, Runs: MinRuns}
	var out, progress bytes.Buffer
	cfg.Progress = &progress
	if err := Run(ctx, cfg, t.TempDir(), &out); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if strings.Contains(out.String(), "failed") {
		t.Errorf("a cell failed:\n%s\n%s", out.String(), progress.String())
	}
	for _, want := range []string{"## `tr a-z A-Z | rev`, 6 small jobs of 4 KiB", "## `tr a-z A-Z | sort -r`, 8 tiny jobs of 40 B", "| parallel | 2 |", "| bash loop | 1 |", "## Goals", "- Issue 15, `tpipe`", "- Issue 25, `tpipe`"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
