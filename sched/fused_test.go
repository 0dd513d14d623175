package sched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// These tests are internal (package sched) because runFused and runSerial
// are not wired into Run yet; the names carry a jam or pol prefix so as
// not to meet other internal tests of the package.

var errJamBoom = errors.New("boom")

// jamStage describes one per-record stage; make builds a fresh PerRecord
// (stages have state, so every run needs its own).
type jamStage struct {
	kind   string
	header []byte // prefix
	n      int    // fail, exit: records passed before stopping
	code   int    // exit, exitEnd
}

func (s jamStage) make() task.PerRecord {
	switch s.kind {
	case "copy":
		return task.Copy()
	case "prefix":
		return task.Prefix(s.header)
	case "filter":
		return task.Filter(func(r []byte) bool { return len(r)%2 == 0 })
	case "duplicate":
		return task.Duplicate()
	case "map":
		return task.Map(func(r, scratch []byte) []byte {
			scratch = append(scratch, r...)
			for i := range scratch {
				scratch[i] ^= 0x20
			}
			return scratch
		})
	case "count":
		return task.Count()
	case "exitEnd":
		// A Keep with an End that sets a status, as grep does.
		return task.PerRecord{Keep: func([]byte) bool { return true }, End: func(task.Emit) error {
			if s.code == 0 {
				return nil
			}
			return task.Exit(s.code)
		}}
	case "fail", "exit":
		seen := 0
		return task.PerRecord{Each: func(r []byte, emit task.Emit) error {
			if seen == s.n {
				if s.kind == "fail" {
					return errJamBoom
				}
				return task.Exit(s.code)
			}
			seen++
			return emit(r)
		}}
	}
	panic("unknown stage " + s.kind)
}

// jamRun runs r over a list as PerRecord.Func runs it over a queue: the
// dumb model of one task.
func jamRun(r task.PerRecord, in [][]byte) ([][]byte, error) {
	var out [][]byte
	emit := func(rec []byte) error {
		out = append(out, append([]byte{}, rec...))
		return nil
	}
	if (r.Keep == nil) == (r.Each == nil) {
		return out, task.ErrNoBody
	}
	if r.Start != nil {
		if err := r.Start(emit); err != nil {
			return out, err
		}
	}
	for _, rec := range in {
		if r.Keep != nil {
			if r.Keep(rec) {
				emit(rec)
			}
			continue
		}
		if err := r.Each(rec, emit); err != nil {
			return out, err
		}
	}
	if r.End != nil {
		return out, r.End(emit)
	}
	return out, nil
}

// jamModel is the serial schedule of Theorem 2.2 on lists: each stage runs
// to its end over the whole output of the one before. It returns the
// output and the key of the error Run's rules give (see polErrKey); the
// first stage is at index first.
func jamModel(stages []jamStage, in [][]byte, first int) ([][]byte, string) {
	status := ""
	for m, s := range stages {
		out, err := jamRun(s.make(), in)
		name := fmt.Sprintf("%s%d[%d]", s.kind, m+1, first+m)
		var exit *task.ExitError
		switch {
		case errors.As(err, &exit):
			if exit.Code != 0 {
				status = fmt.Sprintf("%s: %v", name, err)
			}
		case err != nil:
			return nil, fmt.Sprintf("%s: %v", name, err)
		}
		in = out
	}
	return in, status
}

// polErrKey is err as the model writes it: "name[index]: error", or "".
func polErrKey(err error) string {
	if err == nil {
		return ""
	}
	var te *TaskError
	if errors.As(err, &te) && te == err {
		return fmt.Sprintf("%s[%d]: %v", te.Task, te.Index, te.Err)
	}
	return "not a *TaskError: " + err.Error()
}

// jamChain is src | stages... | sink with the given capacities.
func jamChain(in [][]byte, stages []jamStage, caps []int, out *[][]byte) *graph.Graph {
	g := &graph.Graph{}
	g.Add("src", 0, 1, task.Records(in...))
	for m, s := range stages {
		g.AddRecord(fmt.Sprintf("%s%d", s.kind, m+1), s.make())
	}
	g.Add("sink", 1, 0, task.Collect(out))
	for i := 1; i < len(g.Tasks); i++ {
		g.Connect(i-1, 0, i, 0, caps[i-1])
	}
	return g
}

func jamRecs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func jamSame(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestComposeRecord(t *testing.T) {
	cp := jamStage{kind: "copy"}
	pre := func(h string) jamStage { return jamStage{kind: "prefix", header: []byte(h)} }
	filter := jamStage{kind: "filter"}
	dup := jamStage{kind: "duplicate"}
	mp := jamStage{kind: "map"}
	count := jamStage{kind: "count"}
	exitEnd := func(c int) jamStage { return jamStage{kind: "exitEnd", code: c} }
	exitAfter := func(n, c int) jamStage { return jamStage{kind: "exit", n: n, code: c} }
	failAfter := func(n int) jamStage { return jamStage{kind: "fail", n: n} }
	in := jamRecs("a", "bb", "ccc", "dddd")
	tests := []struct {
		name   string
		stages []jamStage
		want   []string // output
		err    string   // the composition's error, "" for none
		form   string   // "keep": a Keep (no Start, End); "keep+": a Keep with Start or End; "each"
	}{
		{"copy copy", []jamStage{cp, cp}, []string{"a", "bb", "ccc", "dddd"}, "", "keep"},
		{"filter filter is a conjunction", []jamStage{filter, cp, filter}, []string{"bb", "dddd"}, "", "keep"},
		{"prefix filter filters the header", []jamStage{pre("H"), filter}, []string{"bb", "dddd"}, "", "keep+"},
		{"prefix prefix: the last Start writes first", []jamStage{pre("A"), pre("B")}, []string{"B", "A", "a", "bb", "ccc", "dddd"}, "", "keep+"},
		{"duplicate count", []jamStage{dup, count}, []string{"8\n"}, "", "each"},
		{"count duplicate", []jamStage{count, dup}, []string{"4\n", "4\n"}, "", "each"},
		{"count count", []jamStage{count, count}, []string{"1\n"}, "", "each"},
		{"prefix count: the End goes on through", []jamStage{pre("H"), count, pre("G")}, []string{"G", "5\n"}, "", "each"},
		{"map duplicate filter", []jamStage{mp, dup, filter}, []string{"BB", "BB", "DDDD", "DDDD"}, "", "each"},
		{"map map", []jamStage{mp, mp}, []string{"a", "bb", "ccc", "dddd"}, "", "each"},
		{"statuses: the rightmost wins", []jamStage{exitEnd(3), cp, exitEnd(4), exitEnd(0)}, []string{"a", "bb", "ccc", "dddd"}, "exit status 4", "keep+"},
		{"a status upstream stays when the rightmost is 0", []jamStage{exitEnd(3), exitEnd(0)}, []string{"a", "bb", "ccc", "dddd"}, "exit status 3", "keep+"},
		{"early exit ends the stages after it", []jamStage{dup, exitAfter(3, 2), count, exitEnd(5)}, []string{"3\n"}, "exit status 5", "each"},
		{"early exit then a status", []jamStage{exitAfter(1, 2), count}, []string{"1\n"}, "exit status 2", "each"},
		{"early exit in an End's output", []jamStage{count, exitAfter(0, 6), pre("P")}, []string{"P"}, "exit status 6", "each"},
		{"fail", []jamStage{dup, failAfter(5), count}, nil, "boom", "each"},
		{"fail in an End's output", []jamStage{count, failAfter(0)}, nil, "boom", "each"},
		{"no fail when too few records", []jamStage{failAfter(4), count}, []string{"4\n"}, "", "each"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stages := make([]*task.PerRecord, len(tt.stages))
			for m, s := range tt.stages {
				r := s.make()
				stages[m] = &r
			}
			r := ComposeRecord(stages)
			form := "each"
			if r.Keep != nil && r.Each == nil {
				form = "keep"
				if r.Start != nil || r.End != nil {
					form = "keep+"
				}
			}
			if form != tt.form {
				t.Errorf("form %s, want %s", form, tt.form)
			}
			got, err := jamRun(r, in)
			if msg := fmt.Sprint(err); (err != nil || tt.err != "") && msg != tt.err {
				t.Fatalf("error %q, want %q", msg, tt.err)
			}
			if err != nil && !stops(err) {
				return // a hard failure: the output is lost anyway
			}
			if !jamSame(got, jamRecs(tt.want...)) {
				t.Errorf("output %q, want %q", got, tt.want)
			}
			// Theorem 2.2: the same as the stages run one after the other.
			model, _ := jamModel(tt.stages, in, 0)
			if !jamSame(got, model) {
				t.Errorf("output %q, the serial schedule gives %q", got, model)
			}
		})
	}
}

// The composition uses the stages it is given, state included.
func TestComposeRecordSharesState(t *testing.T) {
	calls := 0
	spy := task.PerRecord{Each: func(r []byte, emit task.Emit) error { calls++; return emit(r) }}
	c := task.Count()
	r := ComposeRecord([]*task.PerRecord{&spy, &c})
	if _, err := jamRun(r, jamRecs("x", "y")); err != nil {
		t.Fatal(err)
	}
	out, _ := jamRun(task.PerRecord{Keep: func([]byte) bool { return true }, End: c.End}, nil)
	if calls != 2 || len(out) != 1 || string(out[0]) != "2\n" {
		t.Fatalf("spy called %d times, count's own End gives %q: want 2 and the 2 records the composition counted", calls, out)
	}
}

func TestComposeRecordNoBody(t *testing.T) {
	bad := task.PerRecord{}
	cp := task.Copy()
	r := ComposeRecord([]*task.PerRecord{&cp, &bad})
	_, err := jamRun(r, jamRecs("x"))
	var se *stageError
	if !errors.Is(err, task.ErrNoBody) || !errors.As(err, &se) || se.stage != 1 {
		t.Fatalf("err = %v, want ErrNoBody of stage 1", err)
	}
}

// A record costs no allocation in a composition: the emit chain is built
// once, by Start.
func TestComposeRecordAllocs(t *testing.T) {
	var stages []*task.PerRecord
	for _, k := range []string{"copy", "map", "filter", "duplicate", "map", "count"} {
		r := jamStage{kind: k}.make()
		stages = append(stages, &r)
	}
	r := ComposeRecord(stages)
	emit := func([]byte) error { return nil }
	if err := r.Start(emit); err != nil {
		t.Fatal(err)
	}
	rec := []byte("some record\n")
	r.Each(rec, emit) // Map's scratch grows once
	if n := testing.AllocsPerRun(1000, func() { r.Each(rec, emit) }); n != 0 {
		t.Fatalf("%v allocations per record, want 0", n)
	}
}

// jamTask builders for Fuse's tests.
func jamSrc(name string) *graph.Task {
	return &graph.Task{Name: name, Out: 1, Fn: task.Records()}
}

func jamRec(name string) *graph.Task {
	r := task.Copy()
	return &graph.Task{Name: name, In: 1, Out: 1, Rec: &r}
}

func jamGeneral(name string) *graph.Task {
	return &graph.Task{Name: name, In: 1, Out: 1, Fn: task.Head(1)}
}

func jamSink(name string) *graph.Task {
	return &graph.Task{Name: name, In: 1, Fn: task.Collect(new([][]byte))}
}

func TestFuse(t *testing.T) {
	tests := []struct {
		name  string
		tasks []*graph.Task
		notes []string
	}{
		{"a chain", []*graph.Task{jamSrc("src"), jamRec("a"), jamRec("b"), jamRec("c"), jamSink("sink")}, []string{
			"src: a source: not per-record",
			"a+b+c: fused a, b, c",
			"sink: a sink: not per-record",
		}},
		{"a general task splits runs", []*graph.Task{jamSrc("src"), jamRec("a"), jamRec("b"), jamGeneral("sort"), jamRec("c"), jamRec("d"), jamRec("e"), jamGeneral("head"), jamRec("f"), jamSink("sink")}, []string{
			"src: a source: not per-record",
			"a+b: fused a, b",
			"sort: general form: not per-record",
			"c+d+e: fused c, d, e",
			"head: general form: not per-record",
			"f: a run of one stage: nothing to fuse",
			"sink: a sink: not per-record",
		}},
		{"nothing to fuse", []*graph.Task{jamSrc("src"), jamSink("sink")}, []string{
			"src: a source: not per-record",
			"sink: a sink: not per-record",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graph.Chain(2, tt.tasks...)
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			before := fmt.Sprint(g.Order())
			var index []int
			for _, tk := range g.Tasks {
				index = append(index, tk.Index)
			}
			fg, notes, err := Fuse(g)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range notes {
				got = append(got, n.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.notes, "\n") {
				t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.notes, "\n"))
			}
			if len(fg.Tasks) != len(notes) || len(fg.Order()) != len(fg.Tasks) || !fg.IsChain() {
				t.Errorf("fused graph: %d tasks, %d notes, order %v, chain %v", len(fg.Tasks), len(notes), fg.Order(), fg.IsChain())
			}
			for i, n := range notes {
				if fg.Tasks[i].Name != n.Task {
					t.Errorf("task %d is %s, its note says %s", i, fg.Tasks[i].Name, n.Task)
				}
			}
			if err := fg.Validate(); err != nil {
				t.Errorf("fused graph: %v", err)
			}
			if len(g.Tasks) != len(tt.tasks) || len(g.Edges) != len(tt.tasks)-1 || fmt.Sprint(g.Order()) != before {
				t.Errorf("g was modified")
			}
			for i, tk := range g.Tasks {
				if tk != tt.tasks[i] || tk.Index != index[i] {
					t.Errorf("g's task %d was modified", i)
				}
			}
		})
	}
}

// Fuse keeps the shape of a graph that is not a chain and fuses the runs
// on its branches.
func TestFuseBranches(t *testing.T) {
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records())
	tee := g.Add("tee", 1, 2, func(context.Context, *buffer.Ports) error { return nil })
	a, b := g.AddRecord("a", task.Copy()), g.AddRecord("b", task.Copy())
	c := g.AddRecord("c", task.Copy())
	join := g.Add("join", 2, 0, func(context.Context, *buffer.Ports) error { return nil })
	g.Connect(src, 0, tee, 0, 1)
	g.Connect(tee, 0, a, 0, 1)
	g.Connect(a, 0, b, 0, 1)
	g.Connect(b, 0, join, 0, 1)
	g.Connect(tee, 1, c, 0, 1)
	g.Connect(c, 0, join, 1, 1)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	fg, notes, err := Fuse(g)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notes {
		got = append(got, n.String())
	}
	want := "src: a source: not per-record|tee: 1 inputs and 2 outputs: not per-record|a+b: fused a, b|c: a run of one stage: nothing to fuse|join: 2 inputs and 0 outputs: not per-record"
	if strings.Join(got, "|") != want {
		t.Errorf("notes %q", got)
	}
	var edges []string
	for _, e := range fg.Edges {
		edges = append(edges, fmt.Sprintf("%s:%s.%d->%s.%d", e.Name, fg.Tasks[e.From.Task].Name, e.From.Port, fg.Tasks[e.To.Task].Name, e.To.Port))
	}
	if got := strings.Join(edges, " "); got != "F1:src.0->tee.0 F2:tee.0->a+b.0 F4:a+b.0->join.0 F5:tee.1->c.0 F6:c.0->join.1" {
		t.Errorf("edges %s", got)
	}
}

func TestFuseNeedsValidatedGraph(t *testing.T) {
	g := graph.Chain(1, jamSrc("src"), jamRec("a"), jamRec("b"), jamSink("sink"))
	if _, _, err := Fuse(g); err == nil {
		t.Fatal("no error for a graph that was not validated")
	}
}

// jamPolicies are the policies under test: every one that runs (not one
// that chooses another).
var jamPolicies = func() []Policy {
	var ps []Policy
	for _, p := range Policies() {
		if !p.Chooses() {
			ps = append(ps, p)
		}
	}
	return ps
}()

// runPolicy plans g as Run does and runs it under p.
func runPolicy(ctx context.Context, p Policy, g *graph.Graph, o Options) (*Stats, error) {
	o.Policy = p
	pl, err := MakePlan(g, o)
	if err != nil {
		return nil, err
	}
	return pl.Run(ctx)
}

// jamChainGen draws a chain of per-record stages: any number of copy,
// prefix, filter, duplicate, map, count and exitEnd (a status at the end),
// and at most one stage that stops early (exits or fails after n records).
// A second early stop would make the result depend on the schedule: a task
// upstream of a stopped one may or may not reach its own stop before its
// next write fails. For the same reason an early exit has a non-zero
// status, which beats any status upstream of it.
func jamChainGen(s int) *rapid.Generator[[]jamStage] {
	return rapid.Custom(func(t *rapid.T) []jamStage {
		kinds := []string{"copy", "prefix", "filter", "duplicate", "map", "count", "exitEnd"}
		n := rapid.IntRange(1, 6).Draw(t, "stages")
		stages := make([]jamStage, n)
		for m := range stages {
			st := jamStage{kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
			switch st.kind {
			case "prefix":
				st.header = rapid.SliceOfN(rapid.Byte(), 0, s).Draw(t, "header")
			case "exitEnd":
				st.code = rapid.IntRange(0, 3).Draw(t, "code")
			}
			stages[m] = st
		}
		if early := rapid.IntRange(-1, n-1).Draw(t, "early"); early >= 0 {
			stages[early] = jamStage{
				kind: rapid.SampledFrom([]string{"fail", "exit"}).Draw(t, "stop"),
				n:    rapid.IntRange(0, 8).Draw(t, "after"),
				code: rapid.IntRange(1, 3).Draw(t, "exit code"),
			}
		}
		return stages
	})
}

// Theorem 2.2 for the three policies: on random chains of per-record
// stages over random input, the concurrent, fused and serial policies give
// the records of the serial schedule on lists, and the same error: a
// *TaskError naming the failing stage, or else the rightmost non-zero
// status, with the stage's index in the original graph.
func TestPoliciesMatchSerialModel(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.IntRange(8, 32).Draw(t, "S")
		input := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, s), 0, 40).Draw(t, "input")
		stages := jamChainGen(s).Draw(t, "chain")
		caps := rapid.SliceOfN(rapid.IntRange(1, 3), len(stages)+1, len(stages)+1).Draw(t, "caps")
		want, wantErr := jamModel(stages, input, 1)
		for _, p := range jamPolicies {
			var got [][]byte
			g := jamChain(input, stages, caps, &got)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			st, err := runPolicy(ctx, p, g, Options{RecordSize: s})
			cancel()
			if key := polErrKey(err); key != wantErr {
				t.Fatalf("%s: error %q, want %q", p, key, wantErr)
			}
			if st == nil || st.Policy != p {
				t.Fatalf("%s: stats %+v", p, st)
			}
			if strings.HasSuffix(wantErr, errJamBoom.Error()) {
				continue // a hard failure: the output is lost
			}
			if !jamSame(got, want) {
				t.Fatalf("%s: output %q, the serial schedule gives %q", p, got, want)
			}
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Fatalf("files left behind: %v", left)
		}
	})
}

// The fused policy runs the fused graph: its stats say so, and B is the
// fused graph's bound unless the caller set one.
func TestRunFusedStats(t *testing.T) {
	var out [][]byte
	stages := []jamStage{{kind: "copy"}, {kind: "map"}, {kind: "filter"}}
	g := jamChain(jamRecs("a", "bb", "ccc"), stages, []int{2, 2, 2, 2}, &out)
	st, err := runPolicy(context.Background(), Fused, g, Options{RecordSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ts := range st.Tasks {
		names = append(names, ts.Name)
	}
	if st.Policy != Fused || strings.Join(names, " ") != "src copy1+map2+filter3 sink" || len(st.Edges) != 2 || st.Buffers != 4 || st.Bound != 4 {
		t.Fatalf("stats: policy %s, tasks %v, %d edges, B %d, bound %d", st.Policy, names, len(st.Edges), st.Buffers, st.Bound)
	}
	if len(out) != 1 || string(out[0]) != "BB" {
		t.Fatalf("output %q", out)
	}

	out = nil
	g = jamChain(jamRecs("a", "bb", "ccc"), stages, []int{2, 2, 2, 2}, &out)
	st, err = runPolicy(context.Background(), Fused, g, Options{RecordSize: 64, Buffers: 7})
	if err != nil || st.Buffers != 7 {
		t.Fatalf("err %v, B %d, want the caller's 7", err, st.Buffers)
	}
}

// A failure in a fused run names the stage, whatever the policy; the
// error's text is the stage's.
func TestFailingStageIsNamedByEveryPolicy(t *testing.T) {
	stages := []jamStage{{kind: "copy"}, {kind: "duplicate"}, {kind: "fail", n: 3}, {kind: "count"}}
	for _, p := range jamPolicies {
		var out [][]byte
		g := jamChain(jamRecs("a", "b", "c"), stages, []int{1, 1, 1, 1, 1}, &out)
		_, err := runPolicy(context.Background(), p, g, Options{RecordSize: 16})
		var te *TaskError
		if !errors.As(err, &te) || te.Task != "fail3" || te.Index != 3 || !errors.Is(err, errJamBoom) || err.Error() != "fail3: boom" {
			t.Errorf("%s: err = %v, want fail3's boom", p, err)
		}
	}
}

// A panic is not traced to a stage: the error names the fused task.
func TestFusedPanicNamesTheFusedTask(t *testing.T) {
	var out [][]byte
	g := jamChain(jamRecs("a"), []jamStage{{kind: "copy"}, {kind: "count"}}, []int{1, 1, 1}, &out)
	g.Tasks[2].Rec = &task.PerRecord{Each: func([]byte, task.Emit) error { panic("oops") }}
	_, err := runPolicy(context.Background(), Fused, g, Options{RecordSize: 16})
	var te *TaskError
	var pe *PanicError
	if !errors.As(err, &te) || te.Task != "copy1+count2" || te.Index != 1 || !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a panic of copy1+count2", err)
	}
}

// jamCountSink counts records without keeping them.
func jamCountSink(n *int) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		for {
			_, k, err := in.ReadBatch()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			*n += k
		}
	}
}

// BenchmarkPolicies runs two chains over 100000 short lines under each
// policy and reports the wall time per input record: "mixed" is src |
// filter | upper | copy | sink (the map makes the fused loop copy every
// record), "keeps" is src | filter | copy | copy | filter | sink (it fuses
// into one Keep, which passes records on with no copy).
func BenchmarkPolicies(b *testing.B) {
	const n = 100000
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, "line %d\n", i)
	}
	not := func(c byte) func([]byte) bool { return func(r []byte) bool { return r[len(r)-2] != c } }
	upper := func(r, s []byte) []byte {
		s = append(s, r...)
		s[0] -= 'a' - 'A'
		return s
	}
	shapes := []struct {
		name   string
		stages func() []task.PerRecord
		want   int
	}{
		{"mixed", func() []task.PerRecord {
			return []task.PerRecord{task.Filter(not('7')), task.Map(upper), task.Copy()}
		}, n - n/10},
		{"keeps", func() []task.PerRecord {
			return []task.PerRecord{task.Filter(not('7')), task.Copy(), task.Copy(), task.Filter(not('3'))}
		}, n - n/5},
	}
	for _, sh := range shapes {
		for _, p := range jamPolicies {
			b.Run(sh.name+"/"+p.String(), func(b *testing.B) {
				for range b.N {
					got := 0
					g := &graph.Graph{}
					g.Add("src", 0, 1, task.Records(lines...))
					for m, r := range sh.stages() {
						g.AddRecord(fmt.Sprint("stage", m+1), r)
					}
					g.Add("sink", 1, 0, jamCountSink(&got))
					for i := 1; i < len(g.Tasks); i++ {
						g.Connect(i-1, 0, i, 0, 0)
					}
					if _, err := runPolicy(context.Background(), p, g, Options{RecordSize: 64 << 10}); err != nil {
						b.Fatal(err)
					}
					if got != sh.want {
						b.Fatalf("%d records, want %d", got, sh.want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rec")
			})
		}
	}
}
