package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/sched"
)

// conc is a concurrent result at B with a median rate.
func conc(b int, rate float64) result {
	return result{cell: cell{w: tinyWorkload, stages: 10, policy: "concurrent", buffers: b}, runs: 5, recPerS: stat{med: rate}, buffers: b}
}

func TestKnee(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rs       []result
		ok       bool
		b, bestB int
	}{
		{"none", nil, false, 0, 0},
		{"one point", []result{conc(22, 100)}, true, 22, 22},
		{"rises then flat", []result{conc(1, 50), conc(4, 90), conc(11, 97), conc(22, 100), conc(44, 99)}, true, 11, 22},
		{"exactly 5% below", []result{conc(1, 50), conc(4, 95), conc(22, 100)}, true, 4, 22},
		{"flat from B=1", []result{conc(22, 100), conc(1, 99), conc(44, 98)}, true, 1, 22},
		{"best at the smallest", []result{conc(1, 120), conc(22, 100)}, true, 1, 1},
		{"failed and other policies left out", []result{
			{cell: cell{w: tinyWorkload, stages: 10, policy: "concurrent", buffers: 1}, err: "deadlock", recPerS: stat{med: 500}},
			{cell: cell{w: tinyWorkload, stages: 10, policy: "fused"}, runs: 5, recPerS: stat{med: 1000}},
			conc(4, 80), conc(22, 100),
		}, true, 22, 22},
	} {
		k, ok := group{rs: tt.rs}.knee()
		if ok != tt.ok || k.b != tt.b || k.bestB != tt.bestB {
			t.Errorf("%s: knee = %+v, %v; want B=%d best at B=%d, %v", tt.name, k, ok, tt.b, tt.bestB, tt.ok)
		}
	}
}

func capAutoResult(caps, rate float64) result {
	return result{cell: cell{w: tinyWorkload, stages: 10, policy: policyCapAuto}, runs: 5, recPerS: stat{med: rate},
		capBuffers: stat{caps, caps, caps}, capWindow: 2, capNeck: "stage6", runsAs: "concurrent", buffers: 22}
}

func TestKneeLine(t *testing.T) {
	g := group{w: tinyWorkload, stages: 10, rs: []result{conc(1, 50e3), conc(4, 96e3), conc(22, 100e3), capAutoResult(13, 72e3)}}
	want := "64B/balanced×10: knee B=4 (96.0k records/s; best 100.0k at B=22); cap auto: 13 buffers (bottleneck stage6, window 2), 72.0k records/s, 75% of the knee's"
	if got := g.kneeLine(); got != want {
		t.Errorf("kneeLine\n got %s\nwant %s", got, want)
	}
}

func TestAggregateCapAuto(t *testing.T) {
	c := cell{w: tinyWorkload, stages: 10, policy: policyCapAuto}
	var ss []sample
	for i, ca := range []sched.CapAutoStats{
		{Bottleneck: "stage6", Window: 2, Buffers: 13},
		{Bottleneck: "stage3", Window: 3, Buffers: 14},
		{Bottleneck: "stage6", Window: 2, Buffers: 12},
		{Bottleneck: "stage3", Window: 1, Buffers: 13},
		{Bottleneck: "sink", Window: 2, Buffers: 15},
	} {
		ss = append(ss, sample{wall: time.Duration(i+1) * time.Millisecond, capAuto: &ca, growths: i, spilled: int64(100 * i)})
	}
	r := aggregate(c, ss)
	// stage3 and stage6 are named twice each: the tie goes to the first by name.
	if r.capBuffers != (stat{13, 12, 15}) || r.capWindow != 2 || r.capNeck != "stage3" || r.growths != 2 || r.spilled != 200 {
		t.Errorf("cap auto: buffers %+v window %d neck %q growths %d spilled %d", r.capBuffers, r.capWindow, r.capNeck, r.growths, r.spilled)
	}
	if got := r.capCaps(); got != "13 [12–15]" {
		t.Errorf("capCaps = %q", got)
	}
}

func TestCells(t *testing.T) {
	cfg := quickConfig()
	cs := cfg.cells()
	for i, c := range cs {
		if slices.Contains(cs[:i], c) {
			t.Errorf("cell %v twice", c)
		}
	}
	count := func(f func(cell) bool) int {
		n := 0
		for _, c := range cs {
			if f(c) {
				n++
			}
		}
		return n
	}
	if n := count(func(c cell) bool { return c.policy == policyCapAuto && c.stages == 10 && cfg.inMatrix(c) }); n != len(cfg.workloads) {
		t.Errorf("%d cap-auto cells at 10 stages, want one per workload (%d)", n, len(cfg.workloads))
	}
	if n := count(func(c cell) bool { return c.policy == policyCapAuto && c.stages != 10 }); n != 0 {
		t.Errorf("%d cap-auto cells below 10 stages", n)
	}
	// The 4 MiB point of the memory plot is the matrix's 64B/balanced cell.
	for _, n := range cfg.inputSizes {
		for _, p := range inputPolicies {
			want := 1
			got := count(func(c cell) bool {
				return c.w == inputWorkload(n) && c.stages == 10 && c.policy == p && isDefaultB(result{cell: c})
			})
			if got != want {
				t.Errorf("input %d, %s: %d default-B cells, want %d", n, p, got, want)
			}
		}
	}
	for _, shape := range dagShapes {
		for _, p := range dagPolicies {
			want := 1
			if p == policyChannels && shape == "split-cat" {
				want = 0
			}
			if got := count(func(c cell) bool { return c.shape == shape && c.policy == p }); got != want {
				t.Errorf("%s/%s: %d cells, want %d", shape, p, got, want)
			}
		}
	}
}

func TestMemoryVsInput(t *testing.T) {
	cfg := config{stages: []int{3, 10}, inputSizes: []int64{1 << 20, 4 << 20, 16 << 20}}
	at := func(n int64, stages int, p string, b int, mem int64) result {
		return result{cell: cell{w: inputWorkload(n), stages: stages, policy: p, buffers: b}, runs: 5, mem: mem}
	}
	res := []result{
		at(1<<20, 10, "concurrent", 22, 100),
		at(4<<20, 10, "concurrent", 22, 110),
		at(4<<20, 10, "concurrent", 1, 5), // not its default B
		at(16<<20, 10, "concurrent", 22, 120),
		at(16<<20, 3, "concurrent", 8, 7), // not the most stages
		at(1<<20, 10, "ros", 0, 50),
		at(16<<20, 10, "ros", 0, 60),
		{cell: cell{w: inputWorkload(1 << 20), stages: 10, policy: policyBash}, runs: 5, mem: 1 << 20, memLow: true},
		at(4<<20, 10, policyBash, 0, 1<<20),
		{cell: cell{w: inputWorkload(16 << 20), stages: 10, policy: policyBash}, err: "bash: killed"},
		at(16<<20, 10, "fused", 0, 1), // not in the plot
	}
	got := memoryVsInput(cfg, res)
	want := []memRow{
		{"concurrent", []int64{100, 110, 120}, nil},
		{"ros", []int64{50, -1, 60}, nil},
		{policyBash, []int64{1 << 20, 1 << 20, -1}, nil},
	}
	if !slices.EqualFunc(got, want, func(a, b memRow) bool { return a.policy == b.policy && slices.Equal(a.mem, b.mem) }) {
		t.Errorf("memoryVsInput = %v, want %v", got, want)
	}
	c, ok := memoryVsInputChart(cfg, res)
	if !ok || len(c.series) != 3 || len(c.series[1].pts) != 2 || c.series[1].pts[1] != (point{x: 16, y: 60.0 / (1 << 20)}) {
		t.Errorf("chart: %+v", c.series)
	}
	// bash's 1 MiB point is a lower bound: drawn hollow, said in the legend.
	if bash := c.series[2]; bash.name != "bash (hollow: ≥)" || !bash.pts[0].low || bash.pts[1].low {
		t.Errorf("bash series: %+v", bash)
	}
	var svg bytes.Buffer
	if err := c.svg(&svg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), `fill="white" stroke=`); n != 1 {
		t.Errorf("%d hollow points, want 1", n)
	}
	var b bytes.Buffer
	writeMemoryVsInput(&b, cfg, res)
	for _, line := range []string{
		"| policy | memory is | 1.00 MiB | 4.00 MiB | 16.00 MiB | largest / smallest input |",
		"| concurrent | heap | 0.00 | 0.00 | 0.00 | 1.20× |",
		"| bash | rss | ≥1.00 | 1.00 | – | – |",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, b.String())
		}
	}
}

// The throughput plot draws cap auto as a diamond at x = its buffers: at
// the same x as the concurrent circle of that B.
func TestPlotCapAutoPoint(t *testing.T) {
	cfg := config{workloads: []workload{tinyWorkload}, stages: []int{10}, policies: []string{"concurrent", policyCapAuto}}
	res := []result{conc(1, 50), conc(4, 90), conc(13, 95), conc(22, 100), capAutoResult(13, 70)}
	var c chart
	for _, p := range plots(cfg, res) {
		if p.file == "throughput-vs-B_64B_balanced_10.svg" {
			c = p.chart
		}
	}
	i := slices.IndexFunc(c.series, func(s series) bool { return s.diamond })
	if i < 0 || c.series[i].name != "cap-auto (13 buffers)" || len(c.series[i].pts) != 1 || c.series[i].pts[0] != (point{x: 13, y: 70}) {
		t.Fatalf("cap auto series: %+v", c.series)
	}
	var b bytes.Buffer
	if err := c.svg(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	circles := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)"`).FindAllStringSubmatch(out, -1)
	poly := regexp.MustCompile(`<polygon points="([0-9.]+),([0-9.]+) `).FindAllStringSubmatch(out, -1)
	if len(circles) != 4 || len(poly) != 2 { // the point and its legend
		t.Fatalf("%d circles, %d diamonds:\n%s", len(circles), len(poly), out)
	}
	// circles[2] is concurrent at B=13; the diamond's top vertex is above its centre.
	if circles[2][1] != poly[0][1] {
		t.Errorf("diamond at x=%s, concurrent B=13 at x=%s", poly[0][1], circles[2][1])
	}
	cy, _ := strconv.ParseFloat(circles[2][2], 64)
	top, _ := strconv.ParseFloat(poly[0][2], 64)
	if top+7 <= cy { // 70 records/s is below 95: lower on the plot, a larger y
		t.Errorf("diamond centred at y=%v, not below concurrent B=13 at y=%v", top+7, cy)
	}
	if !strings.Contains(out, "cap-auto (13 buffers)") {
		t.Error("legend lacks cap auto")
	}
}

// TestFullSmoke runs a little of everything: chains under concurrent and
// cap auto, the memory-against-input cells and the graph shapes, and
// writes the report.
func TestFullSmoke(t *testing.T) {
	cfg := config{
		workloads:  []workload{{"4KiB", 4 << 10, 256 << 10, kindSlow}},
		stages:     []int{3},
		policies:   []string{"concurrent", policyCapAuto},
		bPoints:    func(b int) []int { return []int{1, b} },
		inputSizes: []int64{64 << 10, 128 << 10},
		dagRecords: 2048, // 32 buffers: split-cat's slow branch outgrows its queue
		runs:       5,
		timeout:    10 * time.Second,
		tmpDir:     t.TempDir(),
	}
	res, err := runMatrix(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.err != "" || r.runs != 5 {
			t.Errorf("%v: %d runs, %s", r.cell, r.runs, r.err)
		}
		// Every queue starts at 1; a run this short may end before the
		// sampler's first look, so no bottleneck is required.
		if r.policy == policyCapAuto && (r.capBuffers.min < 4 || r.runsAs != "concurrent") {
			t.Errorf("cap auto: %+v", r)
		}
		if r.shape == "split-cat" && r.policy == "concurrent" && r.growths == 0 && r.spilled == 0 {
			t.Errorf("split-cat under concurrent neither grew nor spilled: %+v", r)
		}
	}
	dir := t.TempDir()
	if _, err := writeReport(dir, cfg, res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- 4KiB/slow×3: knee B=", "; cap auto: ", "## Peak memory against input size", "| split-cat | concurrent |", "| diamond | channels |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"memory-vs-input.svg", "throughput-vs-B_4KiB_slow_3.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// The largest memory seen is kept, and marked a lower bound only when
// that run missed processes (a tie goes to the complete run).
func TestAggregateMemLow(t *testing.T) {
	c := cell{w: tinyWorkload, stages: 10, policy: policyBash}
	for _, tt := range []struct {
		ss   []sample
		mem  int64
		low  bool
		name string
	}{
		{[]sample{{mem: 5, memLow: true}, {mem: 9, memLow: false}}, 9, false, "largest complete"},
		{[]sample{{mem: 9, memLow: true}, {mem: 5, memLow: false}}, 9, true, "largest partial"},
		{[]sample{{mem: 9, memLow: true}, {mem: 9, memLow: false}}, 9, false, "tie"},
	} {
		for i := range tt.ss {
			tt.ss[i].wall = time.Millisecond
		}
		if r := aggregate(c, tt.ss); r.mem != tt.mem || r.memLow != tt.low {
			t.Errorf("%s: mem %d low %v, want %d %v", tt.name, r.mem, r.memLow, tt.mem, tt.low)
		}
	}
}

// A run that ends before cap auto's sampler looks names no bottleneck.
func TestKneeLineNoSample(t *testing.T) {
	ca := capAutoResult(11, 50)
	ca.capNeck, ca.capWindow = "", 0
	g := group{w: tinyWorkload, stages: 10, rs: []result{conc(1, 100), ca}}
	want := "64B/balanced×10: knee B=1 (100.0 records/s; best 100.0 at B=1); cap auto: 11 buffers (no bottleneck measured: the runs ended before the sampler's first look), 50.0 records/s, 50% of the knee's"
	if got := g.kneeLine(); got != want {
		t.Errorf("kneeLine\n got %s\nwant %s", got, want)
	}
}
