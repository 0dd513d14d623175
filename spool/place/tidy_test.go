package place

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestEntriesWhenNeeded: a place that is only written gets .tmp and
// nothing else; one that is claimed from gets .claim; a lock makes .lock.
// Close removes each once empty, and leaves an entry another worker
// still uses.
func TestEntriesWhenNeeded(t *testing.T) {
	root := t.TempDir()
	w := worker(t, "", nil)
	out := open(t, w, filepath.Join(root, "out"))
	put(t, out, "a", "A")
	if e := entries(t, out, ""); !slices.Equal(e, []string{".tmp", "a"}) {
		t.Errorf("a place only written holds %v, want [.tmp a]", e)
	}
	in := open(t, w, filepath.Join(root, "in"))
	put(t, in, "b", "B")
	c, err := in.Claim("b")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	l, err := in.Lock("unit")
	if err != nil {
		t.Fatal(err)
	}
	if e := entries(t, in, ""); !slices.Equal(e, []string{".claim", ".lock", ".tmp"}) {
		t.Errorf("a place claimed from and locked holds %v", e)
	}
	// Another worker (another host) holds a claim in in/.
	other := open(t, worker(t, "other", nil), in.Dir())
	put(t, other, "c", "C")
	if _, err := other.Claim("c"); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	w.Close()
	if e := entries(t, out, ""); !slices.Equal(e, []string{"a"}) {
		t.Errorf("out/ after Close: %v, want [a]", e)
	}
	if e := entries(t, in, ""); !slices.Equal(e, []string{".claim"}) {
		t.Errorf("in/ after Close, another worker holding a claim: %v, want [.claim]", e)
	}
	other.Worker().Close()
	if e := entries(t, in, ""); !slices.Equal(e, []string{"c"}) {
		t.Errorf("in/ after both closed: %v, want [c]", e)
	}
}

// TestTidyRace: workers that end and remove the empty entries race with a
// worker that keeps writing and claiming in the same place; the one that
// finds an entry gone makes it again, and no operation fails.
func TestTidyRace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	const rounds = 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	cycle := func(p *Place, name string) error {
		if err := p.Put(name, func(w io.Writer) error { _, err := io.WriteString(w, name); return err }); err != nil {
			return fmt.Errorf("put %s: %w", name, err)
		}
		c, err := p.Claim(name)
		if err != nil {
			return fmt.Errorf("claim %s: %w", name, err)
		}
		if err := c.Done(); err != nil {
			return fmt.Errorf("done %s: %w", name, err)
		}
		l, err := p.Lock(name)
		if err != nil {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		return l.Unlock()
	}
	stay := open(t, worker(t, "stay", nil), dir)
	wg.Go(func() {
		for i := range rounds {
			if err := cycle(stay, fmt.Sprintf("s%d", i)); err != nil {
				errs <- err
			}
		}
	})
	wg.Go(func() {
		for i := range rounds {
			w, err := NewWorker(Options{Host: fmt.Sprintf("go%d", i), Heartbeat: -1, NoSync: true})
			if err != nil {
				errs <- err
				return
			}
			p, err := w.Open(dir)
			if err == nil {
				err = cycle(p, fmt.Sprintf("g%d", i))
			}
			if err != nil {
				errs <- err
			}
			w.Close()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	stay.Worker().Close()
	if e := entries(t, stay, ""); len(e) != 0 {
		t.Errorf("left after every worker closed: %v", e)
	}
}
