package suite

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
	"task_switches", "disk_bytes", "input_bytes", "shape", "cap_auto_buffers", "cap_auto_window",
	"cap_auto_bottleneck", "growths", "spilled_bytes", "error"}

func memKind(policy string) string {
	if policy == policyBash {
		return "rss"
	}
	return "heap"
}

// memIs is memKind, and says when the figure is a lower bound.
func (r result) memIs() string {
	if r.memLow {
		return memKind(r.policy) + "-lower-bound"
	}
	return memKind(r.policy)
}

// memMiB is the peak memory in MiB, "≥" in front when it is a lower bound.
func memMiB(b int64, low bool) string {
	if low {
		return "≥" + mib(b)
	}
	return mib(b)
}

func writeCSV(w io.Writer, res []result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	for _, r := range res {
		sw, capB, capW := "", "", ""
		if r.switches >= 0 {
			sw = strconv.FormatInt(r.switches, 10)
		}
		if r.policy == policyCapAuto && r.runs > 0 {
			capB, capW = f(r.capBuffers.med), strconv.Itoa(r.capWindow)
		}
		cw.Write([]string{r.w.size, strconv.Itoa(r.w.rec), r.w.kind, strconv.Itoa(r.stages), r.policy,
			r.runsAs, strconv.Itoa(r.buffers), strconv.Itoa(r.records), strconv.Itoa(r.runs),
			f(r.recPerS.med), f(r.recPerS.min), f(r.recPerS.max), f(r.nsPerRS.med),
			strconv.FormatInt(r.mem, 10), r.memIs(), strconv.Itoa(r.bufHW), sw,
			strconv.FormatInt(r.disk, 10), strconv.FormatInt(r.w.bytes, 10), r.shape, capB, capW,
			r.capNeck, strconv.Itoa(r.growths), strconv.FormatInt(r.spilled, 10), r.err})
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

// inMatrix says whether c is a cell of the matrix proper (a chain of one
// of cfg's workloads); a cell can also be a point of the memory-against-
// input plot.
func (cfg config) inMatrix(c cell) bool {
	return c.shape == "" && slices.Contains(cfg.workloads, c.w) && slices.Contains(cfg.stages, c.stages)
}

// group is the results of one workload and stage count, where policies
// compete.
type group struct {
	w      workload
	stages int
	rs     []result
}

// groups returns the matrix's groups in the order of res, leaving out the
// cells of the memory-against-input plot and of the graph shapes.
func groups(cfg config, res []result) []group {
	var gs []group
	for _, r := range res {
		if !cfg.inMatrix(r.cell) {
			continue
		}
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
	gs := groups(cfg, res)
	fmt.Fprintf(w, "## Summary\n\n")
	for _, p := range cfg.policies {
		var fast, lean []string
		in := 0
		for _, g := range gs {
			if !slices.ContainsFunc(g.rs, func(r result) bool { return r.policy == p }) {
				continue
			}
			in++
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
			p, len(fast), in, orNone(fast), len(lean), orNone(lean))
	}
	writeKnees(w, gs)
	for _, g := range gs {
		fmt.Fprintf(w, "\n## %s, %d stages (%d records of %d B)\n\n", g.w.name(), g.stages, g.w.records(), g.w.rec)
		fmt.Fprintln(w, "| policy | runs as | B | records/s | ns/rec/stage | peak MiB | buffers HW | switches | disk KiB | cap auto: caps, bottleneck, window |")
		fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|---|")
		for _, r := range g.rs {
			if r.err != "" {
				fmt.Fprintf(w, "| %s | | | failed: %s | | | | | | |\n", r.label(), strings.ReplaceAll(r.err, "|", "/"))
				continue
			}
			b, sw, disk, hw, ca := "–", "n/a", "–", "–", "–"
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
			if r.policy == policyCapAuto {
				ca = r.capCaps() + ", " + r.capWhere()
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s [%s–%s] | %.1f | %s %s | %s | %s | %s | %s |\n",
				r.label(), r.runsAs, b, human(r.recPerS.med), human(r.recPerS.min), human(r.recPerS.max),
				r.nsPerRS.med, memMiB(r.mem, r.memLow), memKind(r.policy), hw, sw, disk, ca)
		}
	}
	writeMemoryVsInput(w, cfg, res)
	writeDAGs(w, res)
	return nil
}

// capCaps says the sum of cap auto's final capacities: the median, and
// the range when the runs differ.
func (r result) capCaps() string {
	if r.capBuffers.min == r.capBuffers.max {
		return fmt.Sprintf("%.0f", r.capBuffers.med)
	}
	return fmt.Sprintf("%.0f [%.0f–%.0f]", r.capBuffers.med, r.capBuffers.min, r.capBuffers.max)
}

// capWhere says cap auto's bottleneck and window, or that the run ended
// before the sampler measured one.
func (r result) capWhere() string {
	if r.capNeck == "" {
		return "no bottleneck measured: the runs ended before the sampler's first look"
	}
	return fmt.Sprintf("bottleneck %s, window %d", r.capNeck, r.capWindow)
}

// kneeTolerance is how far below the best concurrent median the knee's
// median may be.
const kneeTolerance = 0.05

// knee is where a group's concurrent throughput against B flattens.
type knee struct {
	b     int     // the knee: the smallest B measured within kneeTolerance of the best
	rate  float64 // its median records/s
	bestB int     // the B of the best median
	best  float64
}

// knee returns the knee of g's concurrent curve: the smallest B measured
// whose median records/s is at least (1 - kneeTolerance) times the best
// concurrent median at any B. ok is false with no concurrent point.
func (g group) knee() (k knee, ok bool) {
	var pts []result
	for _, r := range g.rs {
		if r.policy == pConcurrent && r.cell.buffers > 0 && r.err == "" && r.runs > 0 {
			pts = append(pts, r)
		}
	}
	if len(pts) == 0 {
		return knee{}, false
	}
	slices.SortFunc(pts, func(a, b result) int { return a.cell.buffers - b.cell.buffers })
	for _, r := range pts {
		if r.recPerS.med > k.best {
			k.best, k.bestB = r.recPerS.med, r.cell.buffers
		}
	}
	for _, r := range pts {
		if r.recPerS.med >= (1-kneeTolerance)*k.best {
			k.b, k.rate = r.cell.buffers, r.recPerS.med
			break
		}
	}
	return k, true
}

// capAuto returns g's cap auto cell, if it ran.
func (g group) capAuto() (result, bool) {
	for _, r := range g.rs {
		if r.policy == policyCapAuto && r.err == "" && r.runs > 0 {
			return r, true
		}
	}
	return result{}, false
}

// kneeLine says g's knee and where cap auto landed against it.
func (g group) kneeLine() string {
	k, ok := g.knee()
	if !ok {
		return ""
	}
	s := fmt.Sprintf("%s×%d: knee B=%d (%s records/s; best %s at B=%d)",
		g.w.name(), g.stages, k.b, human(k.rate), human(k.best), k.bestB)
	if ca, ok := g.capAuto(); ok {
		s += fmt.Sprintf("; cap auto: %s buffers (%s), %s records/s, %.0f%% of the knee's",
			ca.capCaps(), ca.capWhere(), human(ca.recPerS.med), 100*ca.recPerS.med/k.rate)
	}
	return s
}

func writeKnees(w io.Writer, gs []group) {
	var lines []string
	for _, g := range gs {
		if l := g.kneeLine(); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## The knee of concurrent, and where cap auto lands\n\n")
	fmt.Fprintf(w, "The knee of a workload is the smallest B measured whose median records/s under concurrent is within %.0f%% of the best concurrent median at any B: past it, more buffers buy (almost) nothing. Concurrent varies B at a fixed queue capacity of %d; cap auto (concurrent with sched.Options.CapAuto, --cap auto) starts every queue at 2 and grows the bottleneck's input by PipeFlow's sliding-window rule, at its own default B. Its buffers are the sum of its final capacities (Stats.CapAuto.Buffers), the most it can hold queued.\n\n", 100*kneeTolerance, queueCap)
	for _, l := range lines {
		fmt.Fprintf(w, "- %s\n", l)
	}
}

// memRow is one line of the memory-against-input table and plot: a
// policy's peak memory at each of cfg.inputSizes, -1 where it did not run.
type memRow struct {
	policy string
	mem    []int64
	low    []bool // mem[i] is a lower bound (result.memLow)
}

// memoryVsInput picks the cells of the memory-against-input plot out of
// res: 64 B lines, balanced, at the most stages, each policy at its
// default B.
func memoryVsInput(cfg config, res []result) []memRow {
	var rows []memRow
	most := cfg.maxStages()
	for _, p := range inputPolicies {
		row := memRow{policy: p}
		found := false
		for _, n := range cfg.inputSizes {
			m, low := int64(-1), false
			for _, r := range res {
				if r.shape == "" && r.w == inputWorkload(n) && r.stages == most && r.policy == p &&
					isDefaultB(r) && r.err == "" && r.runs > 0 {
					m, low, found = r.mem, r.memLow, true
				}
			}
			row.mem = append(row.mem, m)
			row.low = append(row.low, low)
		}
		if found {
			rows = append(rows, row)
		}
	}
	return rows
}

func writeMemoryVsInput(w io.Writer, cfg config, res []result) {
	rows := memoryVsInput(cfg, res)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Peak memory against input size (64 B lines, balanced, %d stages, default B)\n\n", cfg.maxStages())
	fmt.Fprintf(w, "Peak MiB: heap for the in-process policies, the VmHWM sum for bash (see above). tpipe's record memory is B × S whatever the input. ≥: a lower bound, where bash's run ended before the 20 ms sampler saw all of its processes. ros's heap includes the garbage of the trace that counts its switches, until the GC runs.\n\n")
	fmt.Fprint(w, "| policy | memory is |")
	for _, n := range cfg.inputSizes {
		fmt.Fprintf(w, " %s MiB |", mib(n))
	}
	fmt.Fprint(w, " largest / smallest input |\n|---|---|")
	fmt.Fprint(w, strings.Repeat("---:|", len(cfg.inputSizes)+1)+"\n")
	for _, row := range rows {
		fmt.Fprintf(w, "| %s | %s |", row.policy, memKind(row.policy))
		for i, m := range row.mem {
			if m < 0 {
				fmt.Fprint(w, " – |")
			} else {
				fmt.Fprintf(w, " %s |", memMiB(m, row.low[i]))
			}
		}
		first, last := row.mem[0], row.mem[len(row.mem)-1]
		if first > 0 && last >= 0 && !row.low[0] && !row.low[len(row.low)-1] {
			fmt.Fprintf(w, " %.2f× |\n", float64(last)/float64(first))
		} else {
			fmt.Fprint(w, " – |\n")
		}
	}
}

// dagResults are the graph cells of res, in the order of dagShapes and
// dagPolicies.
func dagResults(res []result) []result {
	var out []result
	for _, shape := range dagShapes {
		for _, p := range dagPolicies {
			for _, r := range res {
				if r.shape == shape && r.policy == p {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func writeDAGs(w io.Writer, res []result) {
	rs := dagResults(res)
	if len(rs) == 0 {
		return
	}
	base := map[string]float64{} // the chain's median rate by policy
	for _, r := range rs {
		if r.shape == "chain" && r.err == "" {
			base[r.policy] = r.recPerS.med
		}
	}
	fmt.Fprintf(w, "\n## Graph shapes (%d source records of 1 KiB, each stage hashing each once)\n\n", rs[0].records)
	fmt.Fprintln(w, "chain: src | A | B | sink; diamond: src | tee | (A, B) | merge | sink; split-merge: the same with a copy branch and a slow branch that does both stages' work; split-cat: split-merge joined by cat, which reads the fast branch to its end first: the slow branch's queue grows, then spills to disk. Records/s counts source records; \"vs chain\" is the rate over the chain's under the same policy. channels: a goroutine per task and a buffered channel per edge (tee copies, merge selects); it has no split-cat, which with bounded channels deadlocks and otherwise holds the whole input in memory.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shape | policy | B | records/s | vs chain | peak MiB | buffers HW | growths | spilled KiB |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		if r.err != "" {
			fmt.Fprintf(w, "| %s | %s | | failed: %s | | | | | |\n", r.shape, r.policy, strings.ReplaceAll(r.err, "|", "/"))
			continue
		}
		b, hw, vs := "–", "–", "–"
		if r.buffers > 0 {
			b, hw = strconv.Itoa(r.buffers), strconv.Itoa(r.bufHW)
		}
		if c := base[r.policy]; c > 0 {
			vs = fmt.Sprintf("%.2f", r.recPerS.med/c)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s [%s–%s] | %s | %s %s | %s | %d | %s |\n",
			r.shape, r.policy, b, human(r.recPerS.med), human(r.recPerS.min), human(r.recPerS.max),
			vs, memMiB(r.mem, r.memLow), memKind(r.policy), hw, r.growths, kib(r.spilled))
	}
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
