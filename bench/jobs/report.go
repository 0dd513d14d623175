package jobs

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tpipe/tpipe/internal/say"
)

// stat is the median, least and largest of a cell's runs.
type stat struct{ med, min, max float64 }

func summarize(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{med, s[0], s[len(s)-1]}
}

func (s stat) format(prec int) string {
	return fmt.Sprintf("%.*f [%.*f–%.*f]", prec, s.med, prec, s.min, prec, s.max)
}

func (r *result) each(f func(sample) float64) stat {
	xs := make([]float64, len(r.samples))
	for i, s := range r.samples {
		xs[i] = f(s)
	}
	return summarize(xs)
}

// jobsPerSec, mbPerSec and cpu summarize a result's runs.
func (r *result) jobsPerSec() stat {
	return r.each(func(s sample) float64 { return float64(r.jobs) / s.wall.Seconds() })
}

func (r *result) mbPerSec() stat {
	return r.each(func(s sample) float64 { return float64(r.bytes) / (1 << 20) / s.wall.Seconds() })
}

func (r *result) cpuPerJob() stat {
	return r.each(func(s sample) float64 { return s.cpu.Seconds() * 1000 / float64(r.jobs) })
}

// report is what Run found, ready to print.
type report struct {
	cfg     Config
	results []result
	date    time.Time
	tpipe   string
	load    [2]string // load averages before and after
	cpus    int
}

func (rep *report) find(tool, filter string, workers int, k kind) *result {
	for i := range rep.results {
		r := &rep.results[i]
		if r.tool == tool && r.filter == filter && r.workers == workers && r.kind == k && r.err == "" && len(r.samples) > 0 {
			return r
		}
	}
	return nil
}

// ran says whether any cell of filter on jobs of kind k was run (well or
// not).
func (rep *report) ran(filter string, k kind) bool {
	for _, r := range rep.results {
		if r.filter == filter && r.kind == k {
			return true
		}
	}
	return false
}

func (rep *report) write(w io.Writer) {
	c := rep.cfg
	fmt.Fprintf(w, "# tpipe pmjq against GNU parallel and a bash loop\n\n")
	fmt.Fprintf(w, "%s, %d CPUs, %s. Load average (1, 5, 15 min) %s before, %s after. Each cell ran %d times, in rounds of a random order; medians with [min–max].\n\n",
		rep.date.Format("2006-01-02 15:04"), rep.cpus, rep.tpipe, rep.load[0], rep.load[1], c.Runs)
	var folders, progs []string
	if rep.ran(FilterBuiltins, small) || rep.ran(FilterBuiltins, large) || rep.ran(FilterExternal, small) {
		folders = append(folders, fmt.Sprintf("%d small of %s or %d large of %s, each lines of 63 letters", c.Small, size(c.SmallSize), c.Large, size(c.LargeSize)))
		progs = append(progs, "`tr` (GNU coreutils) and `rev` (util-linux)")
	}
	if rep.ran(FilterSort, tiny) {
		folders = append(folders, fmt.Sprintf("%d tiny of %s, one line of 39 letters", c.Tiny, size(c.TinySize)))
		progs = append(progs, "`tr` and `sort` (GNU coreutils)")
	}
	fmt.Fprintf(w, "A folder of jobs, one a file: %s. Every tool does each job with the same filter, writes the output to out/ under the job's name and removes the job; tpipe pmjq runs the filter in process (builtins, no process per job), commits each output whole (a temporary name, then a rename) and, without --no-sync, fsyncs it and its folder; GNU parallel and the bash loop run %s, two processes per job, writing the output in place with no fsync. The clock runs from the command's start to its end; the jobs are written (and synced) before.\n\n",
		strings.Join(folders, "; "), strings.Join(progs, " or "))
	for _, t := range []struct {
		filter string
		kind   kind
	}{{FilterBuiltins, small}, {FilterBuiltins, large}, {FilterExternal, small}, {FilterSort, tiny}} {
		if !rep.ran(t.filter, t.kind) {
			continue
		}
		fmt.Fprintf(w, "## `%s`, %d %s jobs of %s\n\n", t.filter, c.jobs(t.kind), t.kind, size(c.size(t.kind)))
		fmt.Fprintf(w, "| tool | workers | jobs/s | MB/s | CPU ms per job | × bash loop |\n|---|---|---|---|---|---|\n")
		mbPrec := 1
		if t.kind == tiny {
			mbPrec = 3 // 2,000 jobs/s of 40 B is 0.076 MB/s
		}
		bash := rep.find(ToolBash, t.filter, 1, t.kind)
		for i := range rep.results {
			r := &rep.results[i]
			if r.filter != t.filter || r.kind != t.kind {
				continue
			}
			if r.err != "" || len(r.samples) == 0 {
				fmt.Fprintf(w, "| %s | %d | failed: %s | | | |\n", r.tool, r.workers, say.OneLine(r.err))
				continue
			}
			ratio := ""
			if bash != nil {
				ratio = fmt.Sprintf("%.1f", r.jobsPerSec().med/bash.jobsPerSec().med)
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", r.tool, r.workers, r.jobsPerSec().format(0), r.mbPerSec().format(mbPrec), r.cpuPerJob().format(2), ratio)
		}
		fmt.Fprintln(w)
	}
	if goals := rep.goals(); len(goals) > 0 {
		fmt.Fprintf(w, "## Goals\n\n")
		for _, g := range goals {
			fmt.Fprintf(w, "- %s\n", g)
		}
	}
}

// tinyGoal is issue 25's goal for the tiny jobs: jobs/s of one tpipe
// pmjq --once, with fsync on.
const tinyGoal = 2000

// goals says, for each speed goal of issues 15 and 25, what was measured.
func (rep *report) goals() []string {
	var out []string
	best := func(tool, filter string, k kind) *result {
		var b *result
		for _, w := range rep.cfg.Workers {
			if r := rep.find(tool, filter, w, k); r != nil && (b == nil || r.jobsPerSec().med > b.jobsPerSec().med) {
				b = r
			}
		}
		return b
	}
	bash := rep.find(ToolBash, FilterBuiltins, 1, small)
	for _, tool := range []string{ToolTpipeNoSync, ToolTpipe} {
		r := best(tool, FilterBuiltins, small)
		if r == nil {
			continue
		}
		js := r.jobsPerSec().med
		verdict := "met"
		if js < 1000 {
			verdict = "not met"
		}
		line := fmt.Sprintf("Issue 15, `%s`, small jobs of builtins in one process: %.0f jobs/s at %d workers (goal: at least 1,000 per process): %s", tool, js, r.workers, verdict)
		if bash != nil {
			x := js / bash.jobsPerSec().med
			verdict = "met"
			if x < 10 {
				verdict = "not met"
			}
			line += fmt.Sprintf("; %.1f× the bash loop's %.0f jobs/s (goal: 10×): %s", x, bash.jobsPerSec().med, verdict)
		}
		out = append(out, line)
	}
	if r := best(ToolTpipe, FilterExternal, small); r != nil {
		const pmjq = 10000 / 55.0 // issue 15: 10,000 md5sum jobs in 55 s with pmjq 1.0, 4 workers
		js := r.jobsPerSec().med
		verdict := "met"
		if js < pmjq {
			verdict = "not met"
		}
		out = append(out, fmt.Sprintf("Issue 15, `tpipe`, an external filter (`md5sum`, a process per job): %.0f jobs/s at %d workers; pmjq 1.0 did %.0f jobs/s with 4 workers on the issue's machines (quoted, not measured here: pmjq is not packaged): %s", js, r.workers, pmjq, verdict))
	}
	if r := best(ToolTpipe, FilterSort, tiny); r != nil {
		js := r.jobsPerSec().med
		verdict := "met"
		if js < tinyGoal {
			verdict = "not met"
		}
		line := fmt.Sprintf("Issue 25, `tpipe` (fsync on), %d tiny jobs of `%s` in process through one `tpipe pmjq --once`: %.0f jobs/s at %d workers (goal: at least 2,000): %s", r.jobs, FilterSort, js, r.workers, verdict)
		if b := rep.find(ToolBash, FilterSort, 1, tiny); b != nil {
			line += fmt.Sprintf("; %.1f× the bash loop's %.0f jobs/s", js/b.jobsPerSec().med, b.jobsPerSec().med)
		}
		if p := best(ToolParallel, FilterSort, tiny); p != nil {
			line += fmt.Sprintf("; %.1f× GNU parallel's %.0f jobs/s at %d workers", js/p.jobsPerSec().med, p.jobsPerSec().med, p.workers)
		}
		out = append(out, line)
	}
	return out
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
