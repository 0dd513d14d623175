package suite

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/sched"
)

// A workload is a record size and a kind of stage, over a fixed number of
// input bytes.
type workload struct {
	size  string // "64B", "4KiB", "1MiB"
	rec   int    // record size in bytes
	bytes int64  // input bytes per run
	kind  string // kindBalanced, kindSlow, kindCPU, or kindDAG for the graph cells
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

// tpipe's policies, named as its table names them: a cell's policy is a
// name, since the matrix has rows that are not tpipe's.
var (
	pAuto       = sched.Auto.String()
	pConcurrent = sched.Concurrent.String()
	pROS        = sched.ROS.String()
	pFused      = sched.Fused.String()
	pSerial     = sched.Serial.String()
)

// The policies that are not tpipe's, and cap auto.
const (
	policyChannels = "channels" // goroutines and channels, in process
	policyBash     = "bash"     // bash + coreutils cat, balanced workloads only
	// policyCapAuto is the concurrent policy with capacities sized at run
	// time (sched.Options.CapAuto, --cap auto) at its default B; run at
	// the most stages only.
	policyCapAuto = "cap-auto"
)

// inputPolicies are the policies of the memory-against-input-size cells:
// concurrent at its default B, the thrifty ones and the two outside
// baselines.
var inputPolicies = []string{pConcurrent, pROS, pSerial, policyChannels, policyBash}

// dagPolicies are the policies of the graph cells; channels has no plain
// Go version of split-cat (see runChannelsDAG).
var dagPolicies = []string{pConcurrent, pROS, pSerial, policyChannels}

// config is a benchmark matrix: every workload × stage count × policy, and
// for the concurrent policy every B of bPoints; then the cells of the
// memory-against-input plot and of the graph shapes.
type config struct {
	workloads []workload
	stages    []int
	policies  []string
	bPoints   func(bound int) []int // Bs for concurrent; others run at their default
	// inputSizes are the input bytes of 64 B lines, balanced, at the most
	// stages, for the memory-against-input plot; none when empty.
	inputSizes []int64
	// dagRecords is how many 1 KiB source records each graph shape runs;
	// 0: no graph cells.
	dagRecords int
	runs       int
	timeout    time.Duration // per run
	tmpDir     string        // for bash's input files and spills; "" means os.TempDir()
	progress   io.Writer     // nil discards
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

// inputWorkload is the workload of the memory-against-input cells.
func inputWorkload(bytes int64) workload { return workload{"64B", 64, bytes, kindBalanced} }

// dagWorkload is the workload of the graph cells: n records of 1 KiB, each
// stage hashing each record once.
func dagWorkload(n int) workload { return workload{"1KiB", 1 << 10, int64(n) << 10, kindDAG} }

// kindDAG marks the graph cells' workload; its stages are the shape's.
const kindDAG = "dag"

// allPolicies are the full matrix's policies: every row of tpipe's policy
// table, so that a new policy is benchmarked without a change here (those
// that choose another at run time last, cap auto after concurrent), then
// the two outside baselines.
var allPolicies = tablePolicies()

func tablePolicies() []string {
	var ps, choosers []string
	for _, p := range sched.Policies() {
		if p.Chooses() {
			choosers = append(choosers, p.String())
			continue
		}
		ps = append(ps, p.String())
		if p == sched.Concurrent {
			ps = append(ps, policyCapAuto)
		}
	}
	return append(append(ps, choosers...), policyChannels, policyBash)
}

func fullConfig() config {
	return config{
		workloads:  sizes([3]int64{32 << 20, 64 << 20, 128 << 20}),
		stages:     []int{3, 10},
		policies:   allPolicies,
		bPoints:    func(b int) []int { return []int{1, 2, 4, max(1, b/4), max(1, b/2), b, 2 * b} },
		inputSizes: []int64{16 << 20, 64 << 20, 256 << 20},
		dagRecords: 32 << 10,
		runs:       5,
		timeout:    2 * time.Minute,
	}
}

func quickConfig() config {
	c := fullConfig()
	c.workloads = sizes([3]int64{4 << 20, 8 << 20, 16 << 20})
	c.bPoints = func(b int) []int { return []int{1, 4, max(1, b/2), b, 2 * b} }
	c.inputSizes = []int64{1 << 20, 4 << 20, 16 << 20}
	c.dagRecords = 4 << 10
	c.timeout = 20 * time.Second
	return c
}

func (cfg config) maxStages() int {
	if len(cfg.stages) == 0 {
		return 0
	}
	return slices.Max(cfg.stages)
}

// A cell is one configuration measured runs times.
type cell struct {
	w       workload
	stages  int
	policy  string
	buffers int    // asked B; 0 means the policy's default
	shape   string // a graph shape of dagShapes; "" for a chain
}

func (c cell) String() string {
	b := "default"
	if c.buffers > 0 {
		b = fmt.Sprint(c.buffers)
	}
	if c.shape != "" {
		return fmt.Sprintf("%s/%s/n=%d/%s", c.shape, c.w.size, c.w.records(), c.policy)
	}
	return fmt.Sprintf("%s/%dB/stages=%d/%s/B=%s", c.w.name(), c.w.bytes, c.stages, c.policy, b)
}

// sample is one run of a cell.
type sample struct {
	wall     time.Duration
	mem      int64  // peak heap delta in process, peak RSS sum for bash
	memLow   bool   // bash: the sampler missed some of its processes
	bufHW    int    // buffers_high_water; 0 where there is none
	switches int64  // ros task switches; -1 where not counted
	disk     int64  // serial's bytes written to disk
	runsAs   string // the policy auto chose
	buffers  int    // B the run used; 0 where there is none
	capAuto  *sched.CapAutoStats
	growths  int   // queue growths that resolved a graph's stall
	spilled  int64 // record bytes spilled to disk to resolve one
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
	memLow   bool // mem is a lower bound: no run's sampler saw every process
	bufHW    int
	switches int64
	disk     int64
	runsAs   string
	buffers  int
	// Where cap auto landed (policyCapAuto only): the sum of the final
	// queue capacities (median, min, max over the runs), the median
	// window and the bottleneck most runs named.
	capBuffers stat
	capWindow  int
	capNeck    string
	growths    int    // median
	spilled    int64  // median
	err        string // the first failure; the cell is dropped after it
}

// cells lists the cells of cfg: the matrix, then those of the memory
// against input plot and the graph shapes that the matrix does not
// already hold.
func (cfg config) cells() []cell {
	var cs []cell
	add := func(c cell) {
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	most := cfg.maxStages()
	for _, w := range cfg.workloads {
		for _, st := range cfg.stages {
			for _, p := range cfg.policies {
				switch {
				case p == policyBash && w.kind != kindBalanced:
				case p == policyCapAuto && st != most:
				case p == pConcurrent && cfg.bPoints != nil:
					for _, b := range dedupe(cfg.bPoints(chainBound(st))) {
						add(cell{w: w, stages: st, policy: p, buffers: b})
					}
				default:
					add(cell{w: w, stages: st, policy: p})
				}
			}
		}
	}
	for _, n := range cfg.inputSizes {
		for _, p := range inputPolicies {
			c := cell{w: inputWorkload(n), stages: most, policy: p}
			if p == pConcurrent {
				c.buffers = chainBound(most) // its default, as the matrix names it
			}
			add(c)
		}
	}
	if cfg.dagRecords > 0 {
		for _, shape := range dagShapes {
			for _, p := range dagPolicies {
				if p == policyChannels && !channelsHasShape(shape) {
					continue
				}
				add(cell{w: dagWorkload(cfg.dagRecords), stages: 2, policy: p, shape: shape})
			}
		}
	}
	return cs
}

// chainBound is the concurrent policy's default B for a chain of stages:
// the sum of its queue capacities.
func chainBound(stages int) int {
	g, _ := chainGraph(chainSpec{policy: pConcurrent, rounds: make([]int, stages)})
	return g.Bound()
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
	dir := cfg.tmpDir
	if dir == "" {
		dir = os.TempDir()
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
					file, err = genLogFile(dir, fmt.Sprintf("tpipe-bench-%d.log", c.w.bytes), c.w.bytes)
					if err != nil {
						return nil, fmt.Errorf("bash input: %w", err)
					}
					inputs[c.w.bytes] = file
				}
				s, err = runBashCell(ctx, c, file, cfg.timeout)
			} else {
				s, err = runCell(ctx, c, dir, cfg.timeout)
			}
			if err != nil {
				errs[i] = err.Error()
				fmt.Fprintf(progress, "%s: %v\n", c, err)
				continue
			}
			samples[i] = append(samples[i], s)
		}
	}
	fmt.Fprintf(progress, "done: %d cells × %d runs in %s\n", len(cs), cfg.runs, time.Since(start).Round(time.Second))
	res := make([]result, len(cs))
	for i, c := range cs {
		res[i] = aggregate(c, samples[i])
		res[i].err = errs[i]
	}
	return res, nil
}

// aggregate reduces a cell's samples: median, min and max of the rates,
// the largest memory and high water seen, the median switches, disk,
// growths and spilled bytes, and where cap auto landed.
func aggregate(c cell, ss []sample) result {
	r := result{cell: c, records: c.w.records(), runs: len(ss), switches: -1}
	if len(ss) == 0 {
		return r
	}
	var rate, nsrs, sw, disk, grow, spill, capB, capW []float64
	necks := map[string]int{}
	for _, s := range ss {
		ns := float64(max(s.wall.Nanoseconds(), 1))
		rate = append(rate, float64(r.records)*1e9/ns)
		nsrs = append(nsrs, float64(s.wall.Nanoseconds())/float64(r.records)/float64(max(c.stages, 1)))
		sw = append(sw, float64(s.switches))
		disk = append(disk, float64(s.disk))
		grow = append(grow, float64(s.growths))
		spill = append(spill, float64(s.spilled))
		if s.mem > r.mem || s.mem == r.mem && !s.memLow {
			r.mem, r.memLow = s.mem, s.memLow
		}
		r.bufHW = max(r.bufHW, s.bufHW)
		if s.capAuto != nil {
			capB = append(capB, float64(s.capAuto.Buffers))
			capW = append(capW, float64(s.capAuto.Window))
			necks[s.capAuto.Bottleneck]++
		}
	}
	r.recPerS = summarize(rate)
	r.nsPerRS = summarize(nsrs)
	r.switches = int64(summarize(sw).med)
	r.disk = int64(summarize(disk).med)
	r.growths = int(summarize(grow).med)
	r.spilled = int64(summarize(spill).med)
	r.capBuffers = summarize(capB)
	r.capWindow = int(summarize(capW).med)
	best := 0
	for _, name := range slices.Sorted(maps.Keys(necks)) { // the most named; ties to the first by name
		if necks[name] > best {
			r.capNeck, best = name, necks[name]
		}
	}
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
// in one process cannot be told apart per cell. Graph shapes spill into
// tmpDir.
func runCell(ctx context.Context, c cell, tmpDir string, timeout time.Duration) (sample, error) {
	rec := make([]byte, c.w.rec)
	for i := range rec {
		rec[i] = byte('a' + i%26)
	}
	rounds := c.w.rounds(c.stages)
	spec := chainSpec{policy: c.policy, n: c.w.records(), rec: rec, rounds: rounds, buffers: c.buffers}
	if c.policy == policyCapAuto {
		spec.policy, spec.capAuto = pConcurrent, true
	}
	var lc *lineCounter
	if c.policy == pROS && c.shape == "" {
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
	var st *sched.Stats
	var err error
	t0 := time.Now()
	switch {
	case c.shape != "" && c.policy == policyChannels:
		err = runChannelsDAG(c.shape, spec.n, rec, 1)
	case c.shape != "":
		st, err = runDAG(ctx, dagSpec{shape: c.shape, policy: c.policy, n: spec.n, rounds: 1, rec: rec, buffers: c.buffers, tempDir: tmpDir})
	case c.policy == policyChannels:
		if n, want := runChannels(spec.n, rec, rounds), int64(spec.n)*int64(len(rec)); n != want {
			err = fmt.Errorf("sink saw %d bytes, want %d", n, want)
		}
	default:
		st, err = runChain(ctx, spec)
	}
	s.wall = time.Since(t0)
	close(stop)
	wg.Wait()
	if err != nil {
		return s, err
	}
	if st != nil {
		s.bufHW, s.runsAs, s.buffers = st.BuffersHighWater, st.Runs.String(), st.Buffers
		s.capAuto, s.growths, s.spilled = st.CapAuto, st.Growths, st.SpilledBytes
		if st.Disk != nil {
			s.disk = st.Disk.Written
		}
	}
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
	var seen int
	var wg sync.WaitGroup
	wg.Go(func() { peak, seen = samplePeak(cmd.Process.Pid, stop) })
	err := cmd.Wait()
	wall := time.Since(t0)
	close(stop)
	wg.Wait()
	if err != nil {
		return sample{}, fmt.Errorf("bash: %w", err)
	}
	// bash and a cat per stage plus the first: a run shorter than the
	// sampler's period may end before it sees them all.
	return sample{wall: wall, mem: peak, memLow: seen < c.stages+2, switches: -1}, nil
}
