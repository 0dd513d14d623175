package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"
)

// A workload is a record size and a kind of stage, over a fixed number of
// input bytes.
type workload struct {
	size  string // "64B", "4KiB", "1MiB"
	rec   int    // record size in bytes
	bytes int64  // input bytes per run
	kind  string // kindBalanced, kindSlow or kindCPU
}

// The kinds of stage.
const (
	kindBalanced = "balanced" // every stage a plain copy
	kindSlow     = "slow"     // one stage, in the middle, hashes each record slowRounds times
	kindCPU      = "cpu"      // every stage hashes each record cpuRounds times
)

const (
	slowRounds = 4
	cpuRounds  = 1
)

func (w workload) name() string { return w.size + "/" + w.kind }

func (w workload) records() int { return int(max(1, w.bytes/int64(w.rec))) }

// rounds is the hashing each of the stages does per record (see work).
func (w workload) rounds(stages int) []int {
	r := make([]int, stages)
	switch w.kind {
	case kindSlow:
		r[stages/2] = slowRounds
	case kindCPU:
		for i := range r {
			r[i] = cpuRounds
		}
	}
	return r
}

// The policies that are not tpipe's.
const (
	policyChannels = "channels" // goroutines and channels, in process
	policyBash     = "bash"     // bash + coreutils cat, balanced workloads only
)

// config is a benchmark matrix: every workload × stage count × policy, and
// for the concurrent policy every B of bPoints.
type config struct {
	workloads []workload
	stages    []int
	policies  []string
	bPoints   func(bound int) []int // Bs for concurrent; others run at their default
	runs      int
	timeout   time.Duration // per run
	tmpDir    string        // for bash's input files; "" means os.TempDir()
	progress  io.Writer     // nil discards
}

func sizes(bytes [3]int64) []workload {
	var ws []workload
	for _, k := range []string{kindBalanced, kindSlow, kindCPU} {
		ws = append(ws,
			workload{"64B", 64, bytes[0], k},
			workload{"4KiB", 4 << 10, bytes[1], k},
			workload{"1MiB", 1 << 20, bytes[2], k})
	}
	return ws
}

var allPolicies = []string{"concurrent", "ros", "fused", "serial", "auto", policyChannels, policyBash}

func fullConfig() config {
	return config{
		workloads: sizes([3]int64{32 << 20, 64 << 20, 128 << 20}),
		stages:    []int{3, 10},
		policies:  allPolicies,
		bPoints:   func(b int) []int { return []int{1, max(1, b/2), b, 2 * b} },
		runs:      5,
		timeout:   2 * time.Minute,
	}
}

func quickConfig() config {
	c := fullConfig()
	c.workloads = sizes([3]int64{4 << 20, 8 << 20, 16 << 20})
	c.bPoints = func(b int) []int { return []int{1, b, 2 * b} }
	c.timeout = 20 * time.Second
	return c
}

// A cell is one configuration measured runs times.
type cell struct {
	w       workload
	stages  int
	policy  string
	buffers int // asked B; 0 means the policy's default
}

func (c cell) String() string {
	b := "default"
	if c.buffers > 0 {
		b = fmt.Sprint(c.buffers)
	}
	return fmt.Sprintf("%s/stages=%d/%s/B=%s", c.w.name(), c.stages, c.policy, b)
}

// sample is one run of a cell.
type sample struct {
	wall     time.Duration
	mem      int64  // peak heap delta in process, peak RSS sum for bash
	bufHW    int    // buffers_high_water; 0 where there is none
	switches int64  // ros task switches; -1 where not counted
	disk     int64  // serial's bytes written to disk
	runsAs   string // the policy auto chose
	buffers  int    // B the run used; 0 where there is none
}

// stat is the median, min and max of a cell's runs.
type stat struct{ med, min, max float64 }

func summarize(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stat{med: med, min: s[0], max: s[n-1]}
}

// result is what the report shows of a cell.
type result struct {
	cell
	records  int
	runs     int
	recPerS  stat // records per second
	nsPerRS  stat // wall ns per record per stage
	mem      int64
	bufHW    int
	switches int64
	disk     int64
	runsAs   string
	buffers  int
	err      string // the first failure; the cell is dropped after it
}

// cells lists the matrix of cfg.
func (cfg config) cells() []cell {
	var cs []cell
	for _, w := range cfg.workloads {
		for _, st := range cfg.stages {
			for _, p := range cfg.policies {
				switch {
				case p == policyBash && w.kind != kindBalanced:
					continue
				case p == "concurrent" && cfg.bPoints != nil:
					g, _ := chainGraph(chainSpec{policy: p, rounds: make([]int, st)})
					for _, b := range dedupe(cfg.bPoints(g.Bound())) {
						cs = append(cs, cell{w, st, p, b})
					}
				default:
					cs = append(cs, cell{w, st, p, 0})
				}
			}
		}
	}
	return cs
}

func dedupe(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// runMatrix measures every cell cfg.runs times, in rounds: each round runs
// every cell once in a fresh random order, so slow drift of the machine
// (heat, other load) spreads over all cells alike.
func runMatrix(ctx context.Context, cfg config) ([]result, error) {
	cs := cfg.cells()
	samples := make([][]sample, len(cs))
	errs := make([]string, len(cs))
	inputs := map[int64]string{} // bash input files by size
	progress := cfg.progress
	if progress == nil {
		progress = io.Discard
	}
	start := time.Now()
	for round := range cfg.runs {
		fmt.Fprintf(progress, "round %d/%d: %d cells (%s)\n", round+1, cfg.runs, len(cs), time.Since(start).Round(time.Second))
		for _, i := range rand.Perm(len(cs)) {
			if errs[i] != "" {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c := cs[i]
			var s sample
			var err error
			if c.policy == policyBash {
				file, ok := inputs[c.w.bytes]
				if !ok {
					dir := cfg.tmpDir
					if dir == "" {
						dir = os.TempDir()
					}
					file, err = genLogFile(dir, fmt.Sprintf("tpipe-bench-%d.log", c.w.bytes), c.w.bytes)
					if err != nil {
						return nil, fmt.Errorf("bash input: %w", err)
					}
					inputs[c.w.bytes] = file
				}
				s, err = runBashCell(ctx, c, file, cfg.timeout)
			} else {
				s, err = runCell(ctx, c, cfg.timeout)
			}
			if err != nil {
				errs[i] = err.Error()
				fmt.Fprintf(progress, "%s: %v\n", c, err)
				continue
			}
			samples[i] = append(samples[i], s)
		}
	}
	res := make([]result, len(cs))
	for i, c := range cs {
		res[i] = aggregate(c, samples[i])
		res[i].err = errs[i]
	}
	return res, nil
}

// aggregate reduces a cell's samples: median, min and max of the rates,
// the largest memory and high water seen, the median switches and disk.
func aggregate(c cell, ss []sample) result {
	r := result{cell: c, records: c.w.records(), runs: len(ss), switches: -1}
	if len(ss) == 0 {
		return r
	}
	var rate, nsrs, sw, disk []float64
	for _, s := range ss {
		ns := float64(max(s.wall.Nanoseconds(), 1))
		rate = append(rate, float64(r.records)*1e9/ns)
		nsrs = append(nsrs, float64(s.wall.Nanoseconds())/float64(r.records)/float64(max(c.stages, 1)))
		sw = append(sw, float64(s.switches))
		disk = append(disk, float64(s.disk))
		r.mem = max(r.mem, s.mem)
		r.bufHW = max(r.bufHW, s.bufHW)
	}
	r.recPerS = summarize(rate)
	r.nsPerRS = summarize(nsrs)
	r.switches = int64(summarize(sw).med)
	r.disk = int64(summarize(disk).med)
	r.runsAs = ss[0].runsAs
	r.buffers = ss[0].buffers
	return r
}

// heapObjects is the runtime/metrics name of the bytes of live and
// not yet swept heap objects.
const heapObjects = "/memory/classes/heap/objects:bytes"

// heapPeak samples heap object bytes every millisecond until stop is
// closed, and returns the largest seen. runtime/metrics does not stop the
// world (runtime.ReadMemStats would, a thousand times a second).
func heapPeak(stop <-chan struct{}) int64 {
	m := []metrics.Sample{{Name: heapObjects}}
	var peak int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(m)
		peak = max(peak, int64(m[0].Value.Uint64()))
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}

// runCell runs an in-process cell once. Memory is the peak of heap object
// bytes above what was live after a GC just before the run: not RSS, which
// in one process cannot be told apart per cell.
func runCell(ctx context.Context, c cell, timeout time.Duration) (sample, error) {
	rec := make([]byte, c.w.rec)
	for i := range rec {
		rec[i] = byte('a' + i%26)
	}
	rounds := c.w.rounds(c.stages)
	spec := chainSpec{policy: c.policy, n: c.w.records(), rec: rec, rounds: rounds, buffers: c.buffers}
	var lc *lineCounter
	if c.policy == "ros" {
		lc = &lineCounter{}
		spec.trace = lc
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	runtime.GC()
	m := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(m)
	base := int64(m[0].Value.Uint64())
	stop := make(chan struct{})
	var peak int64
	var wg sync.WaitGroup
	wg.Go(func() { peak = heapPeak(stop) })

	s := sample{switches: -1}
	t0 := time.Now()
	if c.policy == policyChannels {
		n := runChannels(spec.n, rec, rounds)
		s.wall = time.Since(t0)
		if want := int64(spec.n) * int64(len(rec)); n != want {
			close(stop)
			wg.Wait()
			return s, fmt.Errorf("sink saw %d bytes, want %d", n, want)
		}
	} else {
		st, err := runChain(ctx, spec)
		s.wall = time.Since(t0)
		if err != nil {
			close(stop)
			wg.Wait()
			return s, err
		}
		s.bufHW, s.runsAs, s.buffers = st.BuffersHighWater, st.Runs, st.Buffers
		if st.Disk != nil {
			s.disk = st.Disk.Written
		}
	}
	close(stop)
	wg.Wait()
	s.mem = max(0, peak-base)
	if lc != nil {
		s.switches = lc.n
	}
	return s, nil
}

// runBashCell runs `cat FILE | cat | ... > /dev/null` with c.stages copy
// stages, and measures the sum of the peak RSS of bash and its children.
func runBashCell(ctx context.Context, c cell, file string, timeout time.Duration) (sample, error) {
	line := "set -o pipefail; cat " + file + strings.Repeat(" | cat", c.stages) + " > /dev/null"
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, fmt.Errorf("bash: %w", err)
	}
	stop := make(chan struct{})
	var peak int64
	var wg sync.WaitGroup
	wg.Go(func() { peak = samplePeak(cmd.Process.Pid, stop) })
	err := cmd.Wait()
	wall := time.Since(t0)
	close(stop)
	wg.Wait()
	if err != nil {
		return sample{}, fmt.Errorf("bash: %w", err)
	}
	return sample{wall: wall, mem: peak, switches: -1}, nil
}
