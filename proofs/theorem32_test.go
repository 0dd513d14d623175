package proofs_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/proofs"
)

// Theorem 3.2 of "Thrifty Execution of Task Pipelines": B-thrifty
// execution of a chain does not deadlock if B is at least the sum of the
// capacities of its communication files.
//
// Checked on the sweep, with tpipe's reserve-first writes (with the
// paper's reads and eof records, and with tpipe's in-place reads, moving
// filters and eof marks): no B at or above the sum deadlocks. A sharper
// bound holds and is reached: the sum of every capacity but the last, plus
// one (in a deadlock the last queue is empty, so its capacity never
// counts).
func TestTheorem3_2ReserveFirstBoundSuffices(t *testing.T) {
	t.Log("Theorem 3.2: with B >= sum of cap(F_i), thrifty execution does not deadlock (reserve-first writes)")
	sw := sweep(t)
	for k, o := range sweepOrders {
		if o.c.Write != proofs.ReserveFirst {
			continue
		}
		sharp := 0
		for _, r := range sw.rows {
			pr := r.prof[k]
			if pr.AnyB > 0 || pr.LeastB > r.p.SumCaps() {
				t.Errorf("%s, %s: deadlocks at B = %v (sum of caps %d)", r.p, o.name, pr.DeadlockB, r.p.SumCaps())
			}
			bound := prefixSum(r.p) + 1
			if pr.LeastB > bound {
				t.Errorf("%s, %s: least deadlock-free B %d above the sharper bound %d", r.p, o.name, pr.LeastB, bound)
			}
			if pr.LeastB == bound {
				sharp++
			}
		}
		if sharp == 0 {
			t.Errorf("%s: the sharper bound is never reached", o.name)
		}
		t.Logf("%s: %d chains, none deadlocks at B >= sum of caps; %d need exactly sum(cap(F_1..F_n-2)) + 1",
			o.name, len(sw.rows), sharp)
	}
}

// Theorem 3.2 with the paper's own write order (acquire from FREE, fill,
// release to the output queue): the theorem's bound is not enough. A task
// can hold a buffer from FREE while it waits for room, and no queue is
// charged for it: T1 holds one, blocked on a full F1, while T2 has read a
// record and waits for FREE. The bound that holds (checked, and reached)
// is the sum of every capacity but the last, plus n-1: one buffer for each
// task but the last, at most sum + n - 2.
func TestTheorem3_2LiteralOrderNeedsMore(t *testing.T) {
	t.Log("Theorem 3.2 with the literal write order: B = sum of cap(F_i) can deadlock")
	tr := counterexampleNamed(t, "literal at the bound")
	if !strings.Contains(tr.End, "T1:COPY blocked releasing") || !strings.Contains(tr.End, "T2:COPY blocked acquiring FREE (0 of 2)") {
		t.Errorf("the deadlock is not T1 holding a buffer for F1 while T2 waits for FREE: %s", tr.End)
	}
	counterexampleNamed(t, "literal at the bound, 4 tasks")
	counterexampleNamed(t, "literal at the bound plus one, 4 tasks")
	sw := sweep(t)
	k := slices.IndexFunc(sweepOrders, func(o order) bool { return o.c.Write == proofs.Literal })
	above, worst, sharp := 0, 0, 0
	for _, r := range sw.rows {
		pr := r.prof[k]
		n := len(r.p.Tasks)
		if pr.AnyB > 0 {
			t.Errorf("%s: deadlocks at every B from %d", r.p, pr.AnyB)
			continue
		}
		if pr.LeastB > r.p.SumCaps() {
			above++
			worst = max(worst, pr.LeastB-r.p.SumCaps())
		}
		bound := prefixSum(r.p) + n - 1
		if pr.LeastB > bound {
			t.Errorf("%s: least deadlock-free B %d above sum(cap(F_1..F_n-2)) + n - 1 = %d", r.p, pr.LeastB, bound)
		}
		if pr.LeastB == bound {
			sharp++
		}
		if pr.LeastB > r.p.SumCaps()+n-2 {
			t.Errorf("%s: least deadlock-free B %d above sum + n - 2", r.p, pr.LeastB)
		}
	}
	if above == 0 {
		t.Error("the literal order never needs more than the sum")
	}
	t.Logf("literal order: %d of %d chains deadlock at B = sum of caps (up to %d buffers more are needed); %d need exactly sum(cap(F_1..F_n-2)) + n - 1",
		above, len(sw.rows), worst, sharp)
}

// Theorem 3.2, necessity: the paper's example COPY | PREFIX | COPY with
// cap(F1) = k and cap(F2) = 1 deadlocks with B = k under the schedule DS,
// so the bound is tight. The shortest schedules the checker finds are DS.
func TestTheorem3_2NecessityScheduleDS(t *testing.T) {
	t.Log("Theorem 3.2: B = sum of cap(F_i) is also necessary: COPY | PREFIX | COPY deadlocks with B = k = cap(F1), cap(F2) = 1")
	for k := 1; k <= 3; k++ {
		tr := counterexampleNamed(t, fmt.Sprintf("DS k=%d", k))
		// DS: only T1 acts (it writes k records), then T2 waits for
		// FREE to write its header.
		for _, st := range tr.Steps[:len(tr.Steps)-1] {
			if st.Task != 0 {
				t.Errorf("k=%d: the shortest deadlock is not DS: step of T%d before the end", k, st.Task+1)
			}
		}
		// T1 has ended or waits for room in F1, depending on the input.
		for _, want := range []string{"T2:PREFIX blocked acquiring FREE (0 of", "T3:COPY blocked acquiring F2 (empty)"} {
			if !strings.Contains(tr.End, want) {
				t.Errorf("k=%d: %q lacks %q", k, tr.End, want)
			}
		}
		p := proofs.Chain(copyPrefixCopy, []int{k, 1})
		for _, o := range sweepOrders {
			pr, err := proofs.BufferProfile(p, o.c)
			if err != nil {
				t.Fatal(err)
			}
			want := k + 1
			if o.c.Write == proofs.Literal {
				want = k + 2
			}
			if pr.LeastB != want {
				t.Errorf("%s, %s: least deadlock-free B %d, want %d", p, o.name, pr.LeastB, want)
			}
		}
	}
	counterexampleNamed(t, "DS k=3 copy reads")
	counterexampleNamed(t, "DS k=2 paper literal")
	counterexampleNamed(t, "DS k=2 paper reserve-first")
}

// The table of Theorem 3.2: for each chain and capacities, the least B
// with which no schedule deadlocks, against the sum of the capacities.
// Run with -v to see it. Every set of deadlocking B the sweep found is
// 1 .. least-1: deadlock freedom is monotone in B.
func TestTheorem3_2Table(t *testing.T) {
	sw := sweep(t)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Theorem 3.2: least deadlock-free B; %s\n", sw.describe())
	fmt.Fprintf(&sb, "literal = paper (acquire, fill, release; eof records); reserve-first = paper with tpipe's write order; tpipe = reserve-first, in-place reads, filters move buffers, eof marks\n")
	fmt.Fprintf(&sb, "%-44s %-6s %4s | %8s %14s %6s\n", "chain", "caps", "sum", "literal", "reserve-first", "tpipe")
	type agg struct{ worst, tight, above, count int }
	perN := map[int][]agg{}
	worst := map[string][]int{}
	for _, r := range sw.rows {
		n := len(r.p.Tasks)
		if perN[n] == nil {
			perN[n] = make([]agg, len(sweepOrders))
		}
		sum := r.p.SumCaps()
		var cells []string
		for k, pr := range r.prof {
			if pr.AnyB > 0 {
				t.Errorf("%s, %s: deadlocks at every B from %d", r.p, sweepOrders[k].name, pr.AnyB)
				continue
			}
			for i, b := range pr.DeadlockB {
				if b != i+1 {
					t.Errorf("%s, %s: deadlocks at B = %v: not monotone", r.p, sweepOrders[k].name, pr.DeadlockB)
					break
				}
			}
			a := &perN[n][k]
			d := pr.LeastB - sum
			if a.count == 0 || d > a.worst {
				a.worst = d
			}
			if d == 0 {
				a.tight++
			}
			if d > 0 {
				a.above++
			}
			a.count++
			cells = append(cells, fmt.Sprint(pr.LeastB))
			key := kindsName(r.kinds)
			if worst[key] == nil {
				worst[key] = []int{-99, -99, -99}
			}
			worst[key][k] = max(worst[key][k], d)
		}
		if n <= 3 && len(cells) == 3 {
			fmt.Fprintf(&sb, "%-44s %-6s %4d | %8s %14s %6s\n", r.p.String()[:strings.Index(r.p.String(), " (caps")], capsName(r.p.Caps()), sum, cells[0], cells[1], cells[2])
		}
	}
	if sw.plan[len(sw.plan)-1].n >= 4 {
		fmt.Fprintf(&sb, "\nchains of 4 or more tasks: the most least-B exceeds the sum over all capacity vectors\n")
		fmt.Fprintf(&sb, "%-44s | %8s %14s %6s\n", "chain", "literal", "reserve-first", "tpipe")
		var keys []string
		for key := range worst {
			if strings.Count(key, "|") >= 3 {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			w := worst[key]
			fmt.Fprintf(&sb, "%-44s | %+8d %+14d %+6d\n", key, w[0], w[1], w[2])
		}
	}
	fmt.Fprintf(&sb, "\nsummary (least B - sum of caps)\n%5s %-14s %8s %6s %10s %10s\n", "tasks", "order", "chains", "worst", "= sum", "> sum")
	for _, sp := range sw.plan {
		n := sp.n
		for k, o := range sweepOrders {
			a := perN[n][k]
			fmt.Fprintf(&sb, "%5d %-14s %8d %+6d %10d %10d\n", n, o.name, a.count, a.worst, a.tight, a.above)
		}
	}
	fmt.Fprintf(&sb, "(%d states in %v)", sw.states, sw.elapsed.Round(1e6))
	t.Log(sb.String())
}

// The fast profile and a plain search at each B agree on where chains
// deadlock (BufferProfile's doc says why they should); and tpipe's
// concurrent pool, which hands a released buffer to the first waiter, is
// deadlock-free wherever the profile (without handoff) says so.
func TestBufferProfileAgreesWithCheck(t *testing.T) {
	var pipes []proofs.Pipeline
	for n := 2; n <= 3; n++ {
		for _, kinds := range proofs.Chains(n, proofs.ChainKinds, true) {
			for _, caps := range proofs.CapVectors(n-1, 2) {
				pipes = append(pipes, proofs.Chain(kinds, caps))
			}
		}
	}
	pipes = append(pipes, proofs.TeeJoin(1, 2), proofs.RouteMerge(2, 1), proofs.TeeCopyJoin(1, 1, 1))
	errs := make([]string, len(pipes))
	parallel(len(pipes), func(i int) {
		p := pipes[i]
		for _, o := range sweepOrders {
			pr, err := proofs.BufferProfile(p, o.c)
			if err != nil {
				errs[i] = err.Error()
				return
			}
			for b := 1; b <= pr.MaxUsed+1; b++ {
				r, err := proofs.Check(p, withB(o.c, b))
				if err != nil {
					errs[i] = err.Error()
					return
				}
				if (r.Deadlock != nil) != pr.Deadlocks(b) {
					errs[i] += fmt.Sprintf("%s, %s, B=%d: search says deadlock %v, profile %v\n", p, o.name, b, r.Deadlock != nil, pr.Deadlocks(b))
				}
			}
			if o.c.Write == proofs.ReserveFirst && pr.AnyB == 0 {
				c := withB(o.c, pr.LeastB)
				c.Handoff = true
				r, err := proofs.Check(p, c)
				if err == nil && r.Deadlock != nil {
					errs[i] += fmt.Sprintf("%s, %s with handoff at B=%d:\n%s\n", p, o.name, pr.LeastB, r.Deadlock)
				}
			}
		}
	})
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// The trace format: one numbered action a line, then what blocks each task.
func TestTraceFormat(t *testing.T) {
	r, err := proofs.Check(chain([]int{1, 1}, proofs.Copy, proofs.Copy, proofs.Copy), withB(proofs.PaperLiteral, 2))
	if err != nil {
		t.Fatal(err)
	}
	want := `T1:COPY | T2:COPY | T3:COPY (caps 1,1)
literal, copy reads, eof records, B=2
input: x1 x2 eof
  1. T1:COPY reads x1 from IN
  2. T1:COPY writes x1 to F1
  3. T1:COPY reads x2 from IN
  4. T2:COPY reads x1 from F1
  5. T1:COPY writes x2 to F1
  6. T1:COPY reads eof from IN
  7. T1:COPY acquires a buffer from FREE for eof
deadlock: T1:COPY blocked releasing eof to F1 (full 1/1), T2:COPY blocked acquiring FREE (0 of 2) for F2, T3:COPY blocked acquiring F2 (empty)`
	if r.Deadlock == nil || r.Deadlock.String() != want {
		t.Errorf("trace:\n%v\nwant:\n%s", r.Deadlock, want)
	}
	if got := r.Deadlock.Schedule(); fmt.Sprint(got) != "[0 1 0 0]" {
		t.Errorf("schedule %v, want [0 1 0 0]", got)
	}
}
