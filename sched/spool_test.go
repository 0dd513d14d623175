package sched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
	"github.com/tpipe/tpipe/task"
)

// spoolGraph is src | upper | sink: a source of n numbered lines (Ident
// "src n"), a stateless per-record stage that upper-cases them (a map),
// and a sink that keeps the bytes in out.
func spoolGraph(n int, out *bytes.Buffer) *graph.Graph {
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
		for i := range n {
			if err := p.Out(0).Write(fmt.Appendf(nil, "line %06d of the spool test\n", i)); err != nil {
				return err
			}
		}
		return nil
	})
	g.Tasks[src].Ident = fmt.Sprintf("src %d", n)
	up := addUpper(g)
	sink := g.Add("sink", 1, 0, task.WriteTo(out, record.Lines))
	g.Tasks[sink].Ident = "sink"
	g.Connect(src, 0, up, 0, 0)
	g.Connect(up, 0, sink, 0, 0)
	return g
}

func runSpoolGraph(t *testing.T, g *graph.Graph, dir string) (*Stats, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := runPolicy(ctx, Spool, g, Options{Spool: &SpoolOptions{Dir: dir, Segment: 4096, NoSync: true}})
	if ctx.Err() != nil {
		t.Fatal("the spooled run hung")
	}
	return st, err
}

func wantUpper(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "LINE %06d OF THE SPOOL TEST\n", i)
	}
	return b.String()
}

// A token that fails its checksum is a clear error naming the file; it is
// moved aside, never used, and the next run makes it again.
func TestSpoolCorruptToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	var out bytes.Buffer
	if _, err := runSpoolGraph(t, spoolGraph(2000, &out), dir); err != nil {
		t.Fatal(err)
	}
	toks, _ := filepath.Glob(filepath.Join(dir, "F2", "0000000[0-9].*"))
	if len(toks) < 3 {
		t.Fatalf("%d segments in F2", len(toks))
	}
	victim := toks[1]
	b, _ := os.ReadFile(victim)
	b[len(b)/2] ^= 0x40
	os.WriteFile(victim, b, 0o600)

	out.Reset()
	_, err := runSpoolGraph(t, spoolGraph(2000, &out), dir)
	var ce *spool.CorruptError
	if !errors.As(err, &ce) || ce.Path != victim {
		t.Fatalf("error %v; want a corrupt token at %s", err, victim)
	}
	t.Logf("corrupt: %v", err)
	if msg := err.Error(); !strings.Contains(msg, victim) || !strings.Contains(msg, ".bad") || !strings.Contains(msg, "run again") {
		t.Errorf("message %q", msg)
	}
	if _, err := os.Stat(ce.Aside); err != nil {
		t.Errorf("not moved aside: %v", err)
	}
	out.Reset()
	st, err := runSpoolGraph(t, spoolGraph(2000, &out), dir)
	if err != nil || out.String() != wantUpper(2000) {
		t.Fatalf("the run after: %v, %d bytes", err, out.Len())
	}
	if up := st.Tasks[1]; up.SegmentsRun != 1 || st.Tasks[0].SegmentsRun != 0 {
		t.Errorf("the run after made %d segments of upper and %d of src; want the lost one only", up.SegmentsRun, st.Tasks[0].SegmentsRun)
	}
}

// A full disk stops the run with a clear error; once there is room, the
// next run resumes: the segments written before are kept. The disk is a
// small tmpfs, which needs root; elsewhere the test skips.
func TestSpoolFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	defer exec.Command("umount", mnt).Run()
	dir := filepath.Join(mnt, "sp")
	var out bytes.Buffer
	const n = 20000 // about 600 KB of lines, 400 KB as S2 tokens
	_, err := runSpoolGraph(t, spoolGraph(n, &out), dir)
	if err == nil {
		t.Fatal("a run larger than the disk succeeded")
	}
	t.Logf("full disk: %v", err)
	if msg := err.Error(); !strings.Contains(msg, "disk full") || !strings.Contains(msg, "run again") || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
	// upper is a per-record stage: each of its segments committed before
	// the disk filled is kept and found by the rerun. The source, a whole
	// stage, runs again from its start (it cannot seek), rewriting
	// nothing it finds under the same name. How many of upper's segments
	// were made first depends on how far the source ran ahead of it.
	kept := 0
	if ents, err := os.ReadDir(filepath.Join(dir, "F2")); err == nil {
		for _, e := range ents {
			if _, ok := spool.ParseSeg(e.Name()); ok {
				kept++
			}
		}
	}
	t.Logf("upper's segments kept by the run that failed: %d", kept)
	if err := exec.Command("mount", "-o", "remount,size=16m", mnt).Run(); err != nil {
		t.Fatalf("remount: %v", err)
	}
	out.Reset()
	st, err := runSpoolGraph(t, spoolGraph(n, &out), dir)
	if err != nil || out.String() != wantUpper(n) {
		t.Fatalf("after room was made: %v, %d bytes", err, out.Len())
	}
	if up := st.Tasks[1]; up.SegmentsCached != kept || up.SegmentsRun+up.SegmentsCached == 0 {
		t.Errorf("the rerun found %d of upper's segments and made %d; want the %d the first run kept", up.SegmentsCached, up.SegmentsRun, kept)
	}
}

// A spool it cannot write is one line that says what to do.
func TestSpoolReadOnly(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	defer exec.Command("umount", mnt).Run()
	dir := filepath.Join(mnt, "sp")
	var out bytes.Buffer
	if _, err := runSpoolGraph(t, spoolGraph(100, &out), dir); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("mount", "-o", "remount,ro", mnt).Run(); err != nil {
		t.Fatalf("remount: %v", err)
	}
	g := spoolGraph(100, &out)
	g.Tasks[1].Ident = "upper, changed"
	_, err := runSpoolGraph(t, g, dir)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "give tpipe write access") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a run on a read-only spool: %v", err)
	}
	t.Logf("read-only: %v", err)
}

// A reader that stops early (head) stops its writer, even an endless one,
// as ErrReaderGone does in memory: the run ends.
func TestSpoolEarlyExit(t *testing.T) {
	g := &graph.Graph{}
	yes := g.Add("yes", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
		for {
			if err := p.Out(0).Write([]byte("y\n")); err != nil {
				return err
			}
		}
	})
	g.Tasks[yes].Ident = "yes"
	head := g.Add("head", 1, 1, task.Head(3))
	g.Tasks[head].Ident = "head 3"
	var got [][]byte
	sink := g.Add("sink", 1, 0, task.Collect(&got))
	g.Connect(yes, 0, head, 0, 0)
	g.Connect(head, 0, sink, 0, 0)
	if _, err := runSpoolGraph(t, g, filepath.Join(t.TempDir(), "sp")); err != nil || len(got) != 3 {
		t.Fatalf("err %v, %d records", err, len(got))
	}
}

// The record of the graph: its shape, places and, after a complete run,
// the tokens it used, which is what gc keeps.
func TestSpoolRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	var out bytes.Buffer
	if _, err := runSpoolGraph(t, spoolGraph(10, &out), dir); err != nil {
		t.Fatal(err)
	}
	sp, err := spool.Open(dir, placeOpts())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sp.Record()
	sp.Close()
	if err != nil || rec == nil {
		t.Fatal(err)
	}
	if len(rec.Places) != 2 || rec.Places[0].Name != "F1" || rec.Places[1].From != "upper" || len(rec.Live["F2"]) != 2 {
		t.Errorf("record %+v", rec)
	}
	st, err := spool.GC(dir, false, placeOpts())
	if err != nil || st.Tokens != 0 {
		t.Errorf("gc of a clean spool: %+v, %v", st, err)
	}
	// A changed stage leaves the old tokens, which gc then drops.
	g := spoolGraph(10, &out)
	g.Tasks[1].Ident = "upper, changed"
	if _, err := runSpoolGraph(t, g, dir); err != nil {
		t.Fatal(err)
	}
	st, err = spool.GC(dir, false, placeOpts())
	if err != nil || st.Tokens != 2 {
		t.Errorf("gc after a change: %+v, %v; want the 2 old tokens of F2", st, err)
	}
	if st, err := spool.GC(dir, true, placeOpts()); err != nil || st.Places != 2 {
		t.Errorf("gc --all: %+v, %v", st, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("gc --all left %d entries", len(ents))
	}
}

func placeOpts() place.Options { return place.Options{NoSync: true} }

// chainGraph is src | upper | A | B | sink over n lines: spoolGraph with
// two more maps after upper, which prefix each line with their name. fail,
// if not "", names the map that fails on the 10th line it sees.
func chainGraph(n int, out *bytes.Buffer, fail string) *graph.Graph {
	g := spoolGraph(n, out)
	sink := len(g.Tasks) - 1
	g.Edges = g.Edges[:1] // keep src -> upper
	from := 1
	for _, name := range []string{"A", "B"} {
		var mk func() *task.PerRecord
		mk = func() *task.PerRecord {
			seen := 0
			r := task.Map(func(rec, scratch []byte) []byte { return append(append(scratch, name+" "...), rec...) })
			each := r.Each
			r.Each = func(rec []byte, emit task.Emit) error {
				if seen++; name == fail && seen == 10 {
					return errors.New("bad line")
				}
				return each(rec, emit)
			}
			r.Fresh = mk
			return &r
		}
		i := g.AddRecord(name, *mk())
		g.Tasks[i].Ident = name
		g.Connect(from, 0, i, 0, 0)
		from = i
	}
	g.Connect(from, 0, sink, 0, 0)
	return g
}

func wantChain(n int) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(wantUpper(n), "\n") {
		if l != "" {
			b.WriteString("B A " + l)
		}
	}
	return b.String()
}

// A chain of map tasks runs as one pass over each segment: the places
// between them stay empty (virtual), the last one's tokens are named as
// the tasks apart would name them, a rerun finds them all, and a change
// to one task reruns the chain and nothing before it.
func TestSpoolFusedChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	var out bytes.Buffer
	g := chainGraph(2000, &out, "")
	st, err := runSpoolGraph(t, g, dir)
	if err != nil || out.String() != wantChain(2000) {
		t.Fatalf("first run: %v, %d bytes", err, out.Len())
	}
	for k := range g.Edges {
		if want := k == 1 || k == 2; fusedEdge(g, k) != want {
			t.Errorf("edge %s virtual: %v", g.Edges[k].Name, !want)
		}
	}
	segs := func(place string) []string {
		var names []string
		ents, _ := os.ReadDir(filepath.Join(dir, place))
		for _, e := range ents {
			if _, ok := spool.ParseSeg(e.Name()); ok {
				names = append(names, e.Name())
			}
		}
		return names
	}
	if n := len(segs("F2")) + len(segs("F3")); n != 0 {
		t.Errorf("%d tokens in the virtual places", n)
	}
	src := segs("F1")
	last := segs("F4")
	if len(last) != len(src) || len(src) < 3 {
		t.Fatalf("%d segments out of the chain for %d in", len(last), len(src))
	}
	// Named as upper, A and B apart would have named them.
	for k, name := range src {
		for _, ident := range []string{"upper", "A", "B"} {
			name = spool.SegName(k, spool.Hash(ident, name))
		}
		if last[k] != name {
			t.Errorf("segment %d named %s; apart it would be %s", k, last[k], name)
		}
	}
	const upper, b = 1, 4 // the tasks: src, upper, sink, A, B
	for _, i := range []int{upper, 3, b} {
		if ts := st.Tasks[i]; ts.SegmentsRun != len(src) {
			t.Errorf("%s ran %d segments, want %d", ts.Name, ts.SegmentsRun, len(src))
		}
	}
	if e := st.Edges[2]; e.Records != 2000 || e.Bytes != int64(len(wantChain(2000))-2*2000) {
		t.Errorf("virtual edge %s counted %d records, %d bytes", e.Name, e.Records, e.Bytes)
	}

	out.Reset()
	st, err = runSpoolGraph(t, chainGraph(2000, &out, ""), dir)
	if err != nil || out.String() != wantChain(2000) {
		t.Fatalf("rerun: %v", err)
	}
	for _, ts := range st.Tasks {
		if ts.SegmentsRun != 0 {
			t.Errorf("rerun: %s ran %d segments", ts.Name, ts.SegmentsRun)
		}
	}
	if st.Tasks[b].SegmentsCached != len(src) {
		t.Errorf("rerun: B found %d segments cached, want %d", st.Tasks[b].SegmentsCached, len(src))
	}
	if gs, err := spool.GC(dir, false, placeOpts()); err != nil || gs.Tokens != 0 {
		t.Errorf("gc after a fused run: %+v, %v", gs, err)
	}

	// B changes: the chain (upper, A and B) runs again, src does not.
	out.Reset()
	g = chainGraph(2000, &out, "")
	g.Tasks[b].Ident = "B, changed"
	st, err = runSpoolGraph(t, g, dir)
	if err != nil || out.String() != wantChain(2000) {
		t.Fatalf("after B changed: %v", err)
	}
	if st.Tasks[0].SegmentsRun != 0 || st.Tasks[upper].SegmentsRun != len(src) || st.Tasks[b].SegmentsRun != len(src) {
		t.Errorf("after B changed: src ran %d, upper %d, B %d segments", st.Tasks[0].SegmentsRun, st.Tasks[upper].SegmentsRun, st.Tasks[b].SegmentsRun)
	}
}

// A task of a chain that fails is named, not the chain's first or last.
func TestSpoolFusedChainFailure(t *testing.T) {
	for _, name := range []string{"A", "B"} {
		var out bytes.Buffer
		_, err := runSpoolGraph(t, chainGraph(100, &out, name), filepath.Join(t.TempDir(), "sp"))
		var te *TaskError
		if !errors.As(err, &te) || te.Task != name || !strings.Contains(err.Error(), "bad line") {
			t.Errorf("%s fails: error %v", name, err)
		}
	}
}

// readRange over the ranges record.Bounds cuts gives back the file's lines,
// whole, in order, across its buffer's edges and for lines longer than
// the buffer; a line over the record limit is a *record.TooLargeError.
func TestSpoolReadRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	var b bytes.Buffer
	var want []string
	for b.Len() < 5<<20 {
		n := rng.IntN(200)
		if rng.IntN(500) == 0 {
			n = rangeBuf + rng.IntN(rangeBuf) // longer than the buffer
		}
		line := strings.Repeat(string(rune('a'+rng.IntN(26))), n) + "\n"
		want = append(want, line)
		b.WriteString(line)
	}
	want = append(want, "no newline at the end")
	b.WriteString(want[len(want)-1])
	name := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(name, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, seg := range []int64{1, 4 << 10, 1 << 20, 3 << 20, 64 << 20} {
		bounds, err := record.Bounds(f, int64(b.Len()), seg, record.Lines)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range len(bounds) - 1 {
			n, err := readRange(f, bounds[k], bounds[k+1], 4<<20, func(line []byte) error {
				got = append(got, string(line))
				return nil
			})
			if err != nil || n != bounds[k+1]-bounds[k] {
				t.Fatalf("segment %d: %d bytes, %v", k, n, err)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("segments of %d: %d lines, want %d", seg, len(got), len(want))
		}
	}
	var tl *record.TooLargeError
	_, err = readRange(f, 0, int64(b.Len()), 150, func([]byte) error { return nil })
	if !errors.As(err, &tl) || tl.Max != 150 {
		t.Errorf("a line over 150 bytes: %v", err)
	}
	_, err = readRange(f, 0, int64(b.Len()), rangeBuf+10, func([]byte) error { return nil })
	if !errors.As(err, &tl) || tl.Max != rangeBuf+10 {
		t.Errorf("a line longer than the buffer and the limit: %v", err)
	}
}

// The tokens are written in the codec SpoolOptions.Codec names (the
// recfile header's sixth byte) and read back whatever it is.
func TestSpoolCodec(t *testing.T) {
	for _, c := range []recfile.Codec{recfile.None, recfile.S2, recfile.Zstd} {
		dir := filepath.Join(t.TempDir(), "sp")
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		st, err := runPolicy(ctx, Spool, spoolGraph(2000, &out), Options{Spool: &SpoolOptions{Dir: dir, Segment: 4096, NoSync: true, Codec: c}})
		cancel()
		if err != nil || out.String() != wantUpper(2000) || st.Spool.Codec != c.String() {
			t.Fatalf("%v: %v, %d bytes, stats say %q", c, err, out.Len(), st.Spool.Codec)
		}
		toks, _ := filepath.Glob(filepath.Join(dir, "F2", "0*"))
		for _, tok := range toks {
			if b, err := os.ReadFile(tok); err != nil || len(b) < 8 || recfile.Codec(b[5]) != c {
				t.Fatalf("%v: token %s: %v, header % x", c, tok, err, b[:min(8, len(b))])
			}
		}
	}
}

// stderrGraph is src | upper | sink where src writes msg to its stderr
// (a task.Stderr around errb, as the runner gives one) and sets *ran.
func stderrGraph(msg string, errb, out *bytes.Buffer, ran *bool) *graph.Graph {
	g := spoolGraph(10, out)
	tap := task.NewStderr(errb)
	fn := g.Tasks[0].Fn
	g.Tasks[0].Fn = func(ctx context.Context, p *buffer.Ports) error {
		*ran = true
		tap.Write([]byte(msg))
		return fn(ctx, p)
	}
	g.Tasks[0].Stderr = tap
	return g
}

// A stage's stderr is kept with its output and written again by a rerun
// that finds the stage cached; a place with an end token but no stderr
// token (a spool of an older tpipe: this one writes the stderr first) is
// not complete: the stage runs again and writes both.
func TestSpoolStderr(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	run := func(msg string) (stderr string, ran bool) {
		t.Helper()
		var errb, out bytes.Buffer
		if _, err := runSpoolGraph(t, stderrGraph(msg, &errb, &out, &ran), dir); err != nil {
			t.Fatal(err)
		}
		if out.String() != wantUpper(10) {
			t.Fatalf("output %q", out.String())
		}
		return errb.String(), ran
	}
	const msg = "src: a warning\n"
	if got, ran := run(msg); got != msg || !ran {
		t.Fatalf("first run: stderr %q, ran %v", got, ran)
	}
	if got, ran := run(msg); got != msg || ran {
		t.Fatalf("rerun: stderr %q, ran %v; want the kept stderr and no work", got, ran)
	}
	toks, _ := filepath.Glob(filepath.Join(dir, "F1", "err.*"))
	if len(toks) != 1 {
		t.Fatalf("stderr tokens in F1: %v", toks)
	}
	// What an older tpipe leaves: every end token, no stderr token. (F2's
	// end goes too, else upper is cached and src, not needed, stays idle.)
	os.Remove(toks[0])
	ends, _ := filepath.Glob(filepath.Join(dir, "F2", "end.*"))
	for _, e := range ends {
		os.Remove(e)
	}
	if got, ran := run(msg); got != msg || !ran {
		t.Fatalf("run without the stderr token: stderr %q, ran %v; want the stage run again", got, ran)
	}
	if _, err := os.Stat(toks[0]); err != nil {
		t.Fatalf("the stderr token was not made again: %v", err)
	}
	if got, ran := run(msg); got != msg || ran {
		t.Fatalf("rerun after: stderr %q, ran %v", got, ran)
	}
}

// Past spoolStderrMax a stage's stderr is counted, not kept; the rerun
// says how much is missing, on a line of its own.
func TestSpoolStderrBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	msg := strings.Repeat("x", spoolStderrMax+10)
	var errb, out bytes.Buffer
	var ran bool
	if _, err := runSpoolGraph(t, stderrGraph(msg, &errb, &out, &ran), dir); err != nil || errb.String() != msg {
		t.Fatalf("first run: %v, %d bytes of stderr", err, errb.Len())
	}
	errb.Reset()
	ran = false
	if _, err := runSpoolGraph(t, stderrGraph(msg, &errb, &out, &ran), dir); err != nil || ran {
		t.Fatalf("rerun: %v, ran %v", err, ran)
	}
	want := msg[:spoolStderrMax] + "\ntpipe: src: ... 10 bytes of stderr not kept (the spool keeps the first 1048576 of a stage's)\n"
	if errb.String() != want {
		t.Fatalf("rerun's stderr ends %q; want %q", errb.String()[max(0, errb.Len()-100):], want[len(want)-100:])
	}
}

// An end token on disk implies the end tokens of the places its stage read
// (writeEnd): a crash may leave a reader's place complete only if its
// writer's is, so a rerun that finds the reader cached never needs the
// writer's exit status or stderr from a run it skips. The check runs at
// every commit, where the crash test kills; it globs the reader's place
// first, so the writer's end it then looks for was there before.
func TestSpoolEndImpliesInputsEnd(t *testing.T) {
	for it := range 20 {
		dir := filepath.Join(t.TempDir(), "sp")
		var out bytes.Buffer
		g := spoolGraph(300, &out)
		var bad atomic.Value
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := runPolicy(ctx, Spool, g, Options{Spool: &SpoolOptions{Dir: dir, Segment: 512, NoSync: true, AfterCommit: func() {
			reader, _ := filepath.Glob(filepath.Join(dir, "F2", "end.*"))
			writer, _ := filepath.Glob(filepath.Join(dir, "F1", "end.*"))
			if len(reader) > 0 && len(writer) == 0 {
				bad.Store(true)
			}
		}}})
		cancel()
		if err != nil || out.String() != wantUpper(300) {
			t.Fatalf("run %d: %v", it, err)
		}
		if bad.Load() != nil {
			t.Fatalf("run %d: upper's place F2 was complete on disk before src's F1", it)
		}
	}
}

// addUpper adds to g a map task that upper-cases each record, with no
// state (Fresh), so that the spool may run it per segment.
func addUpper(g *graph.Graph) int {
	var upper func() *task.PerRecord
	upper = func() *task.PerRecord {
		r := task.Map(func(rec, scratch []byte) []byte { return bytes.ToUpper(rec) })
		r.Fresh = upper
		return &r
	}
	up := g.AddRecord("upper", *upper())
	g.Tasks[up].Ident = "upper"
	return up
}
