package sched_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// gatedChain is src | up | low | sink: src writes n records, hands them
// over, and waits for gate before it writes n more.
func gatedChain(n int, gate <-chan struct{}, out *[][]byte) *graph.Graph {
	up := task.Map(func(rec, scratch []byte) []byte { return append(append(scratch, 'u'), rec...) })
	low := task.Filter(func(rec []byte) bool { return len(rec) > 0 })
	return graph.Chain(2,
		&graph.Task{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
			for half := range 2 {
				if half == 1 {
					p.Flush()
					select {
					case <-gate:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				for i := range n {
					if err := p.Out(0).Write(fmt.Appendf(nil, "rec %d", half*n+i)); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		&graph.Task{Name: "up", In: 1, Out: 1, Rec: &up},
		&graph.Task{Name: "low", In: 1, Out: 1, Rec: &low},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(out)},
	)
}

// Every policy can be watched while it runs: a snapshot taken while the
// source waits in the middle sees the records it has handed over, and the
// last one, after the run, agrees with the run's statistics.
func TestLiveEveryPolicy(t *testing.T) {
	const n = 500
	for _, pol := range sched.Policies() {
		t.Run(pol.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			gate := make(chan struct{})
			var out [][]byte
			g := gatedChain(n, gate, &out)
			live := &sched.Live{}
			if s := live.Snapshot(); s.Running || len(s.Tasks) != 0 {
				t.Fatalf("before the run: %+v", s)
			}
			type result struct {
				st  *sched.Stats
				err error
			}
			done := make(chan result, 1)
			go func() {
				st, err := sched.Run(ctx, g, sched.Options{Policy: pol, RecordSize: 256, Live: live})
				done <- result{st, err}
			}()
			var mid sched.Snapshot
			for {
				mid = live.Snapshot()
				if mid.Running && len(mid.Tasks) > 0 && mid.Tasks[0].Records >= n {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("the source's %d records never showed: %+v", n, mid)
				}
				time.Sleep(time.Millisecond)
			}
			if mid.Tasks[0].Name != "src" || mid.Tasks[len(mid.Tasks)-1].Name != "sink" {
				t.Errorf("tasks %+v, want src first and sink last", mid.Tasks)
			}
			if mid.Tasks[0].Records != n || mid.Tasks[0].Done {
				t.Errorf("mid-run source %+v, want %d records and not done", mid.Tasks[0], n)
			}
			for _, e := range mid.Edges {
				if e.Cap < 1 || e.Len < 0 || e.Len > e.Cap {
					t.Errorf("edge %+v: fill outside its capacity", e)
				}
			}
			close(gate)
			res := <-done
			if res.err != nil {
				t.Fatal(res.err)
			}
			if len(out) != 2*n {
				t.Fatalf("sink got %d records, want %d", len(out), 2*n)
			}
			end := live.Snapshot()
			if end.Running {
				t.Error("the last snapshot says the run goes on")
			}
			if len(end.Edges) != len(res.st.Edges) {
				t.Fatalf("%d edges in the snapshot, %d in the statistics", len(end.Edges), len(res.st.Edges))
			}
			for k, e := range end.Edges {
				if se := res.st.Edges[k]; e.Name != se.Name || e.Records != se.Records || e.Bytes != se.Bytes {
					t.Errorf("edge %d: snapshot %+v, statistics %+v", k, e, se)
				}
			}
			for _, ts := range end.Tasks {
				if !ts.Done || ts.Records != 2*n {
					t.Errorf("task %+v: want done with %d records", ts, 2*n)
				}
			}
		})
	}
}

// A snapshot taken while tasks run is free of data races (go test -race)
// and its counters never go back.
func TestLiveSnapshotsAreMonotone(t *testing.T) {
	for _, pol := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Serial} {
		t.Run(pol.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			gate := make(chan struct{})
			close(gate)
			var out [][]byte
			live := &sched.Live{}
			done := make(chan error, 1)
			go func() {
				_, err := sched.Run(ctx, gatedChain(20000, gate, &out), sched.Options{Policy: pol, RecordSize: 64, Live: live})
				done <- err
			}()
			var last sched.Snapshot
			for running := true; running; {
				s := live.Snapshot()
				running = s.Running
				if len(last.Tasks) == len(s.Tasks) {
					for i, ts := range s.Tasks {
						if was := last.Tasks[i]; ts.Records < was.Records || ts.Bytes < was.Bytes || was.Done && !ts.Done {
							t.Fatalf("task %s went back: %+v after %+v", ts.Name, ts, was)
						}
					}
				}
				if len(s.Tasks) > 0 {
					last = s
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// snap builds a snapshot of one task at elapsed seconds.
func snap(elapsed float64, recs, bytes int64, busy float64, done bool) *sched.Snapshot {
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	return &sched.Snapshot{Running: true, Elapsed: sec(elapsed), Tasks: []sched.TaskSample{
		{Name: "t", Records: recs, Bytes: bytes, Busy: sec(busy), Done: done},
	}}
}

func TestMeter(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	tests := []struct {
		name  string
		snaps []*sched.Snapshot
		want  sched.Rates
		neck  int
	}{
		{"first sample: the rate since the start",
			[]*sched.Snapshot{snap(2, 100, 1000, 1, false)},
			sched.Rates{Records: 50, Bytes: 500, Busy: 0.5, NsPerRecord: 1e7}, 0},
		{"then an EWMA: 0.5 x 10/s + 0.5 x 50/s",
			[]*sched.Snapshot{snap(2, 100, 1000, 1, false), snap(3, 110, 1100, 1.1, false)},
			sched.Rates{Records: 30, Bytes: 300, Busy: 0.3, NsPerRecord: 0.5*1e7 + 0.5*1e7}, -1},
		{"a sample without records keeps the time per record",
			[]*sched.Snapshot{snap(1, 10, 10, 0.5, false), snap(2, 10, 10, 1.5, false)},
			sched.Rates{Records: 5, Bytes: 5, Busy: 0.75, NsPerRecord: 5e7}, 0},
		{"the busy time since is counted at the next record",
			[]*sched.Snapshot{snap(1, 10, 10, 0.5, false), snap(2, 10, 10, 1.5, false), snap(3, 11, 11, 2.5, false)},
			sched.Rates{Records: 3, Bytes: 3, Busy: 0.875, NsPerRecord: 0.5*2e9 + 0.5*5e7}, 0},
		{"a finished task: no rates, no bottleneck",
			[]*sched.Snapshot{snap(1, 10, 10, 1, false), snap(2, 20, 20, 2, true)},
			sched.Rates{NsPerRecord: 1e8}, -1},
		{"busy is a share: at most 1",
			[]*sched.Snapshot{snap(1, 1, 1, 3, false)},
			sched.Rates{Records: 1, Bytes: 1, Busy: 1, NsPerRecord: 3e9}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sched.NewMeter(0.5)
			for _, s := range tt.snaps {
				m.Add(s)
			}
			got := m.Rates()[0]
			if !near(got.Records, tt.want.Records) || !near(got.Bytes, tt.want.Bytes) || !near(got.Busy, tt.want.Busy) || !near(got.NsPerRecord, tt.want.NsPerRecord) {
				t.Errorf("rates %+v, want %+v", got, tt.want)
			}
			if n := m.Bottleneck(); n != tt.neck {
				t.Errorf("bottleneck %d, want %d", n, tt.neck)
			}
		})
	}
}

// A task that moves at a steady rate is measured at that rate, whatever
// the weight and whenever the samples are taken.
func TestMeterSteadyRate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rate := rapid.Float64Range(1, 1e6).Draw(t, "records/s")
		alpha := rapid.Float64Range(0.01, 1).Draw(t, "alpha")
		gaps := rapid.SliceOfN(rapid.IntRange(1, 2000), 1, 30).Draw(t, "gaps ms")
		m := sched.NewMeter(alpha)
		ms := 0
		for _, gap := range gaps {
			ms += gap
			el := time.Duration(ms) * time.Millisecond
			recs := int64(math.Round(rate * el.Seconds() * 1e6)) // micro-records: exact
			m.Add(&sched.Snapshot{Elapsed: el, Tasks: []sched.TaskSample{{Records: recs, Busy: el / 2}}})
		}
		got := m.Rates()[0]
		if math.Abs(got.Records/1e6-rate) > 1e-6*rate+1e-3 {
			t.Fatalf("records/s %v, want %v", got.Records/1e6, rate)
		}
		if math.Abs(got.Busy-0.5) > 1e-9 {
			t.Fatalf("busy %v, want 0.5", got.Busy)
		}
	})
}

// BenchmarkLiveSnapshot is what the live view's sampling costs per
// sample: a snapshot of a run of 12 tasks and 11 queues, and the Meter.
// The run is held still (its source waits), so only the sampling counts.
func BenchmarkLiveSnapshot(b *testing.B) {
	gate := make(chan struct{})
	tasks := []*graph.Task{{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Ports) error {
		for i := range 1000 {
			if err := p.Out(0).Write(fmt.Appendf(nil, "%d", i)); err != nil {
				return err
			}
		}
		p.Flush()
		<-gate
		return nil
	}}}
	for i := range 10 {
		c := task.Copy()
		tasks = append(tasks, &graph.Task{Name: fmt.Sprint("copy", i), In: 1, Out: 1, Rec: &c})
	}
	var out [][]byte
	tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: task.Collect(&out)})
	live := &sched.Live{}
	done := make(chan error, 1)
	go func() {
		_, err := sched.Run(context.Background(), graph.Chain(4, tasks...), sched.Options{Policy: sched.Concurrent, Live: live})
		done <- err
	}()
	for live.Snapshot().Elapsed == 0 {
		time.Sleep(time.Millisecond)
	}
	m := sched.NewMeter(0.3)
	b.ResetTimer()
	for range b.N {
		s := live.Snapshot()
		m.Add(&s)
		_ = m.Bottleneck()
	}
	b.StopTimer()
	close(gate)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// A runner outside the package feeds a Live as the policies do: its
// sampler while it runs, its last snapshot after.
func TestLiveAttach(t *testing.T) {
	live := &sched.Live{}
	n := 0
	detach := live.Attach(func(s *sched.Snapshot) {
		n++
		s.Running = true
		s.Tasks = append(s.Tasks[:0], sched.TaskSample{Name: "worker", Records: int64(n)})
	})
	if s := live.Snapshot(); !s.Running || s.Tasks[0].Records != 1 {
		t.Errorf("while attached: %+v", s)
	}
	detach()
	detach() // twice is fine
	for range 2 {
		if s := live.Snapshot(); s.Running || len(s.Tasks) != 1 || s.Tasks[0].Records != 2 {
			t.Errorf("after: %+v, want the last sample, not running", s)
		}
	}
	var none *sched.Live
	none.Attach(nil)()
}
