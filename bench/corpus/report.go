package corpus

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// stat is a median with the range it came from.
type stat struct{ med, min, max float64 }

func summarize(xs []float64) stat {
	if len(xs) == 0 {
		return stat{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{m, s[0], s[len(s)-1]}
}

func (c *cell) each(f func(sample) float64) stat {
	xs := make([]float64, len(c.samples))
	for i, s := range c.samples {
		xs[i] = f(s)
	}
	return summarize(xs)
}

func (c *cell) wall() stat { return c.each(func(s sample) float64 { return s.wall.Seconds() }) }
func (c *cell) cpu() stat  { return c.each(func(s sample) float64 { return s.cpu.Seconds() }) }
func (c *cell) cores() stat {
	return c.each(func(s sample) float64 { return s.cpu.Seconds() / s.wall.Seconds() })
}
func (c *cell) rss() stat { return c.each(func(s sample) float64 { return float64(s.rssKiB) / 1024 }) }

// row is one pipeline: its cells by tool.
type row struct {
	p     Pipeline
	cells map[string]*cell
}

// ratio is the median time of tool over bash's.
func (r row) ratio(tool string) float64 {
	return r.cells[tool].wall().med / r.cells[ToolBash].wall().med
}

// cpuRatio is the median CPU time (user + system, the whole process
// tree) of tool over bash's: what the run cost whatever share of the cores
// the machine's other load left it, which moves wall times a great deal on
// a shared machine.
func (r row) cpuRatio(tool string) float64 {
	return r.cells[tool].cpu().med / r.cells[ToolBash].cpu().med
}

// same reports whether every run of tool wrote what bash's first run did.
func (r row) same(tool string) bool {
	want := r.cells[ToolBash].samples[0].sum
	for _, c := range []*cell{r.cells[ToolBash], r.cells[tool]} {
		for _, s := range c.samples {
			if s.sum != want {
				return false
			}
		}
	}
	return true
}

type report struct {
	header string
	tools  []string // bash first
	rows   []row
}

func newReport(cells []*cell, tools []string) *report {
	rep := &report{tools: tools}
	for _, c := range cells {
		i := slices.IndexFunc(rep.rows, func(r row) bool { return r.p.Name == c.p.Name })
		if i < 0 {
			rep.rows = append(rep.rows, row{p: c.p, cells: map[string]*cell{}})
			i = len(rep.rows) - 1
		}
		rep.rows[i].cells[c.tool] = c
	}
	return rep
}

// geomean is the geometric mean of tool's ratios over the rows that keep.
func (rep *report) geomean(tool string, keep func(Pipeline) bool) (float64, int) {
	return rep.geomeanOf(row.ratio, tool, keep)
}

// geomeanOf is the geometric mean of ratio over the rows that keep.
func (rep *report) geomeanOf(ratio func(row, string) float64, tool string, keep func(Pipeline) bool) (float64, int) {
	sum, n := 0.0, 0
	for _, r := range rep.rows {
		if keep(r.p) {
			sum += math.Log(ratio(r, tool))
			n++
		}
	}
	return math.Exp(sum / float64(max(n, 1))), n
}

func everyday(p Pipeline) bool { return p.Everyday }
func all(Pipeline) bool        { return true }

func secs(s stat) string { return fmt.Sprintf("%.3f [%.3f–%.3f]", s.med, s.min, s.max) }

// write writes the markdown report.
func (rep *report) write(w io.Writer) {
	fmt.Fprintf(w, "# Pipelines: tpipe against bash + GNU\n\n%s.\n\n", rep.header)
	fmt.Fprintf(w, "Seconds: median [min–max] of whole processes; ratio: median over bash's median (below 1: tpipe is faster); CPU: the same ratio of CPU time (user + system of the process tree); cores: CPU time over wall time; RSS: the largest process's peak, MiB.\n\n")
	others := rep.tools[1:]
	fmt.Fprintf(w, "| pipeline | bash s |")
	for _, t := range others {
		fmt.Fprintf(w, " %s s | %s / bash | CPU |", t, t)
	}
	fmt.Fprintf(w, " cores bash / tpipe | RSS bash / tpipe | same output |\n|---|---:|")
	for range others {
		fmt.Fprintf(w, "---:|---:|---:|")
	}
	fmt.Fprintf(w, "---:|---:|---|\n")
	for _, r := range rep.rows {
		b, t := r.cells[ToolBash], r.cells[ToolTpipe]
		name := r.p.Name
		if r.p.Everyday {
			name += " *"
		}
		fmt.Fprintf(w, "| %s | %s |", name, secs(b.wall()))
		for _, tool := range others {
			fmt.Fprintf(w, " %s | %.2f | %.2f |", secs(r.cells[tool].wall()), r.ratio(tool), r.cpuRatio(tool))
		}
		same := "yes"
		for _, tool := range others {
			if !r.same(tool) {
				same = "NO (" + tool + ")"
			}
		}
		fmt.Fprintf(w, " %.2f / %.2f | %.0f / %.0f | %s |\n", b.cores().med, t.cores().med, b.rss().med, t.rss().med, same)
	}
	fmt.Fprintf(w, "\n* an everyday pipeline (issue 19's goal is over these).\n\n")
	for _, r := range rep.rows {
		fmt.Fprintf(w, "- `%s`: `%s`, %s\n", r.p.Name, r.p.Line, r.p.What)
	}
	fmt.Fprintln(w)
	for _, tool := range others {
		g, n := rep.geomean(tool, everyday)
		ga, na := rep.geomean(tool, all)
		gc, _ := rep.geomeanOf(row.cpuRatio, tool, everyday)
		fmt.Fprintf(w, "Geometric mean of %s / bash: %.2f over the %d everyday pipelines (CPU time: %.2f), %.2f over all %d.\n\n", tool, g, n, gc, ga, na)
	}
	for _, line := range rep.goals() {
		fmt.Fprintf(w, "- %s\n", line)
	}
}

// goals judges issue 19's goals for tpipe: no pipeline slower than bash,
// the geometric mean over the everyday ones at most 0.6, same output.
func (rep *report) goals() []string {
	var slower, costlier, differ []string
	for _, r := range rep.rows {
		if x := r.ratio(ToolTpipe); x > 1 {
			slower = append(slower, fmt.Sprintf("%s (%.2f)", r.p.Name, x))
		}
		if x := r.cpuRatio(ToolTpipe); x > 1 {
			costlier = append(costlier, fmt.Sprintf("%s (%.2f)", r.p.Name, x))
		}
		if !r.same(ToolTpipe) {
			differ = append(differ, r.p.Name)
		}
	}
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	g, _ := rep.geomean(ToolTpipe, everyday)
	out := []string{
		fmt.Sprintf("no pipeline slower than bash: %s%s", verdict(len(slower) == 0), listed(slower)),
		fmt.Sprintf("no pipeline costs more CPU time than bash's: %s%s", verdict(len(costlier) == 0), listed(costlier)),
		fmt.Sprintf("geometric mean over the everyday pipelines at most 0.6: %.2f, %s", g, verdict(g <= 0.6)),
		fmt.Sprintf("same output as bash on every run: %s%s", verdict(len(differ) == 0), listed(differ)),
	}
	return out
}

func listed(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return " (" + strings.Join(xs, ", ") + ")"
}

// writeCSV writes every sample, one row each.
func (rep *report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"pipeline", "everyday", "tool", "run", "wall_seconds", "cpu_seconds", "max_rss_kib", "same_as_bash"})
	for _, r := range rep.rows {
		want := r.cells[ToolBash].samples[0].sum
		for _, tool := range rep.tools {
			for i, s := range r.cells[tool].samples {
				cw.Write([]string{r.p.Name, strconv.FormatBool(r.p.Everyday), tool, strconv.Itoa(i),
					strconv.FormatFloat(s.wall.Seconds(), 'f', 4, 64), strconv.FormatFloat(s.cpu.Seconds(), 'f', 4, 64),
					strconv.FormatInt(s.rssKiB, 10), strconv.FormatBool(s.sum == want)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// svg draws the ratios as horizontal bars, one group per pipeline, with
// lines at 1 (bash) and 0.6 (the goal).
func (rep *report) svg(w io.Writer) error {
	const width, left, right, top, barH, gap = 760.0, 170.0, 60.0, 50.0, 12.0, 8.0
	others := rep.tools[1:]
	xmax := 1.2
	for _, r := range rep.rows {
		for _, t := range others {
			xmax = max(xmax, r.ratio(t))
		}
	}
	xmax = math.Ceil(xmax*5) / 5
	groupH := barH*float64(len(others)) + gap
	height := top + groupH*float64(len(rep.rows)) + 50
	x := func(v float64) float64 { return left + (width-left-right)*v/xmax }
	colors := map[string]string{ToolTpipe: "#1f77b4", ToolBase: "#aec7e8"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="14">time against bash + GNU (median; below 1 is faster)</text>`+"\n", left)
	for v := 0.0; v <= xmax+1e-9; v += 0.2 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle">%.1f</text>`+"\n",
			x(v), top-5, x(v), height-40, x(v), height-25, v)
	}
	for i, r := range rep.rows {
		y0 := top + groupH*float64(i)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y0+barH*float64(len(others))/2+4, html.EscapeString(r.p.Name))
		for j, t := range others {
			v := r.ratio(t)
			y := y0 + barH*float64(j)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/><text x="%.1f" y="%.1f">%.2f</text>`+"\n",
				left, y, x(v)-left, barH-2, colors[t], x(v)+3, y+barH-3, v)
		}
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#d62728"/>`+"\n", x(1), top-5, x(1), height-40)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#2ca02c" stroke-dasharray="4 3"/>`+"\n", x(0.6), top-5, x(0.6), height-40)
	ly := height - 8
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">red: bash (1.0); green dashed: the goal (0.6)</text>`+"\n", left, ly)
	for j, t := range others {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			left+330+float64(j)*110, ly-9, colors[t], left+344+float64(j)*110, ly, t)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFiles writes corpus.md, corpus.csv and corpus.svg into dir and
// returns their paths.
func (rep *report) writeFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"corpus.md", func(w io.Writer) error { rep.write(w); return nil }},
		{"corpus.csv", rep.writeCSV},
		{"corpus.svg", rep.svg},
	} {
		name := filepath.Join(dir, f.name)
		out, err := os.Create(name)
		if err != nil {
			return files, err
		}
		err = f.write(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("corpus: write %s: %w", name, err)
		}
		files = append(files, name)
	}
	return files, nil
}
