package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// benchJobs runs b.N small jobs (4 KiB) through one stage of workers with
// filter f and reports jobs/s. The jobs are written before the clock.
// With sync, every output is fsynced with its directory (in group
// commits); on tmpfs that costs nothing, so run those on a disk
// (TMPDIR=/var/tmp).
func benchJobs(b *testing.B, workers int, sync bool, f Func) {
	root := b.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	os.MkdirAll(in, 0o700)
	job := make([]byte, 4<<10)
	for i := range job {
		job[i] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!\n"[i%64]
	}
	for i := range b.N {
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("job%07d", i)), job, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(job)))
	b.ResetTimer()
	n, err := Run(context.Background(), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: f}},
		Options{Once: true, NoSync: !sync, Workers: workers})
	if err != nil || n.Done != b.N {
		b.Fatalf("%+v, %v", n, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// copyFunc copies the job: the engine's own cost, with no runner.
func copyFunc(_ context.Context, j *Job) (int, error) {
	f, err := os.Open(j.In[0])
	if err != nil {
		return -1, err
	}
	defer f.Close()
	_, err = io.Copy(j.Out[0], f)
	return 0, err
}

// BenchmarkPmjq: small jobs through tpipe's in-process filter of builtins,
// and through a plain copy, the engine's part of the cost.
func BenchmarkPmjq(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("builtins/workers=%d", w), func(b *testing.B) { benchJobs(b, w, false, script("tr a-z A-Z | rev")) })
		b.Run(fmt.Sprintf("copy/workers=%d", w), func(b *testing.B) { benchJobs(b, w, false, copyFunc) })
		b.Run(fmt.Sprintf("builtins-fsync/workers=%d", w), func(b *testing.B) { benchJobs(b, w, true, script("tr a-z A-Z | rev")) })
	}
}
