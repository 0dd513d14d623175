// Package natsjobs is the NATS half of tpipe's job benchmarks: tpipe
// serve on a net of jobs on NATS JetStream (package spool/natsq), against
// the same jobs in a folder served by tpipe serve, and against the plain
// nats.go loop a user would write instead (publish into a work-queue
// stream, fetch and acknowledge), all in one run. Each tpipe run is a
// process measured from outside; the plain loops run in this process.
// Every cell that needs a server starts its own nats-server, with a fresh
// store, and kills it after. Run it with `go run ./bench -nats`;
// bench/README.md says what the report holds.
package natsjobs

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
	"strconv"
	"strings"
	"time"

	"github.com/tpipe/tpipe/bench/internal/side"
)

// Config is one run of the NATS benchmark.
type Config struct {
	Small, Large         int   // how many small and large jobs a cell does
	SmallSize, LargeSize int64 // their sizes in bytes
	// Workers is serve's --workers (one process) and the plain loops'
	// goroutines.
	Workers int
	// Batch is how many messages a plain loop's fetch asks for.
	Batch int
	Runs  int // runs per cell
	// Tpipe is the tpipe binary measured; "" builds ./cmd/tpipe of the
	// current module.
	Tpipe string
	// Server is the nats-server binary; "" is $TPIPE_NATS_SERVER, or
	// go.mod's tool built from the module cache.
	Server   string
	TmpDir   string // "" is os.TempDir
	Progress io.Writer
}

// FullConfig is `bench -nats`: 10,000 jobs of 4 KiB and 400 of 256 KiB
// (100 MiB), 2 workers, fetches of 100, 5 runs per cell; five minutes
// on 2 busy cores.
func FullConfig() Config {
	return Config{Small: 10000, Large: 400, SmallSize: 4 << 10, LargeSize: 256 << 10, Workers: 2, Batch: 100, Runs: 5}
}

// QuickConfig is `bench -nats -quick`: 2,000 small jobs and 40 large
// ones, 3 runs per cell; a minute and a half on 2 busy cores, most of it
// starting servers, storing jobs and checking them, outside the clock.
func QuickConfig() Config {
	c := FullConfig()
	c.Small, c.Large, c.Runs = 2000, 40, 3
	return c
}

// MinRuns is the fewest runs per cell Run takes.
const MinRuns = 3

// The tools, as the report names them.
const (
	ToolServeNATS         = "tpipe serve, NATS"
	ToolServeFolder       = "tpipe serve, folder"
	ToolServeFolderNoSync = "tpipe serve --no-sync, folder"
	ToolPlain             = "nats.go fetch + ack"
	ToolPlainReply        = "nats.go fetch + publish + ack"
)

// tools are the tools in the report's order.
var tools = []string{ToolServeNATS, ToolServeFolder, ToolServeFolderNoSync, ToolPlain, ToolPlainReply}

// A kind is a size of job: small (Config.SmallSize) or large; none is no
// job at all, the fixed cost of one serve --once.
type kind int

const (
	small kind = iota
	large
	none
)

func (k kind) String() string {
	switch k {
	case large:
		return "large"
	case none:
		return "no"
	}
	return "small"
}

func (c Config) jobs(k kind) int {
	switch k {
	case large:
		return c.Large
	case none:
		return 0
	}
	return c.Small
}

func (c Config) size(k kind) int64 {
	switch k {
	case large:
		return c.LargeSize
	case none:
		return 0
	}
	return c.SmallSize
}

// A cell is one tool on the jobs of one kind.
type cell struct {
	tool string
	kind kind
}

func (c cell) String() string { return fmt.Sprintf("%s, %s jobs", c.tool, c.kind) }

// cells are every tool on each kind of which cfg has jobs, then serve on
// NATS and on a folder with no job: what a run costs whatever its jobs
// (starting, and seeing that nothing is left).
func cells(cfg Config) []cell {
	var cs []cell
	for _, k := range []kind{small, large} {
		if cfg.jobs(k) == 0 {
			continue
		}
		for _, t := range tools {
			cs = append(cs, cell{t, k})
		}
	}
	return append(cs, cell{ToolServeNATS, none}, cell{ToolServeFolder, none})
}

// sample is one run of a cell.
type sample struct {
	wall   time.Duration // from the jobs stored to the last one done
	cpu    time.Duration // of the worker: tpipe serve, or this process for a plain loop
	srvCPU time.Duration // of the nats-server in the same time
	put    time.Duration // storing the jobs (tpipe put, or async publishes); 0 for folders
	get    time.Duration // tpipe get --once of the results; 0 elsewhere
}

type result struct {
	cell
	jobs    int
	bytes   int64
	samples []sample
	err     string
}

// Run runs every cell cfg.Runs times, in rounds of a fresh random order,
// and writes nats.md into dir, printing the report and then its path on
// stdout.
func Run(ctx context.Context, cfg Config, dir string, stdout io.Writer) error {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	switch {
	case cfg.Runs < MinRuns:
		return fmt.Errorf("natsjobs: %d runs per cell: want at least %d", cfg.Runs, MinRuns)
	case cfg.Workers < 1 || cfg.Batch < 1:
		return errors.New("natsjobs: want at least one worker and a batch of at least one")
	case cfg.Small <= 0 && cfg.Large <= 0:
		return errors.New("natsjobs: no jobs")
	}
	work, err := os.MkdirTemp(cfg.TmpDir, "tpipe-nbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tpipe, which, err := side.Tpipe(ctx, cfg.Tpipe, work, progress)
	if err != nil {
		return fmt.Errorf("natsjobs: %w", err)
	}
	if cfg.Tpipe == "" {
		which += revision(ctx)
	}
	srvBin, srvVersion, err := serverBinary(ctx, cfg.Server, work, progress)
	if err != nil {
		return fmt.Errorf("natsjobs: %w", err)
	}
	// The jobs of each kind, as files for tpipe put, made once.
	texts := map[kind][]byte{}
	names := map[kind][]string{}
	for _, k := range []kind{small, large} {
		n := cfg.jobs(k)
		if n == 0 {
			continue
		}
		texts[k] = jobText(cfg.size(k))
		d := filepath.Join(work, "jobs-"+k.String())
		if err := writeJobs(d, n, texts[k]); err != nil {
			return err
		}
		for i := range n {
			names[k] = append(names[k], jobName(i))
		}
	}
	var res []result
	for _, c := range cells(cfg) {
		res = append(res, result{cell: c, jobs: cfg.jobs(c.kind), bytes: int64(cfg.jobs(c.kind)) * cfg.size(c.kind)})
	}
	e := env{cfg: cfg, work: work, tpipe: tpipe, server: srvBin}
	load0 := side.LoadAvg(3)
	seq := 0
	err = side.Rounds(ctx, cfg.Runs, len(res), progress, func(i int) error {
		r := &res[i]
		if r.err != "" {
			return nil
		}
		seq++
		s, err := e.run(ctx, r.cell, fmt.Sprintf("bench-%s-%d", r.kind, seq), texts[r.kind], names[r.kind])
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.err = err.Error()
			fmt.Fprintf(progress, "%s: %v\n", r.cell, err)
			return nil
		}
		r.samples = append(r.samples, s)
		return nil
	})
	if err != nil {
		return err
	}
	rep := report{cfg: cfg, results: res, date: time.Now(), tpipe: which, server: srvVersion, load: [2]string{load0, side.LoadAvg(3)}, cpus: runtime.NumCPU()}
	var buf bytes.Buffer
	rep.write(&buf)
	return side.WriteReport(dir, "nats.md", buf.Bytes(), stdout)
}

// env is what every run of a cell needs.
type env struct {
	cfg    Config
	work   string
	tpipe  string
	server string
}

// run runs the cell c once on its jobs (job, under names), on a fresh
// stream stream of a fresh server where it needs one.
func (e env) run(ctx context.Context, c cell, stream string, job []byte, names []string) (sample, error) {
	dir := filepath.Join(e.work, "run")
	if err := os.RemoveAll(dir); err != nil {
		return sample{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	switch c.tool {
	case ToolServeFolder, ToolServeFolderNoSync:
		return e.serveFolder(ctx, dir, c.tool == ToolServeFolderNoSync, job, len(names))
	}
	srv, err := startServer(ctx, e.server, dir)
	if err != nil {
		return sample{}, err
	}
	defer srv.stop()
	switch c.tool {
	case ToolServeNATS:
		return e.serveNATS(ctx, srv, dir, filepath.Join(e.work, "jobs-"+c.kind.String()), stream, job, names)
	default:
		return runPlain(ctx, plainOptions{url: srv.url(), stream: stream, jobs: len(names), job: job,
			workers: e.cfg.Workers, batch: e.cfg.Batch, reply: c.tool == ToolPlainReply, srv: srv, stored: flush})
	}
}

// serveNATS puts the jobs (the files names in the folder jobs, each a
// copy of job) into the net stream with tpipe put (timed as put), times
// tpipe serve --once over them, then times tpipe get --once (--no-sync:
// the disk's fsyncs are not what is measured) and checks that every job
// came out whole.
func (e env) serveNATS(ctx context.Context, srv *server, dir, jobs, stream string, job []byte, names []string) (sample, error) {
	var s sample
	addr := srv.url() + "/" + stream
	t0 := time.Now()
	if len(names) > 0 { // (with no file, put reads a job from stdin)
		if _, err := e.tpipeRun(ctx, jobs, append([]string{"put", addr}, names...)...); err != nil {
			return s, fmt.Errorf("tpipe put: %w", err)
		}
	}
	s.put = time.Since(t0)
	flush()
	srv0 := srv.cpu()
	t0 = time.Now()
	ps, err := e.tpipeRun(ctx, dir, "serve", "--workers", strconv.Itoa(e.cfg.Workers), "--once", addr, "cat")
	if err != nil {
		return s, fmt.Errorf("tpipe serve: %w", err)
	}
	s.wall = time.Since(t0)
	s.cpu, s.srvCPU = ps.UserTime()+ps.SystemTime(), srv.cpu()-srv0
	got := filepath.Join(dir, "got")
	if err := os.Mkdir(got, 0o700); err != nil {
		return s, err
	}
	t0 = time.Now()
	if _, err := e.tpipeRun(ctx, dir, "get", "--once", "--no-sync", addr, got); err != nil {
		return s, fmt.Errorf("tpipe get: %w", err)
	}
	s.get = time.Since(t0)
	return s, checkOut(got, len(names), int64(len(job)))
}

// serveFolder writes the jobs into dir/in, then times tpipe serve --once
// dir (with --no-sync if noSync) and checks that every job came out
// whole in dir/out and none is left.
func (e env) serveFolder(ctx context.Context, dir string, noSync bool, job []byte, n int) (sample, error) {
	var s sample
	in := filepath.Join(dir, "in")
	if err := writeJobs(in, n, job); err != nil {
		return s, err
	}
	flush()
	args := []string{"serve", "--workers", strconv.Itoa(e.cfg.Workers), "--once"}
	if noSync {
		args = append(args, "--no-sync")
	}
	t0 := time.Now()
	ps, err := e.tpipeRun(ctx, dir, append(args, dir, "cat")...)
	if err != nil {
		return s, fmt.Errorf("tpipe serve: %w", err)
	}
	s.wall = time.Since(t0)
	s.cpu = ps.UserTime() + ps.SystemTime()
	if err := checkOut(filepath.Join(dir, "out"), n, int64(len(job))); err != nil {
		return s, err
	}
	if left := countJobs(in); left != 0 {
		return s, fmt.Errorf("%d jobs left in in/", left)
	}
	return s, nil
}

// tpipeRun runs tpipe with args in dir and returns its state; an error
// carries what it said on stderr.
func (e env) tpipeRun(ctx context.Context, dir string, args ...string) (*os.ProcessState, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, e.tpipe, args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return cmd.ProcessState, nil
}

// revision is " (REV)", the checkout's commit as git describes it
// (-dirty: with changes not committed), or "" without git: the backend
// changes fast, and a figure is worth little without the code it
// measured.
func revision(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return " (" + strings.TrimSpace(string(out)) + ")"
}

// flush writes the dirty pages out, so that no run pays for the writes
// made before its clock started.
func flush() { exec.Command("sync").Run() }

// writeJobs writes n copies of job into dir, named by jobName, dated a
// minute ago: serve takes a file it finds at start at once only if it
// has not changed for the settle time (1s), and would otherwise wait
// that long for jobs written just before its clock started.
func writeJobs(dir string, n int, job []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	old := time.Now().Add(-time.Minute)
	for i := range n {
		name := filepath.Join(dir, jobName(i))
		if err := os.WriteFile(name, job, 0o600); err != nil {
			return err
		}
		if err := os.Chtimes(name, old, old); err != nil {
			return err
		}
	}
	return nil
}

func jobName(i int) string { return fmt.Sprintf("job%05d", i) }

// checkOut checks that dir holds n jobs, named by jobName, of size bytes
// each (cat passes them on whole).
func checkOut(dir string, n int, size int64) error {
	for i := range n {
		fi, err := os.Stat(filepath.Join(dir, jobName(i)))
		if err != nil {
			return fmt.Errorf("%d of %d jobs out: %v", countJobs(dir), n, err)
		}
		if fi.Size() != size {
			return fmt.Errorf("output %s has %d bytes, want %d", fi.Name(), fi.Size(), size)
		}
	}
	if got := countJobs(dir); got != n {
		return fmt.Errorf("%d outputs of %d jobs", got, n)
	}
	return nil
}

// countJobs counts the files of dir that are jobs (not hidden).
func countJobs(dir string) int {
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// jobText is a job of n bytes: lines of 63 letters and a newline, as
// bench/jobs makes them.
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
