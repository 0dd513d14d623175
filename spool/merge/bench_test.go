package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/place"
)

// benchAndMerge runs one and-merge of n files in each of two folders,
// each set through the command words (a builtin: in-process), with
// workers at once, and reports sets per second.
func benchAndMerge(b *testing.B, n, workers int, words []string) {
	for b.Loop() {
		b.StopTimer()
		root := b.TempDir()
		for _, d := range []string{"a", "b"} {
			os.MkdirAll(filepath.Join(root, d), 0o700)
			for i := range n {
				os.WriteFile(filepath.Join(root, d, fmt.Sprintf("%06d", i)), []byte(d+"\n"), 0o600)
			}
		}
		w, err := place.NewWorker(place.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		out, _ := w.Open(filepath.Join(root, "out"))
		re := regexp.MustCompile(`(.*)`)
		e, err := New(Config{
			Worker:  w,
			Inputs:  []Input{{Dir: filepath.Join(root, "a"), Pattern: re, Key: GroupKey}, {Dir: filepath.Join(root, "b"), Pattern: re, Key: GroupKey}},
			Workers: workers, Once: true, Take: TakeClaim,
			Run: CommandRun(words, out, nil, runner.Config{}),
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := e.Run(context.Background())
		b.StopTimer()
		w.Close()
		if err != nil || res.Done != n {
			b.Fatalf("%+v, %v", res, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sets/s")
}

// BenchmarkAndMerge10k is pmjq's bug_cartesianproduct at its size:
// 10,000 files in each of two folders, paired by name, each pair run
// through the builtin cat into an output place.
func BenchmarkAndMerge10k(b *testing.B) {
	benchAndMerge(b, 10000, 2, []string{"cat", "$1", "$2"})
}
