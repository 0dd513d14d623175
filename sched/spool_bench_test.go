package sched

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// BenchmarkSpool runs src | upper | number | count through the spool over
// 64000 lines (about 4.5 MB): upper is a map (run per segment), number a
// whole-stream stage (a line counter, stateful), count a sink. "cold"
// runs on an empty spool each time; "cached" runs again on a spool that
// holds the last run's tokens, so every stage but the sink is found
// cached (the plan reads the end tokens, the sink reads the places). It
// reports the wall time per input line. The file stands alone so that it
// can be copied onto an older commit for a before figure.
func BenchmarkSpool(b *testing.B) {
	const n = 64000
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, "line %07d of the spool benchmark, a record of some seventy bytes\n", i)
	}
	build := func(got *int) *graph.Graph {
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(lines...))
		g.Tasks[src].Ident = "src bench"
		var upper func() *task.PerRecord
		upper = func() *task.PerRecord {
			r := task.Map(func(rec, scratch []byte) []byte { return bytes.ToUpper(append(scratch, rec...)) })
			r.Fresh = upper
			return &r
		}
		up := g.AddRecord("upper", *upper())
		g.Tasks[up].Ident = "upper"
		k := 0
		num := g.AddRecord("number", task.Map(func(rec, scratch []byte) []byte {
			k++
			scratch = strconv.AppendInt(scratch, int64(k), 10)
			return append(append(scratch, ' '), rec...)
		}))
		g.Tasks[num].Ident = "number"
		sink := g.Add("count", 1, 0, jamCountSink(got))
		g.Tasks[sink].Ident = "count"
		g.Connect(src, 0, up, 0, 0)
		g.Connect(up, 0, num, 0, 0)
		g.Connect(num, 0, sink, 0, 0)
		return g
	}
	run := func(b *testing.B, dir string) {
		got := 0
		o := Options{Spool: &SpoolOptions{Dir: dir, NoSync: true}}
		if _, err := runPolicy(context.Background(), Spool, build(&got), o); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("%d records, want %d", got, n)
		}
	}
	b.Run("cold", func(b *testing.B) {
		tmp := b.TempDir()
		b.SetBytes(int64(n * len(lines[0])))
		for i := range b.N {
			run(b, filepath.Join(tmp, fmt.Sprint(i)))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
	})
	b.Run("cached", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "sp")
		run(b, dir)
		b.SetBytes(int64(n * len(lines[0])))
		b.ResetTimer()
		for range b.N {
			run(b, dir)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
	})
}
