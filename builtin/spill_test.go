package builtin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// A run file gives back exactly the lines written, whatever their bytes.
func TestSortSpillRoundTrip(t *testing.T) {
	s := &spillFiles{dir: t.TempDir()}
	defer s.cleanup()
	lines := [][]byte{{}, []byte("a"), []byte("with\nnewline"), bytes.Repeat([]byte("xyz"), 100000), {0, 0xff}, {}}
	w, err := s.create()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := w.add(l); err != nil {
			t.Fatal(err)
		}
	}
	run, err := w.close()
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.open(run)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range lines {
		got, err := r.next()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("line %d: %q (%d bytes), %v; want %d bytes", i, got[:min(len(got), 20)], len(got), err, len(want))
		}
	}
	if _, err := r.next(); err != io.EOF {
		t.Fatalf("after the last line: %v, want io.EOF", err)
	}
}

// A run cut short is an error, not a clean end.
func TestSortSpillTruncated(t *testing.T) {
	s := &spillFiles{dir: t.TempDir()}
	defer s.cleanup()
	w, err := s.create()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		w.add(fmt.Appendf(nil, "line %d", i))
	}
	run, err := w.close()
	if err != nil {
		t.Fatal(err)
	}
	run.size /= 2
	if err := run.f.Truncate(run.size); err != nil {
		t.Fatal(err)
	}
	r, err := s.open(run)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.next()
		if err == io.EOF {
			t.Fatal("truncated run read to a clean io.EOF")
		}
		if err != nil {
			break
		}
	}
}

// Merging keeps the order of cmp, breaks ties by source (input order) and,
// with unique, keeps the first of equal lines; merging files level by
// level removes the merged runs. Run files never have a name in the
// directory.
func TestSortSpillMerge(t *testing.T) {
	byFirst := func(a, b []byte) int { return bytes.Compare(a[:1], b[:1]) }
	src := func(lines ...string) spillSource {
		b := &sortBuffer{budget: 1 << 20}
		for _, l := range lines {
			b.add([]byte(l))
		}
		b.lines = b.inOrder(nil)
		return &spillMem{buf: b}
	}
	for _, unique := range []bool{false, true} {
		var got []string
		err := spillMerge([]spillSource{src("a1", "b1", "d1"), src(), src("a2", "c2", "d2"), src("a3")}, spillOrder{cmp: byFirst}, unique,
			func(l []byte) error { got = append(got, string(l)); return nil })
		want := []string{"a1", "a2", "a3", "b1", "c2", "d1", "d2"}
		if unique {
			want = []string{"a1", "b1", "c2", "d1"}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("unique %v: %q, %v; want %q", unique, got, err, want)
		}
	}

	dir := t.TempDir()
	s := &spillFiles{dir: dir}
	defer s.cleanup()
	var runs []*spillRun
	for i := range 3 {
		w, err := s.create()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{"a", "b", "c"} {
			w.add([]byte(l + fmt.Sprint(i)))
		}
		run, err := w.close()
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	merged, err := s.mergeRuns(runs, spillOrder{cmp: byFirst}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.runs) != 1 || merged.level != 1 {
		t.Errorf("%d runs after merging (level %d), want 1 (level 1)", len(s.runs), merged.level)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d named files in the directory", len(left))
	}
	r, err := s.open(merged)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		l, err := r.next()
		if err != nil {
			break
		}
		got = append(got, string(l))
	}
	if want := "a0 a1 a2 b0 b1 b2 c0 c1 c2"; strings.Join(got, " ") != want {
		t.Errorf("merged run: %q, want %q", got, want)
	}
	s.cleanup()
	if len(s.runs) != 0 {
		t.Errorf("%d runs after cleanup", len(s.runs))
	}
}

// sortBuffer packs lines into slabs: lines share allocations, and the
// budget counts bytes plus a slice header per line.
func TestSortBufferBudget(t *testing.T) {
	b := &sortBuffer{budget: 1000}
	n := 0
	for b.add([]byte("0123456789")) {
		n++
	}
	if want := 1000 / (10 + sortLineCost); n != want {
		t.Errorf("%d lines fit, want %d", n, want)
	}
	if len(b.slabs) != 1 {
		t.Errorf("%d slabs, want 1", len(b.slabs))
	}
	b.reset()
	if !b.add(bytes.Repeat([]byte("x"), 5000)) {
		t.Error("an empty buffer refused a line over its budget")
	}
	if b.add([]byte("y")) {
		t.Error("a full buffer took another line")
	}
}
