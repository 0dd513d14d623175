package place

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrClaimed is returned by Claim when the token is not ready: another
// worker claimed it first, or it is gone. It is a lost race, not a
// failure: look for another token.
var ErrClaimed = errors.New("place: token claimed by another worker or gone")

// ErrLost is returned by Claim.Done, Claim.Release and Lock.Unlock when
// what the worker held was taken back (its lease ran out while it worked):
// its work may be done again by the taker.
var ErrLost = errors.New("place: claim was taken back")

// ErrLocked is matched by the *LockedError of Lock.
var ErrLocked = errors.New("place: locked by another owner")

// LockedError is a lock held by a live owner.
type LockedError struct {
	Name  string
	Owner Owner
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is locked by pid %d on host %s", e.Name, e.Owner.PID, e.Owner.Host)
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Claim is a token a worker has taken from a place: it sits in the
// worker's claim directory until Done removes it or Release puts it back.
type Claim struct {
	p    *Place
	name string
}

// Claim takes the ready token name (see the package doc). It returns
// ErrClaimed when the token is not there to take.
func (p *Place) Claim(name string) (*Claim, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	own, err := p.ownDir()
	if err != nil {
		return nil, err
	}
	// The name is the worker's while it tries, so that no other
	// goroutine of the worker tries it at the same time.
	p.mu.Lock()
	busy := p.claims[name]
	p.claims[name] = true
	p.mu.Unlock()
	if busy {
		return nil, ErrClaimed
	}
	c := &Claim{p: p, name: name}
	if err := c.take(own); err != nil {
		c.forget()
		return nil, err
	}
	return c, nil
}

func (c *Claim) take(own string) error {
	from, to := c.p.path(c.name), filepath.Join(own, c.name)
	fi, err := os.Lstat(from)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrClaimed
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "claim", Path: from, Err: errors.New("not a regular file")}
	}
	if err := os.Rename(from, to); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Over NFS a rename whose reply was lost is sent again and then
		// fails; the token may be ours all the same.
		if _, serr := os.Lstat(to); serr != nil {
			return ErrClaimed
		}
	}
	return nil
}

// Name returns the token's name.
func (c *Claim) Name() string { return c.name }

// Path returns where the claimed token is while it is claimed.
func (c *Claim) Path() string { return filepath.Join(c.p.own, c.name) }

// Open opens the claimed token for reading.
func (c *Claim) Open() (*os.File, error) { return openFile(c.Path()) }

func (c *Claim) forget() {
	c.p.mu.Lock()
	delete(c.p.claims, c.name)
	c.p.mu.Unlock()
}

// Done removes the claimed token: its work is delivered. It returns
// ErrLost if the token was taken back.
func (c *Claim) Done() error {
	defer c.forget()
	err := os.Remove(c.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return ErrLost
	}
	return err
}

// DoneInto is Done that recycles the token's file as a spare of place q
// when it can (see Place.Recycle), instead of removing it.
func (c *Claim) DoneInto(q *Place) error {
	if q != nil && q.Recycle(c.Path()) {
		c.forget()
		return nil
	}
	return c.Done()
}

// Release puts the token back in the place, ready for any worker.
func (c *Claim) Release() error {
	defer c.forget()
	err := os.Rename(c.Path(), c.p.path(c.name))
	if errors.Is(err, fs.ErrNotExist) {
		return ErrLost
	}
	return err
}

// Delivery says in which order Claim.Complete commits a token's outputs
// and removes the token.
type Delivery uint8

const (
	// AtLeastOnce commits the outputs, then removes the input: a crash in
	// between leaves both, and the work is done again (pmjq's default).
	AtLeastOnce Delivery = iota
	// AtMostOnce removes the input, then commits the outputs: a crash in
	// between loses the work, never repeats it.
	AtMostOnce
)

func (d Delivery) String() string {
	if d == AtMostOnce {
		return "at-most-once"
	}
	return "at-least-once"
}

// Complete delivers the claimed token: commit (which commits the outputs,
// Pending.Commit) and Done, in the order d says. When commit fails under
// AtLeastOnce the token is released for another try; under AtMostOnce it
// is already gone.
func (c *Claim) Complete(d Delivery, commit func() error) error {
	if d == AtMostOnce {
		if err := c.Done(); err != nil {
			return err
		}
		return commit()
	}
	if err := commit(); err != nil {
		if rerr := c.Release(); rerr != nil && !errors.Is(rerr, ErrLost) {
			return errors.Join(err, rerr)
		}
		return err
	}
	return c.Done()
}

// Lock is an exclusive hold on a name in a place, for work whose input
// tokens are not consumed (a cache). Unlock drops it.
type Lock struct {
	p      *Place
	name   string
	marker string
}

// Lock takes the lock on name (see the package doc). A lock held by a
// live owner is a *LockedError (matching ErrLocked); one held by a dead
// owner is taken back (Reap) and then taken.
func (p *Place) Lock(name string) (*Lock, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	own, err := p.ownDir()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	held := p.locks[name]
	p.locks[name] = true
	p.mu.Unlock()
	if held {
		return nil, &LockedError{Name: name, Owner: p.w.me}
	}
	l := &Lock{p: p, name: name, marker: filepath.Join(own, locksDir, name)}
	if err := l.take(); err != nil {
		os.Remove(l.marker)
		l.forget()
		return nil, err
	}
	return l, nil
}

func (l *Lock) path() string { return filepath.Join(l.p.dir, lockDir, l.name) }

func (l *Lock) forget() {
	l.p.mu.Lock()
	delete(l.p.locks, l.name)
	l.p.mu.Unlock()
}

func (l *Lock) take() error {
	f, err := os.OpenFile(l.marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(l.p.w.name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		err := l.p.inEntry(useLock, lockDir, func() error { return os.Link(l.marker, l.path()) })
		if err == nil || l.ours() {
			return nil // (ours: over NFS a link whose reply was lost fails when sent again)
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		owner, oerr := lockOwner(l.path())
		if errors.Is(oerr, fs.ErrNotExist) {
			continue // unlocked meanwhile
		}
		if oerr != nil {
			return oerr
		}
		if try >= 10 || l.p.w.Alive(l.p, owner) {
			return &LockedError{Name: l.name, Owner: owner}
		}
		// Its owner is dead: take it back, or let the worker that is
		// taking it back finish.
		if n, err := l.p.Reap(); err != nil {
			return err
		} else if n == 0 && try > 0 {
			time.Sleep(time.Duration(try) * time.Millisecond)
		}
	}
}

// ours reports whether the lock's path is the marker's file.
func (l *Lock) ours() bool {
	a, err1 := os.Lstat(l.marker)
	b, err2 := os.Lstat(l.path())
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// lockOwner reads the owner written in a lock.
func lockOwner(path string) (Owner, error) {
	f, err := openFile(path)
	if err != nil {
		return Owner{}, err
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := f.Read(b)
	return ParseOwner(string(b[:n]))
}

// Unlock drops the lock. It returns ErrLost if the lock was taken back.
func (l *Lock) Unlock() error {
	defer l.forget()
	ours := l.ours()
	var err error
	if ours {
		err = os.Remove(l.path())
	}
	if rerr := os.Remove(l.marker); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	if !ours && err == nil {
		err = ErrLost
	}
	return err
}

// Reap takes back what dead owners hold in the place (see the package
// doc): their claimed tokens go back to ready, their locks are dropped and
// their temporary files removed. It returns how many claimed tokens went
// back. Several workers may reap at once; each dead owner's claims are
// given back by one of them.
func (p *Place) Reap() (int, error) {
	claims := filepath.Join(p.dir, claimDir)
	ents, err := sortedDir(claims)
	if err != nil {
		return 0, err
	}
	back := 0
	var first error
	for _, e := range ents {
		if e.Name() == p.w.name || !e.IsDir() {
			continue
		}
		if strings.HasPrefix(e.Name(), p.w.name+"~") {
			// A take-back of ours that did not finish (its directory
			// was not empty when it was to be removed): finish it, or
			// its tokens would wait for ever under a live owner's name.
			n, err := p.giveBackDir(filepath.Join(claims, e.Name()))
			back += n
			if err != nil && first == nil {
				first = err
			}
			continue
		}
		owner, err := ParseOwner(tmpOwner(e.Name()))
		if err != nil {
			continue // not the protocol's: leave it alone
		}
		if strings.Contains(e.Name(), "~") {
			// Another worker's take-back (TAKER~DEAD): the folder's time is
			// the dead owner's, so the taker is judged by its own claims.
			// Taking over a live taker's would let two workers give back
			// one owner's claims and locks at once, and a lock dropped
			// twice can have two winners.
			if p.w.Alive(p, owner) {
				continue
			}
		} else if fi, err := e.Info(); err != nil || p.w.alive(owner, fi.ModTime()) {
			continue
		}
		// Our own claims folder shows that we live, to the workers that
		// see our take-back (above).
		if _, err := p.ownDir(); err != nil {
			return back, err
		}
		taken := filepath.Join(claims, p.w.name+"~"+e.Name())
		if err := os.Rename(filepath.Join(claims, e.Name()), taken); err != nil {
			continue // another taker was first
		}
		p.tidyLater(useClaim | useLock)
		n, err := p.giveBackDir(taken)
		back += n
		if err != nil && first == nil {
			first = err
		}
	}
	if err := p.reapTmp(); err != nil && first == nil {
		first = err
	}
	return back, first
}

// reapTmp removes the temporary files of dead owners.
func (p *Place) reapTmp() error {
	tmp := filepath.Join(p.dir, tmpDir)
	ents, err := sortedDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range ents {
		owner, err := ParseOwner(tmpOwner(e.Name()))
		if err != nil || p.w.Alive(p, owner) {
			continue
		}
		if owner.Host != p.w.me.Host {
			// Another host's writer may have no claim directory here: its
			// file is stale when it has not grown for a lease.
			fi, err := e.Info()
			if err != nil || p.w.o.Now().Sub(fi.ModTime()) <= p.w.o.Lease {
				continue
			}
		}
		os.Remove(filepath.Join(tmp, e.Name()))
		p.tidyLater(useTmp)
	}
	return nil
}

// tidyLater marks entries of the place that a dead owner left, and that
// this worker has cleaned, to be removed at Close once empty, as if this
// worker had made them.
func (p *Place) tidyLater(bits uint8) {
	p.mu.Lock()
	p.used |= bits
	p.mu.Unlock()
}

// giveBack gives back the claims and locks in the worker's own directory
// dir (at Close).
func (p *Place) giveBack(dir string) error {
	_, err := p.giveBackDir(dir)
	return err
}

// giveBackDir renames the tokens of a claim directory back to ready,
// drops its locks and removes it; it returns how many tokens went back.
func (p *Place) giveBackDir(dir string) (int, error) {
	n := 0
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	// A token can still come in after the listing (seen under load with
	// a worker killed); it is listed and given back on the next round.
	for round := 0; ; round++ {
		ents, err := sortedDir(dir)
		if err != nil {
			return n, err
		}
		for _, e := range ents {
			if e.Name() == locksDir {
				keep(p.dropLocks(filepath.Join(dir, locksDir)))
				continue
			}
			if ValidName(e.Name()) != nil {
				continue
			}
			err := os.Rename(filepath.Join(dir, e.Name()), p.path(e.Name()))
			if err == nil {
				n++
			}
			keep(err)
		}
		err = removeDir(dir)
		if err == nil || !errors.Is(err, syscall.ENOTEMPTY) || round == 2 {
			keep(err)
			return n, first
		}
	}
}

// removeDir removes the empty directory dir. On FUSE (sshfs) a file
// removed while the file system still counts it open (the release of a
// descriptor comes after its close, asynchronously) is kept as
// .fuse_hiddenNNN until that release: removeDir waits up to a second for
// such files to go.
func removeDir(dir string) error {
	err := os.Remove(dir)
	for try := 0; try < 100 && err != nil && onlyFuseHidden(dir); try++ {
		time.Sleep(10 * time.Millisecond)
		err = os.Remove(dir)
	}
	return err
}

// onlyFuseHidden reports whether dir holds entries, and all are FUSE's
// files kept until their release.
func onlyFuseHidden(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return false
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".fuse_hidden") {
			return false
		}
	}
	return true
}

// dropLocks removes the locks whose markers are in dir, each only if the
// lock is still the marker's file, and then the markers and dir.
func (p *Place) dropLocks(dir string) error {
	ents, err := sortedDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		marker := filepath.Join(dir, e.Name())
		lock := filepath.Join(p.dir, lockDir, e.Name())
		a, err1 := os.Lstat(marker)
		b, err2 := os.Lstat(lock)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			os.Remove(lock)
		}
		os.Remove(marker)
	}
	return os.Remove(dir)
}
