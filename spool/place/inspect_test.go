package place

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestInspect(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "in")
	a, b := worker(t, "a", c), worker(t, "b", c)
	pa, pb := open(t, a, dir), open(t, b, dir)
	for _, n := range []string{"j1", "j2", "j3", "j4"} {
		put(t, pa, n, n)
	}
	if _, err := pa.Claim("j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Claim("j2"); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Lock("j3"); err != nil {
		t.Fatal(err)
	}
	if _, err := pa.Aside("j4"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "-bad"), nil, 0o600) // not a token
	a.Renew()                                            // the leases now start on the test's clock
	b.Renew()
	before := snapshotTree(t, dir)
	m, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshotTree(t, dir); after != before {
		t.Errorf("Inspect changed the place:\n%s\nthen\n%s", before, after)
	}
	if m.Tokens != 1 || m.Aside != 1 || m.Pending != 0 {
		t.Errorf("marking = %d tokens, %d aside, %d pending; want 1, 1, 0", m.Tokens, m.Aside, m.Pending)
	}
	got := ""
	for _, h := range m.Holders {
		got += fmt.Sprintf("%s claims=%v locks=%v live=%v; ", h.Owner.Host, h.Claims, h.Locks, h.Live(time.Minute, c.now()))
	}
	if want := "a claims=[j1] locks=[] live=true; b claims=[j2] locks=[j3] live=true; "; got != want {
		t.Errorf("holders:\n got %s\nwant %s", got, want)
	}
	// After the lease a holder of another host is no longer live.
	later := c.now().Add(2 * time.Minute)
	for _, h := range m.Holders {
		if h.Live(time.Minute, later) {
			t.Errorf("%s live after its lease ran out", h.Owner.Host)
		}
	}
	if _, err := Inspect(filepath.Join(dir, "nope")); err == nil {
		t.Error("Inspect of a missing directory succeeded")
	}
}

// snapshotTree lists every path under dir.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	s := ""
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		s += p + "\n"
		return err
	})
	return s
}

// TestSharedPlace: in a set-group-ID folder tokens are written 0640 and
// take the folder's group, so that the stage reading them can.
func TestSharedPlace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	w := worker(t, "", nil)
	p := open(t, w, dir)
	put(t, p, "t", "x")
	fi, err := os.Lstat(filepath.Join(dir, "t"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("token in a shared place: mode %v, want 0640", fi.Mode().Perm())
	}
}
