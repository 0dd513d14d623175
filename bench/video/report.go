package video

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/tpipe/tpipe/video/shake"
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

func (s stat) String() string { return fmt.Sprintf("%.1f [%.1f–%.1f]", s.med, s.min, s.max) }

// fps, cores and rss summarize a result's runs: frames per second of the
// clip, CPU time over wall time, peak RSS in MiB.
func (r result) fps() stat {
	return r.each(func(s sample) float64 { return float64(r.clip.spec.Frames) / s.wall.Seconds() })
}

func (r result) cores() stat {
	return r.each(func(s sample) float64 { return s.cpu.Seconds() / s.wall.Seconds() })
}

func (r result) rss() stat {
	return r.each(func(s sample) float64 { return float64(s.rss) / (1 << 20) })
}

func (r result) each(f func(sample) float64) stat {
	xs := make([]float64, len(r.samples))
	for i, s := range r.samples {
		xs[i] = f(s)
	}
	return summarize(xs)
}

// report is what Run found, ready to print.
type report struct {
	cfg     Config
	clips   []*clip
	results []result
	missing []string
	date    time.Time
	tpipe   string // which tpipe ran, for people
	rss     rssMeter
}

// find returns the result of tool on the random-shake clip of size name
// (the long one if long), or nil.
func (rep *report) find(tool string, size Size, long bool) *result {
	for _, c := range rep.clips {
		if c.size == size && c.long == long && c.spec.Shake == Random {
			return rep.of(tool, c)
		}
	}
	return nil
}

// of returns the result of tool on clip c, or nil.
func (rep *report) of(tool string, c *clip) *result {
	for i := range rep.results {
		r := &rep.results[i]
		if r.tool == tool && r.clip == c && r.err == "" && len(r.samples) > 0 {
			return r
		}
	}
	return nil
}

func toolLabel(t string) string {
	switch t {
	case ToolTpipe:
		return "tpipe `decode | stabilize | encode`"
	case ToolDeshake:
		return "ffmpeg `-vf deshake`"
	case ToolVidstab:
		return "ffmpeg vidstabdetect + vidstabtransform"
	}
	return t
}

func (rep *report) write(w io.Writer) {
	cfg := rep.cfg
	fmt.Fprintf(w, "# Video stabilization\n\n")
	fmt.Fprintf(w, "%s, %s, %d cores; %d frames a clip (25 frames/s), %d runs per cell in rounds of random order: median [min–max].\n\n",
		rep.date.UTC().Format(time.UnixDate), runtime.Version(), runtime.NumCPU(), cfg.Frames, cfg.Runs)
	fmt.Fprintf(w, "Each run is a process measured from outside: wall time, CPU time (user + system) over wall time as the cores kept busy, "+
		"peak RSS (%s; for vidstab the larger of its two passes, whose times add up). "+
		"%s runs `decode < in.y4m | stabilize | encode > out.y4m` at its defaults, with GOMAXPROCS = cores; "+
		"ffmpeg at its defaults (threads: auto), `-vf deshake`, and vid.stab's `vidstabdetect=result=t.trf` to `-f null` then `vidstabtransform=input=t.trf`, "+
		"each writing y4m (checked: same size, 4:2:0, as many frames). "+
		"Jitter is the frame-to-frame motion beyond a smooth path (a Gaussian of %d frames), measured on the output by phase correlation (package video/shake), "+
		"independent of every stabilizer's own estimate; \"kept\" is the output's over the input's. "+
		"Every clip pans along the same slow sway; its shake is random (AR(1)), a slow sinusoid (periods of 37 to 59 frames) or a drift (a random velocity that forgets slowly). "+
		"deshake runs at its defaults: its motion log (its filename option) shows no motion found on the 360p clip whatever its contrast threshold (1 to 125), "+
		"search range (16 to 48 pixels) or block size (8, 16), so no option was found that makes it do more.\n\n",
		rep.rss, rep.tpipe, shake.Smoothing)
	fmt.Fprintf(w, "| clip | stabilizer | frames/s | cores busy | peak RSS MiB | jitter mean px | jitter p95 px | shake kept |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range rep.clips {
		if c.long {
			continue
		}
		fmt.Fprintf(w, "| %s | input (the path: %.2f, %.2f) | | | | %.2f | %.2f | 100%% |\n",
			c.name(), c.truth.Mean, c.truth.P95, c.in.Mean, c.in.P95)
		for i := range rep.results {
			r := &rep.results[i]
			if r.clip != c {
				continue
			}
			if r.err != "" {
				fmt.Fprintf(w, "| %s | %s | failed: %s | | | | | |\n", c.name(), toolLabel(r.tool), firstLine(r.err))
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %s | %.2f | %.2f | %.0f%% |\n",
				c.name(), toolLabel(r.tool), r.fps(), r.cores().med, r.rss(), r.shake.Mean, r.shake.P95, 100*r.shake.Mean/c.in.Mean)
		}
	}
	for _, m := range rep.missing {
		fmt.Fprintf(w, "\nNot run: %s.\n", m)
	}
	rep.writeMemory(w)
	rep.writeGoals(w)
}

// writeMemory is the table of tpipe's peak RSS against clip length.
func (rep *report) writeMemory(w io.Writer) {
	cfg := rep.cfg
	short, long := rep.find(ToolTpipe, cfg.Long, false), rep.find(ToolTpipe, cfg.Long, true)
	if short == nil || long == nil {
		return
	}
	fmt.Fprintf(w, "\nPeak RSS against clip length (tpipe, %s):\n\n", cfg.Long.Name)
	fmt.Fprintf(w, "| frames | input MiB | frames/s | peak RSS MiB |\n|---:|---:|---:|---:|\n")
	for _, r := range []*result{short, long} {
		in := float64(r.clip.spec.Frames*(len("FRAME\n")+r.clip.spec.Layout().FrameSize())) / (1 << 20)
		fmt.Fprintf(w, "| %d | %.0f | %s | %s |\n", r.clip.spec.Frames, in, r.fps(), r.rss())
	}
}

// The goals of issue 16, at 720p.
const (
	goalVsDeshake = 2.0       // tpipe's frames/s over deshake's
	goalVsVidstab = 1.0       // over vid.stab's two passes together
	goalRSS       = 256 << 20 // bytes
	flatWithin    = 1.10      // long clip's peak RSS over the short one's
)

// Goals returns one line per goal of issue 16, each saying whether it is
// met by the measured medians.
func (rep *report) goals() []string {
	var lines []string
	met := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	at := P720
	tp := rep.find(ToolTpipe, at, false)
	if tp == nil {
		return []string{"no tpipe result at 720p: no goal can be judged"}
	}
	if d := rep.find(ToolDeshake, at, false); d != nil {
		x := tp.fps().med / d.fps().med
		lines = append(lines, fmt.Sprintf("720p frames/s at least %gx deshake's: tpipe %.1f, deshake %.1f, %.2fx: %s",
			goalVsDeshake, tp.fps().med, d.fps().med, x, met(x >= goalVsDeshake)))
	}
	if v := rep.find(ToolVidstab, at, false); v != nil {
		x := tp.fps().med / v.fps().med
		lines = append(lines, fmt.Sprintf("720p frames/s at least vid.stab's two passes together: tpipe %.1f, vidstab %.1f, %.2fx: %s",
			tp.fps().med, v.fps().med, x, met(x >= goalVsVidstab)))
	}
	for _, c := range rep.clips {
		if c.long {
			continue
		}
		t, v := rep.of(ToolTpipe, c), rep.of(ToolVidstab, c)
		if t == nil || v == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s residual jitter no worse than vid.stab's: tpipe %.2f px (p95 %.2f), vidstab %.2f px (p95 %.2f): %s",
			c.name(), t.shake.Mean, t.shake.P95, v.shake.Mean, v.shake.P95, met(t.shake.Mean <= v.shake.Mean)))
	}
	if l := rep.find(ToolTpipe, rep.cfg.Long, true); l != nil {
		s := rep.find(ToolTpipe, rep.cfg.Long, false)
		x := l.rss().med / s.rss().med
		lines = append(lines, fmt.Sprintf("peak RSS flat with clip length (%s, %d against %d frames, within %.0f%%): %.1f against %.1f MiB, %.2fx: %s",
			rep.cfg.Long.Name, l.clip.spec.Frames, s.clip.spec.Frames, 100*(flatWithin-1), l.rss().med, s.rss().med, x, met(x <= flatWithin)))
	}
	peak := tp.rss().max
	lines = append(lines, fmt.Sprintf("peak RSS under %d MiB at 720p: at most %.1f MiB over the runs: %s", goalRSS>>20, peak, met(peak < goalRSS>>20)))
	return lines
}

func (rep *report) writeGoals(w io.Writer) {
	fmt.Fprintf(w, "\nGoals (issue 16):\n\n")
	for _, l := range rep.goals() {
		fmt.Fprintf(w, "- %s\n", l)
	}
}

// firstLine keeps the first line of an error, up to a "|" that would end
// the table cell (unlike say.OneLine, which keeps every line).
func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' || c == '|' {
			return s[:i]
		}
	}
	return s
}
