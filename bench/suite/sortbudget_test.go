package suite

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tpipe/tpipe/bench/corpus"
)

// BenchmarkSortBudget measures what the automatic --sort-memory (192 MiB
// for a job, shared by its tasks that spill) costs a large sort against
// the 1 GiB it was before: sort -n of 20M shuffled numbers (169 MB), which
// spills under either, and sort -k7 of the 1M-line access log (88 MB),
// which fits either. Each is a whole process; GNU sort runs beside.
//
//	go test ./bench/suite -run '^$' -bench SortBudget -benchtime 3x
func BenchmarkSortBudget(b *testing.B) {
	dir := filepath.Join(os.TempDir(), "tpipe-bench-sort")
	nums := filepath.Join(dir, "shuffled-20m")
	if _, err := os.Stat(nums); err != nil {
		if err := writeShuffled(nums, 20_000_000); err != nil {
			b.Fatal(err)
		}
	}
	in, err := corpus.Generate(filepath.Join(os.TempDir(), "tpipe-bench-awk"), 1_000_000, 1)
	if err != nil {
		b.Fatal(err)
	}
	tp := buildTpipe(b)
	for _, c := range []struct{ name, line string }{
		{"numbers", "sort -n " + nums + " | wc -l"},
		{"log-k7", "sort -k7,7 " + in.Log + " | wc -l"},
	} {
		b.Run(c.name+"/gnu", func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command("bash", "-c", "set -o pipefail; "+c.line) })
		})
		b.Run(c.name+"/auto", func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tp, c.line) })
		})
		b.Run(c.name+"/1G", func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tp, "--sort-memory", "1G", c.line) })
		})
	}
}

// writeShuffled writes 1..n, one a line, in a fixed random order.
func writeShuffled(name string, n int) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var line []byte
	for _, x := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		line = append(strconv.AppendInt(line[:0], int64(x+1), 10), '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(name+".tmp", name)
}
