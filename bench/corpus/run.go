package corpus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tpipe/tpipe/bench/internal/side"
)

// Config is one run of the corpus benchmark.
type Config struct {
	LogLines  int // lines of access.log
	TextLines int // lines of words.txt
	Runs      int // runs of each pipeline by each tool
	// Tpipe is the tpipe binary measured; "" builds ./cmd/tpipe of the
	// current module. Base, if set, is a second tpipe binary run in the
	// same rounds (an older build), for a before-and-after table.
	Tpipe, Base string
	// Pipelines to run; nil is the whole corpus.
	Pipelines []Pipeline
	// Dir holds the inputs, kept between runs (they take a second or two to
	// make); "" is a directory under os.TempDir.
	Dir      string
	Progress io.Writer
	// Timeout bounds one run of one pipeline.
	Timeout time.Duration
}

// FullConfig is `bench -corpus`: the 1M-line log, 300,000 lines of
// text, five runs of each cell; a few minutes on 2 cores.
func FullConfig() Config {
	return Config{LogLines: 1_000_000, TextLines: 300_000, Runs: 5, Timeout: 5 * time.Minute}
}

// QuickConfig is `bench -corpus -quick`: a tenth of the inputs, three runs.
func QuickConfig() Config {
	return Config{LogLines: 100_000, TextLines: 30_000, Runs: 3, Timeout: time.Minute}
}

// MinRuns is the fewest runs of a cell Run takes: a median needs three.
const MinRuns = 3

// The tools, as the report names them.
const (
	ToolBash  = "bash"
	ToolTpipe = "tpipe"
	ToolBase  = "tpipe-base"
)

// sample is one run of one cell.
type sample struct {
	wall, cpu time.Duration // elapsed; user + system of the whole process tree
	rssKiB    int64         // the largest process's peak RSS (GNU time's %M), or 0
	sum       [32]byte      // SHA-256 of stdout
}

// cell is one pipeline run by one tool, and its samples.
type cell struct {
	p       Pipeline
	tool    string
	samples []sample
}

// Run makes the inputs, runs every pipeline of cfg with every tool in
// cfg.Runs rounds (each round a fresh random order of all cells), and
// writes corpus.md, corpus.csv and corpus.svg into out, printing their
// paths on stdout.
func Run(ctx context.Context, cfg Config, out string, stdout io.Writer) error {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if cfg.Runs < MinRuns {
		return fmt.Errorf("corpus: %d runs: want at least %d", cfg.Runs, MinRuns)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return fmt.Errorf("corpus: bash is needed to compare with: %w", err)
	}
	if cfg.Pipelines == nil {
		cfg.Pipelines = Pipelines
	}
	dir := cfg.Dir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("tpipe-corpus-%d-%d", cfg.LogLines, cfg.TextLines))
	}
	fmt.Fprintf(progress, "corpus: inputs in %s\n", dir)
	in, err := Generate(dir, cfg.LogLines, cfg.TextLines)
	if err != nil {
		return fmt.Errorf("corpus: make inputs: %w", err)
	}
	work, err := os.MkdirTemp("", "tpipe-corpus-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if cfg.Tpipe == "" {
		if cfg.Tpipe, err = buildTpipe(ctx, work); err != nil {
			return err
		}
	}
	tools := map[string]string{ToolTpipe: cfg.Tpipe}
	names := []string{ToolBash, ToolTpipe}
	if cfg.Base != "" {
		tools[ToolBase] = cfg.Base
		names = append(names, ToolBase)
	}
	timer, _ := exec.LookPath("time")
	if timer != "" && exec.Command(timer, "-f", "%M", "true").Run() != nil {
		timer = "" // not GNU time
	}
	var cells []*cell
	for _, p := range cfg.Pipelines {
		for _, t := range names {
			cells = append(cells, &cell{p: p, tool: t})
		}
	}
	load0 := side.LoadAvg(1)
	err = side.Rounds(ctx, cfg.Runs, len(cells), progress, func(i int) error {
		c := cells[i]
		s, err := runOnce(ctx, c, tools[c.tool], in.Dir, work, timer, cfg.Timeout)
		if err != nil {
			return err
		}
		c.samples = append(c.samples, s)
		return nil
	})
	if err != nil {
		return err
	}
	rep := newReport(cells, names)
	rep.header = fmt.Sprintf("%s; %d log lines (%s), %d text lines (%s); load average %s before, %s after", time.Now().UTC().Format(time.RFC1123),
		cfg.LogLines, fileSize(in.Log), cfg.TextLines, fileSize(in.Words), load0, side.LoadAvg(1))
	files, err := rep.writeFiles(out)
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// runOnce runs c's pipeline once with its tool, in dir (the inputs), and
// measures it. Its output goes to a file in work and is kept as a hash.
func runOnce(ctx context.Context, c *cell, bin, dir, work, timer string, timeout time.Duration) (sample, error) {
	var argv []string
	switch c.tool {
	case ToolBash:
		argv = []string{"bash", "-c", c.p.Line}
	default:
		argv = []string{bin, c.p.Line}
	}
	rssFile := filepath.Join(work, "rss")
	if timer != "" {
		argv = append([]string{timer, "-f", "%M", "-o", rssFile}, argv...)
	}
	outFile := filepath.Join(work, "out")
	f, err := os.Create(outFile)
	if err != nil {
		return sample{}, err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	begin := time.Now()
	err = cmd.Run()
	wall := time.Since(begin)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
			err = fmt.Errorf("no end after %s", timeout)
		}
		return sample{}, fmt.Errorf("corpus: %s by %s: %v: %s", c.p.Name, c.tool, err, strings.TrimSpace(stderr.String()))
	}
	s := sample{wall: wall}
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	if timer != "" {
		if b, err := os.ReadFile(rssFile); err == nil {
			s.rssKiB, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		return sample{}, err
	}
	s.sum = sha256.Sum256(data)
	return s, nil
}

// buildTpipe builds cmd/tpipe of the module in the current directory into
// dir.
func buildTpipe(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "tpipe")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/tpipe/tpipe/cmd/tpipe").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("corpus: go build of cmd/tpipe (run from a checkout, or give -tpipe PATH): %v\n%s", err, out)
	}
	return bin, nil
}

func fileSize(name string) string {
	st, err := os.Stat(name)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}
