package sched

import (
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/spool"
)

// This file classifies a graph's tasks and edges for the spool: which
// tasks are maps, which edges are virtual or read in place, the places
// and the shape the spool records.

// SpoolPlaces returns the places of g's edges under the spool, in edge
// order: the directory of each within the spool.
func SpoolPlaces(g *graph.Graph) []string {
	names := make([]string, len(g.Edges))
	for k, e := range g.Edges {
		names[k] = e.Name
	}
	return spool.PlaceNames(names)
}

// isMap reports whether task t runs on its input's segments apart.
func isMap(t *graph.Task) bool {
	return t.Rec != nil && t.Rec.Fresh != nil && t.In == 1 && t.Out == 1 && t.Ident != "" && t.Together == ""
}

// fusedEdge reports whether edge k of g joins two map tasks: the spool
// runs them as one pass over each segment (loop jamming, as the fused
// policy does in memory), and the edge's place stays empty (virtual).
func fusedEdge(g *graph.Graph, k int) bool {
	e := g.Edges[k]
	return isMap(g.Tasks[e.From.Task]) && isMap(g.Tasks[e.To.Task])
}

// inPlace reports whether task t's output is a file the spool reads in
// place (graph.Task.File) rather than a place of its own.
func inPlace(t *graph.Task) bool {
	return t.File != "" && t.Ident != "" && t.In == 0 && t.Out == 1 && t.Together == ""
}

// SpoolForm says in words how the spool runs task i of g: per segment
// (with the map tasks it is fused with), over the whole stream, or not at
// all (its file is read in place).
func SpoolForm(g *graph.Graph, i int) string {
	t := g.Tasks[i]
	switch {
	case inPlace(t):
		return "not run: its file is read in place, in segments cut at line ends"
	case isMap(t):
		var with []string
		for k, e := range g.Edges {
			switch {
			case e.From.Task == i && fusedEdge(g, k):
				with = append(with, fmt.Sprintf("%s (%s not written)", g.Tasks[e.To.Task].Name, e.Name))
			case e.To.Task == i && fusedEdge(g, k):
				with = append(with, g.Tasks[e.From.Task].Name)
			}
		}
		if len(with) > 0 {
			return "per segment, in parallel, in one pass with " + strings.Join(with, " and ")
		}
		return "per segment, in parallel"
	}
	return "whole stream"
}

// SpoolVirtual reports whether edge k of g has no tokens under the spool:
// it joins two tasks that run in one pass over each segment (see
// SpoolForm), so its records never leave memory. Its place is made and
// named all the same, and its causal hash is computed, so that the names
// of the tokens after it are those the two tasks would give apart.
func SpoolVirtual(g *graph.Graph, k int) bool { return fusedEdge(g, k) }

// SpoolInPlace returns the file that edge k of g is read from in place
// under the spool, if its writer is such a file (see SpoolForm).
func SpoolInPlace(g *graph.Graph, k int) (string, bool) {
	t := g.Tasks[g.Edges[k].From.Task]
	return t.File, inPlace(t)
}

// spoolShape is the hash of g's shape: its tasks' ports and groups, and
// its edges and places. A spool made by a graph of another shape is
// refused; stages may differ (the cache sees to them).
func spoolShape(g *graph.Graph, places []string) string {
	var parts []string
	for _, t := range g.Tasks {
		parts = append(parts, fmt.Sprintf("t %d %d %v", t.In, t.Out, t.Together != ""))
	}
	for k, e := range g.Edges {
		parts = append(parts, fmt.Sprintf("e %d.%d %d.%d %s", e.From.Task, e.From.Port, e.To.Task, e.To.Port, places[k]))
	}
	return spool.Hash(parts...)
}
