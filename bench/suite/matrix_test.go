package suite

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/sched"
)

func TestSummarize(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want stat
	}{
		{nil, stat{}},
		{[]float64{7}, stat{7, 7, 7}},
		{[]float64{5, 1, 3, 2, 4}, stat{3, 1, 5}},
		{[]float64{4, 1, 3, 2}, stat{2.5, 1, 4}},
		{[]float64{2, 2, 9, 2, 2}, stat{2, 2, 9}},
	} {
		if got := summarize(tt.in); got != tt.want {
			t.Errorf("summarize(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestAggregate(t *testing.T) {
	c := cell{w: workload{"64B", 64, 640, kindBalanced}, stages: 2, policy: "ros"}
	ss := []sample{
		{wall: 10 * time.Microsecond, mem: 100, bufHW: 1, switches: 7, buffers: 1, runsAs: "ros"},
		{wall: 20 * time.Microsecond, mem: 300, bufHW: 2, switches: 9, buffers: 1, runsAs: "ros"},
		{wall: 40 * time.Microsecond, mem: 200, bufHW: 1, switches: 8, buffers: 1, runsAs: "ros"},
	}
	r := aggregate(c, ss)
	// 10 records: 1e6, 5e5 and 2.5e5 records/s; 20 ns/record/stage at the median.
	if r.recPerS != (stat{5e5, 2.5e5, 1e6}) {
		t.Errorf("recPerS = %+v", r.recPerS)
	}
	if r.nsPerRS.med != 1000 {
		t.Errorf("nsPerRS.med = %v, want 1000", r.nsPerRS.med)
	}
	if r.mem != 300 || r.bufHW != 2 || r.switches != 8 || r.runs != 3 {
		t.Errorf("mem %d bufHW %d switches %d runs %d; want 300 2 8 3", r.mem, r.bufHW, r.switches, r.runs)
	}
	if r := aggregate(c, nil); r.runs != 0 || r.switches != -1 {
		t.Errorf("no samples: %+v", r)
	}
}

var tinyWorkload = workload{"64B", 64, 640, kindBalanced}

func tinyResults() []result {
	w := tinyWorkload
	return []result{
		{cell: cell{w: w, stages: 3, policy: "concurrent", buffers: 8}, records: 10, runs: 5, recPerS: stat{2e6, 1e6, 3e6},
			nsPerRS: stat{med: 166.7}, mem: 1 << 20, bufHW: 3, switches: -1, runsAs: "concurrent", buffers: 8},
		{cell: cell{w: w, stages: 3, policy: "ros"}, records: 10, runs: 5, recPerS: stat{1e6, 9e5, 1.1e6},
			nsPerRS: stat{med: 333.3}, mem: 1 << 19, bufHW: 1, switches: 42, runsAs: "ros", buffers: 1},
		{cell: cell{w: w, stages: 3, policy: policyBash}, records: 10, err: "bash: exit status 1", switches: -1},
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := writeCSV(&b, tinyResults()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[0]) != len(csvHeader) {
		t.Fatalf("got %d rows of %d columns:\n%s", len(rows), len(rows[0]), b.String())
	}
	want := []string{"64B", "64", "balanced", "3", "ros", "ros", "1", "10", "5", "1000000.0", "900000.0",
		"1100000.0", "333.3", "524288", "heap", "1", "42", "0", "640", "", "", "", "", "0", "0", ""}
	if got := strings.Join(rows[2], ","); got != strings.Join(want, ",") {
		t.Errorf("ros row\n got %s\nwant %s", got, strings.Join(want, ","))
	}
	if rows[3][len(rows[3])-1] != "bash: exit status 1" || rows[1][16] != "" {
		t.Errorf("error or n/a switches not kept: %v %v", rows[3], rows[1])
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	cfg := config{workloads: []workload{tinyWorkload}, stages: []int{3}, policies: []string{"concurrent", "ros", policyBash}, runs: 5}
	if err := writeMarkdown(&b, cfg, tinyResults()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"- **concurrent**: fastest in 1/1 (64B/balanced×3); least memory in 0 (none)",
		"- **ros**: fastest in 0/1 (none); least memory in 1 (64B/balanced×3)",
		"## 64B/balanced, 3 stages (10 records of 64 B)",
		"| concurrent B=8 | concurrent | 8 | 2.00M [1.00M–3.00M] | 166.7 | 1.00 heap | 3 | n/a | – | – |",
		"| ros | ros | 1 | 1.00M [900.0k–1.10M] | 333.3 | 0.50 heap | 1 | 42 | – | – |",
		"| bash | | | failed: bash: exit status 1 |",
		"- 64B/balanced×3: knee B=8 (2.00M records/s; best 2.00M at B=8)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestChartSVG(t *testing.T) {
	c := chart{title: "t <&>", xLabel: "B", yLabel: "records/s", logX: true, series: []series{
		{name: "concurrent", pts: []point{{x: 1, y: 10}, {x: 8, y: 30}, {x: 16, y: 20}}},
		{name: "channels (no B)", pts: []point{{x: 0, y: 25}}, dashed: true},
		{name: "ros", pts: []point{{x: 0, y: 5}}}, // not on a log axis: skipped
	}}
	var b bytes.Buffer
	if err := c.svg(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	d := xml.NewDecoder(&b)
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not XML: %v", err)
		}
	}
	for _, want := range []string{"<polyline", "stroke-dasharray", "t &lt;&amp;&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

// TestMatrixSmoke runs the smallest matrix, one tiny cell five times, and
// writes its report.
func TestMatrixSmoke(t *testing.T) {
	cfg := config{
		workloads: []workload{{"64B", 64, 64 << 10, kindSlow}},
		stages:    []int{3},
		policies:  []string{"ros"},
		runs:      5,
		timeout:   5 * time.Second,
	}
	res, err := runMatrix(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].err != "" || res[0].runs != 5 || res[0].recPerS.min <= 0 || res[0].switches <= 0 {
		t.Fatalf("results: %+v", res)
	}
	dir := t.TempDir()
	files, err := writeReport(dir, cfg, res)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "results.csv", "memory-vs-size.svg", "ns-per-stage_64B.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%v (wrote %v)", err, files)
		}
	}
}

func TestMainUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		err  string // in stderr
		out  string // in stdout
	}{
		{args: []string{"-runs", "3"}, code: 2, err: "-runs 3: at least 5 runs per cell"},
		{args: []string{"-nope"}, code: 2, err: "flag provided but not defined: -nope"},
		{args: []string{"extra"}, code: 2, err: `unexpected argument "extra"`},
		{args: []string{"-h"}, code: 0, out: "usage: bench [-quick] [-out DIR] [-runs N]"},
		{args: []string{"-video", "-runs", "2"}, code: 2, err: "-runs 2: at least 3 runs per cell"},
		{args: []string{"-video", "extra"}, code: 2, err: `unexpected argument "extra"`},
		{args: []string{"-h"}, code: 0, out: "bench -video [-quick]"},
		{args: []string{"-nats", "-runs", "2"}, code: 2, err: "-runs 2: at least 3 runs per cell"},
		{args: []string{"-nats", "extra"}, code: 2, err: `unexpected argument "extra"`},
		{args: []string{"-h"}, code: 0, out: "bench -nats [-quick] [-out DIR] [-runs N] [-tpipe PATH]"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tt.args, &out, &errb)
		if code != tt.code || !strings.Contains(errb.String(), tt.err) || !strings.Contains(out.String(), tt.out) {
			t.Errorf("Main(%q) = %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out.String(), errb.String(), tt.code, tt.out, tt.err)
		}
	}
}

// Issue 12: the matrix iterates the policy table, so every policy of it
// is a column, in the order the report has always had.
func TestMatrixHasEveryPolicy(t *testing.T) {
	want := []string{"concurrent", "cap-auto", "ros", "fused", "serial", "spool", "auto", "channels", "bash"}
	if !slices.Equal(allPolicies, want) {
		t.Errorf("policies %q, want %q", allPolicies, want)
	}
	for _, p := range sched.Policies() {
		if !slices.Contains(allPolicies, p.String()) {
			t.Errorf("policy %s of the table is not in the matrix", p)
		}
	}
}
