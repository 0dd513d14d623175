// Package jobs is the job-engine half of tpipe's benchmark suite: tpipe
// pmjq doing a folder of jobs, against GNU parallel and a bash loop doing
// the same folder with the same filter, one job per file. Each run is a
// separate process tree measured from outside (wall and CPU time); jobs
// are written before the clock starts. Run it with `go run ./bench -jobs`
// or `tpipe bench -jobs`; bench/README.md says what the report holds.
package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tpipe/tpipe/bench/internal/side"
)

// Config is one run of the jobs benchmark.
type Config struct {
	Small, Large, Tiny             int   // how many small, large and tiny jobs a folder holds
	SmallSize, LargeSize, TinySize int64 // their sizes in bytes
	Workers                        []int // worker counts of tpipe and parallel
	Runs                           int   // runs per cell
	// TinyOnly runs only the tiny jobs' cells: the job engine's cost per
	// job, against the bash loop and GNU parallel, in minutes.
	TinyOnly bool
	Tpipe    string
	// Base, if set, is a second tpipe binary (an older build) whose pmjq
	// runs beside Tpipe's in the same rounds, for a before-and-after
	// comparison.
	Base     string
	TmpDir   string // "" is os.TempDir
	Progress io.Writer
}

// FullConfig is `bench -jobs`: 2000 jobs of 4 KiB, 4 of 64 MiB and 5000
// of 40 bytes, 1, 2 and 4 workers, 3 runs per cell; half an hour on 2 busy
// cores, most of it GNU parallel and the bash loop (two processes per
// job, and util-linux rev does about 5 MB/s).
func FullConfig() Config {
	return Config{Small: 2000, Large: 4, Tiny: 5000, SmallSize: 4 << 10, LargeSize: 64 << 20, TinySize: 40, Workers: []int{1, 2, 4}, Runs: 3}
}

// QuickConfig is `bench -jobs -quick`: 300 small jobs, 1 large one and
// 1000 tiny ones; about six minutes on 2 busy cores.
func QuickConfig() Config {
	c := FullConfig()
	c.Small, c.Large, c.Tiny = 300, 1, 1000
	return c
}

// jobs is how many jobs of kind k a folder holds, and size their size.
func (c Config) jobs(k kind) int {
	switch k {
	case large:
		return c.Large
	case tiny:
		return c.Tiny
	}
	return c.Small
}

func (c Config) size(k kind) int64 {
	switch k {
	case large:
		return c.LargeSize
	case tiny:
		return c.TinySize
	}
	return c.SmallSize
}

// MinRuns is the fewest runs per cell Run takes.
const MinRuns = 3

// The filters, as the report names them. Each runs as a tpipe script
// under tpipe and as a bash pipeline of GNU tools under the others.
const (
	FilterBuiltins = "tr a-z A-Z | rev"
	FilterExternal = "md5sum"
	FilterSort     = "tr a-z A-Z | sort -r" // on the tiny jobs (issue 25)
)

// The tools.
const (
	ToolTpipe       = "tpipe"
	ToolTpipeNoSync = "tpipe --no-sync"
	ToolBase        = "base tpipe"
	ToolBaseNoSync  = "base tpipe --no-sync"
	ToolParallel    = "parallel"
	ToolBash        = "bash loop"
)

// ErrNoParallel is returned by Run when GNU parallel is not installed.
var ErrNoParallel = errors.New("GNU parallel is not installed (apt-get install parallel)")

// A kind is a size of job: small (Config.SmallSize), large or tiny.
type kind int

const (
	small kind = iota
	large
	tiny
)

func (k kind) String() string {
	switch k {
	case large:
		return "large"
	case tiny:
		return "tiny"
	}
	return "small"
}

// A cell is one tool with some workers on one folder of jobs.
type cell struct {
	tool    string
	filter  string
	workers int
	kind    kind
}

func (c cell) String() string {
	return fmt.Sprintf("%s -j%d %q %s", c.tool, c.workers, c.filter, c.kind)
}

// cells are the cells of cfg, in the order of the report: for the small
// and the large jobs, `tr a-z A-Z | rev` by each tool at each worker
// count, then the bash loop; `md5sum` on the small jobs at the most
// workers, then the bash loop; then the tiny jobs' `tr a-z A-Z | sort -r`
// by tpipe at each worker count, GNU parallel at the most workers and the
// bash loop. TinyOnly keeps the tiny jobs' cells alone.
func cells(cfg Config) []cell {
	tpipes := []string{ToolTpipe, ToolTpipeNoSync}
	if cfg.Base != "" {
		tpipes = []string{ToolTpipe, ToolBase, ToolTpipeNoSync, ToolBaseNoSync}
	}
	tools := append(slices.Clone(tpipes), ToolParallel)
	most := cfg.Workers[len(cfg.Workers)-1]
	var cs []cell
	if !cfg.TinyOnly {
		for _, k := range []kind{small, large} {
			for _, w := range cfg.Workers {
				for _, t := range tools {
					cs = append(cs, cell{t, FilterBuiltins, w, k})
				}
			}
			cs = append(cs, cell{ToolBash, FilterBuiltins, 1, k})
		}
		for _, t := range tools {
			if t != ToolTpipeNoSync && t != ToolBaseNoSync {
				cs = append(cs, cell{t, FilterExternal, most, small})
			}
		}
		cs = append(cs, cell{ToolBash, FilterExternal, 1, small})
	}
	if cfg.Tiny > 0 {
		for _, w := range cfg.Workers {
			for _, t := range tpipes {
				cs = append(cs, cell{t, FilterSort, w, tiny})
			}
		}
		cs = append(cs, cell{ToolParallel, FilterSort, most, tiny}, cell{ToolBash, FilterSort, 1, tiny})
	}
	return cs
}

// command is the cell's command line, run in the work folder, where in/
// holds the jobs and out/ is empty; base is Config.Base.
func (c cell) command(tpipe, base string) []string {
	switch c.tool {
	case ToolTpipe, ToolTpipeNoSync, ToolBase, ToolBaseNoSync:
		if c.tool == ToolBase || c.tool == ToolBaseNoSync {
			tpipe = base
		}
		argv := []string{tpipe, "pmjq", "--once", "--workers", strconv.Itoa(c.workers)}
		if c.tool == ToolTpipeNoSync || c.tool == ToolBaseNoSync {
			argv = append(argv, "--no-sync")
		}
		return append(argv, "in", c.filter, "out")
	case ToolParallel:
		return []string{"bash", "-c", fmt.Sprintf(`ls in | parallel --will-cite -j %d '{ %s; } < in/{} > out/{} && rm in/{}'`, c.workers, c.filter)}
	default:
		return []string{"bash", "-c", fmt.Sprintf(`for f in in/*; do { %s; } < "$f" > "out/${f#in/}" && rm "$f"; done`, c.filter)}
	}
}

// sample is one run of a cell.
type sample struct {
	wall, cpu time.Duration
}

type result struct {
	cell
	jobs    int
	bytes   int64
	samples []sample
	err     string
}

// Run runs every cell cfg.Runs times, in rounds of a fresh random order
// (so that drift of the machine hits all cells alike), and writes jobs.md
// into dir, printing the report and then its path on stdout.
func Run(ctx context.Context, cfg Config, dir string, stdout io.Writer) error {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if cfg.Runs < MinRuns {
		return fmt.Errorf("jobs: %d runs per cell: want at least %d", cfg.Runs, MinRuns)
	}
	if len(cfg.Workers) == 0 {
		return errors.New("jobs: no worker counts")
	}
	if cfg.TinyOnly && cfg.Tiny <= 0 {
		return errors.New("jobs: only tiny jobs, and none of them")
	}
	if _, err := exec.LookPath("parallel"); err != nil {
		return ErrNoParallel
	}
	for _, tool := range []string{"tr", "rev", "sort", "md5sum", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("jobs: %s is not installed", tool)
		}
	}
	work, err := os.MkdirTemp(cfg.TmpDir, "tpipe-jbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tpipe, which, err := side.Tpipe(ctx, cfg.Tpipe, work, progress)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if cfg.Base != "" {
		which += ", base tpipe at " + cfg.Base
	}
	var res []result
	for _, c := range cells(cfg) {
		res = append(res, result{cell: c, jobs: cfg.jobs(c.kind)})
	}
	texts := map[kind][]byte{}
	for _, r := range res {
		if texts[r.kind] == nil {
			texts[r.kind] = jobText(cfg.size(r.kind))
		}
	}
	load0 := side.LoadAvg(3)
	err = side.Rounds(ctx, cfg.Runs, len(res), progress, func(i int) error {
		r := &res[i]
		if r.err != "" {
			return nil
		}
		job := texts[r.kind]
		s, err := runCell(ctx, work, r.command(tpipe, cfg.Base), r, job)
		if err != nil {
			r.err = err.Error()
			fmt.Fprintf(progress, "%s: %v\n", r.cell, err)
			return nil
		}
		r.bytes = int64(r.jobs) * int64(len(job))
		r.samples = append(r.samples, s)
		return nil
	})
	if err != nil {
		return err
	}
	rep := report{cfg: cfg, results: res, date: time.Now(), tpipe: which, load: [2]string{load0, side.LoadAvg(3)}, cpus: runtime.NumCPU()}
	var buf bytes.Buffer
	rep.write(&buf)
	return side.WriteReport(dir, "jobs.md", buf.Bytes(), stdout)
}

// runCell lays out the folder of jobs, runs the cell's command on it and
// checks that every job was done: an output per job, of the size the
// filter gives, and no job left.
func runCell(ctx context.Context, work string, argv []string, r *result, job []byte) (sample, error) {
	var s sample
	dir := filepath.Join(work, "run")
	if err := os.RemoveAll(dir); err != nil {
		return s, err
	}
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return s, err
		}
	}
	for i := range r.jobs {
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("job%05d", i)), job, 0o600); err != nil {
			return s, err
		}
	}
	// Flush the jobs to disk so that no run pays for another's writes.
	exec.CommandContext(ctx, "sync").Run()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return s, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	s.wall = time.Since(t0)
	s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	want := int64(len(job))
	if r.filter == FilterExternal {
		want = int64(32 + len("  -\n"))
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return s, err
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return s, err
		}
		if fi.Size() != want {
			return s, fmt.Errorf("output %s has %d bytes, want %d", e.Name(), fi.Size(), want)
		}
		n++
	}
	left, _ := os.ReadDir(in)
	jobsLeft := 0
	for _, e := range left {
		if !strings.HasPrefix(e.Name(), ".") {
			jobsLeft++
		}
	}
	if n != r.jobs || jobsLeft != 0 {
		return s, fmt.Errorf("%d outputs of %d jobs, %d jobs left", n, r.jobs, jobsLeft)
	}
	return s, nil
}

// jobText is a job of n bytes: lines of 63 letters and a newline, the
// last line cut short (40 bytes is "the quick brown fox jumps over the
// lazy" and a newline).
func jobText(n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		if i%64 == 63 {
			b[i] = '\n'
		} else {
			b[i] = "the quick brown fox jumps over the lazy dog "[i%44]
		}
	}
	if n > 0 {
		b[n-1] = '\n'
	}
	return b
}
