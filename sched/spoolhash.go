package sched

import (
	"strconv"

	"github.com/tpipe/tpipe/spool"
)

// This file names the spool's outputs by causal hash: a stage's output is
// named after its tasks' Idents and its inputs' names, so that a rerun
// finds what it would make again.

// outGens returns the causal hashes of stage s's outputs given those of
// its inputs, or nil when they cannot be known (an input's is not yet, or
// s's outputs are named by content).
func (r *spoolRun) outGens(s *spoolStage, in []string) []string {
	if s.content {
		return nil
	}
	for _, h := range in {
		if h == "" {
			return nil
		}
	}
	if s.isMap {
		gens := r.chainGens(s, in[0])
		return gens[len(gens)-1:]
	}
	parts := []string{"step"}
	for _, i := range s.tasks {
		t := r.g.Tasks[i]
		parts = append(parts, t.Ident, strconv.Itoa(t.In), strconv.Itoa(t.Out))
	}
	step := spool.Hash(append(parts, in...)...)
	gens := make([]string, len(s.outs))
	for j := range gens {
		gens[j] = spool.Hash(step, "out", strconv.Itoa(j))
	}
	return gens
}

// chainGens returns the causal hash of the output of each task of map
// stage s, given its input's: those of its virtual edges, then its
// output's. Each is what the task would have run alone.
func (r *spoolRun) chainGens(s *spoolStage, in string) []string {
	gens := make([]string, len(s.tasks))
	for j, i := range s.tasks {
		in = spool.Hash("map", r.g.Tasks[i].Ident, in)
		gens[j] = in
	}
	return gens
}

// chainNames returns the names of segment n of the output of each task
// of map stage s, given its input segment's: a chain's output segment is
// named as its last task alone would have named it.
func (r *spoolRun) chainNames(s *spoolStage, n int, in string) []string {
	names := make([]string, len(s.tasks))
	for j, i := range s.tasks {
		in = spool.SegName(n, spool.Hash(r.g.Tasks[i].Ident, in))
		names[j] = in
	}
	return names
}
