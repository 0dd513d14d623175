package proofs_test

import (
	"testing"

	"github.com/tpipe/tpipe/proofs"
)

// Theorem 2.2 of "Thrifty Execution of Task Pipelines": every schedule of
// a task pipeline is equivalent to the serial schedule, that is, it writes
// the same output.
//
// Checked on the sweep: in every reachable state, every record on OUT is
// the one the serial schedule writes at that position, and in every state
// where all tasks have ended OUT holds all of it. The sweep's profiles
// search with FREE never empty, so they hold the states reachable with any
// B; a deadlocked schedule has no terminal state and is Theorem 3.2's
// business.
func TestTheorem2_2EveryScheduleGivesTheSerialOutput(t *testing.T) {
	t.Log("Theorem 2.2: every schedule of a task pipeline is equivalent to the serial schedule")
	sw := sweep(t)
	terminal := 0
	for _, r := range sw.rows {
		for k, pr := range r.prof {
			if pr.Violation != nil {
				t.Errorf("%s, %s:\n%s", r.p, sweepOrders[k].name, pr.Violation)
			}
			// At least one terminal state per input length.
			if pr.Terminal < 4 {
				t.Errorf("%s, %s: only %d terminal states", r.p, sweepOrders[k].name, pr.Terminal)
			}
			terminal += pr.Terminal
		}
	}
	t.Logf("%s: %d chains x %d write orders, %d states, %d terminal states, all with the serial output (%v)",
		sw.describe(), len(sw.rows), len(sweepOrders), sw.states, terminal, sw.elapsed.Round(1e6))
}

// The same with every kind in the last place (the sweep keeps COPY there),
// with all capacities 1 and all 3.
func TestTheorem2_2LastTaskOfEveryKind(t *testing.T) {
	var pipes []proofs.Pipeline
	for n := 2; n <= maxTasks(); n++ {
		for _, kinds := range proofs.Chains(n, proofs.ChainKinds, false) {
			if kinds[n-1] == proofs.Copy {
				continue
			}
			for _, c := range []int{1, 3} {
				caps := make([]int, n-1)
				for i := range caps {
					caps[i] = c
				}
				pipes = append(pipes, proofs.Chain(kinds, caps))
			}
		}
	}
	errs := make([]string, len(pipes))
	parallel(len(pipes), func(i int) {
		for _, c := range []proofs.Config{proofs.PaperLiteral, proofs.TPipe} {
			pr, err := proofs.BufferProfile(pipes[i], c)
			switch {
			case err != nil:
				errs[i] = err.Error()
			case pr.Violation != nil:
				errs[i] = pr.Violation.String()
			case pr.Terminal < 4:
				errs[i] = pipes[i].String() + ": missing terminal states"
			}
		}
	})
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	t.Logf("%d chains, literal and tpipe: every terminal state has the serial output", len(pipes))
}

// The serial meaning the checks compare with, on the paper's example.
func TestSerialOutput(t *testing.T) {
	for _, tc := range []struct {
		kinds []proofs.Kind
		n     int
		want  string
	}{
		{copyPrefixCopy, 3, "h2 x1 x2 x3"},
		{[]proofs.Kind{proofs.Filter, proofs.Duplicate}, 3, "x1 x1 x3 x3"},
		{[]proofs.Kind{proofs.Prefix, proofs.Sum}, 2, "s20"},
		{[]proofs.Kind{proofs.Sum, proofs.Prefix}, 0, "h2 s0"},
	} {
		got := names(proofs.Chain(tc.kinds, make1s(len(tc.kinds)-1)).Serial(tc.n))
		if got != tc.want {
			t.Errorf("%s on %d records: %q, want %q", kindsName(tc.kinds), tc.n, got, tc.want)
		}
	}
	if got := names(proofs.TeeJoin(1, 1).Serial(2)); got != "x1 x2 x1 x2" {
		t.Errorf("tee-join: %q", got)
	}
	if got := names(proofs.RouteMerge(1, 1).Serial(3)); got != "x3 x1 x2" {
		t.Errorf("route-merge: %q", got)
	}
}

func make1s(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func names(recs []byte) string {
	s := ""
	for i, v := range recs {
		if i > 0 {
			s += " "
		}
		s += proofs.RecordName(v)
	}
	return s
}
