package sched_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// With --cap auto a chain whose middle stage is slow ends with that stage
// named the bottleneck, its input queue at 1 + W (at least the starting 2), no other queue
// larger, B never exceeded, and the output of a run with fixed capacities.
func TestCapAutoFindsTheBottleneck(t *testing.T) {
	const n = 150
	build := func(out *[][]byte) *graph.Graph {
		recs := make([][]byte, n)
		for i := range recs {
			recs[i] = fmt.Appendf(nil, "record %04d\n", i)
		}
		slow := task.PerRecord{Keep: func([]byte) bool {
			time.Sleep(100 * time.Microsecond)
			return true
		}}
		return graph.Chain(graph.DefaultCap,
			&graph.Task{Name: "src", Out: 1, Fn: task.Records(recs...)},
			&graph.Task{Name: "copy1", In: 1, Out: 1, Rec: ptr(task.Copy())},
			&graph.Task{Name: "slow", In: 1, Out: 1, Rec: &slow},
			&graph.Task{Name: "copy2", In: 1, Out: 1, Rec: ptr(task.Copy())},
			&graph.Task{Name: "sink", In: 1, Fn: task.Collect(out)},
		)
	}
	var want, got [][]byte
	if _, err := sched.Run(context.Background(), build(&want), sched.Options{Policy: sched.Concurrent, RecordSize: 16}); err != nil {
		t.Fatal(err)
	}
	st, err := sched.Run(context.Background(), build(&got), sched.Options{Policy: sched.Concurrent, RecordSize: 16, CapAuto: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("output differs from the run with fixed capacities")
	}
	ca := st.CapAuto
	if ca == nil || ca.Bottleneck != "slow" {
		t.Fatalf("cap auto: %+v, want the bottleneck slow", ca)
	}
	if ca.Window < 1 || ca.Window > 2 {
		t.Fatalf("window %d: want 1 or 2 (slow has two ancestors)", ca.Window)
	}
	// The bottleneck's input has the largest capacity, 1 + W; others may
	// have grown while the first samples were misleading, never past it.
	sum := 0
	for _, e := range st.Edges {
		if e.To == "slow" && e.Cap != max(2, 1+ca.Window) {
			t.Errorf("%s -> slow: cap %d, want %d", e.From, e.Cap, max(2, 1+ca.Window))
		}
		if e.To != "slow" && e.Cap > max(2, 1+ca.Window) {
			t.Errorf("%s -> %s: cap %d, more than the bottleneck's", e.From, e.To, e.Cap)
		}
		sum += e.Cap
	}
	if ca.Buffers != sum || sum > st.Buffers {
		t.Errorf("capacities sum to %d, stats say %d, B = %d", sum, ca.Buffers, st.Buffers)
	}
	if st.BuffersHighWater > sum {
		t.Errorf("%d buffers out at once, more than the capacities %d", st.BuffersHighWater, sum)
	}
}
