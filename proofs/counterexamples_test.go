package proofs_test

import (
	"testing"

	"github.com/tpipe/tpipe/proofs"
)

// counterexample is a deadlock a test prints. Those with reserve-first
// writes and eof marks are also replayed on tpipe's runtime
// (TestRuntimeReplaysEveryCounterexample), which has no other kind.
type counterexample struct {
	name string
	p    proofs.Pipeline
	c    proofs.Config
}

func chain(caps []int, kinds ...proofs.Kind) proofs.Pipeline { return proofs.Chain(kinds, caps) }

func withB(c proofs.Config, b int) proofs.Config {
	c.B = b
	return c
}

var (
	copyPrefixCopy = []proofs.Kind{proofs.Copy, proofs.Prefix, proofs.Copy}

	// rosNoCopies is ros with in-place reads: a task holds the buffer it
	// reads while it writes.
	rosNoCopies = proofs.Config{Write: proofs.ReserveFirst, InPlace: true, Move: true, Policy: proofs.ROS, B: 1}
	// rosMistake is the ros tpipe first built: cooperative, with handoff.
	rosMistake = proofs.Config{Write: proofs.ReserveFirst, Move: true, Policy: proofs.Cooperative, Handoff: true, B: 1}
	// rosBatch is ros with batches of two records (tasks copy what they
	// read; filters do not move buffers here).
	rosBatch = proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.ROS, B: 1, Batch: 2}
)

var counterexamples = []counterexample{
	// Theorem 3.2, necessity: the paper's schedule DS, B = k = sum - 1.
	{"DS k=1", proofs.Chain(copyPrefixCopy, []int{1, 1}), withB(proofs.TPipe, 1)},
	{"DS k=2", proofs.Chain(copyPrefixCopy, []int{2, 1}), withB(proofs.TPipe, 2)},
	{"DS k=3", proofs.Chain(copyPrefixCopy, []int{3, 1}), withB(proofs.TPipe, 3)},
	{"DS k=3 copy reads", proofs.Chain(copyPrefixCopy, []int{3, 1}), withB(proofs.TPipeCopy, 3)},
	{"DS k=2 paper literal", proofs.Chain(copyPrefixCopy, []int{2, 1}), withB(proofs.PaperLiteral, 2)},
	{"DS k=2 paper reserve-first", proofs.Chain(copyPrefixCopy, []int{2, 1}), withB(proofs.PaperReserve, 2)},
	// Theorem 3.2 with the literal write order, at B = sum of capacities.
	{"literal at the bound", chain([]int{1, 1}, proofs.Copy, proofs.Copy, proofs.Copy), withB(proofs.PaperLiteral, 2)},
	{"literal at the bound, 4 tasks", chain([]int{1, 1, 1}, proofs.Copy, proofs.Prefix, proofs.Copy, proofs.Copy), withB(proofs.PaperLiteral, 3)},
	{"literal at the bound plus one, 4 tasks", chain([]int{1, 1, 1}, proofs.Copy, proofs.Prefix, proofs.Copy, proofs.Copy), withB(proofs.PaperLiteral, 4)},
	// Theorem 4.1: what ros needs.
	{"ros without private copies", chain([]int{1, 1}, proofs.Copy, proofs.Duplicate, proofs.Copy), rosNoCopies},
	{"cooperative ros with handoff", chain([]int{2, 1}, proofs.Copy, proofs.Duplicate, proofs.Copy), rosMistake},
	{"cooperative ros with handoff, literal", chain([]int{1, 1}, proofs.Copy, proofs.Copy, proofs.Copy),
		proofs.Config{Write: proofs.Literal, EOFRecords: true, Policy: proofs.Cooperative, Handoff: true, B: 1}},
	{"ros with handoff and batches", chain([]int{2, 1}, proofs.Copy, proofs.Copy, proofs.Copy),
		proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.ROS, Handoff: true, B: 1, Batch: 2}},
	{"batches not handed over before blocking", chain([]int{1, 1}, proofs.Copy, proofs.Prefix, proofs.Copy),
		proofs.Config{Write: proofs.ReserveFirst, Policy: proofs.ROS, B: 1, Batch: 2, NoFlush: true}},
	// Beyond the paper: graphs no B can save.
	{"tee into join", proofs.TeeJoin(1, 1), withB(proofs.TPipe, 2)},
	{"tee into join, B large", proofs.TeeJoin(1, 1), withB(proofs.TPipe, 10)},
	{"route into merge", proofs.RouteMerge(1, 1), withB(proofs.TPipe, 2)},
	{"tee, copy, join", proofs.TeeCopyJoin(1, 1, 1), withB(proofs.TPipe, 3)},
}

// replayable reports whether the runtime can run ce's variant.
func (ce counterexample) replayable() bool {
	return ce.c.Write == proofs.ReserveFirst && !ce.c.EOFRecords && !ce.c.NoFlush
}

// counterexampleNamed checks the named counterexample, fails the test
// unless the checker finds its deadlock, and logs the shortest schedule.
func counterexampleNamed(t *testing.T, name string) *proofs.Trace {
	t.Helper()
	for _, ce := range counterexamples {
		if ce.name != name {
			continue
		}
		r, err := proofs.Check(ce.p, ce.c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Violation != nil {
			t.Fatalf("%s: output differs from the serial one:\n%s", name, r.Violation)
		}
		if r.Deadlock == nil {
			t.Fatalf("%s: no deadlock in %d states of %s under %s", name, r.States, ce.p, ce.c)
		}
		replay := "not replayable: the runtime has only reserve-first writes, eof marks and hands over before blocking"
		if ce.replayable() {
			replay = "replayed on the runtime by TestRuntimeReplaysEveryCounterexample"
		}
		t.Logf("counterexample %q (%d states; %s):\n%s", name, r.States, replay, r.Deadlock)
		return r.Deadlock
	}
	t.Fatalf("no counterexample %q", name)
	return nil
}
