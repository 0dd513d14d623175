package place

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Holding is what one owner holds in a place, as Claims reports it: for a
// person (tpipe status) and for a worker deciding whether work is still in
// flight.
type Holding struct {
	Owner Owner
	// Tokens are the names of the tokens the owner has claimed, sorted.
	Tokens []string
	// Locks is how many locks the owner holds.
	Locks int
	// Renewed is when the owner last renewed its lease here.
	Renewed time.Time
	// Alive is the owner's state as Reap judges it: false means its
	// claims go back at the next Reap.
	Alive bool
	// Taker is set while a dead owner's claims are being given back by
	// Taker (the .claim/TAKER~OWNER directory of the package doc).
	Taker *Owner
}

// Claims lists the owners that hold claims or locks in the place, this
// worker included, in the order of their directories' names. A directory
// that is not the protocol's is left out.
func (p *Place) Claims() ([]Holding, error) {
	claims := filepath.Join(p.dir, claimDir)
	ents, err := sortedDir(claims)
	if err != nil {
		return nil, err
	}
	var out []Holding
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		h, ok := p.holding(claims, e)
		if ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// holding reads one claim directory; ok is false when it is not the
// protocol's or went away meanwhile.
func (p *Place) holding(claims string, e fs.DirEntry) (Holding, bool) {
	name := e.Name()
	var h Holding
	if i := len(tmpOwner(name)); i < len(name) {
		taker, err1 := ParseOwner(name[:i])
		owner, err2 := ParseOwner(name[i+1:])
		if err1 != nil || err2 != nil {
			return h, false
		}
		h.Owner, h.Taker = owner, &taker
	} else {
		owner, err := ParseOwner(name)
		if err != nil {
			return h, false
		}
		h.Owner = owner
	}
	fi, err := e.Info()
	if err != nil {
		return h, false
	}
	h.Renewed = fi.ModTime()
	if h.Taker != nil {
		// A give-back in progress is the taker's: alive while it is.
		h.Alive = p.w.alive(*h.Taker, h.Renewed)
	} else {
		h.Alive = p.w.alive(h.Owner, h.Renewed)
	}
	dir := filepath.Join(claims, name)
	ents, err := sortedDir(dir)
	if err != nil {
		return h, false
	}
	for _, t := range ents {
		switch {
		case t.Name() == locksDir:
			locks, _ := sortedDir(filepath.Join(dir, locksDir))
			h.Locks = len(locks)
		case t.Type().IsRegular() && ValidName(t.Name()) == nil:
			h.Tokens = append(h.Tokens, t.Name())
		}
	}
	return h, true
}

// Writing returns how many tokens are being written into the place by
// owners that are alive (files in .tmp, see Create): work in flight that
// no claim shows, as under AtMostOnce between the input's removal and the
// output's commit.
func (p *Place) Writing() (int, error) {
	ents, err := sortedDir(filepath.Join(p.dir, tmpDir))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		owner, err := ParseOwner(tmpOwner(e.Name()))
		if err != nil {
			continue
		}
		if owner.Host != p.w.me.Host {
			// As reapTmp judges it: another host's file is live while it
			// grows within a lease.
			fi, err := e.Info()
			if err == nil && p.w.o.Now().Sub(fi.ModTime()) <= p.w.o.Lease {
				n++
			}
			continue
		}
		if p.w.Alive(p, owner) {
			n++
		}
	}
	return n, nil
}

// MoveTo moves the claimed token into place q as a ready token of the same
// name (a job that keeps failing goes to a place of failures), replacing a
// token of that name there. It returns ErrLost if the token was taken
// back. q must be on the same file system.
func (c *Claim) MoveTo(q *Place) error {
	defer c.forget()
	err := os.Rename(c.Path(), q.path(c.name))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(c.Path()); errors.Is(serr, fs.ErrNotExist) {
			return ErrLost
		}
	}
	if err != nil {
		return err
	}
	if !q.w.o.NoSync {
		return syncDir(q.dir)
	}
	return nil
}
