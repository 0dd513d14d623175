package progress

import (
	"fmt"
	"strings"
	"time"
)

// What the view writes, as pure functions of a frame: the terminal view
// and the plain lines say the same things in the same words.

// rowStats is a row's numbers, after its name and the gauge of its queue:
// "1.23M rec/s  45.6 MiB/s  busy  87%  <- bottleneck".
func rowStats(r Row) string {
	if r.Done {
		return "done"
	}
	var s string
	if r.Unit != "" {
		s = fmt.Sprintf("%6s %s/s  %d waiting  busy %3.0f%%", count(r.Records), r.Unit, r.Fill, 100*r.Busy)
	} else {
		s = fmt.Sprintf("%6s rec/s %11s  busy %3.0f%%", count(r.Records), size(r.Bytes)+"/s", 100*r.Busy)
	}
	if r.Bottleneck {
		s += "  <- bottleneck"
	}
	return s
}

// totalText is the line of overall progress.
func totalText(t Total, elapsed time.Duration) string {
	var parts []string
	frac, known := t.Fraction()
	switch t.Unit {
	case "frames":
		s := fmt.Sprintf("frame %d", t.Done)
		if known {
			s = fmt.Sprintf("frame %d of %d (%.0f%%)", t.Done, t.Of, 100*frac)
		}
		parts = append(parts, s, fmt.Sprintf("%.1f frames/s", t.Rate))
	case "bytes":
		s := size(float64(t.Done)) + " read"
		if known {
			s = fmt.Sprintf("%.0f%%  %s of %s", 100*frac, size(float64(t.Done)), size(float64(t.Of)))
		}
		parts = append(parts, s, size(t.Rate)+"/s")
	}
	if eta, ok := t.ETA(); ok {
		parts = append(parts, "ETA "+duration(eta))
	}
	parts = append(parts, "elapsed "+duration(elapsed))
	return strings.Join(parts, "  ")
}

// plainLine is the view without a terminal: one line per sample, every
// row and the total, for a log.
func plainLine(f Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tpipe: %s:", duration(f.Elapsed))
	neck := ""
	for i, r := range f.Rows {
		if i > 0 {
			b.WriteByte(';')
		}
		if r.Done {
			fmt.Fprintf(&b, " %s done", r.Name)
			continue
		}
		if r.Unit != "" {
			fmt.Fprintf(&b, " %s %s %s/s %d waiting busy %.0f%%", r.Name, count(r.Records), r.Unit, r.Fill, 100*r.Busy)
		} else {
			fmt.Fprintf(&b, " %s %s rec/s %s/s busy %.0f%%", r.Name, count(r.Records), size(r.Bytes), 100*r.Busy)
		}
		if r.Cap > 0 && r.Unit == "" {
			fmt.Fprintf(&b, " queue %d/%d", r.Fill, r.Cap)
		}
		if r.Bottleneck {
			neck = r.Name
		}
	}
	if neck != "" {
		fmt.Fprintf(&b, "; bottleneck %s", neck)
	}
	if f.Total.Unit != "" {
		fmt.Fprintf(&b, "; %s", strings.TrimSuffix(totalText(f.Total, f.Elapsed), "  elapsed "+duration(f.Elapsed)))
	}
	return b.String()
}

// count writes a number of records per second in at most 6 characters:
// 999, 12.3k, 1.23M.
func count(x float64) string {
	switch {
	case x < 999.5:
		return fmt.Sprintf("%.0f", x)
	case x < 99.95e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	case x < 999.5e3:
		return fmt.Sprintf("%.0fk", x/1e3)
	case x < 999.5e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	}
	return fmt.Sprintf("%.2fG", x/1e9)
}

// size writes bytes in the largest binary unit they reach: 512 B,
// 45.6 MiB.
func size(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for x >= 1023.95 && u < len(units)-1 {
		x /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f B", x)
	}
	return fmt.Sprintf("%.1f %s", x, units[u])
}

// duration writes d to the second: 7s, 3m05s, 1h02m.
func duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}
