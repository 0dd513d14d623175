package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// Folders are places as folders shared by workers, on package place:
// tokens are files, a take is a rename into the worker's claims (or a
// lock by link), a commit syncs files, renames them into place and syncs
// each folder once. An intake is judged by place.Intake.
type Folders struct {
	w *place.Worker

	mu sync.Mutex
	m  map[*place.Place]*folder // each place opened, as one Place
}

var (
	_ Places  = (*Folders)(nil)
	_ Place   = (*folder)(nil)
	_ Token   = (*folderToken)(nil)
	_ Pending = (*folderPending)(nil)
)

// NewFolders returns the folders opened by w, the claims' owner. The
// caller closes w.
func NewFolders(w *place.Worker) *Folders {
	return &Folders{w: w, m: map[*place.Place]*folder{}}
}

// Open opens the folder at addr as a place, creating it when missing.
func (f *Folders) Open(addr string) (Place, error) {
	p, err := f.w.Open(addr)
	if err != nil {
		return nil, err
	}
	return f.wrap(p), nil
}

// wrap returns the one *folder of p: a place opened twice (the output of
// one stage that is the input of the next) is one Place, comparable as a
// map key.
func (f *Folders) wrap(p *place.Place) *folder {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fo := f.m[p]; fo != nil {
		return fo
	}
	fo := &folder{p: p}
	f.m[p] = fo
	return fo
}

// Owner is the worker's owner string.
func (f *Folders) Owner() string { return f.w.Owner().String() }

// Lease is the worker's lease.
func (f *Folders) Lease() time.Duration { return f.w.Lease() }

// Commit syncs the tokens' files together, renames each into its place
// and syncs each place's folder once (see commit.go).
func (f *Folders) Commit(ts []Pending, trace func(op, path string)) error {
	ps := make([]*place.Pending, len(ts))
	for i, t := range ts {
		ps[i] = t.(*folderPending).t
	}
	if err := place.SyncAll(ps); err != nil {
		return err
	}
	if trace != nil {
		for _, t := range ps {
			trace("sync", pendingPath(t))
		}
	}
	var dirs []*place.Place
	seen := map[*place.Place]bool{}
	for _, t := range ps {
		if err := t.CommitNoDirSync(); err != nil {
			return err
		}
		if trace != nil {
			trace("rename", pendingPath(t))
		}
		if p := t.Place(); !seen[p] {
			seen[p] = true
			dirs = append(dirs, p)
		}
	}
	for _, p := range dirs {
		if err := p.SyncDir(); err != nil {
			return err
		}
		if trace != nil {
			trace("syncdir", p.Dir())
		}
	}
	return nil
}

// pendingPath is where the pending token t goes at its commit.
func pendingPath(t *place.Pending) string { return filepath.Join(t.Place().Dir(), t.Name()) }

// folder is a place.Place, with its intake when it is one.
type folder struct {
	p *place.Place

	mu    sync.Mutex
	in    *place.Intake // an intake's judge, from Watch
	watch *place.Watcher
}

func (fo *folder) Addr() string { return fo.p.Dir() }

func (fo *folder) intake() *place.Intake {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	return fo.in
}

// Watch watches the folder: by inotify or polling, and as an intake
// (place.WatchIntake) when c says so.
func (fo *folder) Watch(ctx context.Context, c WatchConfig) (<-chan struct{}, error) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if c.Intake {
		in, err := place.WatchIntake(ctx, fo.p.Dir(), place.IntakeOptions{Settle: c.Settle, Watch: c.Watch})
		if err != nil {
			return nil, err
		}
		fo.in = in
		return in.C, nil
	}
	w, err := place.Watch(ctx, fo.p.Dir(), c.Watch)
	if err != nil {
		return nil, err
	}
	fo.watch = w
	return w.C, nil
}

// Close stops the folder's watch.
func (fo *folder) Close() error {
	fo.mu.Lock()
	in, w := fo.in, fo.watch
	fo.in, fo.watch = nil, nil
	fo.mu.Unlock()
	var err error
	if in != nil {
		err = in.Close()
	}
	if w != nil {
		err = errors.Join(err, w.Close())
	}
	return err
}

// List lists the folder's tokens; an intake's only once complete.
func (fo *folder) List() (Listing, error) {
	in := fo.intake()
	if in == nil {
		names, err := fo.p.Tokens()
		return Listing{Ready: names}, err
	}
	names, refused, err := fo.p.Listing()
	if err != nil {
		return Listing{}, err
	}
	l := Listing{Refused: refused}
	for _, n := range names {
		if place.Partial(n) {
			l.Refused = append(l.Refused, place.Refusal{Name: n, Reason: "a name writers give a file they are still writing (#x#, or ending in " + place.PartialNames() + ")"})
		}
	}
	l.Ready, l.Waiting, l.Next = in.Ready(names)
	return l, nil
}

// Take claims (or locks) the file name, and stamps it if it comes from
// an intake.
func (fo *folder) Take(name string, lock bool) (Token, error) {
	t := &folderToken{fo: fo, name: name, in: fo.intake()}
	var err error
	if lock {
		if t.lock, err = fo.p.Lock(name); err == nil {
			t.path = filepath.Join(fo.p.Dir(), name)
			// The token may have been consumed between the listing and
			// the lock (pmjq 1.0's bug 10): a lock on nothing is lost.
			if ok, herr := fo.p.Has(name); herr != nil || !ok {
				t.lock.Unlock()
				err = place.ErrClaimed
			}
		}
	} else if t.claim, err = fo.p.Claim(name); err == nil {
		t.path = t.claim.Path()
	}
	if err == nil && t.in != nil {
		if t.stamp, err = t.in.Stamp(t.path); errors.Is(err, fs.ErrNotExist) {
			err = place.ErrClaimed // (a lock on a file removed meanwhile)
		}
		if err != nil {
			t.Release()
		}
	}
	if errors.Is(err, place.ErrClaimed) || errors.Is(err, place.ErrLocked) {
		return nil, errLost
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (fo *folder) Create(name string) (Pending, error) {
	t, err := fo.p.Create(name)
	if err != nil {
		return nil, err
	}
	return &folderPending{t: t, fo: fo}, nil
}

func (fo *folder) Put(name string, write func(io.Writer) error) error { return fo.p.Put(name, write) }

func (fo *folder) Reap() (int, error) { return fo.p.Reap() }

// Busy: someone (alive, or dead and not yet taken back) has a token of
// the folder claimed or locked, or is writing one into it.
func (fo *folder) Busy() (bool, error) {
	m, err := place.Inspect(fo.p.Dir())
	if err != nil {
		return false, err
	}
	for _, h := range m.Holders {
		if len(h.Claims)+len(h.Locks) > 0 {
			return true, nil
		}
	}
	return m.Pending > 0, nil
}

// folderToken is a file a job holds: claimed, or locked where it is.
type folderToken struct {
	fo    *folder
	name  string
	path  string
	claim *place.Claim
	lock  *place.Lock
	in    *place.Intake // the intake it came from, or nil
	stamp place.Stamp   // its stamp when taken (intakes)
}

func (t *folderToken) Path() string { return t.path }

// Changed: see Token. On a network file system the look before removal
// is skipped: a stamp there opens the file, and FUSE's release of it,
// which comes after the close, would find it removed and keep it as a
// .fuse_hidden file in the claim folder; the look before the outputs'
// commit has been taken.
func (t *folderToken) Changed(last bool) bool {
	if t.in == nil || last && t.in.Remote() {
		return false
	}
	s, err := t.in.Stamp(t.path)
	return err != nil || s.Changed(t.stamp) || t.in.Open(t.path) == place.Writing
}

func (t *folderToken) Suspect() {
	if t.in != nil {
		t.in.Suspect(t.name)
	}
}

// Done removes the file: a claimed one may become a spare of the output
// folder spares (see place.Place.Recycle); a locked one is removed where
// it is, then unlocked.
func (t *folderToken) Done(spares Place) (lost bool, err error) {
	if t.claim != nil {
		var sp *place.Place
		if f, ok := spares.(*folder); ok {
			sp = f.p
		}
		err := t.claim.DoneInto(sp)
		if errors.Is(err, place.ErrLost) {
			return true, nil
		}
		return false, err
	}
	err = t.fo.p.Remove(t.name)
	uerr := t.lock.Unlock()
	if errors.Is(uerr, place.ErrLost) {
		return true, err
	}
	if err == nil {
		err = uerr
	}
	return false, err
}

func (t *folderToken) Release() error {
	var err error
	if t.claim != nil {
		err = t.claim.Release()
	} else {
		err = t.lock.Unlock()
	}
	if errors.Is(err, place.ErrLost) {
		return nil // taken back: it is back already
	}
	return err
}

func (t *folderToken) MoveTo(p Place) error {
	q, ok := p.(*folder)
	if !ok {
		return fmt.Errorf("move %s to %s: another backend", t.path, p.Addr())
	}
	if t.claim != nil {
		err := t.claim.MoveTo(q.p)
		if errors.Is(err, place.ErrLost) {
			return nil
		}
		return err
	}
	return t.MoveToPath(filepath.Join(q.p.Dir(), t.name))
}

// MoveToPath moves the file to path, creating its folder 0700, and lets
// go of it; when it cannot be moved it goes back to ready.
func (t *folderToken) MoveToPath(path string) error {
	err := os.MkdirAll(filepath.Dir(path), 0o700)
	if err == nil {
		err = os.Rename(t.path, path)
	}
	if err != nil {
		if rerr := t.Release(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	if t.claim != nil {
		// Moved out of the claim folder: Done finds nothing there, which
		// is what it should find.
		t.claim.Done()
		return nil
	}
	if uerr := t.lock.Unlock(); uerr != nil && !errors.Is(uerr, place.ErrLost) {
		return uerr
	}
	return nil
}

// folderPending is a place.Pending of a folder.
type folderPending struct {
	t  *place.Pending
	fo *folder
}

func (p *folderPending) Name() string   { return p.t.Name() }
func (p *folderPending) File() *os.File { return p.t.File() }

func (p *folderPending) Write(b []byte) (int, error) { return p.t.Write(b) }
func (p *folderPending) Place() Place                { return p.fo }
func (p *folderPending) Abort() error                { return p.t.Abort() }
