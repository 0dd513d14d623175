package suite

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// The two speed items of issue 30, each a whole command timed side by
// side with what it is compared with, in one run. ns/op is the wall time
// of one command, process start included; peak-RSS-MiB is the summed peak
// resident set of its processes (see BenchmarkVsBash). Both take
// TPIPE_BENCH_BASE=PATH: an older tpipe binary run beside the others, for
// a before and after under the same load.
//
//	go test ./bench/suite -run '^$' -bench 'RecordSize|TailVsGNU' -benchtime 5x

// BenchmarkRecordSize runs `cat FILE | wc -l` on 70 MB of short lines at
// the default record size and at 64 MiB: a larger S is a larger bound on
// memory, and must not cost time (it once cost 40 times the default's).
func BenchmarkRecordSize(b *testing.B) {
	file := seqFile(b, "tpipe-bench-seq-70M", 70_000_000)
	line := "cat " + file + " | wc -l"
	tools := benchTools(b)
	for _, size := range []string{"256K", "64M"} {
		for _, tool := range tools {
			b.Run("S="+size+"/"+tool.name, func(b *testing.B) {
				b.SetBytes(70_000_000)
				runPeak(b, func() *exec.Cmd { return exec.Command(tool.path, "--record-size", size, line) })
			})
		}
	}
}

// BenchmarkTailVsGNU runs `seq 1 20000000 | tail -n 10000000 | wc -l`
// with tpipe (at the default sort memory, and with --sort-memory 64M,
// where tail holds more than that and spills) and with bash and GNU
// coreutils.
func BenchmarkTailVsGNU(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("bash not installed")
	}
	const line = "seq 1 20000000 | tail -n 10000000 | wc -l"
	b.Run("gnu", func(b *testing.B) {
		runPeak(b, func() *exec.Cmd { return exec.Command("bash", "-c", "set -o pipefail; "+line) })
	})
	for _, tool := range benchTools(b) {
		b.Run(tool.name, func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tool.path, line) })
		})
		b.Run(tool.name+"-spill", func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tool.path, "--sort-memory", "64M", line) })
		})
	}
}

// BenchmarkTailVsGNUPaired runs the same command as BenchmarkTailVsGNU,
// GNU's and tpipe's (and base's) one after the other in every iteration,
// so that both meet the same load. On a noisy machine a run of one after
// a run of the other drifts by more than the difference sought; the
// ratios of paired runs do not. It reports the median wall time of each
// (gnu-ms, tpipe-ms, base-ms) and the median of the per-pair ratios
// (tpipe/gnu, base/gnu).
//
//	go test ./bench/suite -run '^$' -bench TailVsGNUPaired -benchtime 21x
func BenchmarkTailVsGNUPaired(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("bash not installed")
	}
	const line = "seq 1 20000000 | tail -n 10000000 | wc -l"
	tools := benchTools(b)
	gnu := func() *exec.Cmd { return exec.Command("bash", "-c", "set -o pipefail; "+line) }
	var gnuMs []float64
	ms := make([][]float64, len(tools))
	ratios := make([][]float64, len(tools))
	for b.Loop() {
		g := wallMs(b, gnu())
		gnuMs = append(gnuMs, g)
		for i, tool := range tools {
			t := wallMs(b, exec.Command(tool.path, line))
			ms[i] = append(ms[i], t)
			ratios[i] = append(ratios[i], t/g)
		}
	}
	b.ReportMetric(median(gnuMs), "gnu-ms")
	for i, tool := range tools {
		b.ReportMetric(median(ms[i]), tool.name+"-ms")
		b.ReportMetric(median(ratios[i]), tool.name+"/gnu")
	}
	b.ReportMetric(0, "ns/op")
}

// wallMs runs c to its end, output dropped, in the C locale, and returns
// its wall time in milliseconds.
func wallMs(b *testing.B, c *exec.Cmd) float64 {
	c.Env = append(os.Environ(), "LC_ALL=C")
	start := time.Now()
	if err := c.Run(); err != nil {
		b.Fatalf("%s: %v", c.Args, err)
	}
	return float64(time.Since(start)) / float64(time.Millisecond)
}

// median returns the middle value of xs (the mean of the two middle
// ones for an even count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

type benchTool struct{ name, path string }

// benchTools returns tpipe built from this checkout, and the binary
// TPIPE_BENCH_BASE names, if set, as "base".
func benchTools(b *testing.B) []benchTool {
	tools := []benchTool{{"tpipe", buildTpipe(b)}}
	if base := os.Getenv("TPIPE_BENCH_BASE"); base != "" {
		tools = append(tools, benchTool{"base", base})
	}
	return tools
}

// runPeak runs b.N commands made by cmd, output dropped, and reports the
// highest peak resident set among them.
func runPeak(b *testing.B, cmd func() *exec.Cmd) {
	var peak int64
	for b.Loop() {
		c := cmd()
		c.Env = append(os.Environ(), "LC_ALL=C")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		got := make(chan int64)
		go func() { sum, _ := samplePeak(c.Process.Pid, stop); got <- sum }()
		err := c.Wait()
		close(stop)
		peak = max(peak, <-got)
		if err != nil {
			b.Fatalf("%s: %v", c.Args, err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
}

// seqFile returns a file of the numbers 1, 2, ... one a line, cut at
// size bytes, made once in the temp directory and kept.
func seqFile(b *testing.B, name string, size int64) string {
	path := filepath.Join(os.TempDir(), name)
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return path
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var n int64
	for i := 1; n < size; i++ {
		k, _ := fmt.Fprintf(w, "%d\n", i)
		n += int64(k)
	}
	err = w.Flush()
	if err == nil {
		err = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	return path
}
