package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func nop(context.Context, *buffer.Ports) error { return nil }

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(g *graph.Graph)
		err   string // "" for valid
	}{
		{"chain", func(g *graph.Graph) {
			a, b := g.Add("a", 0, 1, nop), g.Add("b", 1, 0, nop)
			g.Connect(a, 0, b, 0, 1)
		}, ""},
		{"unconnected input", func(g *graph.Graph) { g.Add("a", 1, 0, nop) }, "task a: input port 0 is not connected"},
		{"unconnected output", func(g *graph.Graph) { g.Add("a", 0, 1, nop) }, "task a: output port 0 is not connected"},
		{"port connected twice", func(g *graph.Graph) {
			a, b, c := g.Add("a", 0, 1, nop), g.Add("b", 1, 0, nop), g.Add("c", 1, 0, nop)
			g.Connect(a, 0, b, 0, 1)
			g.Connect(a, 0, c, 0, 1)
		}, "task a: output port 0 connected twice"},
		{"no such port", func(g *graph.Graph) {
			a, b := g.Add("a", 0, 1, nop), g.Add("b", 1, 0, nop)
			g.Connect(a, 1, b, 0, 1)
		}, "task a has no output port 1"},
		{"bad capacity", func(g *graph.Graph) {
			a, b := g.Add("a", 0, 1, nop), g.Add("b", 1, 0, nop)
			g.Connect(a, 0, b, 0, -1)
		}, "capacity -1"},
		{"cycle", func(g *graph.Graph) {
			a, b := g.Add("a", 1, 1, nop), g.Add("b", 1, 1, nop)
			g.Connect(a, 0, b, 0, 1)
			g.Connect(b, 0, a, 0, 1)
		}, "cycle through a, b"},
		{"no code", func(g *graph.Graph) { g.Add("a", 0, 0, nil) }, "task a has no code"},
	} {
		g := &graph.Graph{}
		tc.build(g)
		err := g.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, graph.ErrInvalid)):
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
}

// Topological order puts every writer before its readers, and keeps the
// written order among tasks that are free to go in any order.
func TestOrderAndShape(t *testing.T) {
	g := &graph.Graph{}
	sink := g.Add("sink", 2, 0, nop)
	left := g.Add("left", 0, 1, nop)
	right := g.Add("right", 0, 1, nop)
	g.Connect(left, 0, sink, 0, 3)
	g.Connect(right, 0, sink, 1, 2)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := g.Order(); len(got) != 3 || got[0] != left || got[1] != right || got[2] != sink {
		t.Fatalf("order %v", got)
	}
	if g.Tasks[sink].Index != 2 || g.Edges[0].Name != "F1" {
		t.Fatalf("index %d, edge name %q", g.Tasks[sink].Index, g.Edges[0].Name)
	}
	if g.IsChain() {
		t.Fatal("a join is not a chain")
	}
	if g.Bound() != 5 {
		t.Fatalf("bound %d, want 5", g.Bound())
	}
	c := graph.Chain(0, &graph.Task{Name: "a", Out: 1, Fn: nop}, &graph.Task{Name: "b", In: 1, Fn: nop})
	if !c.IsChain() || c.Bound() != graph.DefaultCap {
		t.Fatalf("chain: IsChain %v, bound %d", c.IsChain(), c.Bound())
	}
}
