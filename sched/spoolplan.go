package sched

import (
	"slices"

	"github.com/tpipe/tpipe/spool"
)

// spoolStore is what the spool's plan reads of what is on disk: the end
// token of a place's generation (which says the place is complete, names
// its segments, checks that each is still there, and keeps its writer's
// exit status) and the token that keeps its writer's stderr. The plan
// reads the spool through it alone, so that it is tested over an
// in-memory store (memStore, in the tests) the way raft's core is tested
// without storage; placeStore, over the run's places, is the one a run
// uses. Implementations must be safe for concurrent use: whole-stream
// stages look for their outputs as they start.
type spoolStore interface {
	// ReadEnd returns the segments that the end token of gen in the place
	// of edge k names, and its writer's exit status; ok is false when
	// there is no end token or a segment it names is gone.
	ReadEnd(k int, gen string) (names []string, status int, ok bool, err error)
	// ReadStderr returns the standard errors kept for gen in the place of
	// edge k, each of at most maxBytes; ok is false when there is none.
	ReadStderr(k int, gen string, maxBytes int) (errs []spool.Stderr, ok bool, err error)
}

// placeStore is the spoolStore of a run: the places of its edges.
type placeStore []*spoolEdge

var _ spoolStore = placeStore(nil)

func (ps placeStore) ReadEnd(k int, gen string) ([]string, int, bool, error) {
	return spool.ReadEnd(ps[k].p, gen)
}

func (ps placeStore) ReadStderr(k int, gen string, maxBytes int) ([]spool.Stderr, bool, error) {
	return spool.ReadStderr(ps[k].p, gen, maxBytes)
}

// plan makes the stages, works out the causal hashes that can be known
// before anything runs, finds the cached stages and, from the last stage
// back, those that must run. Of the spool it reads only r.store; a file
// read in place is opened (readInPlace).
func (r *spoolRun) plan() error {
	g := r.g
	r.ins, r.outs = edgesOf(g)
	groups := serialSteps(g)
	r.stageOf = make([]int, len(g.Tasks))
	for si, tasks := range groups {
		s := &spoolStage{tasks: tasks}
		for _, i := range tasks {
			r.stageOf[i] = si
			s.ins = append(s.ins, r.ins[i]...)
			s.outs = append(s.outs, r.outs[i]...)
			for range r.outs[i] {
				s.outTask = append(s.outTask, i)
			}
			s.content = s.content || g.Tasks[i].Ident == ""
		}
		s.isMap = len(tasks) == 1 && isMap(g.Tasks[tasks[0]])
		s.inPlace = len(tasks) == 1 && inPlace(g.Tasks[tasks[0]])
		r.stages = append(r.stages, s)
	}
	r.fuseMaps()
	for _, s := range r.stages {
		for _, i := range s.tasks {
			if tap := g.Tasks[i].Stderr; tap != nil && !slices.Contains(s.taps, tap) {
				s.taps = append(s.taps, tap)
			}
		}
	}
	gen := make([]string, len(g.Edges)) // known before the run, or ""
	for _, s := range r.stages {
		if s.inPlace {
			h, err := r.readInPlace(s)
			if err != nil {
				return err
			}
			gen[s.outs[0]] = h
			continue
		}
		var in []string
		for _, k := range s.ins {
			in = append(in, gen[k])
		}
		s.gens = r.outGens(s, in)
		for j, k := range s.outs {
			if s.gens != nil {
				gen[k] = s.gens[j]
			}
		}
		if s.isMap && in[0] != "" {
			for j, h := range r.chainGens(s, in[0])[:len(s.virtual)] {
				r.edges[s.virtual[j]].setGen(h)
			}
		}
		if s.gens != nil && len(s.outs) > 0 {
			cached, err := r.cached(s, s.gens)
			if err != nil {
				return err
			}
			s.cached = cached
		}
	}
	for si := len(r.stages) - 1; si >= 0; si-- {
		s := r.stages[si]
		switch {
		case s.cached || s.inPlace:
		case len(s.outs) == 0:
			s.run = true // a sink: it delivers its input every run
		default:
			for _, k := range s.outs {
				s.run = s.run || r.stages[r.stageOf[g.Edges[k].To.Task]].run
			}
		}
	}
	return nil
}

// fuseMaps joins each map stage to the map stage that reads its output, so
// that a chain of map tasks is one stage (see fusedEdge). serialSteps
// orders the stages so that a writer comes before its reader.
func (r *spoolRun) fuseMaps() {
	g := r.g
	var kept []*spoolStage
	for _, s := range r.stages {
		if s.isMap && fusedEdge(g, s.ins[0]) {
			head := kept[r.stageOf[g.Edges[s.ins[0]].From.Task]]
			head.virtual = append(head.virtual, s.ins[0])
			head.tasks = append(head.tasks, s.tasks...)
			head.outs, head.outTask = s.outs, s.outTask
			for _, i := range s.tasks {
				r.stageOf[i] = r.stageOf[head.tasks[0]]
			}
			continue
		}
		for _, i := range s.tasks {
			r.stageOf[i] = len(kept)
		}
		kept = append(kept, s)
	}
	r.stages = kept
	for _, s := range r.stages {
		for _, k := range s.virtual {
			r.edges[k].virtual = true
			r.edges[k].markEnded()
		}
	}
}

// cached reports whether every output place of s is complete for gens
// (and, for a stage that keeps its stderr, the token of it is there); if
// so it records them as complete, with their writers' exit statuses, and
// writes the stderr kept again.
func (r *spoolRun) cached(s *spoolStage, gens []string) (bool, error) {
	type found struct {
		names  []string
		status int
	}
	var all []found
	for j, k := range s.outs {
		names, status, ok, err := r.store.ReadEnd(k, gens[j])
		if err != nil || !ok {
			return false, r.diskErr(err)
		}
		all = append(all, found{names, status})
	}
	var errs []spool.Stderr
	if s.keepsStderr() {
		var ok bool
		var err error
		errs, ok, err = r.store.ReadStderr(s.outs[0], gens[0], spoolStderrMax)
		if err != nil || !ok || len(errs) != len(s.taps) {
			// None (a spool of an older tpipe), or kept for another count
			// of tasks: the stage runs, and keeps its stderr anew.
			return false, r.diskErr(err)
		}
		r.edges[s.outs[0]].setErrTok(spool.StderrName(gens[0]))
	}
	for j, k := range s.outs {
		r.edges[k].complete(gens[j], all[j].names)
		r.edges[k].markEnded()
		i := s.outTask[j]
		r.segHit[i].Add(int64(len(all[j].names)))
		if all[j].status != 0 {
			r.exit(i, all[j].status)
		}
	}
	for j, e := range errs {
		r.replayStderr(s, s.taps[j], e)
	}
	return true, nil
}
