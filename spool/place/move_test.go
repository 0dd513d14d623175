package place

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

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
