package graph

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DotOptions label a graph printed by Dot.
type DotOptions struct {
	Title      string // a first line of the label; may be empty
	Policy     string // the policy that runs the graph
	Buffers    int    // B
	RecordSize int    // S in bytes
	// Places, if set, gives the directory that holds edge k on disk (the
	// spool's places), shown under the edge's name.
	Places func(k int) string
}

// Dot writes g in Graphviz's DOT language as a Petri net: each task is a
// transition (a box) and each queue a place (a circle) holding up to its
// capacity of buffer tokens, with arcs task -> queue -> task. The label
// gives the policy and B. `dot -Tsvg` draws it.
func Dot(w io.Writer, g *Graph, o DotOptions) {
	var sb strings.Builder
	sb.WriteString("digraph tpipe {\n")
	sb.WriteString("  rankdir=LR;\n")
	var label []string
	if o.Title != "" {
		label = append(label, o.Title)
	}
	if o.Policy != "" {
		label = append(label, "policy "+o.Policy)
	}
	if o.Buffers > 0 {
		l := fmt.Sprintf("B = %d buffers", o.Buffers)
		if o.RecordSize > 0 {
			l += fmt.Sprintf(" of %d bytes", o.RecordSize)
		}
		label = append(label, l)
	}
	if len(label) > 0 {
		fmt.Fprintf(&sb, "  label=%s;\n  labelloc=t;\n", quoteDot(strings.Join(label, "\n")))
	}
	sb.WriteString("  node [fontname=\"monospace\"];\n")
	order := g.order
	if order == nil {
		order = make([]int, len(g.Tasks))
		for i := range order {
			order[i] = i
		}
	}
	for _, i := range order {
		t := g.Tasks[i]
		fmt.Fprintf(&sb, "  t%d [shape=box, label=%s];\n", i, quoteDot(t.Name))
	}
	for k, e := range g.Edges {
		label := fmt.Sprintf("%s\ncap %d", e.Name, e.Cap)
		if o.Places != nil {
			label = fmt.Sprintf("%s\n%s", e.Name, o.Places(k))
		}
		fmt.Fprintf(&sb, "  q%d [shape=circle, label=%s];\n", k, quoteDot(label))
		fmt.Fprintf(&sb, "  t%d -> q%d;\n  q%d -> t%d;\n", e.From.Task, k, k, e.To.Task)
	}
	sb.WriteString("}\n")
	io.WriteString(w, sb.String())
}

// quoteDot quotes s as a DOT string.
func quoteDot(s string) string {
	q := strconv.Quote(s)
	// DOT understands \" and \\ and \n as Go writes them; other escapes
	// Go may produce (\t, \x..) are rare in task names and harmless.
	return q
}
