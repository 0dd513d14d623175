package sched

import (
	"bytes"
	"strings"
	"testing"
)

// A plan says where it keeps its edges only under a policy that keeps
// them on disk, and then says it of every edge: the two edges between the
// chain's map tasks are virtual, the others real places in the folder.
func TestPlanKept(t *testing.T) {
	var out bytes.Buffer
	g := chainGraph(100, &out, "")
	pl, err := MakePlan(g, Options{Policy: Concurrent})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Kept() != nil {
		t.Fatal("a concurrent plan says it keeps edges on disk")
	}
	pl, err = MakePlan(g, Options{Policy: Spool, Spool: &SpoolOptions{Dir: "sp"}})
	if err != nil {
		t.Fatal(err)
	}
	kept := pl.Kept()
	if kept == nil || kept.Dir != "sp" || len(kept.Edges) != len(g.Edges) || len(kept.Stages) != len(g.Tasks) {
		t.Fatalf("kept: %+v", kept)
	}
	places := map[string]bool{}
	for k, e := range kept.Edges {
		if want := k == 1 || k == 2; e.Virtual != want {
			t.Errorf("edge %s virtual: %v", g.Edges[k].Name, e.Virtual)
		}
		if e.Place == "" || places[e.Place] || e.File != "" {
			t.Errorf("edge %s: %+v", g.Edges[k].Name, e)
		}
		places[e.Place] = true
	}
	mid := g.Edges[1].To.Task // the middle map task, fused on both sides
	if s := kept.Stages[mid]; !strings.Contains(s, "one pass with") {
		t.Errorf("the middle map task runs %q", s)
	}
}
