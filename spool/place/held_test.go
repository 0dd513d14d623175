package place

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestClaims: Claims shows each owner with its tokens, locks and whether
// it is alive, as Reap would judge it; Writing counts live writers' files.
func TestClaims(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "in")
	a, b := worker(t, "a", c), worker(t, "b", c)
	pa, pb := open(t, a, dir), open(t, b, dir)
	for _, n := range []string{"t1", "t2", "t3"} {
		put(t, pa, n, n)
	}
	if _, err := pa.Claim("t2"); err != nil {
		t.Fatal(err)
	}
	if _, err := pa.Claim("t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Lock("unit"); err != nil {
		t.Fatal(err)
	}
	pend, err := pb.Create("t9")
	if err != nil {
		t.Fatal(err)
	}
	a.Renew()
	b.Renew()
	hs, err := pb.Claims()
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, h := range hs {
		got += fmt.Sprintf("%s %v locks=%d alive=%v; ", h.Owner.Host, h.Tokens, h.Locks, h.Alive)
	}
	if want := "a [t1 t2] locks=0 alive=true; b [] locks=1 alive=true; "; got != want {
		t.Errorf("Claims = %s, want %s", got, want)
	}
	if n, err := pa.Writing(); n != 1 || err != nil {
		t.Errorf("Writing = %d, %v; want 1", n, err)
	}
	// a stops renewing: past its lease b sees it dead, then takes back.
	b.Renew()
	c.advance(2 * time.Minute)
	b.Renew()
	hs, _ = pb.Claims()
	if len(hs) != 2 || hs[0].Alive || !hs[1].Alive {
		t.Errorf("Claims after a's lease = %+v; want a dead, b alive", hs)
	}
	if n, _ := pb.Reap(); n != 2 {
		t.Errorf("Reap = %d, want 2", n)
	}
	hs, _ = pb.Claims()
	if len(hs) != 1 || hs[0].Owner != b.Owner() {
		t.Errorf("Claims after the reap = %+v; want b alone", hs)
	}
	if err := pend.Commit(); err != nil {
		t.Fatal(err)
	}
	if n, _ := pa.Writing(); n != 0 {
		t.Errorf("Writing after the commit = %d", n)
	}
}

// TestClaimsTaker: a give-back left half done by a taker that died is
// listed under its owner with the taker named, and is dead.
func TestClaimsTaker(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	w := worker(t, "", nil)
	p := open(t, w, dir)
	dead := Owner{Host: w.Owner().Host, Boot: w.Owner().Boot, PID: deadPID(t), Start: 1}
	gone := Owner{Host: "other", Boot: "0", PID: 7, Start: 7}
	half := filepath.Join(dir, claimDir, dead.String()+"~"+gone.String())
	if err := os.MkdirAll(half, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, "job"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hs, err := p.Claims()
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Owner != gone || hs[0].Taker == nil || *hs[0].Taker != dead || hs[0].Alive {
		t.Fatalf("Claims = %+v; want gone's claims, taken by a dead taker", hs)
	}
	if n, _ := p.Reap(); n != 1 {
		t.Errorf("Reap of the half give-back = %d, want 1", n)
	}
}

// deadPID returns a pid that no process has.
func deadPID(t *testing.T) int {
	for pid := 4_000_000; pid > 1_000_000; pid -= 7919 {
		if !pidExists(pid) {
			return pid
		}
	}
	t.Skip("no free pid found")
	return 0
}

// TestMoveTo: a claimed token moves to another place, ready there; one
// taken back meanwhile is ErrLost.
func TestMoveTo(t *testing.T) {
	c := newClock()
	root := t.TempDir()
	a, b := worker(t, "a", c), worker(t, "b", c)
	in, failed := open(t, a, filepath.Join(root, "in")), open(t, a, filepath.Join(root, "in.failed"))
	put(t, in, "j1", "one")
	put(t, in, "j2", "two")
	c1, _ := in.Claim("j1")
	if err := c1.MoveTo(failed); err != nil {
		t.Fatal(err)
	}
	if got := text(failed.Open("j1")); got != "one" {
		t.Errorf("moved token = %q", got)
	}
	c2, _ := in.Claim("j2")
	a.Renew() // the claim's rename set the directory's time by the real clock
	c.advance(2 * time.Minute)
	if n, _ := open(t, b, filepath.Join(root, "in")).Reap(); n != 1 {
		t.Fatalf("reap = %d", n)
	}
	if err := c2.MoveTo(failed); !errors.Is(err, ErrLost) {
		t.Errorf("MoveTo after take-back = %v, want ErrLost", err)
	}
	if names, _ := in.Tokens(); fmt.Sprint(names) != "[j2]" {
		t.Errorf("in after = %v", names)
	}
}
