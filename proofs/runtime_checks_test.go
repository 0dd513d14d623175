package proofs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/proofs"
	"github.com/tpipe/tpipe/sched"
)

// Every counterexample the tests print that tpipe's runtime can run
// (reserve-first writes, eof marks) is replayed on it: the test resumes the
// tasks in the order of the schedule, checks after each step that FREE and
// the queues hold what the model says, then lets every task try its next
// operation, and expects the runtime's deadlock detector to report a
// *buffer.DeadlockError naming the same waits.
func TestRuntimeReplaysEveryCounterexample(t *testing.T) {
	replayed := 0
	for _, ce := range counterexamples {
		if !ce.replayable() {
			continue
		}
		t.Run(strings.ReplaceAll(ce.name, " ", "_"), func(t *testing.T) {
			r, err := proofs.Check(ce.p, ce.c)
			if err != nil {
				t.Fatal(err)
			}
			if r.Deadlock == nil {
				t.Fatalf("the checker finds no deadlock")
			}
			d, err := replay(r.Deadlock)
			if err != nil {
				t.Fatalf("%v\nschedule:\n%s", err, r.Deadlock)
			}
			t.Logf("runtime: %v", d)
			replayed++
		})
	}
	if replayed == 0 {
		t.Fatal("nothing replayed")
	}
}

// replay drives the runtime through tr and returns the deadlock it reports.
func replay(tr *proofs.Trace) (*buffer.DeadlockError, error) {
	r, err := newRun(tr.Pipeline, tr.Config, tr.Config.B, tr.Input)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.prime()
	for k, st := range tr.Steps {
		if st.Task < 0 {
			return nil, fmt.Errorf("step %d: the runtime has no resolver step", k+1)
		}
		if !r.runnable(st.Task) {
			return nil, fmt.Errorf("step %d: %s is parked or done in the runtime, but the model runs it", k+1, tr.Pipeline.TaskName(st.Task))
		}
		r.resume(st.Task)
		free, queued, _ := r.pool.Counts()
		if free != st.Free || queued != st.Queued {
			return nil, fmt.Errorf("step %d (%s): runtime has %d free and %d queued, model %d and %d",
				k+1, tr.Pipeline.TaskName(st.Task), free, queued, st.Free, st.Queued)
		}
		if err := r.pool.Err(); err != nil {
			// Local detection may see part of the deadlock before the
			// schedule ends: the tasks it names must be stuck in the
			// model's end state the same way.
			var d *buffer.DeadlockError
			if !errors.As(err, &d) || !d.Local {
				return nil, fmt.Errorf("step %d: the runtime failed early: %v", k+1, err)
			}
			r.settle()
			return d, matchWaits(d, tr)
		}
	}
	r.settle()
	d, err := deadlockOf(r)
	if err != nil {
		return nil, err
	}
	if n := strings.Count(tr.End, " blocked "); n != len(d.Waits) {
		return d, fmt.Errorf("runtime has %d waits, the model %d blocked tasks", len(d.Waits), n)
	}
	return d, matchWaits(d, tr)
}

// matchWaits checks that every wait of d is a blocked task of the model's
// end state.
func matchWaits(d *buffer.DeadlockError, tr *proofs.Trace) error {
	for _, w := range d.Waits {
		var want []string
		switch w.On {
		case "read":
			want = []string{w.Task + " blocked acquiring " + w.Queue + " (empty)"}
		case "room":
			want = []string{w.Task + " blocked reserving room in " + w.Queue, w.Task + " blocked moving"}
		case "free":
			want = []string{w.Task + " blocked acquiring FREE"}
		}
		found := false
		for _, s := range want {
			found = found || strings.Contains(tr.End, s)
		}
		if !found {
			return fmt.Errorf("runtime wait %q has no match in the model's %q", w, tr.End)
		}
	}
	return nil
}

// checkClean checks that every buffer came back to FREE.
func checkClean(r *rtRun, b int) error {
	if err := r.pool.Check(); err != nil {
		return err
	}
	if free := r.pool.Free(); free != b {
		return fmt.Errorf("%d of %d buffers back in FREE", free, b)
	}
	return nil
}

// randomSchedules is how many random schedules the safe configurations get.
func randomSchedules() int {
	switch {
	case *long:
		return 50000
	case testing.Short():
		return 1000
	}
	return 10000
}

// Every configuration the checker calls safe survives random schedules on
// the runtime: each chain of the sweep, with tpipe's reads and writes and
// the least B the checker found deadlock-free, random inputs, and a test
// scheduler that resumes a random runnable task at every step. Half the
// runs use the runtime's default FREE, which hands a released buffer to
// the first waiter; for those the checker first confirms the chain is
// deadlock-free with handoff too.
func TestRuntimeSurvivesRandomSchedules(t *testing.T) {
	sw := sweep(t)
	tp := -1
	for k, o := range sweepOrders {
		if o.name == "tpipe" {
			tp = k
		}
	}
	total := randomSchedules()
	rng := rand.New(rand.NewPCG(1, 2))
	type job struct {
		row     *sweepRow
		input   int
		handoff bool
		seed    uint64
	}
	jobs := make([]job, total)
	for i := range jobs {
		jobs[i] = job{row: sw.rows[rng.IntN(len(sw.rows))], input: rng.IntN(4), handoff: i%2 == 1, seed: rng.Uint64()}
	}
	// The checker's word on handoff, once per chain used.
	safeHandoff := map[*sweepRow]bool{}
	for _, j := range jobs {
		if j.handoff {
			safeHandoff[j.row] = false
		}
	}
	var rows []*sweepRow
	for row := range safeHandoff {
		rows = append(rows, row)
	}
	verdict := make([]bool, len(rows))
	parallel(len(rows), func(i int) {
		c := withB(proofs.TPipe, rows[i].prof[tp].LeastB)
		c.Handoff = true
		r, err := proofs.Check(rows[i].p, c)
		verdict[i] = err == nil && r.Deadlock == nil && r.Violation == nil
	})
	for i, row := range rows {
		safeHandoff[row] = verdict[i]
	}
	errs := make([]string, total)
	var steps, skipped atomic.Int64
	start := time.Now()
	parallel(total, func(i int) {
		j := jobs[i]
		c := proofs.TPipe
		c.Handoff = j.handoff
		if j.handoff && !safeHandoff[j.row] {
			skipped.Add(1)
			return
		}
		b := j.row.prof[tp].LeastB
		n, err := randomRun(j.row.p, c, b, j.input, rand.New(rand.NewPCG(j.seed, 7)))
		steps.Add(int64(n))
		if err != nil {
			errs[i] = fmt.Sprintf("%s, B=%d, %d records, handoff %v: %v", j.row.p, b, j.input, j.handoff, err)
		}
	})
	failed := 0
	for _, e := range errs {
		if e != "" {
			failed++
			if failed <= 5 {
				t.Error(e)
			}
		}
	}
	if skipped.Load() > 0 {
		t.Errorf("%d runs skipped: the checker found handoff unsafe at the least B", skipped.Load())
	}
	t.Logf("%d random schedules (%d steps) of %d chains at their least deadlock-free B: %d failed (%v)",
		total, steps.Load(), len(sw.rows), failed, time.Since(start).Round(time.Millisecond))

	// The driver is not too gentle to find anything: one buffer fewer,
	// and random schedules run into the deadlocks the checker predicts.
	var below, caught atomic.Int64
	parallel(total/10, func(i int) {
		j := jobs[i]
		b := j.row.prof[tp].LeastB - 1
		if b < 1 {
			return
		}
		below.Add(1)
		_, err := randomRun(j.row.p, proofs.TPipe, b, 3, rand.New(rand.NewPCG(j.seed, 8)))
		var d *buffer.DeadlockError
		if errors.As(err, &d) {
			caught.Add(1)
		} else if err != nil {
			t.Errorf("%s, B=%d: %v", j.row.p, b, err)
		}
	})
	if below.Load() > 0 && caught.Load() == 0 {
		t.Error("below the least B, no random schedule deadlocked")
	}
	t.Logf("with one buffer fewer: %d of %d random schedules deadlocked, each reported as a *buffer.DeadlockError", caught.Load(), below.Load())
}

// randomRun runs p on the runtime, resuming a random runnable task at each
// step, and checks the output. It returns the number of steps.
func randomRun(p proofs.Pipeline, c proofs.Config, b, input int, rng *rand.Rand) (int, error) {
	r, err := newRun(p, c, b, input)
	if err != nil {
		return 0, err
	}
	defer r.close()
	r.prime()
	steps := 0
	var cands []int
	for {
		cands = cands[:0]
		for i := range r.cos {
			if r.runnable(i) {
				cands = append(cands, i)
			}
		}
		if len(cands) == 0 {
			break
		}
		r.resume(cands[rng.IntN(len(cands))])
		steps++
	}
	return steps, finished(r, p, b, input)
}

// finished checks a run that has nothing left to do: every task ended, no
// error, the serial output, every buffer back.
func finished(r *rtRun, p proofs.Pipeline, b, input int) error {
	if err := r.pool.Err(); err != nil {
		return err
	}
	if !r.done() {
		return fmt.Errorf("every task is parked and the pool saw no stall")
	}
	if want := p.Serial(input); !bytes.Equal(r.out, want) {
		return fmt.Errorf("output %s, serial %s", names(r.out), names(want))
	}
	return checkClean(r, b)
}

// rosRun runs p on the runtime under Record Oriented Scheduling driven by
// the test: the runnable task with the greatest index takes every step.
func rosRun(p proofs.Pipeline, c proofs.Config, input int) error {
	r, err := newRun(p, c, 1, input)
	if err != nil {
		return err
	}
	defer r.close()
	r.prime()
	r.settle() // settle is exactly that policy
	return finished(r, p, 1, input)
}

// Theorem 4.1 on the runtime: every chain of up to maxTasks() tasks (every
// kind in every place, capacities 1, B = 1, inputs of 0 to 3 records) runs
// to the serial output under tpipe's own ros policy (sched.Run), and under
// the test's ros driver with tpipe's ros reads, with batches of two records,
// and with capacities up to 3.
func TestRuntimeROSWithOneBuffer(t *testing.T) {
	pipes := rosChains(maxTasks(), 1)
	errs := make([]string, len(pipes))
	parallel(len(pipes), func(i int) {
		p := pipes[i]
		for input := 0; input <= 3; input++ {
			var out []byte
			st, err := sched.Run(context.Background(), graphOf(p, proofs.TPipeROS, input, &out), sched.Options{Policy: sched.ROS, RecordSize: 1})
			switch {
			case err != nil:
				errs[i] += fmt.Sprintf("%s, %d records, sched ros: %v\n", p, input, err)
			case st.Buffers != 1:
				errs[i] += fmt.Sprintf("%s: sched ros used B=%d\n", p, st.Buffers)
			case !bytes.Equal(out, p.Serial(input)):
				errs[i] += fmt.Sprintf("%s, %d records, sched ros: output %s, serial %s\n", p, input, names(out), names(p.Serial(input)))
			}
			for _, c := range []proofs.Config{proofs.TPipeROS, rosBatch} {
				if err := rosRun(p, c, input); err != nil {
					errs[i] += fmt.Sprintf("%s, %d records, %s: %v\n", p, input, c, err)
				}
			}
		}
	})
	wide := rosChains(min(maxTasks(), 3), 3)
	wideErrs := make([]string, len(wide))
	parallel(len(wide), func(i int) {
		for input := 0; input <= 3; input++ {
			if err := rosRun(wide[i], proofs.TPipeROS, input); err != nil {
				wideErrs[i] += fmt.Sprintf("%s, %d records: %v\n", wide[i], input, err)
			}
		}
	})
	for _, e := range append(errs, wideErrs...) {
		if e != "" {
			t.Error(e)
		}
	}
	t.Logf("%d chains x 4 inputs under sched ros and the test's ros (two variants), %d more with capacities up to 3: all serial output, B = 1", len(pipes), len(wide))
}

// Growing the smallest full queue on the cycle of waits, on the runtime:
// the graphs that deadlock at every B run to the serial output under
// random schedules with a resolver (buffer.Options.Resolver) that does what
// the checker's GrowCycle does.
func TestRuntimeGrowthResolvesGraphDeadlocks(t *testing.T) {
	total := randomSchedules() / 10
	errs := make([]string, total)
	var grown atomic.Int64
	parallel(total, func(i int) {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		sh := shapes[i%len(shapes)]
		caps := make([]int, sh.nq)
		for k := range caps {
			caps[k] = 1 + rng.IntN(2)
		}
		p := sh.make(caps)
		input := rng.IntN(4)
		n, err := growthRun(p, input, rng)
		grown.Add(int64(n))
		if err != nil {
			errs[i] = fmt.Sprintf("%s, %d records: %v", p, input, err)
		}
	})
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if grown.Load() == 0 {
		t.Error("no run needed a growth")
	}
	t.Logf("%d random schedules of %d graphs: %d growths, all ended with the serial output", total, len(shapes), grown.Load())
}

// growthRun runs p with a resolver that grows the smallest full queue on
// the cycle of waits, and B large enough that FREE never runs out (the
// model grows B with the queue). It returns the number of growths.
func growthRun(p proofs.Pipeline, input int, rng *rand.Rand) (int, error) {
	const b = 16
	grown := 0
	var r *rtRun
	r, err := newRunResolved(p, proofs.TPipe, b, input, func(d *buffer.DeadlockError) *buffer.Queue {
		q := smallestFullOnCycle(p, d)
		if q < 0 {
			return nil
		}
		grown++
		return r.queues[q]
	})
	if err != nil {
		return 0, err
	}
	defer r.close()
	r.prime()
	for {
		var cands []int
		for i := range r.cos {
			if r.runnable(i) {
				cands = append(cands, i)
			}
		}
		if len(cands) == 0 {
			break
		}
		r.resume(cands[rng.IntN(len(cands))])
	}
	return grown, finished(r, p, b, input)
}

// smallestFullOnCycle follows the waits of a stalled pool (a task waiting
// for room waits for the queue's reader, one waiting to read for its
// writer) to a cycle and returns the smallest full queue on it, or -1.
func smallestFullOnCycle(p proofs.Pipeline, d *buffer.DeadlockError) int {
	task := map[string]int{}
	for i := range p.Tasks {
		task[p.TaskName(i)] = i
	}
	queue := map[string]int{}
	for i, q := range p.Queues {
		queue[q.Name] = i
	}
	endOf := func(q int, reader bool) int {
		for i, ts := range p.Tasks {
			ports := ts.Out
			if reader {
				ports = ts.In
			}
			for _, x := range ports {
				if x == q {
					return i
				}
			}
		}
		return -1
	}
	waitsFor := make([]int, len(p.Tasks))
	via := make([]int, len(p.Tasks))
	for i := range waitsFor {
		waitsFor[i], via[i] = -1, -1
	}
	capOf := make([]int, len(p.Queues))
	for _, w := range d.Waits {
		t, q := task[w.Task], queue[w.Queue]
		switch w.On {
		case "room":
			waitsFor[t], via[t] = endOf(q, true), q
			capOf[q] = w.Cap
		case "read":
			waitsFor[t] = endOf(q, false)
		}
	}
	best := -1
	for start := range p.Tasks {
		// Walk len(p.Tasks) steps: then we are on a cycle, if any.
		t := start
		for range p.Tasks {
			if t >= 0 {
				t = waitsFor[t]
			}
		}
		if t < 0 {
			continue
		}
		for u := t; ; {
			if q := via[u]; q >= 0 && (best < 0 || capOf[q] < capOf[best]) {
				best = q
			}
			if u = waitsFor[u]; u == t {
				break
			}
		}
	}
	return best
}
