package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/bench/internal/side"
	"github.com/tpipe/tpipe/video/shake"
)

// Size is a clip size by its usual name.
type Size struct {
	Name string // "720p"
	W, H int
}

// The sizes of the issue.
var (
	P360  = Size{"360p", 640, 360}
	P720  = Size{"720p", 1280, 720}
	P1080 = Size{"1080p", 1920, 1080}
)

// Config is one run of the video benchmark.
type Config struct {
	Sizes  []Size
	Frames int // frames per clip
	// Long is the size of the memory check: tpipe alone on a clip of
	// LongFactor × Frames frames of that size, whose peak RSS should be
	// that of the short clip.
	Long       Size
	LongFactor int
	// Shakes are the kinds of shake, besides Random, of clips of size
	// Long that join the comparison: the slow ones a smoother of a short
	// lookahead lets through.
	Shakes   []Shake
	Runs     int    // runs per cell
	Tpipe    string // tpipe binary; "" builds ./cmd/tpipe of the current module
	FFmpeg   string // ffmpeg binary; "" looks on PATH
	TmpDir   string // where clips and outputs go, in a directory of their own; "" is os.TempDir
	Progress io.Writer
}

// FullConfig is `bench -video`: 150 frames (6 s at 25 frames/s) of random
// shake at 360p, 720p and 1080p, and of slow sinusoidal shake and of drift
// at 720p, and 450 at 720p for the memory check; about six minutes on 2
// idle cores.
func FullConfig() Config {
	return Config{Sizes: []Size{P360, P720, P1080}, Frames: 150, Long: P720, LongFactor: 3, Shakes: []Shake{Sine, Drift}, Runs: 5}
}

// QuickConfig is `bench -video -quick`: 48 frames a clip, 144 for the
// memory check, under a minute on 2 cores.
func QuickConfig() Config {
	c := FullConfig()
	c.Frames = 48
	c.Runs = 3
	return c
}

// MinRuns is the fewest runs per cell Run takes.
const MinRuns = 3

// The stabilizers, as the report names them.
const (
	ToolTpipe   = "tpipe"
	ToolDeshake = "deshake"
	ToolVidstab = "vidstab"
)

// A cell is one stabilizer on one clip.
type cell struct {
	tool string
	clip *clip
}

// clip is a generated input and where it is.
type clip struct {
	size Size
	spec ClipSpec
	long bool   // the memory check's longer clip
	file string // base name, in the work directory
	// The shake of the input: measured by the meter, and computed from
	// the path it was made with.
	in, truth shake.Result
}

func (c *clip) name() string {
	switch {
	case c.long:
		return fmt.Sprintf("%s×%d", c.size.Name, c.spec.Frames)
	case c.spec.Shake != Random:
		return c.size.Name + " " + c.spec.Shake.String()
	}
	return c.size.Name
}

func (c cell) String() string { return c.tool + " " + c.clip.name() }

func (c cell) out() string {
	return strings.TrimSuffix(c.clip.file, ".y4m") + "." + c.tool + ".y4m"
}

// sample is one run of a cell, measured from outside its processes.
type sample struct {
	wall, cpu time.Duration // elapsed; user + system
	rss       int64         // peak resident set, bytes
}

// A result is a cell's samples and what its output shakes.
type result struct {
	cell
	samples []sample
	shake   shake.Result
	err     string
}

// commands returns the command lines of a cell, run one after the other
// in the work directory. Relative names keep tpipe's script free of
// quoting.
func (c cell) commands(tpipe, ffmpeg string) [][]string {
	in, out := c.clip.file, c.out()
	switch c.tool {
	case ToolTpipe:
		return [][]string{{tpipe, "decode < " + in + " | stabilize | encode > " + out}}
	case ToolDeshake:
		return [][]string{{ffmpeg, "-v", "error", "-nostdin", "-y", "-i", in, "-vf", "deshake", "-f", "yuv4mpegpipe", out}}
	case ToolVidstab:
		trf := strings.TrimSuffix(out, ".y4m") + ".trf"
		return [][]string{
			{ffmpeg, "-v", "error", "-nostdin", "-y", "-i", in, "-vf", "vidstabdetect=result=" + trf, "-f", "null", "-"},
			{ffmpeg, "-v", "error", "-nostdin", "-y", "-i", in, "-vf", "vidstabtransform=input=" + trf, "-f", "yuv4mpegpipe", out},
		}
	}
	panic("video: unknown tool " + c.tool)
}

// A meter measures the peak RSS of one command. The rusage that wait4
// gives a parent is no good for it: a child forked from this process (Go
// forks with the parent's memory shared, until exec) starts its maximum
// at the parent's RSS, which is the size of a frame and more. GNU time,
// a small process that forks the command, has no such floor worth
// speaking of (about 1 MiB); without it, the command's VmHWM (its own
// memory after exec) is sampled every 10 ms.
type rssMeter struct {
	time string // GNU time, or ""
}

func (m rssMeter) String() string {
	if m.time != "" {
		return "GNU time's %M (ru_maxrss of a process forked by a small one)"
	}
	return "VmHWM of the process, sampled every 10 ms (no GNU time on this machine)"
}

// newRSSMeter uses GNU time when /usr/bin/time is it.
func newRSSMeter(ctx context.Context, dir string) rssMeter {
	const bin = "/usr/bin/time"
	out := filepath.Join(dir, "rss-probe")
	if err := exec.CommandContext(ctx, bin, "-f", "%M", "-o", out, "true").Run(); err == nil {
		if b, err := os.ReadFile(out); err == nil {
			if _, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return rssMeter{time: bin}
			}
		}
	}
	return rssMeter{}
}

// run runs one command in dir and measures it.
func (m rssMeter) run(ctx context.Context, dir string, argv []string) (sample, error) {
	var s sample
	rssFile := filepath.Join(dir, "rss.txt")
	name := filepath.Base(argv[0])
	if m.time != "" {
		argv = append([]string{m.time, "-f", "%M", "-o", rssFile}, argv...)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	var hwm int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if m.time == "" {
		wg.Go(func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				hwm = max(hwm, vmHWM(cmd.Process.Pid))
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		})
	}
	err := cmd.Wait()
	s.wall = time.Since(t0)
	close(stop)
	wg.Wait()
	if err != nil {
		return s, fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	ps := cmd.ProcessState
	s.cpu = ps.UserTime() + ps.SystemTime()
	s.rss = hwm
	if m.time != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return s, err
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return s, fmt.Errorf("GNU time's output %q: %v", b, err)
		}
		s.rss = kib << 10
	}
	return s, nil
}

// vmHWM returns the peak resident set of process pid, from
// /proc/PID/status, or 0 when it cannot be read.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// runCmds runs the commands one after the other: the wall and CPU times
// add up, the peak RSS is the largest of them.
func (m rssMeter) runCmds(ctx context.Context, dir string, cmds [][]string) (sample, error) {
	var s sample
	for _, argv := range cmds {
		r, err := m.run(ctx, dir, argv)
		if err != nil {
			return s, err
		}
		s.wall += r.wall
		s.cpu += r.cpu
		s.rss = max(s.rss, r.rss)
	}
	return s, nil
}

// ErrNoFFmpeg is returned by Run when there is no ffmpeg to compare with.
var ErrNoFFmpeg = errors.New("video: ffmpeg not found on PATH: the benchmark compares tpipe with ffmpeg's deshake and vid.stab")

// Run makes the clips, measures every cell cfg.Runs times in rounds (each
// round runs every cell once in a fresh random order, so drift of the
// machine hits all alike), measures the shake of every output, and writes
// video.md into dir, printing the report and then its path on stdout.
func Run(ctx context.Context, cfg Config, dir string, stdout io.Writer) error {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if cfg.Runs < MinRuns {
		return fmt.Errorf("video: %d runs per cell: want at least %d", cfg.Runs, MinRuns)
	}
	ffmpeg := cfg.FFmpeg
	if ffmpeg == "" {
		var err error
		if ffmpeg, err = exec.LookPath("ffmpeg"); err != nil {
			return ErrNoFFmpeg
		}
	}
	tools, missing, err := ffmpegTools(ctx, ffmpeg)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(cfg.TmpDir, "tpipe-vbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tpipe, which, err := side.Tpipe(ctx, cfg.Tpipe, work, progress)
	if err != nil {
		return fmt.Errorf("video: %w", err)
	}
	meter := newRSSMeter(ctx, work)
	clips, err := makeClips(cfg, work, progress)
	if err != nil {
		return err
	}
	var cells []cell
	for _, c := range clips {
		if c.long {
			cells = append(cells, cell{ToolTpipe, c})
			continue
		}
		for _, t := range append([]string{ToolTpipe}, tools...) {
			cells = append(cells, cell{t, c})
		}
	}
	res := make([]result, len(cells))
	for i, c := range cells {
		res[i].cell = c
	}
	start := time.Now()
	err = side.Rounds(ctx, cfg.Runs, len(cells), progress, func(i int) error {
		r := &res[i]
		if r.err != "" {
			return nil
		}
		s, err := meter.runCmds(ctx, work, r.commands(tpipe, ffmpeg))
		if err != nil {
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
	// The outputs of one cell are the same bytes every run (checked for
	// tpipe by its tests; ffmpeg's filters are deterministic too): the
	// last run's is measured, after the rounds, so the meter's work is no
	// run's load.
	fmt.Fprintf(progress, "measuring shake (%s)\n", time.Since(start).Round(time.Second))
	for i := range res {
		r := &res[i]
		if r.err != "" {
			continue
		}
		sh, err := r.clip.spec.MeasureFile(filepath.Join(work, r.out()))
		if err != nil {
			r.err = "output: " + err.Error()
			continue
		}
		r.shake = sh
		os.Remove(filepath.Join(work, r.out()))
	}
	rep := report{cfg: cfg, clips: clips, results: res, missing: missing, date: time.Now(), tpipe: which, rss: meter}
	var buf bytes.Buffer
	rep.write(&buf)
	return side.WriteReport(dir, "video.md", buf.Bytes(), stdout)
}

// ffmpegTools returns the ffmpeg stabilizers this ffmpeg has, and a line
// for each it lacks.
func ffmpegTools(ctx context.Context, ffmpeg string) (tools, missing []string, err error) {
	out, err := exec.CommandContext(ctx, ffmpeg, "-hide_banner", "-filters").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("video: %s -filters: %v", ffmpeg, err)
	}
	has := func(f string) bool {
		for line := range strings.Lines(string(out)) {
			if fs := strings.Fields(line); len(fs) >= 2 && fs[1] == f {
				return true
			}
		}
		return false
	}
	if has("deshake") {
		tools = append(tools, ToolDeshake)
	} else {
		missing = append(missing, "deshake: this ffmpeg has no deshake filter")
	}
	if has("vidstabdetect") && has("vidstabtransform") {
		tools = append(tools, ToolVidstab)
	} else {
		missing = append(missing, "vidstab: this ffmpeg is built without libvidstab")
	}
	return tools, missing, nil
}

// makeClips writes the clips of cfg into dir and measures their shake.
func makeClips(cfg Config, dir string, progress io.Writer) ([]*clip, error) {
	var clips []*clip
	for i, sz := range cfg.Sizes {
		clips = append(clips, &clip{size: sz, spec: ClipSpec{W: sz.W, H: sz.H, Frames: cfg.Frames, Seed: uint64(i + 1)}})
	}
	for _, sh := range cfg.Shakes {
		if sh != Random {
			sz := cfg.Long
			clips = append(clips, &clip{size: sz, spec: ClipSpec{W: sz.W, H: sz.H, Frames: cfg.Frames, Seed: 1, Shake: sh}})
		}
	}
	if cfg.LongFactor > 1 {
		seed := uint64(1)
		if i := slices.Index(cfg.Sizes, cfg.Long); i >= 0 {
			seed = uint64(i + 1) // the same scene and path as the short clip, longer
		}
		clips = append(clips, &clip{size: cfg.Long, long: true, spec: ClipSpec{W: cfg.Long.W, H: cfg.Long.H, Frames: cfg.LongFactor * cfg.Frames, Seed: seed}})
	}
	for _, c := range clips {
		c.file = fmt.Sprintf("in-%dx%d-%d-%v.y4m", c.spec.W, c.spec.H, c.spec.Frames, c.spec.Shake)
		fmt.Fprintf(progress, "making %s: %dx%d, %d frames\n", c.file, c.spec.W, c.spec.H, c.spec.Frames)
		name := filepath.Join(dir, c.file)
		if err := c.spec.WriteFile(name); err != nil {
			return nil, err
		}
		if c.long {
			continue
		}
		var err error
		if c.in, err = c.spec.MeasureFile(name); err != nil {
			return nil, err
		}
		c.truth = c.spec.TrueShake()
	}
	return clips, nil
}
