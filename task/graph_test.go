package task_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// The graph tasks run under a policy with a goroutine per task and under
// one that runs one task at a time.
var graphPolicies = []sched.Policy{sched.Concurrent, sched.ROS}

// runGraph runs the graph build makes (a fresh one per policy, with fresh
// sinks) under each policy, with small records and queues so that every
// queue fills up and tasks block.
func runGraph(t *testing.T, build func() *graph.Graph, check func(policy sched.Policy, err error)) {
	t.Helper()
	for _, pol := range graphPolicies {
		_, err := sched.Run(context.Background(), build(), sched.Options{Policy: pol, RecordSize: 32, TempDir: t.TempDir()})
		check(pol, err)
	}
}

func lines(prefix string, n int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "%s%03d\n", prefix, i)
	}
	return recs
}

func same(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }

// endless writes numbered records until its reader stops.
func endless(ctx context.Context, p *buffer.Ports) error {
	for i := 0; ; i++ {
		if err := p.Out(0).Write(fmt.Appendf(nil, "%d\n", i)); err != nil {
			return err
		}
	}
}

func TestTee(t *testing.T) {
	want := lines("r", 300)
	var a, b, c [][]byte
	runGraph(t, func() *graph.Graph {
		a, b, c = nil, nil, nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(want...))
		tee := g.Add("tee", 1, 3, task.Tee())
		head := g.Add("head", 1, 1, task.Head(5))
		g.Connect(src, 0, tee, 0, 1)
		g.Connect(tee, 0, g.Add("a", 1, 0, task.Collect(&a)), 0, 1)
		g.Connect(tee, 1, head, 0, 1)
		g.Connect(head, 0, g.Add("c", 1, 0, task.Collect(&c)), 0, 1)
		g.Connect(tee, 2, g.Add("b", 1, 0, task.Collect(&b)), 0, 2)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if !same(a, want) || !same(b, want) || !same(c, want[:5]) {
			t.Errorf("%s: a %d records, b %d, c %q", pol, len(a), len(b), c)
		}
	})
}

// Once every reader has stopped, tee stops, and so does an endless source.
func TestTeeAllGone(t *testing.T) {
	var a, b [][]byte
	runGraph(t, func() *graph.Graph {
		a, b = nil, nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, endless)
		tee := g.Add("tee", 1, 2, task.Tee())
		g.Connect(src, 0, tee, 0, 1)
		for k, dst := range []*[][]byte{&a, &b} {
			h := g.Add("head", 1, 1, task.Head(3+k))
			g.Connect(tee, k, h, 0, 1)
			g.Connect(h, 0, g.Add("sink", 1, 0, task.Collect(dst)), 0, 1)
		}
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if len(a) != 3 || len(b) != 4 || string(b[3]) != "3\n" {
			t.Errorf("%s: a %q, b %q", pol, a, b)
		}
	})
}

func TestRoute(t *testing.T) {
	recs := lines("", 200)
	var even, odd [][]byte
	runGraph(t, func() *graph.Graph {
		even, odd = nil, nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(recs...))
		// By the last digit: even to 0, odd to 1, and 5 to no port.
		route := g.Add("route", 1, 2, task.Route(func(rec []byte) int {
			d := int(rec[len(rec)-2] - '0')
			if d == 5 {
				return 2
			}
			return d % 2
		}))
		g.Connect(src, 0, route, 0, 1)
		g.Connect(route, 0, g.Add("even", 1, 0, task.Collect(&even)), 0, 1)
		g.Connect(route, 1, g.Add("odd", 1, 0, task.Collect(&odd)), 0, 1)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		var wantEven, wantOdd [][]byte
		for i, r := range recs {
			switch {
			case i%10 == 5:
			case i%2 == 0:
				wantEven = append(wantEven, r)
			default:
				wantOdd = append(wantOdd, r)
			}
		}
		if !same(even, wantEven) || !same(odd, wantOdd) {
			t.Errorf("%s: even %d records, odd %d", pol, len(even), len(odd))
		}
	})
}

// A gone output drops its records; the other still gets all of its own.
func TestRouteOutputGone(t *testing.T) {
	var odd [][]byte
	runGraph(t, func() *graph.Graph {
		odd = nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(lines("", 100)...))
		route := g.Add("route", 1, 2, task.Route(func(rec []byte) int { return int(rec[len(rec)-2]-'0') % 2 }))
		head := g.Add("head", 1, 1, task.Head(1))
		g.Connect(src, 0, route, 0, 1)
		g.Connect(route, 0, head, 0, 1)
		g.Connect(head, 0, g.Add("even", 1, 0, task.Collect(new([][]byte))), 0, 1)
		g.Connect(route, 1, g.Add("odd", 1, 0, task.Collect(&odd)), 0, 1)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if len(odd) != 50 || string(odd[49]) != "099\n" {
			t.Errorf("%s: odd %q", pol, odd)
		}
	})
}

// split returns the records of out that start with prefix.
func split(out [][]byte, prefix string) [][]byte {
	var s [][]byte
	for _, r := range out {
		if strings.HasPrefix(string(r), prefix) {
			s = append(s, r)
		}
	}
	return s
}

func TestMerge(t *testing.T) {
	x, y := lines("x", 250), lines("y", 90)
	var out [][]byte
	runGraph(t, func() *graph.Graph {
		out = nil
		g := &graph.Graph{}
		merge := g.Add("merge", 2, 1, task.Merge())
		g.Tasks[merge].ReadsAny = true
		g.Connect(g.Add("x", 0, 1, task.Records(x...)), 0, merge, 0, 1)
		g.Connect(g.Add("y", 0, 1, task.Records(y...)), 0, merge, 1, 2)
		g.Connect(merge, 0, g.Add("sink", 1, 0, task.Collect(&out)), 0, 1)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if len(out) != len(x)+len(y) || !same(split(out, "x"), x) || !same(split(out, "y"), y) {
			t.Errorf("%s: %d records, want every record once, each input in order", pol, len(out))
		}
	})
}

// A merge behind a fork: the graph is safe, as merge reads what arrives.
func TestMergeAfterTee(t *testing.T) {
	recs := lines("r", 200)
	var out [][]byte
	runGraph(t, func() *graph.Graph {
		out = nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(recs...))
		tee := g.Add("tee", 1, 2, task.Tee())
		merge := g.Add("merge", 2, 1, task.Merge())
		g.Tasks[merge].ReadsAny = true
		g.Connect(src, 0, tee, 0, 1)
		g.Connect(tee, 0, merge, 0, 1)
		g.Connect(tee, 1, merge, 1, 1)
		g.Connect(merge, 0, g.Add("sink", 1, 0, task.Collect(&out)), 0, 1)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if len(out) != 2*len(recs) {
			t.Errorf("%s: %d records, want %d", pol, len(out), 2*len(recs))
		}
	})
}

// Concat behind a tee reads one branch while the other fills up: no fixed
// B is enough, and the run relies on the pool resolving the stall.
func TestConcatAfterTee(t *testing.T) {
	recs := lines("r", 200)
	var out [][]byte
	runGraph(t, func() *graph.Graph {
		out = nil
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, task.Records(recs...))
		tee := g.Add("tee", 1, 2, task.Tee())
		cat := g.Add("cat", 2, 1, task.Concat())
		g.Connect(src, 0, tee, 0, 1)
		g.Connect(tee, 0, cat, 0, 1)
		g.Connect(tee, 1, cat, 1, 1)
		g.Connect(cat, 0, g.Add("sink", 1, 0, task.Collect(&out)), 0, 1)
		return g
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		if !same(out, slices.Concat(recs, recs)) {
			t.Errorf("%s: %d records, want the input twice, in order", pol, len(out))
		}
	})
}

// joinGraph joins the inputs' records, keyed by what precedes ':'
// (records without one have no key), and collects the output and the
// unmatched records as "input:record".
func joinGraph(inputs [][][]byte, out, unmatched *[][]byte) *graph.Graph {
	g := &graph.Graph{}
	key := func(rec []byte) ([]byte, bool) {
		k, _, ok := bytes.Cut(rec, []byte(":"))
		return k, ok
	}
	report := func(i int, rec []byte) { *unmatched = append(*unmatched, fmt.Appendf(nil, "%d:%s", i, rec)) }
	join := g.Add("join", len(inputs), 1, task.Join(key, report, task.JoinOptions{}))
	g.Tasks[join].ReadsAny = true
	for i, recs := range inputs {
		g.Connect(g.Add(fmt.Sprint("in", i), 0, 1, task.Records(recs...)), 0, join, i, 1)
	}
	g.Connect(join, 0, g.Add("sink", 1, 0, task.Collect(out)), 0, 1)
	return g
}

func recs(s ...string) [][]byte {
	r := make([][]byte, len(s))
	for i, x := range s {
		r[i] = []byte(x)
	}
	return r
}

func TestJoin(t *testing.T) {
	inputs := [][][]byte{
		recs("a:1\n", "b:1\n", "nokey\n", "a:2\n", "c:1\n", "d:1"),
		recs("c:x\n", "b:x\n", "a:x\n", "e:x\n", "a:y\n", "d:x\n"),
	}
	var out, unmatched [][]byte
	runGraph(t, func() *graph.Graph {
		out, unmatched = nil, nil
		return joinGraph(inputs, &out, &unmatched)
	}, func(pol sched.Policy, err error) {
		if err != nil {
			t.Fatalf("%s: %v", pol, err)
		}
		slices.SortFunc(out, bytes.Compare)
		// Key a twice on each side: matched first come, first served.
		want := recs("a:1\ta:x\n", "a:2\ta:y\n", "b:1\tb:x\n", "c:1\tc:x\n", "d:1\td:x\n")
		if !same(out, want) {
			t.Errorf("%s: joined %q, want %q", pol, out, want)
		}
		if want := recs("0:nokey\n", "1:e:x\n"); !same(unmatched, want) {
			t.Errorf("%s: unmatched %q, want %q", pol, unmatched, want)
		}
	})
}

// Join against a dumb model: the n-th record of a key on each input is
// joined with the n-th on the others, whatever the interleaving; the rest
// is unmatched, reported input by input in arrival order.
func TestJoinModel(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(2)
		inputs := make([][][]byte, n)
		for i := range inputs {
			for k := range 20 + r.IntN(60) {
				inputs[i] = append(inputs[i], fmt.Appendf(nil, "%c:%d.%d\n", 'a'+r.IntN(6), i, k))
			}
		}
		var want, wantLeft [][]byte
		for key := byte('a'); key < 'a'+6; key++ {
			var per [][][]byte
			for _, in := range inputs {
				per = append(per, slices.DeleteFunc(slices.Clone(in), func(rec []byte) bool { return rec[0] != key }))
			}
			for m := 0; ; m++ {
				var fields []string
				for _, p := range per {
					if m < len(p) {
						fields = append(fields, strings.TrimSuffix(string(p[m]), "\n"))
					}
				}
				if len(fields) < n {
					break
				}
				want = append(want, []byte(strings.Join(fields, "\t")+"\n"))
			}
		}
		for i, in := range inputs {
			count := map[byte]int{}
			for _, rec := range in {
				count[rec[0]]++
			}
			seen := map[byte]int{}
			for _, rec := range in {
				least := count[rec[0]]
				for _, other := range inputs {
					least = min(least, len(slices.DeleteFunc(slices.Clone(other), func(o []byte) bool { return o[0] != rec[0] })))
				}
				if seen[rec[0]]++; seen[rec[0]] > least {
					wantLeft = append(wantLeft, fmt.Appendf(nil, "%d:%s", i, rec))
				}
			}
		}
		slices.SortFunc(want, bytes.Compare)
		var out, left [][]byte
		runGraph(t, func() *graph.Graph {
			out, left = nil, nil
			return joinGraph(inputs, &out, &left)
		}, func(pol sched.Policy, err error) {
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, pol, err)
			}
			slices.SortFunc(out, bytes.Compare)
			if !same(out, want) || !same(left, wantLeft) {
				t.Errorf("seed %d, %s:\njoined    %q\nwant      %q\nunmatched %q\nwant      %q", seed, pol, out, want, left, wantLeft)
			}
		})
	}
}

// A joined record over the record size goes out as a chain, whole.
func TestJoinLongRecord(t *testing.T) {
	var out, left [][]byte
	runGraph(t, func() *graph.Graph {
		out, left = nil, nil
		return joinGraph([][][]byte{recs("k:12345678901234\n"), recs("k:abcdefghijklmn\n")}, &out, &left)
	}, func(pol sched.Policy, err error) {
		if want := "k:12345678901234\tk:abcdefghijklmn\n"; err != nil || len(out) != 1 || string(out[0]) != want {
			t.Errorf("%s: err = %v, joined %q, want %q", pol, err, out, want)
		}
	})
}
