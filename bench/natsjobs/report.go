package natsjobs

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tpipe/tpipe/internal/say"
)

// goalRatio is the NATS backend's speed goal: tpipe serve on NATS does
// at least this share of the plain loop's jobs per second.
const goalRatio = 0.5

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

// rate is jobs per second over d.
func (r *result) rate(d func(sample) time.Duration) stat {
	return r.each(func(s sample) float64 { return float64(r.jobs) / d(s).Seconds() })
}

func (r *result) jobsPerSec() stat { return r.rate(func(s sample) time.Duration { return s.wall }) }

func (r *result) mbPerSec() stat {
	return r.each(func(s sample) float64 { return float64(r.bytes) / (1 << 20) / s.wall.Seconds() })
}

func (r *result) msPerJob(d func(sample) time.Duration) stat {
	return r.each(func(s sample) float64 { return d(s).Seconds() * 1000 / float64(r.jobs) })
}

// report is what Run found, ready to print.
type report struct {
	cfg     Config
	results []result
	date    time.Time
	tpipe   string
	server  string
	load    [2]string // load averages before and after
	cpus    int
}

// find returns the result of tool on jobs of kind k, if it has runs.
func (rep *report) find(tool string, k kind) *result {
	for i := range rep.results {
		r := &rep.results[i]
		if r.tool == tool && r.kind == k && r.err == "" && len(r.samples) > 0 {
			return r
		}
	}
	return nil
}

func (rep *report) write(w io.Writer) {
	c := rep.cfg
	fmt.Fprintf(w, "# tpipe serve on NATS JetStream against a plain nats.go loop\n\n")
	fmt.Fprintf(w, "%s, %d CPUs, %s, %s. Load average (1, 5, 15 min) %s before, %s after. Each cell ran %d times, in rounds of a random order; medians with [min–max].\n\n",
		rep.date.Format("2006-01-02 15:04"), rep.cpus, rep.tpipe, rep.server, rep.load[0], rep.load[1], c.Runs)
	fmt.Fprintf(w, "Jobs of lines of 63 letters, each cell on a fresh nats-server (127.0.0.1, JetStream on a store in the temporary folder, its default of no fsync) and a fresh stream, or a fresh folder. "+
		"`%s`: the jobs are stored with `tpipe put nats://…/NAME FILE...` (the put column), then the clock runs over one `tpipe serve --workers %d --once nats://…/NAME 'cat'` process; after it, `tpipe get --once --no-sync` takes the results out (the get column), and every one is checked. "+
		"`%s`: the jobs are written into DIR/in (and synced) before the clock runs over `tpipe serve --workers %d --once DIR 'cat'`, which fsyncs each output and its folder; `--no-sync` does not. "+
		"`%s`: the jobs are published into a work-queue stream with nats.go's PublishAsync (the put column), then %d goroutines share one durable pull consumer, fetching %d messages at a time and acknowledging each, until the last ack is flushed; `%s` also publishes each message's bytes as a result and waits for it to be stored before the ack, the order serve keeps. "+
		"CPU is per job: the worker's (the tpipe process, or this benchmark's own process for the nats.go loops) and the server's over the timed part.\n\n",
		ToolServeNATS, c.Workers, ToolServeFolder, c.Workers, ToolPlain, c.Workers, c.Batch, ToolPlainReply)
	for _, k := range []kind{small, large} {
		if c.jobs(k) == 0 {
			continue
		}
		fmt.Fprintf(w, "## %d %s jobs of %s\n\n", c.jobs(k), k, size(c.size(k)))
		fmt.Fprintf(w, "| tool | jobs/s | MB/s | × plain loop | worker CPU ms/job | server CPU ms/job | put jobs/s | get jobs/s |\n|---|---|---|---|---|---|---|---|\n")
		plain := rep.find(ToolPlain, k)
		for i := range rep.results {
			r := &rep.results[i]
			if r.kind != k {
				continue
			}
			if r.err != "" || len(r.samples) == 0 {
				fmt.Fprintf(w, "| %s | failed: %s | | | | | | |\n", r.tool, say.OneLine(r.err))
				continue
			}
			ratio, srv, put, get := "", "", "", ""
			if plain != nil {
				ratio = fmt.Sprintf("%.2f", r.jobsPerSec().med/plain.jobsPerSec().med)
			}
			if r.tool != ToolServeFolder && r.tool != ToolServeFolderNoSync {
				srv = r.msPerJob(func(s sample) time.Duration { return s.srvCPU }).format(2)
				put = r.rate(func(s sample) time.Duration { return s.put }).format(0)
			}
			if r.tool == ToolServeNATS {
				get = r.rate(func(s sample) time.Duration { return s.get }).format(0)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.tool, r.jobsPerSec().format(0), r.mbPerSec().format(1), ratio,
				r.msPerJob(func(s sample) time.Duration { return s.cpu }).format(2), srv, put, get)
		}
		fmt.Fprintln(w)
	}
	rep.writeNone(w)
	if goals := rep.goals(); len(goals) > 0 {
		fmt.Fprintf(w, "## Goal\n\n")
		for _, g := range goals {
			fmt.Fprintf(w, "- %s\n", g)
		}
	}
}

// writeNone writes the section of the runs with no job, if there were
// any: the seconds a serve --once (and on NATS a get --once) takes
// whatever its jobs, which the tables above include.
func (rep *report) writeNone(w io.Writer) {
	var rs []*result
	for i := range rep.results {
		if rep.results[i].kind == none {
			rs = append(rs, &rep.results[i])
		}
	}
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "## No job: what one run costs whatever its jobs\n\n")
	fmt.Fprintf(w, "| tool | serve --once s | worker CPU s | get --once s |\n|---|---|---|---|\n")
	secs := func(d func(sample) time.Duration) func(sample) float64 {
		return func(s sample) float64 { return d(s).Seconds() }
	}
	for _, r := range rs {
		if r.err != "" || len(r.samples) == 0 {
			fmt.Fprintf(w, "| %s | failed: %s | | |\n", r.tool, say.OneLine(r.err))
			continue
		}
		get := ""
		if r.tool == ToolServeNATS {
			get = r.each(secs(func(s sample) time.Duration { return s.get })).format(2)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.tool, r.each(secs(func(s sample) time.Duration { return s.wall })).format(2),
			r.each(secs(func(s sample) time.Duration { return s.cpu })).format(2), get)
	}
	fmt.Fprintln(w)
}

// goals says, for each kind of job, how tpipe serve on NATS compares with
// the plain loop (the goal: at least half its jobs/s) and with serve on a
// folder.
func (rep *report) goals() []string {
	var out []string
	for _, k := range []kind{small, large} {
		r, plain := rep.find(ToolServeNATS, k), rep.find(ToolPlain, k)
		if r == nil || plain == nil {
			continue
		}
		x := r.jobsPerSec().med / plain.jobsPerSec().med
		verdict := "met"
		if x < goalRatio {
			verdict = "not met"
		}
		line := fmt.Sprintf("%s jobs of %s: `tpipe serve` on NATS %.0f jobs/s (%.1f MB/s), %.2f× the plain loop's %.0f jobs/s (goal: at least %.1f×): %s",
			k, size(rep.cfg.size(k)), r.jobsPerSec().med, r.mbPerSec().med, x, plain.jobsPerSec().med, goalRatio, verdict)
		if f := rep.find(ToolServeFolder, k); f != nil {
			line += fmt.Sprintf("; %.2f× `tpipe serve` on a folder (%.0f jobs/s)", r.jobsPerSec().med/f.jobsPerSec().med, f.jobsPerSec().med)
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
