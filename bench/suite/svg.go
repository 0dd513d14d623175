package suite

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// chart is a line chart drawn as SVG by hand: a few series of points over
// linear or logarithmic axes.
type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	series                []series
}

type series struct {
	name   string
	pts    []point
	dashed bool // a reference drawn across the whole x range
	// diamond draws the points as outlined diamonds and no line: a point
	// that stands apart from the curves, as cap auto's does.
	diamond bool
}

// A point of a series; low marks a lower bound, drawn hollow.
type point struct {
	x, y float64
	low  bool
}

var palette = map[string]string{
	pConcurrent: "#1f77b4", pROS: "#ff7f0e", pFused: "#2ca02c", pSerial: "#d62728",
	pAuto: "#9467bd", policyChannels: "#8c564b", policyBash: "#7f7f7f", policyCapAuto: "#e377c2",
	// The spool's lines (spool.go).
	"disk, fsync on": "#d62728", "disk, fsync off": "#ff9896", "tmpfs, fsync on": "#1f77b4", "tmpfs, fsync off": "#aec7e8",
	"in memory": "#2ca02c", "goal 2x": "#7f7f7f",
}

func color(name string) string {
	if c, ok := palette[name]; ok {
		return c
	}
	if c, ok := palette[strings.Fields(name)[0]]; ok {
		return c
	}
	return "#000000"
}

// svg writes c. Points that a log axis cannot show (<= 0) are skipped.
func (c chart) svg(w io.Writer) error {
	const W, H, left, right, top, bottom = 760.0, 420.0, 80.0, 200.0, 40.0, 50.0
	tx := func(v float64, lg bool) float64 {
		if lg {
			return math.Log10(v)
		}
		return v
	}
	okY := func(p point) bool { return !c.logY || p.y > 0 }
	ok := func(p point) bool { return (!c.logX || p.x > 0) && okY(p) }
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, p := range s.pts {
			switch {
			case s.dashed && okY(p):
				y := tx(p.y, c.logY)
				y0, y1 = min(y0, y), max(y1, y)
			case ok(p):
				x, y := tx(p.x, c.logX), tx(p.y, c.logY)
				x0, x1 = min(x0, x), max(x1, x)
				y0, y1 = min(y0, y), max(y1, y)
			}
		}
	}
	if math.IsInf(x0, 0) || math.IsInf(y0, 0) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if !c.logY {
		y0 = min(y0, 0)
	}
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 == y0 {
		y0, y1 = y0-1, y1+1
	}
	pad := (y1 - y0) * 0.05
	y0, y1 = y0-pad, y1+pad
	if !c.logY {
		y0 = max(y0, 0)
	}
	px := func(x float64) float64 { return left + (x-x0)/(x1-x0)*(W-left-right) }
	py := func(y float64) float64 { return H - bottom - (y-y0)/(y1-y0)*(H-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15" text-anchor="middle">%s</text>`+"\n", (left+W-right)/2, html.EscapeString(c.title))
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, H-bottom, W-right, H-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, top, left, H-bottom)
	for i := 0; i <= 4; i++ {
		x := x0 + (x1-x0)*float64(i)/4
		y := y0 + (y1-y0)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", px(x), H-bottom+16, tick(x, c.logX))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, tick(y, c.logY))
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), W-right, py(y))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", (left+W-right)/2, H-12, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (top+H-bottom)/2, html.EscapeString(c.yLabel))
	for i, s := range c.series {
		col := color(s.name)
		var pts []point // in pixels
		for _, p := range s.pts {
			if ok(p) {
				pts = append(pts, point{px(tx(p.x, c.logX)), py(tx(p.y, c.logY)), p.low})
			}
		}
		switch {
		case s.dashed:
			if len(s.pts) == 0 || !okY(s.pts[0]) {
				continue
			}
			y := py(tx(s.pts[0].y, c.logY))
			fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-dasharray="6 4"/>`+"\n", left, y, W-right, y, col)
		case s.diamond:
			for _, p := range pts {
				diamond(&b, p.x, p.y, col)
			}
		default:
			if len(pts) > 1 {
				var xy []string
				for _, p := range pts {
					xy = append(xy, fmt.Sprintf("%.1f,%.1f", p.x, p.y))
				}
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(xy, " "))
			}
			for _, p := range pts {
				if p.low {
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s" stroke-width="1.5"/>`+"\n", p.x, p.y, col)
				} else {
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", p.x, p.y, col)
				}
			}
		}
		ly := top + 10 + float64(i)*18
		if s.diamond {
			diamond(&b, W-right+22, ly, col)
		} else {
			fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>`+"\n", W-right+12, ly, W-right+32, ly, col)
		}
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", W-right+38, ly+4, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// diamond draws a marker centred on (x, y), outlined in black.
func diamond(b *strings.Builder, x, y float64, col string) {
	const r = 7.0
	fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s" stroke="black" stroke-width="1.5"/>`+"\n",
		x, y-r, x+r, y, x, y+r, x-r, y, col)
}

func tick(v float64, lg bool) string {
	if lg {
		v = math.Pow(10, v)
	}
	return human(v)
}

type plotFile struct {
	file  string
	chart chart
}

// plots draws, from the results: throughput against B per workload at the
// most stages, with cap auto as a point at the buffers it asked for; peak
// memory against record size; ns/record/stage against stages per record
// size, both for balanced chains; peak memory against input size.
func plots(cfg config, res []result) []plotFile {
	ok := func(r result) bool { return r.err == "" && r.runs > 0 }
	maxStages := cfg.maxStages()
	var out []plotFile
	for _, g := range groups(cfg, res) {
		if g.stages != maxStages {
			continue
		}
		c := chart{title: fmt.Sprintf("%s, %d stages: throughput against B", g.w.name(), g.stages),
			xLabel: "B (buffers; cap auto: the sum of its final capacities)", yLabel: "records/s (median)", logX: true}
		for _, p := range cfg.policies {
			if p == policyCapAuto {
				if r, ok := g.capAuto(); ok {
					c.series = append(c.series, series{name: fmt.Sprintf("%s (%.0f buffers)", p, r.capBuffers.med),
						pts: []point{{x: r.capBuffers.med, y: r.recPerS.med}}, diamond: true})
				}
				continue
			}
			s := series{name: p}
			for _, r := range g.rs {
				if r.policy != p || !ok(r) {
					continue
				}
				if r.buffers == 0 { // channels, bash: no B
					s.dashed = true
				}
				s.pts = append(s.pts, point{x: float64(r.buffers), y: r.recPerS.med})
			}
			if len(s.pts) > 0 {
				if s.dashed {
					s.name += " (no B)"
				}
				c.series = append(c.series, s)
			}
		}
		out = append(out, plotFile{fmt.Sprintf("throughput-vs-B_%s_%s_%d.svg", g.w.size, g.w.kind, g.stages), c})
	}
	// Memory against record size, balanced, most stages, default B.
	mem := chart{title: fmt.Sprintf("balanced, %d stages: peak memory against record size", maxStages),
		xLabel: "record size (bytes; input bytes grow with it)", yLabel: "peak MiB (heap; bash: RSS)", logX: true, logY: true}
	for _, p := range cfg.policies {
		s := series{name: p}
		for _, r := range res {
			if r.policy == p && ok(r) && cfg.inMatrix(r.cell) && r.w.kind == kindBalanced && r.stages == maxStages && isDefaultB(r) {
				s.pts = append(s.pts, point{float64(r.w.rec), float64(r.mem) / (1 << 20), r.memLow})
			}
		}
		if len(s.pts) > 0 {
			mem.series = append(mem.series, s)
		}
	}
	out = append(out, plotFile{"memory-vs-size.svg", mem})
	// ns/record/stage against stages, per record size.
	for _, size := range uniqueSizes(cfg) {
		c := chart{title: fmt.Sprintf("%s/balanced: ns per record per stage against stages", size),
			xLabel: "stages", yLabel: "ns/record/stage (median)"}
		for _, p := range cfg.policies {
			s := series{name: p}
			for _, r := range res {
				if r.policy == p && ok(r) && cfg.inMatrix(r.cell) && r.w.kind == kindBalanced && r.w.size == size && isDefaultB(r) {
					s.pts = append(s.pts, point{x: float64(r.stages), y: r.nsPerRS.med})
				}
			}
			if len(s.pts) > 0 {
				c.series = append(c.series, s)
			}
		}
		out = append(out, plotFile{fmt.Sprintf("ns-per-stage_%s.svg", size), c})
	}
	if c, ok := memoryVsInputChart(cfg, res); ok {
		out = append(out, plotFile{"memory-vs-input.svg", c})
	}
	return out
}

// memoryVsInputChart plots memoryVsInput: peak memory against input
// bytes, both axes logarithmic.
func memoryVsInputChart(cfg config, res []result) (chart, bool) {
	rows := memoryVsInput(cfg, res)
	c := chart{title: fmt.Sprintf("64 B lines, balanced, %d stages: peak memory against input size", cfg.maxStages()),
		xLabel: "input MiB", yLabel: "peak MiB (heap; bash: RSS)", logX: true, logY: true}
	for _, row := range rows {
		s := series{name: row.policy}
		for i, m := range row.mem {
			if m >= 0 {
				s.pts = append(s.pts, point{float64(cfg.inputSizes[i]) / (1 << 20), float64(m) / (1 << 20), row.low[i]})
			}
			if row.low[i] {
				s.name = row.policy + " (hollow: ≥)"
			}
		}
		c.series = append(c.series, s)
	}
	return c, len(rows) > 0
}

// isDefaultB: the cell ran at the policy's default B (the bound), so one
// point per policy.
func isDefaultB(r result) bool { return r.cell.buffers == 0 || r.cell.buffers == r.bound() }

func (r result) bound() int {
	g, _ := chainGraph(chainSpec{policy: r.policy, rounds: make([]int, r.stages)})
	return g.Bound()
}

func uniqueSizes(cfg config) []string {
	var s []string
	for _, w := range cfg.workloads {
		if !slices.Contains(s, w.size) {
			s = append(s, w.size)
		}
	}
	return s
}
