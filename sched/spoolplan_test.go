package sched

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/task"
)

// memStore is a spoolStore in memory, for plan() alone (not safe for
// concurrent use): the end tokens present, by edge and
// generation, and the generations the plan asked for.
type memStore struct {
	ends  map[string]memEnd
	asked []memKey
}

type memKey struct {
	k   int
	gen string
}

type memEnd struct {
	names  []string
	status int
}

func (m *memStore) ReadEnd(k int, gen string) ([]string, int, bool, error) {
	m.asked = append(m.asked, memKey{k, gen})
	e, ok := m.ends[fmt.Sprint(k, gen)]
	return e.names, e.status, ok, nil
}

func (m *memStore) ReadStderr(k int, gen string, maxBytes int) ([]spool.Stderr, bool, error) {
	return nil, false, nil
}

// planGraph is src | upper | number | sink: src and number whole-stream,
// upper a map; edges 0, 1, 2 in that order.
func planGraph() *graph.Graph {
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records([]byte("a\n")))
	g.Tasks[src].Ident = "src"
	up := addUpper(g)
	k := 0
	num := g.AddRecord("number", task.Map(func(rec, scratch []byte) []byte {
		k++
		return append(strconv.AppendInt(scratch, int64(k), 10), rec...)
	}))
	g.Tasks[num].Ident = "number"
	sink := g.Add("sink", 1, 0, jamCountSink(new(int)))
	g.Tasks[sink].Ident = "sink"
	g.Connect(src, 0, up, 0, 0)
	g.Connect(up, 0, num, 0, 0)
	g.Connect(num, 0, sink, 0, 0)
	if err := g.Validate(); err != nil { // orders the tasks
		panic(err)
	}
	return g
}

// planOver plans g over store, with no spool on disk, and returns which
// tasks' stages run and which are cached, as strings of task names.
func planOver(t *testing.T, g *graph.Graph, store spoolStore) (r *spoolRun, run, cached string) {
	t.Helper()
	r = &spoolRun{groupRunner: newGroupRunner(g, Plan{}, Options{}, Spool), so: SpoolOptions{Segment: DefaultSegment},
		places: spoolPlaces(g), store: store,
		segRun: make([]atomic.Int64, len(g.Tasks)), segHit: make([]atomic.Int64, len(g.Tasks))}
	for k := range g.Edges {
		r.edges = append(r.edges, newSpoolEdge(k, nil))
	}
	if err := r.plan(); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.stages {
		for _, i := range s.tasks {
			if s.run {
				run += g.Tasks[i].Name + " "
			}
			if s.cached {
				cached += g.Tasks[i].Name + " "
			}
		}
	}
	return r, run, cached
}

// The plan over what is on disk, with no disk: only what is needed runs.
func TestSpoolPlanStore(t *testing.T) {
	// An empty spool: every stage runs. The plan asks for the end token
	// of each output, by the generation a run would write.
	empty := &memStore{}
	_, run, cached := planOver(t, planGraph(), empty)
	if run != "src upper number sink " || cached != "" {
		t.Fatalf("empty spool: run %q, cached %q", run, cached)
	}
	if len(empty.asked) != 3 {
		t.Fatalf("the plan asked for %v, want the ends of edges 0, 1, 2", empty.asked)
	}
	gen := map[int]string{}
	for _, a := range empty.asked {
		gen[a.k] = a.gen
	}
	with := func(ks ...int) *memStore {
		m := &memStore{ends: map[string]memEnd{}}
		for _, k := range ks {
			m.ends[fmt.Sprint(k, gen[k])] = memEnd{names: []string{spool.SegName(0, gen[k])}}
		}
		return m
	}
	for _, tc := range []struct {
		name        string
		store       *memStore
		run, cached string
	}{
		{"all made", with(0, 1, 2), "sink ", "src upper number "},
		{"last made", with(2), "sink ", "number "},
		{"last missing", with(0, 1), "number sink ", "src upper "},
		{"first missing", with(1, 2), "sink ", "upper number "},
		{"middle missing", with(0, 2), "sink ", "src number "},
		{"only first", with(0), "upper number sink ", "src "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, run, cached := planOver(t, planGraph(), tc.store)
			if run != tc.run || cached != tc.cached {
				t.Errorf("run %q, cached %q; want run %q, cached %q", run, cached, tc.run, tc.cached)
			}
		})
	}

	// A cached writer's exit status is the run's (pipefail).
	m := with(0, 1, 2)
	m.ends[fmt.Sprint(2, gen[2])] = memEnd{names: []string{spool.SegName(0, gen[2])}, status: 3}
	r, _, _ := planOver(t, planGraph(), m)
	var te *TaskError
	if err := r.errs.err(); !errors.As(err, &te) || te.Task != "number" {
		t.Errorf("the run's error is %v, want number's status 3", err)
	}
	if r.st.Tasks[2].Status != 3 {
		t.Errorf("number's status is %d, want 3", r.st.Tasks[2].Status)
	}
}
