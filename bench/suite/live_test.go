package suite

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/progress"
	"github.com/tpipe/tpipe/sched"
)

// BenchmarkLiveView is the cost of watching a run: the same chain with no
// view ("plain") and with the live view of --progress on a terminal (a
// sched.Live sampled ten times a second through a Meter, every task a
// row, drawn by the terminal renderer into io.Discard). One op is a record
// of each: liveRounds rounds each run the chain over b.N records plainly
// and viewed, in alternating order, and the ratio of the two is taken per
// round, so that drift and other load hit both alike. It reports the
// median ns per record of each, and the median of the rounds' ratios
// (view/plain, %) of wall time and of the process's CPU time, which other
// work on the machine disturbs less. The goal of issue 17 is under 102%.
// What one redraw costs alone: BenchmarkLiveSnapshot in package sched and
// BenchmarkTerminalRedraw in package progress.
// Give it -benchtime 20s or more: a run must last a second or so to be
// sampled often.
func BenchmarkLiveView(b *testing.B) {
	for _, policy := range []string{"concurrent", "ros", "fused", "serial"} {
		for _, size := range []int{64, 4 << 10} {
			b.Run(fmt.Sprintf("%s/stages=10/rec=%d", policy, size), func(b *testing.B) {
				rec := make([]byte, size)
				for i := range rec {
					rec[i] = byte('a' + i%26)
				}
				var plain, viewed, wall, cpu []float64
				for round := range liveRounds {
					var got [2]cost
					for k := range 2 {
						view := (round+k)%2 == 1
						c := runViewed(b, policy, b.N, rec, view)
						if view {
							got[1] = c
						} else {
							got[0] = c
						}
					}
					plain, viewed = append(plain, got[0].wall), append(viewed, got[1].wall)
					wall = append(wall, 100*got[1].wall/got[0].wall)
					cpu = append(cpu, 100*got[1].cpu/got[0].cpu)
				}
				b.ReportMetric(summarize(plain).med, "ns/rec-plain")
				b.ReportMetric(summarize(viewed).med, "ns/rec-view")
				b.ReportMetric(summarize(wall).med, "wall-view/plain-%")
				b.ReportMetric(summarize(cpu).med, "cpu-view/plain-%")
			})
		}
	}
}

// liveRounds is the number of runs of each kind per op.
const liveRounds = 7

// cost is the wall and CPU time of a run per record, in ns.
type cost struct{ wall, cpu float64 }

// runViewed runs the chain over n records of rec, with the live view or
// not.
func runViewed(b *testing.B, policy string, n int, rec []byte, view bool) cost {
	spec := chainSpec{policy: policy, n: n, rec: rec, rounds: make([]int, 10)}
	var v *progress.View
	cpu0, start := cpuTime(), time.Now()
	if view {
		spec.live = &sched.Live{}
		v = progress.Start(io.Discard, liveSource(spec.live), progress.Options{Terminal: true})
	}
	_, err := runChain(context.Background(), spec)
	if v != nil {
		v.Stop()
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		b.Fatal(err)
	}
	return cost{float64(wall.Nanoseconds()) / float64(n), float64(cpu.Nanoseconds()) / float64(n)}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveSource is what the runner's source of the view does: a row per task
// from snapshots through a Meter.
func liveSource(live *sched.Live) progress.Source {
	m := sched.NewMeter(0.28)
	return progress.SourceFunc(func() progress.Frame {
		snap := live.Snapshot()
		m.Add(&snap)
		f := progress.Frame{Elapsed: snap.Elapsed, Rows: make([]progress.Row, len(snap.Tasks)),
			Total: progress.Total{Unit: "bytes", Of: 1 << 30, Done: 1 << 20, Rate: 1 << 20}}
		neck := m.Bottleneck()
		for i, r := range m.Rates() {
			f.Rows[i] = progress.Row{Name: snap.Tasks[i].Name, Records: r.Records, Bytes: r.Bytes, Busy: r.Busy, Bottleneck: i == neck}
		}
		for _, e := range snap.Edges {
			f.Rows[e.To].Fill, f.Rows[e.To].Cap = e.Len, e.Cap
		}
		return f
	})
}

// The benchmark's view does show the run: its source sees every task.
func TestLiveSourceSeesTheRun(t *testing.T) {
	live := &sched.Live{}
	src := liveSource(live)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := runChain(ctx, chainSpec{policy: "concurrent", n: 1000, rec: []byte("abcd"), rounds: make([]int, 3), live: live}); err != nil {
		t.Fatal(err)
	}
	if f := src.Sample(); len(f.Rows) != 5 || f.Rows[0].Name != "src" || f.Rows[4].Cap == 0 {
		t.Errorf("frame %+v: want src, 3 stages and a sink with its queue", f)
	}
}
