package sched_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// Random DAGs: sources, per-record maps and filters, tees, routes, merges,
// joins, and concats (a join that reads one input to its end before the
// next: the shape no fixed capacity makes safe). Records are "N:tags\n";
// N is the key of a join.

type dagOp struct {
	kind string // map, filter, tee, route, merge, concat, join
	in   []int  // streams consumed, by position in the open list
	n    int    // outputs of tee and route; modulus of filter
	tag  byte   // map's tag
}

type dagSpec struct {
	sources []int // records per source
	ops     []dagOp
	caps    []int // capacity of each edge, in order of creation (cycled)
	// ends makes the sources and sinks per-record forms (task.Source,
	// task.Sink), which ros runs as calls, in its runs (the serial
	// reference keeps the loops).
	ends bool
}

func drawDAG(t *rapid.T) *dagSpec {
	s := &dagSpec{}
	nsrc := rapid.IntRange(1, 2).Draw(t, "sources")
	for i := range nsrc {
		s.sources = append(s.sources, rapid.IntRange(0, 120).Draw(t, fmt.Sprint("records", i)))
	}
	open := nsrc
	nops := rapid.IntRange(1, 7).Draw(t, "ops")
	for k := range nops {
		kinds := []string{"map", "filter", "tee", "route"}
		if open >= 2 {
			kinds = append(kinds, "merge", "concat", "join")
		}
		op := dagOp{kind: rapid.SampledFrom(kinds).Draw(t, fmt.Sprint("kind", k))}
		pick := func(n int) {
			perm := rapid.Permutation(seq(open)).Draw(t, fmt.Sprint("in", k))
			op.in = perm[:n]
		}
		switch op.kind {
		case "map":
			pick(1)
			op.tag = byte('a' + k)
		case "filter":
			pick(1)
			op.n = rapid.IntRange(2, 4).Draw(t, fmt.Sprint("mod", k))
		case "tee", "route":
			pick(1)
			op.n = rapid.IntRange(2, 3).Draw(t, fmt.Sprint("outs", k))
			open += op.n - 1
		case "join":
			pick(2)
			open--
		default:
			pick(rapid.IntRange(2, min(open, 3)).Draw(t, fmt.Sprint("fanin", k)))
			open -= len(op.in) - 1
		}
		s.ops = append(s.ops, op)
	}
	s.caps = rapid.SliceOfN(rapid.IntRange(1, 3), 1, 8).Draw(t, "caps")
	s.ends = rapid.Bool().Draw(t, "ends as calls")
	return s
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// dagRun is one graph built from a spec, with its sinks.
type dagRun struct {
	g     *graph.Graph
	sinks []*[][]byte
	det   []int // how determined each sink's records are
}

// How determined a stream is: its order (no merge or join upstream), its
// set of records (a merge reorders them), or only its keys (a join pairs
// records with equal keys in the order they arrive).
const (
	detOrder = iota
	detSet
	detKeys
)

// stream is an output port not yet connected.
type stream struct {
	task, port int
	det        int
}

func (s *dagSpec) build() *dagRun { return s.buildEnds(false) }

// buildEnds is build, with the ends in per-record form if ends is set.
func (s *dagSpec) buildEnds(ends bool) *dagRun {
	r := &dagRun{g: &graph.Graph{}}
	g := r.g
	ncap := 0
	connect := func(from stream, to, port int) {
		g.Connect(from.task, from.port, to, port, s.caps[ncap%len(s.caps)])
		ncap++
	}
	var open []stream
	for i, n := range s.sources {
		recs := make([][]byte, n)
		for k := range recs {
			recs[k] = fmt.Appendf(nil, "%d:s%d\n", k, i)
		}
		src := g.Add(fmt.Sprint("src", i), 0, 1, task.Records(recs...))
		if ends {
			g.Tasks[src].Fn, g.Tasks[src].Source = nil, task.RecordsSource(recs...)
		}
		open = append(open, stream{src, 0, detOrder})
	}
	for k, op := range s.ops {
		ins := make([]stream, len(op.in))
		det := detOrder
		for j, i := range op.in {
			ins[j] = open[i]
			det = max(det, open[i].det)
		}
		rest := open[:0:0]
		for i, st := range open {
			if !slices.Contains(op.in, i) {
				rest = append(rest, st)
			}
		}
		open = rest
		name := fmt.Sprintf("%s%d", op.kind, k)
		var t, nout int
		switch op.kind {
		case "map":
			tag := op.tag
			t = g.AddRecord(name, task.Map(func(rec, scratch []byte) []byte {
				scratch = append(scratch, rec[:len(rec)-1]...)
				return append(scratch, tag, '\n')
			}))
			nout = 1
		case "filter":
			m := op.n
			t = g.AddRecord(name, task.Filter(func(rec []byte) bool { return key(rec)%m != 0 }))
			nout = 1
		case "tee":
			t, nout = g.Add(name, 1, op.n, task.Tee()), op.n
		case "route":
			m := op.n
			t, nout = g.Add(name, 1, m, task.Route(func(rec []byte) int { return key(rec) % m })), m
		case "merge":
			t, nout = g.Add(name, len(ins), 1, task.Merge()), 1
			g.Tasks[t].ReadsAny = true
			det = max(det, detSet)
		case "concat":
			t, nout = g.Add(name, len(ins), 1, task.Concat()), 1
		case "join":
			t, nout = g.Add(name, 2, 1, task.Join(func(rec []byte) ([]byte, bool) {
				i := bytes.IndexByte(rec, ':')
				return rec[:max(i, 0)], i > 0
			}, nil, task.JoinOptions{})), 1
			g.Tasks[t].ReadsAny = true
			det = detKeys
		}
		for j, in := range ins {
			connect(in, t, j)
		}
		for p := range nout {
			open = append(open, stream{t, p, det})
		}
	}
	for i, st := range open {
		out := new([][]byte)
		sink := g.Add(fmt.Sprint("sink", i), 1, 0, task.Collect(out))
		if ends {
			g.Tasks[sink].Fn, g.Tasks[sink].Sink = nil, task.CollectSink(out)
		}
		connect(st, sink, 0)
		r.sinks = append(r.sinks, out)
		r.det = append(r.det, st.det)
	}
	return r
}

func key(rec []byte) int {
	n := 0
	for _, c := range rec {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// outputs renders every sink as far as it is determined: in order, sorted,
// or as the sorted keys of its records.
func (r *dagRun) outputs() []string {
	var out []string
	for i, s := range r.sinks {
		recs := slices.Clone(*s)
		if r.det[i] == detKeys {
			for k, rec := range recs {
				recs[k] = fmt.Appendf(nil, "%d ", key(rec))
			}
		}
		if r.det[i] != detOrder {
			slices.SortFunc(recs, bytes.Compare)
		}
		out = append(out, string(bytes.Join(recs, nil)))
	}
	return out
}

func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *task.ExitError
	if errors.As(err, &ee) {
		return ee.Code, nil
	}
	return -1, err
}

// Every random DAG completes under concurrent and ros with small B and
// small capacities, with the output of the serial policy (whose queues are
// files without bound): sinks fed through merge or join compare as sets,
// the others record by record (see outputs). No run hangs (a deadline would fail it),
// and no goroutine is left (goleak in TestMain). Half the runs have their
// sources and sinks in per-record form, which ros calls from its
// scheduler: their waits meet the stalls and their resolution too.
func TestRandomDAGsCompleteUnderEveryPolicy(t *testing.T) {
	var runs, grown, spilled int
	defer func() {
		t.Logf("%d runs: %d resolved a stall by growing a queue, %d by spilling one", runs, grown, spilled)
		if !t.Failed() && (grown == 0 || spilled == 0) {
			t.Errorf("no run needed both kinds of resolution: the property tests too little")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		spec := drawDAG(rt)
		ref := spec.build()
		if err := ref.g.Validate(); err != nil {
			rt.Fatalf("generated graph: %v", err)
		}
		b, _, _ := ref.g.Shape()
		_, err := sched.Run(context.Background(), ref.g, sched.Options{Policy: sched.Serial, RecordSize: 64, TempDir: t.TempDir()})
		wantCode, err := exitCode(err)
		if err != nil {
			rt.Fatalf("serial: %v", err)
		}
		want := ref.outputs()
		for _, pol := range []sched.Policy{sched.Concurrent, sched.ROS} {
			lo := b
			if pol == sched.ROS {
				lo = 1
			}
			buffers := rapid.IntRange(lo, lo+2).Draw(rt, "B "+pol.String())
			run := spec.buildEnds(spec.ends)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			st, err := sched.Run(ctx, run.g, sched.Options{Policy: pol, Buffers: buffers, RecordSize: 64, TempDir: t.TempDir()})
			cancel()
			code, err := exitCode(err)
			if err != nil {
				rt.Fatalf("%s, B=%d: %v", pol, buffers, err)
			}
			if code != wantCode {
				rt.Fatalf("%s: status %d, serial %d", pol, code, wantCode)
			}
			runs++
			if st.Growths > 0 {
				grown++
			}
			if st.Spills > 0 {
				spilled++
			}
			if st.BuffersHighWater > buffers {
				rt.Fatalf("%s: %d buffers out at once, B = %d", pol, st.BuffersHighWater, buffers)
			}
			if got := run.outputs(); !slices.Equal(got, want) {
				rt.Fatalf("%s, B=%d: outputs differ\ngot  %q\nwant %q", pol, buffers, got, want)
			}
		}
	})
}
