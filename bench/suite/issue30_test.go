package suite

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
