package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkVsBash runs the same pipelines with tpipe and with bash + GNU
// coreutils (LC_ALL=C, pipefail) on one generated file of short log lines,
// interleaved in one run. ns/op is the wall time of one whole pipeline;
// peak-RSS-MiB is the sum of the peak resident sets (VmHWM) of the
// processes of the pipeline: tpipe alone, or bash and its children, sampled
// every 20 ms (more often, the sampler itself competes for the 2 cores).
// (getrusage's maxrss is no use here: Linux carries a forked child's high
// water mark across exec, so every child seems as big as the test binary.)
//
// Sizes: 10 MB and 100 MB by default; TPIPE_BENCH_SIZES=10M,100M,1G to
// choose (the file is generated once into $TMPDIR and reused).
func BenchmarkVsBash(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("bash not installed")
	}
	bin := buildTpipe(b)
	sizes := []string{"10M", "100M"}
	if s := os.Getenv("TPIPE_BENCH_SIZES"); s != "" {
		sizes = splitComma(s)
	}
	pipelines := []struct{ name, line string }{
		{"grep-v-wc", "cat %s | grep -v zzz | wc -l"},
		{"grep-cut-sort-uniq", "cat %s | grep ERROR | cut -d' ' -f4 | sort | uniq -c"},
		{"yes-head", "yes | head -1"},
	}
	for _, size := range sizes {
		file := logFile(b, size)
		for _, p := range pipelines {
			line := p.line
			if p.name != "yes-head" {
				line = fmt.Sprintf(p.line, file)
			}
			for _, tool := range []string{"tpipe", "bash"} {
				b.Run(fmt.Sprintf("%s/size=%s/%s", p.name, size, tool), func(b *testing.B) {
					var cmd func() *exec.Cmd
					if tool == "tpipe" {
						cmd = func() *exec.Cmd { return exec.Command(bin, line) }
					} else {
						cmd = func() *exec.Cmd { return exec.Command("bash", "-c", "set -o pipefail; "+line) }
					}
					var peak int64
					for i := 0; i < b.N; i++ {
						c := cmd()
						c.Env = append(os.Environ(), "LC_ALL=C")
						c.Stdout = nil
						if err := c.Start(); err != nil {
							b.Fatalf("%s: %v", tool, err)
						}
						stop := make(chan struct{})
						got := make(chan int64)
						go func() { got <- samplePeak(c.Process.Pid, stop) }()
						err := c.Wait()
						close(stop)
						peak = max(peak, <-got)
						if err != nil {
							b.Fatalf("%s: %v", tool, err)
						}
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
				})
			}
		}
	}
}

// samplePeak watches the process tree under pid every 20 ms until stop is
// closed and returns the sum, over its processes, of the largest VmHWM
// (peak resident set, reset at exec) seen for each, in bytes.
func samplePeak(pid int, stop <-chan struct{}) int64 {
	peaks := map[int]int64{}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range processTree(pid) {
			if hwm := vmHWM(p); hwm > peaks[p] {
				peaks[p] = hwm
			}
		}
		select {
		case <-stop:
			var sum int64
			for _, v := range peaks {
				sum += v
			}
			return sum
		case <-tick.C:
		}
	}
}

// processTree returns pid and its descendants, from /proc.
func processTree(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		var state byte
		var ppid int
		fmt.Sscanf(string(b[i+1:]), " %c %d", &state, &ppid)
		parent[p] = ppid
	}
	tree := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if !slices.Contains(tree, p) && slices.Contains(tree, pp) {
				tree = append(tree, p)
				changed = true
			}
		}
	}
	return tree
}

func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	var kb int64
	fmt.Sscanf(string(b[i+len("VmHWM:"):]), "%d", &kb)
	return kb << 10
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildTpipe builds cmd/tpipe once per test binary.
func buildTpipe(b *testing.B) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tpipe-bench-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "tpipe")
		out, err := exec.Command("go", "build", "-o", builtBin, "../cmd/tpipe").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return builtBin
}

// logFile returns a file of about size bytes of log lines like
// "2026-11-21 12:00:07 host3 user41 ERROR request 81731 took 17ms",
// generated once and kept in the temp directory.
func logFile(b *testing.B, size string) string {
	n, err := parseBytes(size)
	if err != nil {
		b.Fatal(err)
	}
	name := filepath.Join(os.TempDir(), "tpipe-bench-"+size+".log")
	if st, err := os.Stat(name); err == nil && st.Size() >= n {
		return name
	}
	start := time.Now()
	f, err := os.Create(name + ".tmp")
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	var written int64
	var line []byte
	for i := 0; written < n; i++ {
		line = line[:0]
		line = fmt.Appendf(line, "2026-11-21 12:%02d:%02d host%d user%d %s request %d took %dms\n",
			(i/60)%60, i%60, i%7, (i*7919)%97, levels[(i*31)%len(levels)], i, (i*13)%250)
		w.Write(line)
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	if err := os.Rename(name+".tmp", name); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %s (%d bytes) in %s", name, written, time.Since(start).Round(time.Millisecond))
	return name
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
