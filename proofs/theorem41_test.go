package proofs_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tpipe/tpipe/proofs"
)

// rosChains returns every chain of 2 to most tasks with every kind in
// every place, and every capacity vector from 1 to maxCap.
func rosChains(most, maxCap int) []proofs.Pipeline {
	var pipes []proofs.Pipeline
	for n := 2; n <= most; n++ {
		for _, kinds := range proofs.Chains(n, proofs.ChainKinds, false) {
			for _, caps := range proofs.CapVectors(n-1, maxCap) {
				pipes = append(pipes, proofs.Chain(kinds, caps))
			}
		}
	}
	return pipes
}

// rosSurvey checks every pipe under c and returns how many deadlock, the
// shortest deadlock found, and any other failure.
func rosSurvey(pipes []proofs.Pipeline, c proofs.Config) (deadlocks int, shortest *proofs.Trace, err error) {
	var dead atomic.Int64
	traces := make([]*proofs.Trace, len(pipes))
	errs := make([]error, len(pipes))
	parallel(len(pipes), func(i int) {
		r, err := proofs.Check(pipes[i], c)
		switch {
		case err != nil:
			errs[i] = err
		case r.Violation != nil:
			errs[i] = fmt.Errorf("output differs from the serial one:\n%s", r.Violation)
		case r.Terminal == 0 && r.Deadlock == nil:
			errs[i] = fmt.Errorf("%s: no terminal state", pipes[i])
		case r.Deadlock != nil:
			dead.Add(1)
			traces[i] = r.Deadlock
		}
	})
	for i := range pipes {
		if errs[i] != nil {
			return 0, nil, errs[i]
		}
		if tr := traces[i]; tr != nil && (shortest == nil || len(tr.Steps) < len(shortest.Steps)) {
			shortest = tr
		}
	}
	return int(dead.Load()), shortest, nil
}

var rosVariants = []order{
	{"paper literal", proofs.Config{Write: proofs.Literal, EOFRecords: true, Policy: proofs.ROS, B: 1}},
	{"paper reserve-first", proofs.Config{Write: proofs.ReserveFirst, EOFRecords: true, Policy: proofs.ROS, B: 1}},
	{"tpipe ros", proofs.TPipeROS},
	{"tpipe ros, every task copies", proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.ROS, B: 1}},
	{"tpipe ros, batches of 2", rosBatch},
}

// Theorem 4.1 of "Thrifty Execution of Task Pipelines": with Record
// Oriented Scheduling (the runnable task with the greatest index always
// runs), a chain does not deadlock with B = 1 and every capacity 1.
//
// Checked for every chain of up to maxTasks()+1 tasks with every kind in
// every place, inputs of 0 to 3 records, under the paper's model (both
// write orders), tpipe's ros (private copies of input records, filters
// moving buffers, no handoff), and with batches of two records handed
// over before a task blocks. Outputs are checked against the serial
// schedule as in Theorem 2.2.
func TestTheorem4_1ROSWithOneBufferNeverDeadlocks(t *testing.T) {
	t.Log("Theorem 4.1: under Record Oriented Scheduling, B = 1 and cap(F_i) = 1 never deadlock")
	pipes := rosChains(maxTasks()+1, 1)
	for _, v := range rosVariants {
		dead, tr, err := rosSurvey(pipes, v.c)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if dead > 0 {
			t.Errorf("%s: %d of %d chains deadlock:\n%s", v.name, dead, len(pipes), tr)
		}
	}
	t.Logf("%d chains of up to %d tasks x %d variants: no deadlock, serial output", len(pipes), maxTasks()+1, len(rosVariants))
}

// Beyond Theorem 4.1: with B = 1 the capacities do not matter (only one
// buffer exists), so ros does not deadlock with capacities up to 3 either.
func TestTheorem4_1AnyCapacities(t *testing.T) {
	pipes := rosChains(min(maxTasks(), 4), 3)
	for _, v := range rosVariants {
		dead, tr, err := rosSurvey(pipes, v.c)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if dead > 0 {
			t.Errorf("%s: %d of %d chains deadlock:\n%s", v.name, dead, len(pipes), tr)
		}
	}
	t.Logf("%d chains with capacities 1 to 3, B = 1: no deadlock under ros", len(pipes))
}

// Theorem 4.1 needs tasks to read into a variable of their own, as the
// paper's read does (acquire, copy, release to FREE). A task that reads in
// place holds the only buffer while it wants another to write. tpipe's ros
// therefore gives every task with outputs private copies (CopyReads);
// filters may still move the buffer itself.
func TestTheorem4_1NeedsPrivateCopies(t *testing.T) {
	counterexampleNamed(t, "ros without private copies")
	dead, _, err := rosSurvey(rosChains(maxTasks(), 1), rosNoCopies)
	if err != nil {
		t.Fatal(err)
	}
	if dead == 0 {
		t.Fatal("in-place reads never deadlock under ros")
	}
	t.Logf("in-place reads under ros: %d chains of up to %d tasks deadlock with B = 1", dead, maxTasks())
}

// Theorem 4.1 assumes the paper's scheduler: after every step the runnable
// task with the greatest index runs, and nothing else decides who gets a
// buffer. tpipe first built ros cooperative (a task ran until it blocked)
// with a FREE that hands a released buffer to the task that has waited
// longest, which may be of lower index than the one running. The checker
// finds where each change matters:
//
//   - cooperative with handoff deadlocks with the literal write order even
//     within the theorem (capacities 1), and with reserve-first writes once
//     a capacity is 2;
//   - preemptive with handoff deadlocks with batches and a capacity 2;
//   - without handoff, cooperative and preemptive never deadlock in these
//     chains: the handoff is what breaks the theorem.
func TestTheorem4_1HandoffBreaksIt(t *testing.T) {
	t.Log("Theorem 4.1 assumes the paper's ROS: the runnable task with the greatest index runs after every step")
	counterexampleNamed(t, "cooperative ros with handoff")
	counterexampleNamed(t, "cooperative ros with handoff, literal")
	counterexampleNamed(t, "ros with handoff and batches")
	caps1, caps3 := rosChains(maxTasks(), 1), rosChains(min(maxTasks(), 4), 3)
	type want struct{ caps1, caps3 bool } // does some chain deadlock?
	for _, tc := range []struct {
		name string
		c    proofs.Config
		want want
	}{
		{"literal, cooperative, handoff", proofs.Config{Write: proofs.Literal, EOFRecords: true, Policy: proofs.Cooperative, Handoff: true, B: 1}, want{true, true}},
		{"literal, cooperative", proofs.Config{Write: proofs.Literal, EOFRecords: true, Policy: proofs.Cooperative, B: 1}, want{false, false}},
		{"literal, preemptive, handoff", proofs.Config{Write: proofs.Literal, EOFRecords: true, Policy: proofs.ROS, Handoff: true, B: 1}, want{false, false}},
		{"tpipe, cooperative, handoff", rosMistake, want{false, true}},
		{"tpipe, cooperative", proofs.Config{Write: proofs.ReserveFirst, Move: true, Policy: proofs.Cooperative, B: 1}, want{false, false}},
		{"tpipe, preemptive, handoff", proofs.Config{Write: proofs.ReserveFirst, Move: true, Policy: proofs.ROS, Handoff: true, B: 1}, want{false, false}},
		{"batches, preemptive, handoff", proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.ROS, Handoff: true, B: 1, Batch: 2}, want{false, true}},
		{"batches, cooperative", proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.Cooperative, B: 1, Batch: 2}, want{false, false}},
	} {
		d1, _, err := rosSurvey(caps1, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		d3, _, err := rosSurvey(caps3, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-30s deadlocking chains: %4d of %4d with capacities 1, %5d of %5d with capacities 1-3", tc.name, d1, len(caps1), d3, len(caps3))
		if (d1 > 0) != tc.want.caps1 || (d3 > 0) != tc.want.caps3 {
			t.Errorf("%s: deadlocks %d and %d, expected some: %v", tc.name, d1, d3, tc.want)
		}
	}
}

// The batching rule: a task hands over its partially filled output buffer
// before it blocks. Without it, ros with one buffer deadlocks as soon as a
// task holds a partial buffer while it waits to read.
func TestTheorem4_1BatchingNeedsHandOverBeforeBlocking(t *testing.T) {
	tr := counterexampleNamed(t, "batches not handed over before blocking")
	_ = tr
	c := rosBatch
	c.NoFlush = true
	dead, _, err := rosSurvey(rosChains(maxTasks(), 1), c)
	if err != nil {
		t.Fatal(err)
	}
	if dead == 0 {
		t.Fatal("batching without the hand-over rule never deadlocks")
	}
	t.Logf("without the hand-over rule, %d chains deadlock under ros with B = 1 (with it, none: TestTheorem4_1ROSWithOneBufferNeverDeadlocks)", dead)
}
