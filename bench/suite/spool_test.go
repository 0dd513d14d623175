package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tiny -spool run end to end: every cell runs, gives the same output
// (spoolMain checks), and the report and plots are written.
func TestSpoolBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the spool benchmark on a small log")
	}
	out := t.TempDir()
	cfg := spoolConfig{bytes: 256 << 10, segments: []int{16 << 10, 64 << 10}, runs: 1, tmpDir: t.TempDir()}
	var stdout bytes.Buffer
	if err := spoolMain(context.Background(), cfg, out, &stdout); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "spool.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## log:", "## maps:", "| concurrent |", "| bash |", "spool disk, fsync on, segment 16K", "spool disk, fsync on, s2, segment 4M", "spool disk, fsync on, zstd, segment 4M", "cached disk", "Fastest segment: "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("spool.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"spool-log.svg", "spool-maps.svg"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || !strings.Contains(string(b), "<polyline") {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "spool.md") {
		t.Errorf("stdout %q", stdout.String())
	}
}
