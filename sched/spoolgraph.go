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

// Kept says where a plan whose policy keeps its edges on disk keeps
// them, for --explain and --dot: the folder, each edge's place and each
// task's way of running. Those who show a plan ask it here, never the
// policy's name.
type Kept struct {
	Dir    string     // the folder; "" for a temporary one
	Edges  []KeptEdge // indexed like the graph's edges
	Stages []string   // how each task runs, in words, indexed like the graph's tasks
}

// KeptEdge is where one edge of a persistent plan is kept.
type KeptEdge struct {
	Place string // the place's directory within Kept.Dir
	// File is set when the edge is read in place from its writer's file,
	// which is then never run.
	File string
	// Virtual is set when the edge's place stays empty: its writer and
	// reader run in one pass over each segment, so its records never
	// leave memory. The place is made and named all the same, and its
	// causal hash computed, so that the names of the tokens after it are
	// those the two tasks would give apart.
	Virtual bool
}

// Kept returns where p keeps its graph's edges, or nil when its policy
// keeps nothing on disk (Policy.Persistent).
func (p *Plan) Kept() *Kept {
	if !p.Runs.Persistent() {
		return nil
	}
	g := p.Graph
	k := &Kept{Edges: make([]KeptEdge, len(g.Edges)), Stages: make([]string, len(g.Tasks))}
	if p.Options.Spool != nil {
		k.Dir = p.Options.Spool.Dir
	}
	for i, place := range spoolPlaces(g) {
		k.Edges[i] = KeptEdge{Place: place, Virtual: fusedEdge(g, i)}
		if t := g.Tasks[g.Edges[i].From.Task]; inPlace(t) {
			k.Edges[i].File = t.File
		}
	}
	for i := range g.Tasks {
		k.Stages[i] = spoolForm(g, i)
	}
	return k
}

// spoolPlaces returns the places of g's edges under the spool, in edge
// order: the directory of each within the spool.
func spoolPlaces(g *graph.Graph) []string {
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

// spoolForm says in words how the spool runs task i of g: per segment
// (with the map tasks it is fused with), over the whole stream, or not at
// all (its file is read in place).
func spoolForm(g *graph.Graph, i int) string {
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
