package status

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tpipe/tpipe/spool/place"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a clock the test sets; Writers' goroutines read it.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *clock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
	return c.at
}

func writer(t *testing.T, dir string, host string, c *clock, stages []Stage) *Writer {
	t.Helper()
	o := place.Owner{Host: host, Boot: "0", PID: 4242, Start: 1}
	w, err := NewWriter(dir, o, 30*time.Second, stages, Options{Every: time.Hour, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestRates: the delivery rate is an EWMA with time constant Smoothing.
func TestRates(t *testing.T) {
	c := &clock{at: t0}
	w := writer(t, t.TempDir(), "h", c, []Stage{{Name: "s", Inputs: []string{"in"}}})
	for range 10 {
		w.Claimed("s", "j")
		w.Done("s", "j", 100*time.Millisecond)
	}
	w.Tick(c.add(time.Second)) // 10/s for one second
	s := w.Snapshot().Stages[0]
	if want := 10 * (1 - 0.9048374); s.Rate < want-0.01 || s.Rate > want+0.01 {
		t.Errorf("rate after one second at 10/s = %.3f, want %.3f", s.Rate, want)
	}
	if s.Latency < 0.099 || s.Latency > 0.101 || s.Done != 10 || s.InFlight != 0 {
		t.Errorf("stage %+v", s)
	}
	for range 120 { // two minutes with nothing delivered: the rate decays to 0
		w.Tick(c.add(time.Second))
	}
	if s := w.Snapshot().Stages[0]; s.Rate != 0 {
		t.Errorf("rate after a quiet minute = %v", s.Rate)
	}
}

func mkplace(t *testing.T, dir string, tokens ...string) {
	t.Helper()
	w, err := place.NewWorker(place.Options{NoSync: true, Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Open(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range tokens {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// spool makes a two-stage spool: in -> decode -> mid -> encode -> out,
// with 6 jobs waiting in in, 2 in mid, one failed, written by two
// workers on two hosts.
func spool(t *testing.T) (string, *clock) {
	dir := t.TempDir()
	mkplace(t, filepath.Join(dir, "in"), "a", "b", "c", "d", "e", "f")
	mkplace(t, filepath.Join(dir, "mid"), "x", "y")
	mkplace(t, filepath.Join(dir, "out"))
	os.MkdirAll(filepath.Join(dir, "in.failed"), 0o700)
	for _, n := range []string{"bad", "bad.stderr", "bad.status"} {
		os.WriteFile(filepath.Join(dir, "in.failed", n), nil, 0o600)
	}
	c := &clock{at: t0}
	dec := Stage{Name: "decode", Inputs: []string{filepath.Join(dir, "in")}, Outputs: []string{filepath.Join(dir, "mid")}, FailedPlaces: []string{filepath.Join(dir, "in.failed")}}
	enc := Stage{Name: "encode", Inputs: []string{filepath.Join(dir, "mid")}, Outputs: []string{filepath.Join(dir, "out")}}
	w1 := writer(t, dir, "h1", c, []Stage{dec})
	w2 := writer(t, dir, "h2", c, []Stage{dec, enc})
	for _, w := range []*Writer{w1, w2} {
		for range 4 {
			w.Claimed("decode", "j")
			w.Done("decode", "j", 2*time.Second)
		}
	}
	for range 20 {
		w2.Claimed("encode", "j")
		w2.Done("encode", "j", 50*time.Millisecond)
	}
	w1.Failed("decode", "bad", 1, false)
	now := c.add(time.Second)
	for _, w := range []*Writer{w1, w2} {
		w.Tick(now)
		if err := w.write(); err != nil {
			t.Fatal(err)
		}
	}
	return dir, c
}

func TestReport(t *testing.T) {
	dir, c := spool(t)
	r, err := Read(dir, c.now())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `places in DIR
  PLACE  TOKENS  HELD  WRITING  ASIDE
  in     6       0     0        0
  mid    2       0     0        0
  out    0       0     0        0
stages
  STAGE   WORKERS  DONE  FAILED  RETRIED  RATE/S  LATENCY  WAITING
  decode  2        8     1       0        0.76    2s       6
  encode  1        20    0       0        1.90    50ms     2
failed jobs: 1 (in in.failed)
workers: 2 live, 0 stopped or dead
bottleneck: decode (6 waiting at 0.76/s: about 7.9s to drain)
`
	if got := strings.ReplaceAll(b.String(), dir, "DIR"); got != want {
		t.Errorf("report:\n%s\nwant\n%s", got, want)
	}
	if r.Bottleneck != "decode" {
		t.Errorf("bottleneck %q", r.Bottleneck)
	}
	// After the lease with no renewal the workers of other hosts are
	// dead: no rate, and the stage with work is stalled.
	r, _ = Read(dir, c.now().Add(time.Minute))
	if r.Stages[0].Workers != 0 || r.Bottleneck != "decode" || !strings.Contains(r.Why, "no live worker") {
		t.Errorf("after the lease: %+v, %s", r.Stages[0], r.Why)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	c := &clock{at: t0}
	o := place.Owner{Host: "h", Boot: "0", PID: 7, Start: 1}
	w, err := NewWriter(dir, o, time.Minute, []Stage{{Name: "s", Inputs: []string{"in"}}}, Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	w.Claimed("s", "j")
	w.Done("s", "j", time.Second)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, Dir, o.String()+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if !f.Stopped || f.Stages[0].Done != 1 || f.Stages[0].Inputs[0] != "in" {
		t.Errorf("file after Close: %s", b)
	}
	if fi, _ := os.Stat(filepath.Join(dir, Dir)); fi.Mode().Perm() != 0o700 {
		t.Errorf(".status mode %v", fi.Mode().Perm())
	}
}

func TestDotAndPNML(t *testing.T) {
	dir, c := spool(t)
	r, err := Read(dir, c.now())
	if err != nil {
		t.Fatal(err)
	}
	var dot strings.Builder
	r.WriteDot(&dot)
	for _, want := range []string{`p0 [shape=circle, label="in\n6"];`, `t0 [shape=box, label="decode\n(bottleneck)"];`, "p0 -> t0;", "t0 -> p1;", "t1 -> p2;", "t0 -> p3 [style=dashed];"} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("dot lacks %s:\n%s", want, dot.String())
		}
	}
	var pn strings.Builder
	if err := r.WritePNML(&pn); err != nil {
		t.Fatal(err)
	}
	var doc pnmlDoc
	if err := xml.Unmarshal([]byte(pn.String()), &doc); err != nil {
		t.Fatalf("PNML does not parse: %v\n%s", err, pn.String())
	}
	pg := doc.Net.Page
	if len(pg.Places) != 4 || len(pg.Transitions) != 2 || len(pg.Arcs) != 5 || pg.Places[0].Marking == nil || pg.Places[0].Marking.Text != "6" || pg.Places[2].Marking != nil || pg.Places[3].Marking == nil || pg.Places[3].Marking.Text != "1" {
		t.Errorf("PNML net: %+v", pg)
	}
	if !strings.Contains(pn.String(), `<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">`) {
		t.Errorf("PNML root:\n%s", pn.String())
	}
}

func TestReadEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	r, err := Read(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "workers: 0 live") {
		t.Errorf("report of an empty folder:\n%s", b.String())
	}
	if _, err := Read(filepath.Join(dir, "nope"), t0); err == nil {
		t.Error("Read of a missing folder succeeded")
	}
}
