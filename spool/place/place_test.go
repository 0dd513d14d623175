package place

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestValidName(t *testing.T) {
	long := strings.Repeat("a", MaxName)
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"00000001.abcdef", true},
		{"job-1_x.mp4", true},
		{"a~b", true},
		{"été", true},
		{long, true},
		{long + "a", false},
		{"", false},
		{".", false},
		{"..", false},
		{"a..b", false},
		{"../x", false},
		{"a/b", false},
		{"/abs", false},
		{"-rf", false},
		{".hidden", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x1b[31m", false},
		{"a\x7f", false},
		{"a\u0085b", false}, // a C1 control
		{"\xff\xfe", false},
	} {
		err := ValidName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadName) {
			t.Errorf("ValidName(%q) = %v, not ErrBadName", tc.name, err)
		}
	}
}

func TestOwnerString(t *testing.T) {
	for _, o := range []Owner{
		{Host: "h", Boot: "0", PID: 1, Start: 0},
		{Host: "build.example.com", Boot: "1a2b3c4d", PID: 4242, Start: 123456789},
	} {
		got, err := ParseOwner(o.String())
		if err != nil || got != o {
			t.Errorf("ParseOwner(%q) = %+v, %v; want %+v", o.String(), got, err, o)
		}
	}
	for _, s := range []string{"", "h.0.1", "h.0.x.1", "h.0.1.x", "h.0.0.2", ".0.1.2", "h~x.0.1.2", "h.0.-3.4"} {
		if _, err := ParseOwner(s); err == nil {
			t.Errorf("ParseOwner(%q) accepted", s)
		}
	}
}

func TestSelf(t *testing.T) {
	me, err := self("")
	if err != nil {
		t.Fatal(err)
	}
	if me.PID != os.Getpid() || me.Start == 0 || me.Boot == "0" {
		t.Errorf("self = %+v: want this pid, a start time and a boot id", me)
	}
	if alive, known := sameProcess(me, me); !alive || !known {
		t.Errorf("sameProcess(self) = %v, %v", alive, known)
	}
	reused := me
	reused.Start++ // the same pid, a later process
	if alive, known := sameProcess(reused, me); alive || !known {
		t.Errorf("sameProcess(pid reused) = %v, %v; want dead", alive, known)
	}
	other := me
	other.Boot = "ffffffff"
	if alive, _ := sameProcess(other, me); alive {
		t.Error("an owner of an earlier boot is alive")
	}
	for _, h := range []string{"a/b", "x~y", "..", "-h", "a\nb", ""} {
		if c := cleanHost(h); checkHost(c) != nil {
			t.Errorf("cleanHost(%q) = %q, refused: %v", h, c, checkHost(c))
		}
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"
	if n, ok := parseStat([]byte(line)); !ok || n != 987654 {
		t.Errorf("parseStat = %d, %v; want 987654", n, ok)
	}
	if _, ok := parseStat([]byte("4242 (x) S 1")); ok {
		t.Error("parseStat of a short line succeeded")
	}
	// A zombie (killed, not yet reaped) holds nothing: start 0.
	zombie := strings.Replace(line, ") S ", ") Z ", 1)
	if n, ok := parseStat([]byte(zombie)); !ok || n != 0 {
		t.Errorf("parseStat of a zombie = %d, %v; want 0", n, ok)
	}
}

// clock is a clock for tests, safe for concurrent use.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// worker returns a Worker on host, on clock c, renewed only by hand; it is
// closed at the end of the test.
func worker(t *testing.T, host string, c *clock) *Worker {
	t.Helper()
	o := Options{Host: host, Lease: time.Minute, Heartbeat: -1, NoSync: true}
	if c != nil {
		o.Now = c.now
	}
	w, err := NewWorker(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func open(t *testing.T, w *Worker, dir string) *Place {
	t.Helper()
	p, err := w.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func put(t *testing.T, p *Place, name, text string) {
	t.Helper()
	if err := p.Put(name, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
		t.Fatal(err)
	}
}

// text is the content of an opened token, or the error.
func text(f *os.File, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// entries lists a directory of the place ("" for the place itself).
func entries(t *testing.T, p *Place, sub string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(p.Dir(), sub))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestPutTokens(t *testing.T) {
	w := worker(t, "", nil)
	p := open(t, w, filepath.Join(t.TempDir(), "a", "F1"))
	put(t, p, "2", "two")
	put(t, p, "1", "one")
	put(t, p, "1", "uno") // a redo replaces
	names, err := p.Tokens()
	if err != nil || fmt.Sprint(names) != "[1 2]" {
		t.Fatalf("Tokens = %v, %v", names, err)
	}
	if got := text(p.Open("1")); got != "uno" {
		t.Errorf("token 1 = %q", got)
	}
	if has, _ := p.Has("2"); !has {
		t.Error("Has(2) = false")
	}
	if err := p.Remove("2"); err != nil {
		t.Fatal(err)
	}
	if has, _ := p.Has("2"); has {
		t.Error("Has(2) after Remove")
	}
	if err := p.Remove("2"); err != nil {
		t.Errorf("Remove of a token not there: %v", err)
	}
	pend, err := p.Create("3")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(pend, "half")
	if has, _ := p.Has("3"); has {
		t.Error("a pending token is visible")
	}
	if err := pend.Abort(); err != nil {
		t.Fatal(err)
	}
	if e := entries(t, p, tmpDir); len(e) != 0 {
		t.Errorf(".tmp after commit and abort: %v", e)
	}
	if _, err := p.Create("../x"); !errors.Is(err, ErrBadName) {
		t.Errorf("Create(../x) = %v", err)
	}
	if _, err := w.Open(filepath.Join(t.TempDir(), "-x")); !errors.Is(err, ErrBadName) {
		t.Errorf("Open of a place named -x = %v", err)
	}
}

// A token may be read as soon as it is written, before Commit, and the
// reader keeps its file through the rename; CommitNoDirSync and SyncDir
// make it ready as Commit does, in two steps. (A worker that syncs starts
// the writeback of each MiB as it is written: 3 of them here.)
func TestReadBeforeCommit(t *testing.T) {
	for _, noSync := range []bool{true, false} {
		w, err := NewWorker(Options{Heartbeat: -1, NoSync: noSync})
		if err != nil {
			t.Fatal(err)
		}
		p := open(t, w, filepath.Join(t.TempDir(), "F1"))
		pend, err := p.Create("x")
		if err != nil {
			t.Fatal(err)
		}
		body := "early"
		if !noSync {
			body += strings.Repeat("x", 3*writebackEvery+1)
		}
		for i := 0; i < len(body); i += 100000 {
			if _, err := io.WriteString(pend, body[i:min(len(body), i+100000)]); err != nil {
				t.Fatal(err)
			}
		}
		f, err := pend.OpenWritten()
		if err != nil {
			t.Fatal(err)
		}
		if err := pend.Rename("y"); err != nil {
			t.Fatal(err)
		}
		if err := pend.CommitNoDirSync(); err != nil {
			t.Fatal(err)
		}
		if got := text(f, nil); got != body {
			t.Errorf("read through the rename: %d bytes, want %d", len(got), len(body))
		}
		if err := p.SyncDir(); err != nil {
			t.Fatal(err)
		}
		if got := text(p.Open("y")); got != body {
			t.Errorf("token y: %d bytes, want %d", len(got), len(body))
		}
		if _, err := pend.OpenWritten(); err == nil {
			t.Error("OpenWritten after commit")
		}
		if err := pend.Rename("../z"); !errors.Is(err, ErrBadName) {
			t.Errorf("Rename(../z) = %v", err)
		}
		if e := entries(t, p, tmpDir); len(e) != 0 {
			t.Errorf(".tmp after the commit: %v", e)
		}
		w.Close()
	}
}

func TestPermissions(t *testing.T) {
	w := worker(t, "", nil)
	dir := filepath.Join(t.TempDir(), "spool", "F1")
	p := open(t, w, dir)
	put(t, p, "t", "x")
	if _, err := p.Claim("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Lock("u"); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(filepath.Dir(dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNoSymlinkFollowed(t *testing.T) {
	w := worker(t, "", nil)
	root := t.TempDir()
	target := filepath.Join(root, "target")
	os.Mkdir(target, 0o700)
	os.WriteFile(filepath.Join(root, "secret"), []byte("secret"), 0o600)
	if err := os.Symlink(target, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Open(filepath.Join(root, "link")); err == nil {
		t.Error("a place that is a symbolic link was opened")
	}
	p := open(t, w, filepath.Join(root, "F1"))
	if err := os.Symlink(filepath.Join(root, "secret"), filepath.Join(p.Dir(), "evil")); err != nil {
		t.Fatal(err)
	}
	syscall.Mkfifo(filepath.Join(p.Dir(), "fifo"), 0o600)
	put(t, p, "good", "g")
	if names, _ := p.Tokens(); fmt.Sprint(names) != "[good]" {
		t.Errorf("Tokens = %v: a link or a fifo listed", names)
	}
	if _, err := p.Open("evil"); err == nil {
		t.Error("Open followed a link")
	}
	if _, err := p.Open("fifo"); err == nil {
		t.Error("Open opened a fifo")
	}
	if _, err := p.Claim("evil"); err == nil {
		t.Error("Claim took a link")
	}
	// A link planted where the place keeps its temporary files.
	os.RemoveAll(filepath.Join(p.Dir(), tmpDir))
	os.Symlink(target, filepath.Join(p.Dir(), tmpDir))
	other := open(t, worker(t, "other", nil), p.Dir())
	if err := other.Put("x", func(w io.Writer) error { return nil }); err == nil {
		t.Error("a token was written through a .tmp that is a link")
	}
	// And where it keeps its claims.
	os.RemoveAll(filepath.Join(p.Dir(), claimDir))
	os.Symlink(target, filepath.Join(p.Dir(), claimDir))
	if _, err := other.Claim("good"); err == nil {
		t.Error("a token was claimed into a .claim that is a link")
	}
}

func TestClaimDoneRelease(t *testing.T) {
	w := worker(t, "", nil)
	p := open(t, w, filepath.Join(t.TempDir(), "in"))
	put(t, p, "a", "A")
	put(t, p, "b", "B")
	c, err := p.Claim("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Claim("a"); !errors.Is(err, ErrClaimed) {
		t.Errorf("second claim = %v, want ErrClaimed", err)
	}
	if got := text(c.Open()); got != "A" {
		t.Errorf("claimed token = %q", got)
	}
	if names, _ := p.Tokens(); fmt.Sprint(names) != "[b]" {
		t.Errorf("ready after claim = %v", names)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if names, _ := p.Tokens(); fmt.Sprint(names) != "[a b]" {
		t.Errorf("ready after release = %v", names)
	}
	c, _ = p.Claim("b")
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); !errors.Is(err, ErrLost) {
		t.Errorf("Done twice = %v, want ErrLost", err)
	}
	if names, _ := p.Tokens(); fmt.Sprint(names) != "[a]" {
		t.Errorf("ready after done = %v", names)
	}
	// Closing the worker gives back what it holds.
	if _, err := p.Claim("a"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if names, _ := p.Tokens(); fmt.Sprint(names) != "[a]" {
		t.Errorf("ready after Close = %v", names)
	}
	if _, err := os.Lstat(filepath.Join(p.Dir(), claimDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".claim after Close: %v, want it removed", err)
	}
}

func TestComplete(t *testing.T) {
	w := worker(t, "", nil)
	dir := t.TempDir()
	in, out := open(t, w, filepath.Join(dir, "in")), open(t, w, filepath.Join(dir, "out"))
	for _, d := range []Delivery{AtLeastOnce, AtMostOnce} {
		put(t, in, "x", "x")
		c, _ := in.Claim("x")
		var inputThere bool
		err := c.Complete(d, func() error {
			_, err := os.Lstat(c.Path())
			inputThere = err == nil
			return errors.New("disk full")
		})
		if err == nil {
			t.Fatalf("%v: a failed commit completed", d)
		}
		has, _ := in.Has("x")
		switch d {
		case AtLeastOnce:
			if !inputThere || !has {
				t.Errorf("%v: input there during commit %v, ready after failure %v; want both", d, inputThere, has)
			}
		case AtMostOnce:
			if inputThere || has {
				t.Errorf("%v: input there during commit %v, ready after failure %v; want neither", d, inputThere, has)
			}
		}
		in.Remove("x")
	}
	put(t, in, "y", "y")
	c, _ := in.Claim("y")
	if err := c.Complete(AtLeastOnce, func() error { put(t, out, "y", "Y"); return nil }); err != nil {
		t.Fatal(err)
	}
	if names, _ := in.Tokens(); len(names) != 0 {
		t.Errorf("input left: %v", names)
	}
	if got := text(out.Open("y")); got != "Y" {
		t.Errorf("output = %q", got)
	}
}

// TestLease plays two hosts on one folder with one clock: host b takes
// back host a's claims and locks only once a's lease has run out.
func TestLease(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "in")
	a, b := worker(t, "a", c), worker(t, "b", c)
	pa, pb := open(t, a, dir), open(t, b, dir)
	put(t, pa, "tok", "t")
	claim, err := pa.Claim("tok")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := pa.Lock("unit")
	if err != nil {
		t.Fatal(err)
	}
	a.Renew()
	c.advance(50 * time.Second)
	if n, err := pb.Reap(); n != 0 || err != nil {
		t.Fatalf("Reap within the lease = %d, %v", n, err)
	}
	var le *LockedError
	if _, err := pb.Lock("unit"); !errors.As(err, &le) || le.Owner != a.Owner() {
		t.Fatalf("Lock held by a live owner = %v", err)
	}
	a.Renew() // a renews: its lease starts again
	c.advance(50 * time.Second)
	if n, _ := pb.Reap(); n != 0 {
		t.Fatal("a renewed lease was taken back")
	}
	c.advance(11 * time.Second) // 61s since the renewal
	if n, err := pb.Reap(); n != 1 || err != nil {
		t.Fatalf("Reap after the lease = %d, %v; want 1 token back", n, err)
	}
	if names, _ := pb.Tokens(); fmt.Sprint(names) != "[tok]" {
		t.Errorf("ready after reap = %v", names)
	}
	l2, err := pb.Lock("unit")
	if err != nil {
		t.Fatalf("Lock after a's lease ran out: %v", err)
	}
	if err := claim.Done(); !errors.Is(err, ErrLost) {
		t.Errorf("a's Done after take-back = %v, want ErrLost", err)
	}
	if err := lock.Unlock(); !errors.Is(err, ErrLost) {
		t.Errorf("a's Unlock after take-back = %v, want ErrLost", err)
	}
	if !l2.ours() {
		t.Error("a's late Unlock removed b's lock")
	}
	if err := l2.Unlock(); err != nil {
		t.Fatal(err)
	}
	if e := entries(t, pb, lockDir); len(e) != 0 {
		t.Errorf(".lock after unlock: %v", e)
	}
}

// TestRaceGoroutines: many goroutines of two workers (two hosts) move 300
// tokens from one place to another; every token is claimed by exactly one
// of them and delivered once.
func TestRaceGoroutines(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	ws := []*Worker{worker(t, "a", nil), worker(t, "b", nil)}
	src := open(t, ws[0], filepath.Join(dir, "in"))
	for i := range n {
		put(t, src, fmt.Sprintf("%04d", i), fmt.Sprint(i))
	}
	var mu sync.Mutex
	claimedBy := map[string]int{}
	var wg sync.WaitGroup
	for g := range 8 {
		w := ws[g%2]
		in, out := open(t, w, filepath.Join(dir, "in")), open(t, w, filepath.Join(dir, "out"))
		wg.Go(func() {
			for {
				names, err := in.Tokens()
				if err != nil {
					t.Error(err)
					return
				}
				if len(names) == 0 {
					return
				}
				for _, name := range names {
					c, err := in.Claim(name)
					if errors.Is(err, ErrClaimed) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					claimedBy[name]++
					mu.Unlock()
					body := text(c.Open())
					err = c.Complete(AtLeastOnce, func() error {
						return out.Put(name, func(w io.Writer) error { _, err := io.WriteString(w, body+"!"); return err })
					})
					if err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		name := fmt.Sprintf("%04d", i)
		if claimedBy[name] != 1 {
			t.Errorf("%s claimed %d times", name, claimedBy[name])
		}
	}
	out := open(t, ws[0], filepath.Join(dir, "out"))
	if names, _ := out.Tokens(); len(names) != n {
		t.Errorf("%d outputs, want %d", len(names), n)
	}
	if got := text(out.Open("0042")); got != "42!" {
		t.Errorf("output 0042 = %q", got)
	}
}

// TestLockRace: goroutines of three hosts race for one lock, again and
// again, after its holder died; exactly one wins each round.
func TestLockRace(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "p")
	for round := range 20 {
		dead := worker(t, fmt.Sprintf("dead%d", round), c)
		if _, err := open(t, dead, dir).Lock("unit"); err != nil {
			t.Fatal(err)
		}
		c.advance(2 * time.Minute)
		var wins atomic.Int32
		var winner *Lock
		var wg sync.WaitGroup
		for i := range 3 {
			p := open(t, worker(t, fmt.Sprintf("h%d-%d", round, i), c), dir)
			wg.Go(func() {
				l, err := p.Lock("unit")
				if err == nil {
					wins.Add(1)
					winner = l
				} else if !errors.Is(err, ErrLocked) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, wins.Load())
		}
		if err := winner.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenAtOnce opens places from several goroutines, each place more
// than once: every Open of a dir returns the one *Place, which makes
// nothing inside it yet, and Open after Close is ErrClosed.
func TestOpenAtOnce(t *testing.T) {
	w := worker(t, "h", nil)
	root := t.TempDir()
	const places, each = 6, 4
	got := make([][]*Place, places)
	for i := range got {
		got[i] = make([]*Place, each)
	}
	var wg sync.WaitGroup
	for i := range places {
		for j := range each {
			wg.Go(func() {
				p, err := w.Open(filepath.Join(root, fmt.Sprintf("p%d", i)))
				if err != nil {
					t.Error(err)
				}
				got[i][j] = p
			})
		}
	}
	wg.Wait()
	for i, ps := range got {
		for _, p := range ps {
			if p == nil || p != ps[0] {
				t.Fatalf("place %d: Open returned %p and %p", i, ps[0], p)
			}
		}
		if e := entries(t, ps[0], ""); len(e) != 0 {
			t.Fatalf("place %d: Open made %v; the protocol's entries are made when first needed", i, e)
		}
	}
	w.Close()
	if _, err := w.Open(filepath.Join(root, "late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Open after Close: %v, want ErrClosed", err)
	}
}

func TestReapTmp(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "p")
	a, b := worker(t, "a", c), worker(t, "b", c)
	pa, pb := open(t, a, dir), open(t, b, dir)
	pend, err := pa.Create("x")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(pend, "partial")
	now := c.now()
	os.Chtimes(pend.File().Name(), now, now)
	pb.Reap()
	if e := entries(t, pb, tmpDir); len(e) != 1 {
		t.Fatalf("a live writer's file was removed: %v", e)
	}
	c.advance(2 * time.Minute)
	pb.Reap()
	if e := entries(t, pb, tmpDir); len(e) != 0 {
		t.Errorf("a dead writer's file was kept: %v", e)
	}
	if err := pend.Commit(); err == nil {
		t.Error("a commit of a reaped file succeeded")
	}
}

func TestWatch(t *testing.T) {
	for _, o := range []WatchOptions{{}, {NoEvents: true, Poll: time.Millisecond, MaxPoll: 20 * time.Millisecond}} {
		t.Run(fmt.Sprintf("events=%v", !o.NoEvents), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			dir := t.TempDir()
			wt, err := Watch(ctx, dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer wt.Close()
			if wt.Events == o.NoEvents {
				t.Errorf("Events = %v", wt.Events)
			}
			for i := range 3 {
				os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o600)
				select {
				case <-wt.C:
				case <-ctx.Done():
					t.Fatalf("no signal after file %d was made", i)
				}
				// Drain what the same change may have sent again.
				for len(wt.C) > 0 {
					<-wt.C
				}
			}
		})
	}
	t.Run("rescan", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		wt, err := Watch(ctx, t.TempDir(), WatchOptions{Rescan: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer wt.Close()
		for range 2 {
			select {
			case <-wt.C:
			case <-ctx.Done():
				t.Fatal("no rescan signal")
			}
		}
	})
}

// TestReapLeavesLiveTakeBack: a take-back in progress (TAKER~DEAD) keeps
// the dead owner's folder and its time; another worker judges the taker
// by its own claims folder and leaves a live taker's take-back alone
// (taking it over let two workers drop one dead owner's lock, and the
// lock have two winners: TestLockRace, about once in 300 runs under load).
func TestReapLeavesLiveTakeBack(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "p")
	dead := worker(t, "dead", c)
	if _, err := open(t, dead, dir).Lock("unit"); err != nil {
		t.Fatal(err)
	}
	c.advance(2 * time.Minute)
	a := open(t, worker(t, "ha", c), dir)
	if _, err := a.ownDir(); err != nil {
		t.Fatal(err)
	}
	claims := filepath.Join(dir, claimDir)
	taken := filepath.Join(claims, a.w.name+"~"+dead.name)
	if err := os.Rename(filepath.Join(claims, dead.name), taken); err != nil {
		t.Fatal(err)
	}
	b := open(t, worker(t, "hb", c), dir)
	if _, err := b.Reap(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(taken); err != nil {
		t.Fatalf("a live taker's take-back was taken over: %v", err)
	}
}
