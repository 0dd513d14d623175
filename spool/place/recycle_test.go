package place

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRecycle: a done input becomes a spare of the output place, and the
// next token written there reuses its inode, emptied and with the
// place's mode; Inspect does not count spares, Close removes them.
func TestRecycle(t *testing.T) {
	root := t.TempDir()
	w := worker(t, "", nil)
	in, out := open(t, w, filepath.Join(root, "in")), open(t, w, filepath.Join(root, "out"))
	put(t, out, "first", "makes .tmp")
	os.WriteFile(filepath.Join(in.Dir(), "job"), []byte("an input of some length\n"), 0o644)
	c, err := in.Claim("job")
	if err != nil {
		t.Fatal(err)
	}
	ino := inode(t, c.Path())
	if err := c.DoneInto(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(c.Path()); !os.IsNotExist(err) {
		t.Errorf("the claimed file is still there: %v", err)
	}
	if m, err := Inspect(out.Dir()); err != nil || m.Pending != 0 {
		t.Errorf("Inspect counts the spare as a token being written: %+v, %v", m, err)
	}
	put(t, out, "next", "new")
	if got := inode(t, filepath.Join(out.Dir(), "next")); got != ino {
		t.Errorf("the next token has inode %d, want the spare's %d", got, ino)
	}
	if got := text(out.Open("next")); got != "new" {
		t.Errorf("the reused token holds %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(out.Dir(), "next")); fi.Mode().Perm() != 0o600 {
		t.Errorf("the reused token's mode is %v, want 0600", fi.Mode().Perm())
	}
	// A spare left unused goes at Close, and .tmp with it.
	os.WriteFile(filepath.Join(in.Dir(), "job2"), []byte("x"), 0o600)
	c, _ = in.Claim("job2")
	c.DoneInto(out)
	w.Close()
	if e := entries(t, out, ""); !slices.Equal(e, []string{"first", "next"}) {
		t.Errorf("out/ after Close: %v", e)
	}
}

// TestRecycleRefuses: a file that is not only this job's is removed, not
// reused: one with another link (a writer's own name for it), one too
// large, and none into a place shared with a group.
func TestRecycleRefuses(t *testing.T) {
	root := t.TempDir()
	w := worker(t, "", nil)
	in, out := open(t, w, filepath.Join(root, "in")), open(t, w, filepath.Join(root, "out"))
	put(t, out, "first", "x")
	linked := filepath.Join(root, "writers-own-name")
	os.WriteFile(linked, []byte("keep me\n"), 0o600)
	os.Link(linked, filepath.Join(in.Dir(), "linked"))
	os.WriteFile(filepath.Join(in.Dir(), "large"), []byte(strings.Repeat("x", maxSpareSize+1)), 0o600)
	for _, name := range []string{"linked", "large"} {
		c, err := in.Claim(name)
		if err != nil {
			t.Fatal(err)
		}
		if out.Recycle(c.Path()) {
			t.Errorf("%s was recycled", name)
		}
		c.Done()
	}
	put(t, out, "after", "y")
	if b, _ := os.ReadFile(linked); string(b) != "keep me\n" {
		t.Errorf("the writer's own link now holds %q", b)
	}
	shared := filepath.Join(root, "shared")
	os.Mkdir(shared, 0o700)
	os.Chmod(shared, os.ModeSetgid|0o770)
	sp := open(t, w, shared)
	put(t, sp, "t", "x")
	os.WriteFile(filepath.Join(in.Dir(), "small"), []byte("x"), 0o600)
	c, _ := in.Claim("small")
	if sp.Recycle(c.Path()) {
		t.Error("a file was recycled into a place shared with a group")
	}
	c.Done()
}
