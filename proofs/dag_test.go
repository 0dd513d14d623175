package proofs_test

import (
	"fmt"
	"testing"

	"github.com/tpipe/tpipe/proofs"
)

// shape is a graph beyond a chain, by its capacities.
type shape struct {
	name string
	nq   int
	make func(caps []int) proofs.Pipeline
}

var shapes = []shape{
	{"tee into join", 2, func(c []int) proofs.Pipeline { return proofs.TeeJoin(c[0], c[1]) }},
	{"tee, copy, join", 3, func(c []int) proofs.Pipeline { return proofs.TeeCopyJoin(c[0], c[1], c[2]) }},
	{"route into merge", 2, func(c []int) proofs.Pipeline { return proofs.RouteMerge(c[0], c[1]) }},
	{"route, copy, merge", 3, func(c []int) proofs.Pipeline { return proofs.RouteCopyMerge(c[0], c[1], c[2]) }},
}

// Beyond the paper (its section 6 says its bounds do not carry over to
// acyclic graphs): when a join reads its inputs in an order its fork does
// not feed, a deadlock comes from a full queue, and no number of buffers
// avoids it. Checked: for each shape, some capacities deadlock at every B
// from 1 to well past the sum of the capacities (with tpipe's writes and
// with the literal ones), while larger capacities do not.
func TestBeyondGraphsNoFixedBSuffices(t *testing.T) {
	counterexampleNamed(t, "tee into join")
	counterexampleNamed(t, "tee into join, B large")
	counterexampleNamed(t, "route into merge")
	counterexampleNamed(t, "tee, copy, join")
	for _, sh := range shapes {
		anyB, free := 0, 0
		for _, caps := range proofs.CapVectors(sh.nq, 3) {
			p := sh.make(caps)
			for _, o := range sweepOrders[:] {
				pr, err := proofs.BufferProfile(p, o.c)
				if err != nil {
					t.Fatal(err)
				}
				if pr.Violation != nil {
					t.Errorf("%s, %s:\n%s", p, o.name, pr.Violation)
				}
				if pr.AnyB == 0 {
					free++
					continue
				}
				anyB++
				// The profile says every B from AnyB on deadlocks, and
				// every B below it deadlocks for want of buffers; check
				// a few with a plain search.
				for _, b := range []int{1, p.SumCaps(), p.SumCaps() + 5} {
					r, err := proofs.Check(p, withB(o.c, b))
					if err != nil {
						t.Fatal(err)
					}
					if r.Deadlock == nil {
						t.Errorf("%s, %s: no deadlock at B=%d", p, o.name, b)
					}
				}
			}
		}
		if anyB == 0 || free == 0 {
			t.Errorf("%s: %d capacity vectors deadlock at every B, %d never: want some of each", sh.name, anyB, free)
		}
		t.Logf("%s: %d (capacities, write order) deadlock at every B; %d have a least deadlock-free B", sh.name, anyB, free)
	}
}

// Beyond the paper: resolving a deadlock by raising by one the capacity of
// the smallest full queue on a cycle of waits (Geilen and Basten's
// refinement of Parks' rule; B grows with it) always reaches the end,
// whenever a run with unbounded queues would: checked over every
// interleaving, from every capacity vector up to 3, for every input of up
// to 3 records; and the output is the serial one. Parks' rule as first
// stated (the smallest full queue of all) also works on these shapes.
func TestBeyondGraphsGrowingTheSmallestFullQueue(t *testing.T) {
	for _, sh := range shapes {
		// Unbounded queues: the run always ends.
		big := make([]int, sh.nq)
		for i := range big {
			big[i] = 8
		}
		for _, o := range sweepOrders {
			r, err := proofs.Check(sh.make(big), o.c)
			if err != nil {
				t.Fatal(err)
			}
			if r.Deadlock != nil || r.Violation != nil || r.Terminal == 0 {
				t.Fatalf("%s with unbounded queues: %v %v", sh.name, r.Deadlock, r.Violation)
			}
		}
		growths, states := 0, 0
		for _, caps := range proofs.CapVectors(sh.nq, 3) {
			p := sh.make(caps)
			for _, o := range sweepOrders {
				for _, g := range []proofs.Growth{proofs.GrowCycle, proofs.GrowParks} {
					c := o.c
					c.Grow = g
					r, err := proofs.Check(p, c)
					if err != nil {
						t.Fatal(err)
					}
					if r.Deadlock != nil {
						t.Errorf("%s, %s, growth %d: still deadlocks:\n%s", p, o.name, g, r.Deadlock)
					}
					if r.Violation != nil {
						t.Errorf("%s, %s, growth %d:\n%s", p, o.name, g, r.Violation)
					}
					if r.Terminal < 4 {
						t.Errorf("%s, %s: only %d terminal states", p, o.name, r.Terminal)
					}
					growths += r.Growths
					states += r.States
				}
			}
		}
		t.Logf("%s: %d states, %d of them deadlocks a growth resolved; every run ends with the serial output", sh.name, states, growths)
	}
	r, err := proofs.Check(proofs.TeeJoin(1, 1), proofs.Config{Write: proofs.ReserveFirst, InPlace: true, Move: true, Grow: proofs.GrowCycle, Inputs: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxCaps[1] != 3 || r.MaxCaps[0] != 1 {
		t.Errorf("tee into join: capacities grew to %v, want Fb to 3 and Fa untouched", r.MaxCaps)
	}
	t.Log(fmt.Sprintf("tee into join from capacities 1,1 with 3 records: Fb grows to %d, Fa stays %d", r.MaxCaps[1], r.MaxCaps[0]))
}
