package place

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestPartial(t *testing.T) {
	for _, name := range []string{".x", ".x.swp", "a.tmp", "a.TEMP.tmp", "f.part", "f.partial", "v.crdownload", "v.download", "w.filepart", "a.swp", "a.swx", "notes~", "#notes#"} {
		if !Partial(name) {
			t.Errorf("Partial(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"a", "a.txt", "tmp", "part.txt", "a.tmp.gz", "#notes", "x~y"} {
		if Partial(name) {
			t.Errorf("Partial(%q) = true, want false", name)
		}
	}
}

// fakeFiles is a folder for a Judge: stamps by name, and a count of the
// looks taken.
type fakeFiles struct {
	stamps map[string]Stamp
	open   map[string]bool // held open for writing
	untold map[string]bool // whether held open cannot be told
	looks  int
}

func (f *fakeFiles) stat(name string) (Stamp, error) {
	f.looks++ // (counts stamps only)
	s, ok := f.stamps[name]
	if !ok {
		return Stamp{}, fs.ErrNotExist
	}
	return s, nil
}

func (f *fakeFiles) look() Looks {
	return Looks{Stamp: f.stat, Open: func(name string) Writers {
		switch {
		case f.untold[name]:
			return Untold
		case f.open[name]:
			return Writing
		}
		return NoWriter
	}}
}

func (f *fakeFiles) names() []string {
	var ns []string
	for n := range f.stamps {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// TestJudgeSettles: without events a file is complete once its stamp has
// stayed the same for the settle time, and not before.
func TestJudgeSettles(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	f := &fakeFiles{stamps: map[string]Stamp{"slow": {Size: 7, Mtime: at(0)}, "old": {Size: 3, Mtime: at(-time.Hour)}, "x.part": {Size: 1, Mtime: at(-time.Hour)}}}
	j := NewJudge(time.Second, false)
	ready, waiting, next := j.Ready(f.names(), at(0), f.look())
	if len(ready) != 0 || len(waiting) != 2 || !next.Equal(at(time.Second)) {
		t.Fatalf("first look: ready %v, waiting %v, next %v; want none ready (no mtime trusted), 2 waiting, next at 1s", ready, waiting, next)
	}
	// Not due yet: no look taken.
	looks := f.looks
	if ready, _, _ := j.Ready(f.names(), at(500*time.Millisecond), f.look()); len(ready) != 0 || f.looks != looks {
		t.Fatalf("at 0.5s: ready %v, %d looks; want none and no look", ready, f.looks-looks)
	}
	f.stamps["slow"] = Stamp{Size: 14, Mtime: at(900 * time.Millisecond)}
	ready, _, next = j.Ready(f.names(), at(time.Second), f.look())
	if !slices.Equal(ready, []string{"old"}) || !next.Equal(at(2*time.Second)) {
		t.Fatalf("at 1s: ready %v, next %v; want [old] (slow grew), next at 2s", ready, next)
	}
	ready, waiting, next = j.Ready(f.names(), at(2*time.Second), f.look())
	if !slices.Equal(ready, []string{"old", "slow"}) || len(waiting) != 0 || !next.IsZero() {
		t.Fatalf("at 2s: ready %v, waiting %v, next %v", ready, waiting, next)
	}
	// A file no longer listed is forgotten.
	delete(f.stamps, "old")
	j.Ready(f.names(), at(3*time.Second), f.look())
	if _, ok := j.files["old"]; ok {
		t.Error("a file gone from the listing is still judged")
	}
}

// TestJudgeEvents: with events a file closed or moved in is complete at
// once, one written since its last close is not however old it is, and a
// file found without an event is complete at first sight when its
// modification time is settle old.
func TestJudgeEvents(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	f := &fakeFiles{stamps: map[string]Stamp{
		"found-old": {Size: 1, Mtime: t0.Add(-time.Minute)},
		"found-new": {Size: 1, Mtime: t0.Add(-100 * time.Millisecond)},
		"writing":   {Size: 1, Mtime: t0.Add(-time.Minute)},
		"closed":    {Size: 1, Mtime: t0},
		"moved":     {Size: 1, Mtime: t0},
	}}
	j := NewJudge(time.Second, true)
	j.Note("writing", Written, t0)
	j.Note("closed", Written, t0)
	j.Note("closed", Closed, t0)
	j.Note("moved", MovedIn, t0)
	ready, waiting, _ := j.Ready(f.names(), t0, f.look())
	if !slices.Equal(ready, []string{"closed", "found-old", "moved"}) || len(waiting) != 2 {
		t.Fatalf("ready %v, waiting %v; want [closed found-old moved], 2 waiting", ready, waiting)
	}
	if f.looks != 2 {
		t.Errorf("%d looks; want 2, for the files no event told of", f.looks)
	}
	f.open = map[string]bool{"writing": true}
	ready, _, _ = j.Ready(f.names(), t0.Add(time.Hour), f.look())
	if slices.Contains(ready, "writing") {
		t.Error("a file written and still open for writing was taken")
	}
	j.Note("closed", Written, t0.Add(time.Hour)) // opened again and written
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Hour+500*time.Millisecond), f.look()); slices.Contains(ready, "closed") {
		t.Error("a file written again after its close was taken")
	}
	// Written, not open, and not written for the settle time: done, with
	// no close (a hard link made into the folder gives none).
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Hour+time.Second), f.look()); !slices.Contains(ready, "closed") {
		t.Error("a file not written for the settle time and held by no one was not taken")
	}
	// Lost events: everything is judged by its stamps again.
	f.open = nil
	j.Note("", Lost, t0)
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Hour), f.look()); !slices.Contains(ready, "writing") {
		t.Error("after lost events a file an hour old was not taken")
	}
}

// TestJudgeSuspect: a file put back because it changed under a claim is
// not complete by being moved back in; it must settle again, or close.
func TestJudgeSuspect(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	f := &fakeFiles{stamps: map[string]Stamp{"job": {Size: 5, Mtime: t0.Add(-time.Minute)}}}
	j := NewJudge(time.Second, true)
	j.Note("job", Gone, t0) // claimed: renamed out
	j.Suspect("job")
	j.Note("job", MovedIn, t0) // put back
	if ready, _, _ := j.Ready(f.names(), t0, f.look()); len(ready) != 0 {
		t.Fatalf("a suspect file moved back in was taken at once: %v", ready)
	}
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Second), f.look()); !slices.Equal(ready, []string{"job"}) {
		t.Fatalf("a suspect file unchanged for the settle time: ready %v", ready)
	}
	j.Note("job", Gone, t0)
	j.Suspect("job")
	j.Note("job", MovedIn, t0)
	j.Note("job", Closed, t0)
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Second), f.look()); !slices.Equal(ready, []string{"job"}) {
		t.Fatalf("a suspect file closed by its writer: ready %v", ready)
	}
}

// TestJudgeNeverTakesAChangingFile: for any schedule of writes and looks
// without events, a file the judge calls complete at time t had the same
// stamp at every look in the settle time before t.
func TestJudgeNeverTakesAChangingFile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		settle := time.Duration(rapid.IntRange(1, 20).Draw(t, "settle")) * 100 * time.Millisecond
		trust := rapid.Bool().Draw(t, "trustMtime")
		j := NewJudge(settle, trust)
		t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		now := t0
		f := &fakeFiles{stamps: map[string]Stamp{"f": {Size: 0, Mtime: now}}}
		lastChange := now
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := range steps {
			now = now.Add(time.Duration(rapid.IntRange(0, 15).Draw(t, fmt.Sprintf("wait%d", i))) * 100 * time.Millisecond)
			if rapid.Bool().Draw(t, fmt.Sprintf("write%d", i)) {
				s := f.stamps["f"]
				f.stamps["f"] = Stamp{Size: s.Size + 1, Mtime: now}
				lastChange = now
			}
			ready, _, _ := j.Ready(f.names(), now, f.look())
			if len(ready) > 0 && now.Sub(lastChange) < settle {
				t.Fatalf("taken at %v, written at %v: settle %v", now.Sub(t0), lastChange.Sub(t0), settle)
			}
			if len(ready) > 0 {
				// Taken: a writer that goes on after this is what the
				// check at removal is for; start a new file.
				delete(f.stamps, "f")
				j.Ready(f.names(), now, f.look())
				f.stamps["f"] = Stamp{Size: 0, Mtime: now}
				lastChange = now
			}
		}
	})
}

// TestIntakeEvents watches a real folder: a file written slowly is not
// ready until its writer closes it, one renamed in is ready at once, and
// one found at start with an old modification time too.
func TestIntakeEvents(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	os.WriteFile(old, []byte("x\n"), 0o600)
	hour := time.Now().Add(-time.Hour)
	os.Chtimes(old, hour, hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, err := WatchIntake(ctx, dir, IntakeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if !in.Events {
		t.Skip("this folder gives no events")
	}
	list := func() []string {
		ents, _ := os.ReadDir(dir)
		var ns []string
		for _, e := range ents {
			ns = append(ns, e.Name())
		}
		ready, _, _ := in.Ready(ns)
		return ready
	}
	// waitReady waits for the events to be read.
	waitReady := func(want []string) {
		t.Helper()
		end := time.Now().Add(10 * time.Second)
		for !slices.Equal(list(), want) {
			if time.Now().After(end) {
				t.Fatalf("ready %v, want %v", list(), want)
			}
			select {
			case <-in.C:
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	w, err := os.Create(filepath.Join(dir, "slow"))
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("line 1\n")
	tmp := filepath.Join(t.TempDir(), "whole")
	os.WriteFile(tmp, []byte("all\n"), 0o600)
	if err := os.Rename(tmp, filepath.Join(dir, "whole")); err != nil {
		t.Skipf("temp folder on another file system: %v", err)
	}
	waitReady([]string{"old", "whole"})
	time.Sleep(1500 * time.Millisecond) // past the settle time: still open
	if r := list(); slices.Contains(r, "slow") {
		t.Fatalf("a file still open for writing is ready: %v", r)
	}
	w.WriteString("line 2\n")
	w.Close()
	waitReady([]string{"old", "slow", "whole"})
}

func TestIntakeMissingFolder(t *testing.T) {
	_, err := WatchIntake(context.Background(), filepath.Join(t.TempDir(), "nope"), IntakeOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WatchIntake of a missing folder = %v, want ErrNotExist", err)
	}
}

// TestJudgeOpenForWriting: a close is not the end of a writer (a shell's
// redirection of a loop closes the file each time a command of the loop
// ends): a file closed, settled or old is taken only if no process holds
// it open for writing then.
func TestJudgeOpenForWriting(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	f := &fakeFiles{stamps: map[string]Stamp{"loop": {Size: 1, Mtime: t0}}, open: map[string]bool{"loop": true}}
	j := NewJudge(time.Second, true)
	j.Note("loop", Written, t0)
	j.Note("loop", Closed, t0) // one command of the loop ended
	if ready, waiting, _ := j.Ready(f.names(), t0, f.look()); len(ready) != 0 || len(waiting) != 1 {
		t.Fatalf("closed while the shell still holds it: ready %v, waiting %v", ready, waiting)
	}
	f.open["loop"] = false
	if ready, _, _ := j.Ready(f.names(), t0.Add(500*time.Millisecond), f.look()); len(ready) != 0 {
		t.Fatal("a file seen open for writing was taken before its close or the settle time")
	}
	j.Note("loop", Closed, t0.Add(600*time.Millisecond))
	if ready, _, _ := j.Ready(f.names(), t0.Add(700*time.Millisecond), f.look()); !slices.Equal(ready, []string{"loop"}) {
		t.Fatalf("closed for good: ready %v", ready)
	}
	// Another user's file, which the system will not say is open: written
	// and not closed, only its close ends the wait, however long.
	f = &fakeFiles{stamps: map[string]Stamp{"theirs": {Size: 1, Mtime: t0}}, untold: map[string]bool{"theirs": true}}
	j = NewJudge(time.Second, true)
	j.Note("theirs", Written, t0)
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Hour), f.look()); len(ready) != 0 {
		t.Fatal("a file written and not closed, whose writers cannot be told, was taken")
	}
	j.Note("theirs", Closed, t0.Add(time.Hour))
	if ready, _, _ := j.Ready(f.names(), t0.Add(time.Hour), f.look()); !slices.Equal(ready, []string{"theirs"}) {
		t.Fatalf("closed: ready %v", ready)
	}
	// Without events: settled but still open restarts the settle time.
	f = &fakeFiles{stamps: map[string]Stamp{"idle": {Size: 1, Mtime: t0}}, open: map[string]bool{"idle": true}}
	j = NewJudge(time.Second, false)
	j.Ready(f.names(), t0, f.look())
	if ready, _, next := j.Ready(f.names(), t0.Add(time.Second), f.look()); len(ready) != 0 || next.IsZero() {
		t.Fatalf("settled but open: ready %v, next %v", ready, next)
	}
	f.open["idle"] = false
	j.Ready(f.names(), t0.Add(2*time.Second), f.look())
	if ready, _, _ := j.Ready(f.names(), t0.Add(3*time.Second), f.look()); !slices.Equal(ready, []string{"idle"}) {
		t.Fatalf("settled and closed: ready %v", ready)
	}
}

// TestOpenForWriting asks the kernel: a file open for writing by any
// descriptor, here or in another process, is told; a closed one is not.
func TestOpenForWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := openForWriting(path); got != Writing {
		t.Skipf("this file system gives no leases: cannot tell (%d)", got)
	}
	w.Close()
	if openForWriting(path) != NoWriter {
		t.Error("a closed file is told open for writing")
	}
	r, _ := os.Open(path)
	defer r.Close()
	if openForWriting(path) != NoWriter {
		t.Error("a file open for reading only is told open for writing")
	}
}
