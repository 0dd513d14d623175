package proofs_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/proofs"
)

// The sweep: every chain of the lengths in sweepPlan() whose first n-1
// tasks are drawn from proofs.ChainKinds (the last is COPY, see
// proofs.Chains), every capacity vector from 1 to 3 (2 for some lengths,
// see sweepPlan), inputs of 0 to 3 records, under each write order. One proofs.BufferProfile per chain and order gives both what
// Theorem 2.2 needs (every terminal state, for every B) and what Theorem
// 3.2 needs (every B at which some schedule deadlocks). Tests share it.

// order is a variant the sweep profiles.
type order struct {
	name string
	c    proofs.Config
}

var sweepOrders = []order{
	{"literal", proofs.PaperLiteral},
	{"reserve-first", proofs.PaperReserve},
	{"tpipe", proofs.TPipe},
}

type sweepRow struct {
	p     proofs.Pipeline
	kinds []proofs.Kind
	prof  []*proofs.Profile // by sweepOrders index
}

type sweepResult struct {
	plan    []span
	rows    []*sweepRow
	states  int
	elapsed time.Duration
	err     error
}

var (
	sweepOnce sync.Once
	sweepRes  sweepResult
)

// sweep returns the shared sweep, running it on first use.
func sweep(t *testing.T) *sweepResult {
	t.Helper()
	sweepOnce.Do(func() { sweepRes = runSweep(sweepPlan()) })
	if sweepRes.err != nil {
		t.Fatal(sweepRes.err)
	}
	return &sweepRes
}

func runSweep(plan []span) sweepResult {
	start := time.Now()
	var rows []*sweepRow
	for _, sp := range plan {
		for _, kinds := range proofs.Chains(sp.n, proofs.ChainKinds, true) {
			for _, caps := range proofs.CapVectors(sp.n-1, sp.maxCap) {
				rows = append(rows, &sweepRow{p: proofs.Chain(kinds, caps), kinds: kinds})
			}
		}
	}
	res := sweepResult{rows: rows, plan: plan}
	errs := make([]error, len(rows))
	states := make([]int, len(rows))
	parallel(len(rows), func(i int) {
		r := rows[i]
		for _, o := range sweepOrders {
			pr, err := proofs.BufferProfile(r.p, o.c)
			if err != nil {
				errs[i] = fmt.Errorf("%s, %s: %w", r.p, o.name, err)
				return
			}
			r.prof = append(r.prof, pr)
			states[i] += pr.States
		}
	})
	for i := range rows {
		if errs[i] != nil && res.err == nil {
			res.err = errs[i]
		}
		res.states += states[i]
	}
	res.elapsed = time.Since(start)
	return res
}

// parallel calls f(0) ... f(n-1) on GOMAXPROCS goroutines and waits for
// them. The checker itself is single-threaded; only the sweep is spread.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// prefixSum returns the sum of the capacities of every queue but the last.
func prefixSum(p proofs.Pipeline) int {
	caps := p.Caps()
	s := 0
	for _, c := range caps[:len(caps)-1] {
		s += c
	}
	return s
}

// describe says what the sweep covers.
func (sw *sweepResult) describe() string {
	var parts []string
	for _, sp := range sw.plan {
		parts = append(parts, fmt.Sprintf("%d tasks with capacities 1-%d", sp.n, sp.maxCap))
	}
	return fmt.Sprintf("chains of %s (the last task COPY), inputs of 0-3 records, every interleaving", strings.Join(parts, ", "))
}

func kindsName(kinds []proofs.Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	return strings.Join(names, "|")
}

func capsName(caps []int) string {
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
