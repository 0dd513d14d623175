package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// writeReport writes report.md, results.csv and the SVG plots into dir
// and returns their paths.
func writeReport(dir string, cfg config, res []result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		p := filepath.Join(dir, name)
		files = append(files, p)
		return os.WriteFile(p, b.Bytes(), 0o644)
	}
	if err := write("results.csv", func(w io.Writer) error { return writeCSV(w, res) }); err != nil {
		return nil, err
	}
	if err := write("report.md", func(w io.Writer) error { return writeMarkdown(w, cfg, res) }); err != nil {
		return nil, err
	}
	for _, p := range plots(cfg, res) {
		if err := write(p.file, func(w io.Writer) error { return p.chart.svg(w) }); err != nil {
			return nil, err
		}
	}
	return files, nil
}

var csvHeader = []string{"workload", "rec_bytes", "kind", "stages", "policy", "runs_as", "buffers",
	"records", "runs", "recs_per_s_median", "recs_per_s_min", "recs_per_s_max",
	"ns_per_rec_stage_median", "peak_mem_bytes", "mem_is", "buffers_high_water",
	"task_switches", "disk_bytes", "error"}

func memKind(policy string) string {
	if policy == policyBash {
		return "rss"
	}
	return "heap"
}

func writeCSV(w io.Writer, res []result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for _, r := range res {
		sw := ""
		if r.switches >= 0 {
			sw = strconv.FormatInt(r.switches, 10)
		}
		cw.Write([]string{r.w.size, strconv.Itoa(r.w.rec), r.w.kind, strconv.Itoa(r.stages), r.policy,
			r.runsAs, strconv.Itoa(r.buffers), strconv.Itoa(r.records), strconv.Itoa(r.runs),
			f(r.recPerS.med), f(r.recPerS.min), f(r.recPerS.max), f(r.nsPerRS.med),
			strconv.FormatInt(r.mem, 10), memKind(r.policy), strconv.Itoa(r.bufHW), sw,
			strconv.FormatInt(r.disk, 10), r.err})
	}
	cw.Flush()
	return cw.Error()
}

// label names a result's row: the policy, and B where it was chosen.
func (r result) label() string {
	if r.cell.buffers > 0 {
		return fmt.Sprintf("%s B=%d", r.policy, r.cell.buffers)
	}
	return r.policy
}

func human(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2fG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.1f", x)
}

func mib(b int64) string { return fmt.Sprintf("%.2f", float64(b)/(1<<20)) }

func kib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<10)) }

// group is the results of one workload and stage count, where policies
// compete.
type group struct {
	w      workload
	stages int
	rs     []result
}

func groups(res []result) []group {
	var gs []group
	for _, r := range res {
		i := slices.IndexFunc(gs, func(g group) bool { return g.w == r.w && g.stages == r.stages })
		if i < 0 {
			gs = append(gs, group{w: r.w, stages: r.stages})
			i = len(gs) - 1
		}
		gs[i].rs = append(gs[i].rs, r)
	}
	return gs
}

// winners returns, for a group, the policy with the highest median rate
// (at any B) and the in-process policy with the least peak heap at its
// default B (B=1 would win every time; bash's RSS is not the same
// measure, so it is left out of the memory contest).
func (g group) winners() (fastest, leanest string) {
	var bestRate float64
	var bestMem int64 = math.MaxInt64
	for _, r := range g.rs {
		if r.err != "" || r.runs == 0 {
			continue
		}
		if r.recPerS.med > bestRate {
			bestRate, fastest = r.recPerS.med, r.policy
		}
		if r.policy != policyBash && isDefaultB(r) && r.mem < bestMem {
			bestMem, leanest = r.mem, r.policy
		}
	}
	return fastest, leanest
}

func writeMarkdown(w io.Writer, cfg config, res []result) error {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "# tpipe benchmark\n\n%s, %s, GOMAXPROCS=%d, %s, %d runs per cell (median [min–max]), cells interleaved in shuffled rounds.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOMAXPROCS(0), host, cfg.runs)
	fmt.Fprintf(w, "Memory: in-process policies show the peak of live+unswept heap object bytes above the post-GC baseline, sampled every 1 ms (runtime/metrics); bash shows the sum of VmHWM over bash and its children, sampled every 20 ms. The two are not the same measure. Switches: lines of the ros scheduler's trace. Disk: the serial policy's compressed bytes written.\n\n")
	gs := groups(res)
	fmt.Fprintf(w, "## Summary\n\n")
	for _, p := range cfg.policies {
		var fast, lean []string
		for _, g := range gs {
			f, l := g.winners()
			name := fmt.Sprintf("%s×%d", g.w.name(), g.stages)
			if f == p {
				fast = append(fast, name)
			}
			if l == p {
				lean = append(lean, name)
			}
		}
		fmt.Fprintf(w, "- **%s**: fastest in %d/%d (%s); least memory in %d (%s)\n",
			p, len(fast), len(gs), orNone(fast), len(lean), orNone(lean))
	}
	for _, g := range gs {
		fmt.Fprintf(w, "\n## %s, %d stages (%d records of %d B)\n\n", g.w.name(), g.stages, g.w.records(), g.w.rec)
		fmt.Fprintln(w, "| policy | runs as | B | records/s | ns/rec/stage | peak MiB | buffers HW | switches | disk KiB |")
		fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|")
		for _, r := range g.rs {
			if r.err != "" {
				fmt.Fprintf(w, "| %s | | | failed: %s | | | | | |\n", r.label(), strings.ReplaceAll(r.err, "|", "/"))
				continue
			}
			b, sw, disk, hw := "–", "n/a", "–", "–"
			if r.buffers > 0 {
				b = strconv.Itoa(r.buffers)
				hw = strconv.Itoa(r.bufHW)
			}
			if r.switches >= 0 {
				sw = strconv.FormatInt(r.switches, 10)
			}
			if r.disk > 0 {
				disk = kib(r.disk)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s [%s–%s] | %.1f | %s %s | %s | %s | %s |\n",
				r.label(), r.runsAs, b, human(r.recPerS.med), human(r.recPerS.min), human(r.recPerS.max),
				r.nsPerRS.med, mib(r.mem), memKind(r.policy), hw, sw, disk)
		}
	}
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
