package sched

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
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
	var upper func() *task.PerRecord
	upper = func() *task.PerRecord {
		r := task.Map(func(rec, scratch []byte) []byte { return bytes.ToUpper(rec) })
		r.Fresh = upper
		return &r
	}
	up := g.AddRecord("upper", *upper())
	g.Tasks[up].Ident = "upper"
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
