package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/spool/place"
)

func TestNames(t *testing.T) {
	h := Hash("a", "b")
	if len(h) != HashLen || h == Hash("ab") || h == Hash("a", "b", "") || h != Hash("a", "b") {
		t.Errorf("Hash: %q; parts must be told apart and the hash stable", h)
	}
	name := SegName(42, h)
	if k, ok := ParseSeg(name); !ok || k != 42 {
		t.Errorf("ParseSeg(%q) = %d, %v", name, k, ok)
	}
	if err := place.ValidName(name); err != nil {
		t.Error(err)
	}
	if err := place.ValidName(EndName(h)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", EndName(h), "00000001", "0000001." + h, "00000001." + h[1:], "0000000x." + h, "-0000001." + h} {
		if _, ok := ParseSeg(bad); ok {
			t.Errorf("ParseSeg(%q) accepted", bad)
		}
	}
}

func TestPlaceNames(t *testing.T) {
	got := PlaceNames([]string{"F1", "@a", "@a", "graph", "a/b", "@a", ".x"})
	want := []string{"F1", "@a", "@a#2", "edge4", "edge5", "@a#3", "edge7"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PlaceNames = %v, want %v", got, want)
	}
}

func FuzzParseSeg(f *testing.F) {
	f.Add(SegName(3, Hash("x")))
	f.Add("end.x")
	f.Fuzz(func(t *testing.T, name string) {
		k, ok := ParseSeg(name)
		if ok && SegName(k, name[9:]) != name {
			t.Errorf("ParseSeg(%q) = %d, but SegName gives %q", name, k, SegName(k, name[9:]))
		}
	})
}

func openPlace(t *testing.T) *place.Place {
	t.Helper()
	w, err := place.NewWorker(place.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	p, err := w.Open(filepath.Join(t.TempDir(), "F1"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokensAndEnd(t *testing.T) {
	p := openPlace(t)
	var names []string
	// One place may hold tokens of every codec: each file says its own.
	codecs := []recfile.Codec{recfile.None, recfile.S2, recfile.Zstd}
	for k := range 3 {
		name := SegName(k, Hash("gen", fmt.Sprint(k)))
		tw, err := NewTokenWriter(p, name, codecs[k])
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			tw.Add(fmt.Appendf(nil, "%d-%d\n", k, i))
		}
		if err := tw.Commit(); err != nil {
			t.Fatal(err)
		}
		// Written, read after the commit gave the writer back, is the
		// token file's size.
		if fi, err := os.Stat(filepath.Join(p.Dir(), name)); err != nil || fi.Size() != tw.Written() {
			t.Errorf("token %d (%v): Written %d, file %v (%v)", k, codecs[k], tw.Written(), fi, err)
		}
		names = append(names, name)
	}
	if _, _, ok, err := ReadEnd(p, "gen"); ok || err != nil {
		t.Fatalf("ReadEnd before WriteEnd: %v, %v", ok, err)
	}
	if err := WriteEnd(p, "gen", names, 1); err != nil {
		t.Fatal(err)
	}
	got, status, ok, err := ReadEnd(p, "gen")
	if !ok || err != nil || status != 1 || fmt.Sprint(got) != fmt.Sprint(names) {
		t.Fatalf("ReadEnd = %v, %d, %v, %v", got, status, ok, err)
	}
	for k, name := range names {
		var recs []string
		if _, err := ReadToken(p, name, 1<<20, func(rec []byte) error { recs = append(recs, string(rec)); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(recs) != 100 || recs[7] != fmt.Sprintf("%d-7\n", k) {
			t.Errorf("token %d (%v): %d records, %q", k, codecs[k], len(recs), recs[7])
		}
	}
	// A segment gone: the place is no longer complete.
	p.Remove(names[2])
	if _, _, ok, err := ReadEnd(p, "gen"); ok || err != nil {
		t.Errorf("ReadEnd with a segment gone: %v, %v", ok, err)
	}
	// Named by content: the same records twice are one token.
	for pass := range 2 {
		tw, _ := NewTokenWriter(p, "", DefaultCodec)
		tw.Add([]byte("same\n"))
		name, hit, err := tw.CommitContent(p, 5)
		if err != nil || hit != (pass == 1) {
			t.Errorf("pass %d: %s, hit %v, %v", pass, name, hit, err)
		}
	}
}

func TestEndTokenChecked(t *testing.T) {
	p := openPlace(t)
	tw, _ := NewTokenWriter(p, EndName("g"), DefaultCodec)
	tw.Add([]byte("not a segment"))
	tw.Add([]byte("status 0"))
	tw.Commit()
	var ce *CorruptError
	if _, _, _, err := ReadEnd(p, "g"); !errors.As(err, &ce) || ce.Aside == "" {
		t.Fatalf("ReadEnd of a bad end token: %v", err)
	}
	if has, _ := p.Has(EndName("g")); has {
		t.Error("the bad end token was not moved aside")
	}
}

func TestOpenRefuses(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, "home")
	os.Mkdir(user, 0o755)
	os.WriteFile(filepath.Join(user, "thesis.tex"), []byte("x"), 0o644)
	var ne *NotSpoolError
	if _, err := Open(user, place.Options{}); !errors.As(err, &ne) {
		t.Errorf("Open of a user's directory: %v", err)
	}
	if _, err := GC(user, true, place.Options{}); !errors.As(err, &ne) {
		t.Errorf("gc --all of a user's directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(user, "thesis.tex")); string(b) != "x" {
		t.Error("the user's file was touched")
	}
	os.Symlink(user, filepath.Join(root, "link"))
	if _, err := Open(filepath.Join(root, "link"), place.Options{}); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("Open through a link: %v", err)
	}
	sp, err := Open(filepath.Join(root, "sp"), place.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var iu *InUseError
	if _, err := Open(filepath.Join(root, "sp"), place.Options{Host: "other"}); !errors.As(err, &iu) {
		t.Errorf("Open of a spool in use: %v", err)
	}
	sp.SetRecord(&Record{Shape: "a", Tasks: []RecordTask{{Name: "sort"}}})
	var og *OtherGraphError
	if err := sp.Check(&Record{Shape: "b"}); !errors.As(err, &og) || !strings.Contains(err.Error(), "sort") {
		t.Errorf("Check of another shape: %v", err)
	}
}

// SetRecord writes the Record only when it changes: a rerun's Record is
// the one on disk, and rewriting it would cost two fsyncs for nothing. A
// Spool opened later finds what was written.
func TestSetRecordOnlyWhenChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sp")
	rec := func(live string) *Record {
		r := &Record{Shape: "s", Tasks: []RecordTask{{Name: "sort", Ident: "sort"}}}
		if live != "" {
			r.Live = map[string][]string{"F1": {live}}
		}
		return r
	}
	stat := func() os.FileInfo {
		fi, _ := os.Stat(filepath.Join(dir, GraphToken))
		return fi
	}
	for _, step := range []struct {
		live    string
		written bool
	}{{"", true}, {"", false}, {"a", true}, {"a", false}, {"b", true}} {
		sp, err := Open(dir, place.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		r := rec(step.live)
		if err := sp.Check(r); err != nil {
			t.Fatal(err)
		}
		before := stat()
		if err := sp.SetRecord(r); err != nil {
			t.Fatal(err)
		}
		if written := before == nil || !os.SameFile(before, stat()); written != step.written {
			t.Errorf("live %q: written %v, want %v", step.live, written, step.written)
		}
		if got, err := sp.Record(); err != nil || fmt.Sprint(got.Live) != fmt.Sprint(r.Live) {
			t.Errorf("live %q: read back %+v, %v", step.live, got, err)
		}
		sp.Close()
	}
}

// The standard errors of a step's tasks come back as kept: empty ones,
// bytes with no newline at their end, one larger than a block of a token.
func TestStderrToken(t *testing.T) {
	p := openPlace(t)
	gen := Hash("step")
	if _, ok, err := ReadStderr(p, gen, 1<<20); ok || err != nil {
		t.Fatalf("ReadStderr before any = %v, %v", ok, err)
	}
	big := []byte(strings.Repeat("warning: chatty\n", (1<<20)/16))
	want := []Stderr{{}, {Bytes: []byte("cat: missing: No such file or directory\n")}, {Bytes: []byte("no newline")}, {Bytes: big, Lost: 12345}}
	if err := WriteStderr(p, gen, want); err != nil {
		t.Fatal(err)
	}
	if err := place.ValidName(StderrName(gen)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := ReadStderr(p, gen, len(big))
	if !ok || err != nil {
		t.Fatalf("ReadStderr = %v, %v", ok, err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tasks' stderr, want %d", len(got), len(want))
	}
	for k := range want {
		if string(got[k].Bytes) != string(want[k].Bytes) || got[k].Lost != want[k].Lost {
			t.Errorf("task %d: got %.40q lost %d, want %.40q lost %d", k, got[k].Bytes, got[k].Lost, want[k].Bytes, want[k].Lost)
		}
	}
	// A rerun of the step replaces it.
	if err := WriteStderr(p, gen, []Stderr{{Bytes: []byte("new\n")}}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ReadStderr(p, gen, 1<<20); len(got) != 1 || string(got[0].Bytes) != "new\n" {
		t.Fatalf("after a rewrite: %v", got)
	}
}

// A stderr token that is not two records per task is corrupt: moved
// aside, so that the step runs again.
func TestStderrTokenCorrupt(t *testing.T) {
	for _, recs := range [][]string{{"lost 0"}, {"lost x", "msg"}, {"lost -1", "msg"}, {"msg", "lost 0"}} {
		p, gen := stderrToken(t, recs)
		_, ok, err := ReadStderr(p, gen, 1<<20)
		var ce *CorruptError
		if ok || !errors.As(err, &ce) || ce.Aside == "" {
			t.Errorf("%q: ok %v, err %v; want a CorruptError moved aside", recs, ok, err)
		}
		if has, _ := p.Has(StderrName(gen)); has {
			t.Errorf("%q: the corrupt token is still there", recs)
		}
	}
}

// stderrToken writes recs as the stderr token of a new place, as they
// are, and returns the place and the token's gen.
func stderrToken(t *testing.T, recs []string) (*place.Place, string) {
	t.Helper()
	p := openPlace(t)
	gen := Hash("step")
	tw, err := NewTokenWriter(p, StderrName(gen), recfile.None)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := tw.Add([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Commit(); err != nil {
		t.Fatal(err)
	}
	return p, gen
}

// Whatever records a stderr token holds, ReadStderr returns two records a
// task or a CorruptError, and never panics.
func FuzzReadStderr(f *testing.F) {
	f.Add([]byte("lost 0\x00msg\n"))
	f.Add([]byte("lost 12\x00\x00lost 0\x00x"))
	f.Add([]byte("lost -1\x00x"))
	f.Add([]byte("msg"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := strings.Split(string(data), "\x00")
		p, gen := stderrToken(t, recs)
		errs, ok, err := ReadStderr(p, gen, 1<<20)
		var ce *CorruptError
		switch {
		case ok && err == nil:
			if len(errs)*2 != len(recs) {
				t.Fatalf("%d records read as %d tasks' stderr", len(recs), len(errs))
			}
			for k, e := range errs {
				if string(e.Bytes) != recs[2*k+1] || e.Lost < 0 {
					t.Fatalf("task %d: %q lost %d from %q", k, e.Bytes, e.Lost, recs)
				}
			}
		case !ok && errors.As(err, &ce):
		default:
			t.Fatalf("ok %v, err %v", ok, err)
		}
	})
}
