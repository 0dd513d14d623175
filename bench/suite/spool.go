package suite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tpipe/tpipe/bench/internal/side"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/spool"
)

// The spool benchmark (-spool): what persistence costs. The same
// pipelines run in memory under the concurrent policy, under --spool on a
// fresh directory at several segment sizes, with fsync on and off, on
// tmpfs and on a disk, with raw tokens (the default) and, at the default
// segment, with s2 and zstd, and, for reference, as bash with GNU tools.
// A cached rerun of the finished spool is measured too. Every cell runs
// in rounds (a fresh random order each round) and reports its median.

// spoolPipelines are the pipelines measured: the log pipeline of docs/persistence.md
// (whole-stream grep, sort, uniq around a per-segment cut) and a chain of
// per-segment stages only (cut and tr without -s are stateless).
var spoolPipelines = []struct{ name, script string }{
	{"log", "cat app.log | grep -i error | cut -d' ' -f3 | sort | uniq -c"},
	{"maps", "cat app.log | cut -c1-60 | tr a-z A-Z | cut -c5-40"},
}

// spoolConfig is the matrix of -spool.
type spoolConfig struct {
	bytes    int64 // of the log
	segments []int
	runs     int
	dirs     []spoolDir // where spools go
	tmpDir   string     // the log and the work; "" means os.TempDir()
	progress io.Writer
}

// spoolDir is a file system the spool is measured on.
type spoolDir struct{ name, dir string }

func spoolFullConfig() spoolConfig {
	return spoolConfig{bytes: 128 << 20, segments: []int{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}, runs: 5}
}

func spoolQuickConfig() spoolConfig {
	return spoolConfig{bytes: 32 << 20, segments: []int{64 << 10, 1 << 20, 4 << 20, 16 << 20}, runs: 3}
}

// spoolCell is one thing measured.
type spoolCell struct {
	pipeline int
	kind     string // "concurrent", "bash", "spool", "cached"
	dir      spoolDir
	fsync    bool
	segment  int
	codec    recfile.Codec // of the tokens: --compress
}

func (c spoolCell) label() string {
	switch c.kind {
	case "spool", "cached":
		fs := "off"
		if c.fsync {
			fs = "on"
		}
		codec := ""
		if c.codec != spool.DefaultCodec {
			codec = ", " + c.codec.String()
		}
		return fmt.Sprintf("%s %s, fsync %s%s, segment %s", c.kind, c.dir.name, fs, codec, record.FormatSize(int64(c.segment)))
	}
	return c.kind
}

// spoolResult is a cell's runs.
type spoolResult struct {
	cell  spoolCell
	times []time.Duration
}

func (r spoolResult) median() time.Duration {
	t := slices.Clone(r.times)
	slices.Sort(t)
	return t[len(t)/2]
}

// spoolMain runs the spool benchmark and writes spool.md and its plots
// into out.
func spoolMain(ctx context.Context, cfg spoolConfig, out string, stdout io.Writer) error {
	work, err := os.MkdirTemp(cfg.tmpDir, "tpipe-bench-spool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if len(cfg.dirs) == 0 {
		cfg.dirs = []spoolDir{{"disk", work}}
		if shm, err := os.MkdirTemp("/dev/shm", "tpipe-bench-spool-"); err == nil {
			defer os.RemoveAll(shm)
			cfg.dirs = append(cfg.dirs, spoolDir{"tmpfs", shm})
		}
	}
	if err := writeLog(filepath.Join(work, "app.log"), cfg.bytes); err != nil {
		return err
	}
	var cells []spoolCell
	for p := range spoolPipelines {
		cells = append(cells, spoolCell{pipeline: p, kind: "concurrent"}, spoolCell{pipeline: p, kind: "bash"})
		for _, d := range cfg.dirs {
			for _, fsync := range []bool{true, false} {
				for _, seg := range cfg.segments {
					cells = append(cells, spoolCell{pipeline: p, kind: "spool", dir: d, fsync: fsync, segment: seg})
				}
			}
			for _, c := range []recfile.Codec{recfile.S2, recfile.Zstd} {
				cells = append(cells, spoolCell{pipeline: p, kind: "spool", dir: d, fsync: true, segment: sched.DefaultSegment, codec: c})
			}
			cells = append(cells, spoolCell{pipeline: p, kind: "cached", dir: d, fsync: true, segment: sched.DefaultSegment})
		}
	}
	load0 := side.LoadAvg(1)
	start := time.Now()
	res := make([]spoolResult, len(cells))
	for i := range cells {
		res[i].cell = cells[i]
	}
	want := map[int]string{}
	err = side.Rounds(ctx, cfg.runs, len(cells), cfg.progress, func(i int) error {
		c := cells[i]
		d, got, err := runSpoolCell(ctx, c, work)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", spoolPipelines[c.pipeline].name, c.label(), err)
		}
		if w, ok := want[c.pipeline]; !ok {
			want[c.pipeline] = got
		} else if got != w {
			return fmt.Errorf("%s: %s: output differs from the other cells'", spoolPipelines[c.pipeline].name, c.label())
		}
		res[i].times = append(res[i].times, d)
		return nil
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	files, err := writeSpoolReport(out, cfg, res, spoolRunInfo{load0: load0, load1: side.LoadAvg(1), took: time.Since(start)})
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// writeLog writes about size bytes of log lines: a timestamp, a level
// (one line in 8 an error, in mixed case), a service, a request and a
// duration; the same bytes every time.
func writeLog(name string, size int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	levels := []string{"INFO", "info", "DEBUG", "WARN", "INFO", "debug", "INFO", "ERROR", "Error", "INFO", "error", "INFO", "INFO", "WARN", "INFO", "DEBUG"}
	var n int64
	for i := 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, "2026-11-%02dT%02d:%02d:%02d %s svc%02d request %08x took %dms from 10.%d.%d.%d\n",
			1+i%28, i/3600%24, i/60%60, i%60, levels[rng.IntN(len(levels))], rng.IntN(40), rng.Uint32(), rng.IntN(900),
			rng.IntN(256), rng.IntN(256), rng.IntN(256))
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runSpoolCell runs one cell once in work (where app.log is) and returns
// its wall time and output. A spool cell starts from an empty directory;
// a cached cell fills its spool first, untimed, then times a rerun.
func runSpoolCell(ctx context.Context, c spoolCell, work string) (time.Duration, string, error) {
	script := spoolPipelines[c.pipeline].script
	if c.kind == "bash" {
		cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var out strings.Builder
		cmd.Stdout = &out
		t0 := time.Now()
		err := cmd.Run()
		return time.Since(t0), out.String(), err
	}
	cfg := runner.Config{Policy: sched.Concurrent, Dir: work}
	if c.kind != "concurrent" {
		dir := filepath.Join(c.dir.dir, "spool")
		if err := os.RemoveAll(dir); err != nil {
			return 0, "", err
		}
		defer os.RemoveAll(dir)
		cfg = runner.Config{Policy: sched.Spool, Spool: dir, Segment: c.segment, NoSync: !c.fsync, Compress: c.codec, Dir: work}
	}
	run := func() (time.Duration, string, error) {
		var out, errb strings.Builder
		cfg.Stdout, cfg.Stderr = &out, &errb
		r := runner.New(cfg)
		defer r.Close()
		t0 := time.Now()
		status := r.RunScript(ctx, script)
		d := time.Since(t0)
		if status != 0 {
			return d, "", fmt.Errorf("status %d: %s", status, errb.String())
		}
		return d, out.String(), nil
	}
	if c.kind == "cached" {
		if _, _, err := run(); err != nil {
			return 0, "", err
		}
	}
	return run()
}

// loadAvg is the first field of /proc/loadavg, "?" where there is none.
type spoolRunInfo struct {
	load0, load1 string
	took         time.Duration
}

// writeSpoolReport writes spool.md (bench/README.md quotes its table) and
// one plot per pipeline: time over the in-memory run's against segment
// size, a line per file system and fsync setting.
func writeSpoolReport(dir string, cfg spoolConfig, res []spoolResult, info spoolRunInfo) ([]string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# The spool against in-memory runs\n\n")
	fmt.Fprintf(&b, "%s of log lines (%d runs a cell, in rounds of random order; median [min–max]); load average %s before, %s after; %s in all.\n\n",
		record.FormatSize(cfg.bytes), cfg.runs, info.load0, info.load1, info.took.Round(time.Second))
	fmt.Fprintf(&b, "Spool cells start from an empty directory; `cached` reruns a finished spool. Ratio: median time over the concurrent in-memory run's.\n\n")
	var files []string
	for p, pl := range spoolPipelines {
		var rows []spoolResult
		var base time.Duration
		for _, r := range res {
			if r.cell.pipeline == p {
				rows = append(rows, r)
				if r.cell.kind == "concurrent" {
					base = r.median()
				}
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].cell.label() < rows[j].cell.label() })
		fmt.Fprintf(&b, "## %s: `%s`\n\n| cell | seconds | ratio | MiB/s |\n|---|---|---|---|\n", pl.name, pl.script)
		for _, r := range rows {
			t := slices.Clone(r.times)
			slices.Sort(t)
			m := r.median()
			fmt.Fprintf(&b, "| %s | %.3f [%.3f–%.3f] | %.2f | %.0f |\n", r.cell.label(), m.Seconds(), t[0].Seconds(), t[len(t)-1].Seconds(),
				float64(m)/float64(base), float64(cfg.bytes)/(1<<20)/m.Seconds())
		}
		best := map[string]spoolResult{}
		for _, r := range rows {
			if r.cell.kind != "spool" {
				continue
			}
			k := strings.Split(r.cell.label(), ", segment")[0]
			if cur, ok := best[k]; !ok || r.median() < cur.median() {
				best[k] = r
			}
		}
		var keys []string
		for k := range best {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "\nFastest segment: ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s (%.2fx)", k, record.FormatSize(int64(best[k].cell.segment)), float64(best[k].median())/float64(base))
		}
		b.WriteString(".\n\n")
		ch := chart{title: fmt.Sprintf("spool: %s, time over in-memory concurrent", pl.name), xLabel: "segment (bytes)", yLabel: "time / in-memory time", logX: true}
		lines := map[string]*series{}
		for _, r := range rows {
			if r.cell.kind != "spool" {
				continue
			}
			k := strings.TrimPrefix(strings.Split(r.cell.label(), ", segment")[0], "spool ")
			if lines[k] == nil {
				lines[k] = &series{name: k}
			}
			lines[k].pts = append(lines[k].pts, point{x: float64(r.cell.segment), y: float64(r.median()) / float64(base)})
		}
		for _, k := range slices.Sorted(maps.Keys(lines)) {
			s := lines[k]
			sort.Slice(s.pts, func(i, j int) bool { return s.pts[i].x < s.pts[j].x })
			ch.series = append(ch.series, *s)
		}
		ch.series = append(ch.series, series{name: "in memory", pts: []point{{y: 1}}, dashed: true}, series{name: "goal 2x", pts: []point{{y: 2}}, dashed: true})
		name := filepath.Join(dir, "spool-"+pl.name+".svg")
		f, err := os.Create(name)
		if err != nil {
			return files, err
		}
		err = ch.svg(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, err
		}
		files = append(files, name)
		fmt.Fprintf(&b, "![%s](spool-%s.svg)\n\n", pl.name, pl.name)
	}
	name := filepath.Join(dir, "spool.md")
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		return files, err
	}
	return append([]string{name}, files...), nil
}
