package natsjobs

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// fake is a result of 3 runs of jobs of 4 KiB at jobsPerSec.
func fake(c cell, jobs int, jobsPerSec float64) result {
	r := result{cell: c, jobs: jobs, bytes: int64(jobs) * 4096}
	for range 3 {
		wall := time.Duration(float64(jobs) / jobsPerSec * float64(time.Second))
		r.samples = append(r.samples, sample{wall: wall, cpu: time.Second, srvCPU: time.Second, put: wall, get: wall})
	}
	return r
}

// The goal lines, from made-up runs: met or not by the ratio of the
// medians of serve on NATS and the plain loop, with serve on a folder
// beside; a failed cell is said in its row, and a kind with no jobs has
// no section.
func TestGoals(t *testing.T) {
	for _, tc := range []struct {
		nats float64
		want string
	}{
		{600, "small jobs of 4 KiB: `tpipe serve` on NATS 600 jobs/s (2.3 MB/s), 0.40× the plain loop's 1500 jobs/s (goal: at least 0.5×): not met; 0.75× `tpipe serve` on a folder (800 jobs/s)"},
		{880, "small jobs of 4 KiB: `tpipe serve` on NATS 880 jobs/s (3.4 MB/s), 0.59× the plain loop's 1500 jobs/s (goal: at least 0.5×): met; 1.10× `tpipe serve` on a folder (800 jobs/s)"},
	} {
		cfg := Config{Small: 100, SmallSize: 4096, Workers: 2, Batch: 10, Runs: 3}
		rep := report{cfg: cfg, results: []result{
			fake(cell{ToolServeNATS, small}, 100, tc.nats),
			fake(cell{ToolServeFolder, small}, 100, 800),
			{cell: cell{ToolServeFolderNoSync, small}, jobs: 100, err: "exit status 1:\ntpipe serve: no"},
			fake(cell{ToolPlain, small}, 100, 1500),
			fake(cell{ToolPlainReply, small}, 100, 1000),
		}}
		g := rep.goals()
		if len(g) != 1 || g[0] != tc.want {
			t.Errorf("goals:\n%s\nwant\n%s", strings.Join(g, "\n"), tc.want)
		}
		var buf bytes.Buffer
		rep.write(&buf)
		out := buf.String()
		for _, want := range []string{
			"## 100 small jobs of 4 KiB\n",
			"| nats.go fetch + ack | 1500 [1500–1500] | 5.9 [5.9–5.9] | 1.00 | 10.00 [10.00–10.00] | 10.00 [10.00–10.00] | 1500 [1500–1500] |  |\n",
			"| tpipe serve, folder | 800 [800–800] | 3.1 [3.1–3.1] | 0.53 | 10.00 [10.00–10.00] |  |  |  |\n",
			"| tpipe serve --no-sync, folder | failed: exit status 1: tpipe serve: no |",
			"## Goal\n\n- " + tc.want + "\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "large") {
			t.Errorf("a report of no large jobs names them:\n%s", out)
		}
	}
}

// TestRunTiny runs the whole benchmark on a few jobs of each size: every
// cell checks that every job came out whole (and, for the plain loops,
// that the stream holds what it should after), so a run with no failed
// cell did every job.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tpipe and nats-server and starts a server per cell")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := Config{Small: 30, Large: 3, SmallSize: 4096, LargeSize: 256 << 10, Workers: 2, Batch: 8, Runs: MinRuns}
	var out, progress bytes.Buffer
	cfg.Progress = &progress
	if err := Run(ctx, cfg, t.TempDir(), &out); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if strings.Contains(out.String(), "failed") {
		t.Errorf("a cell failed:\n%s\n%s", out.String(), progress.String())
	}
	for _, want := range []string{"## 30 small jobs of 4 KiB", "## 3 large jobs of 256 KiB", "| " + ToolServeNATS + " | ", "| " + ToolPlainReply + " | ", "## No job:", "## Goal", "- large jobs of 256 KiB: `tpipe serve` on NATS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
