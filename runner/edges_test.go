package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// teeReadInTurn is issue 13's script: seq tees its lines into n edges, and
// one cat reads the edges one after another, so every edge but the first
// waits on disk for its turn.
func teeReadInTurn(n, lines int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "seq %d | tee", lines)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&s, " @e%d", i)
	}
	s.WriteString(" > /dev/null\ncat")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&s, " @e%d", i)
	}
	s.WriteString(" | wc -l")
	return s.String()
}

// runInTurn runs teeReadInTurn with spill files in dir and returns the
// output, stderr, status and the bytes spilled to disk.
func runInTurn(t testing.TB, n, lines int, dir string) (string, string, int, int64) {
	t.Helper()
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Stdout: &out, Stderr: &errb, TempDir: dir})
	defer r.Close()
	var disk int64
	r.OnStats = func(st *sched.Stats) { disk += st.SpillDiskBytes }
	status := r.RunScript(context.Background(), teeReadInTurn(n, lines))
	return out.String(), errb.String(), status, disk
}

// 200 edges of 200k lines each, read in turn, finish with every line: the
// edges waiting for their turn go to disk once and are read back in order.
// (Before the fix, each stall spilled a few small buffers, and the run did
// not finish.)
func TestManyEdgesReadInTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("40 million lines")
	}
	dir := t.TempDir()
	out, errText, status, _ := runInTurn(t, 200, 200000, dir)
	if want := fmt.Sprintf("%d\n", 200*200000); out != want || status != 0 {
		t.Fatalf("out %q, status %d, stderr %q; want %q", out, status, errText, want)
	}
}

// BenchmarkTeeReadInTurn is issue 13's 20 edges of 200k lines read one
// after another; disk-B/op is what the spill files took on disk.
func BenchmarkTeeReadInTurn(b *testing.B) {
	dir := b.TempDir()
	var disk int64
	for b.Loop() {
		out, errText, status, d := runInTurn(b, 20, 200000, dir)
		if out != "4000000\n" || status != 0 {
			b.Fatalf("out %q, status %d, stderr %q", out, status, errText)
		}
		disk += d
	}
	b.ReportMetric(float64(disk)/float64(b.N), "disk-B/op")
}
