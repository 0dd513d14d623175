package merge

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/tpipe/tpipe/spool/place"
)

// Take says how a worker holds the files of a set while it works.
type Take uint8

const (
	// TakeClaim moves each file into the worker's claim directory: the
	// command finds it at Held.Paths, and no listing shows it any more.
	TakeClaim Take = iota
	// TakeLock leaves each file where it is and takes a lock on its name
	// (place.Lock): for commands that name their inputs by their own
	// paths, as pmjq 1.0's templates do.
	TakeLock
)

// errLost is a set another worker took (part of it) first: a lost race,
// not a failure.
var errLost = errors.New("merge: set taken by another worker")

// Held is a set a worker holds. It belongs to the goroutine that took it.
type Held struct {
	Set
	// Paths are where the command finds the files while they are held.
	Paths  []string
	places []*place.Place
	claims []*place.Claim
	locks  []*place.Lock
}

// take takes every file of s (places[i] holds s.Names[i]), or none: when
// one is lost, those already taken are given back and the error is
// errLost.
func take(how Take, places []*place.Place, s Set) (*Held, error) {
	h := &Held{Set: s, places: places, Paths: make([]string, len(s.Names))}
	for i, name := range s.Names {
		var err error
		switch how {
		case TakeClaim:
			var c *place.Claim
			if c, err = places[i].Claim(name); err == nil {
				h.claims = append(h.claims, c)
				h.Paths[i] = c.Path()
			}
		case TakeLock:
			var l *place.Lock
			if l, err = places[i].Lock(name); err == nil {
				h.locks = append(h.locks, l)
				h.Paths[i] = filepath.Join(places[i].Dir(), name)
				// The file may have been consumed between the listing
				// and the lock (pmjq's bug 10): a lock on nothing is lost.
				if ok, herr := places[i].Has(name); herr != nil || !ok {
					err = place.ErrClaimed
				}
			}
		}
		if err != nil {
			h.release()
			if errors.Is(err, place.ErrClaimed) || errors.Is(err, place.ErrLocked) {
				return nil, errLost
			}
			return nil, err
		}
	}
	return h, nil
}

// release gives every file back, ready for any worker.
func (h *Held) release() error {
	var first error
	for _, c := range h.claims {
		if err := c.Release(); err != nil && !errors.Is(err, place.ErrLost) && first == nil {
			first = err
		}
	}
	h.unlock(&first)
	return first
}

func (h *Held) unlock(first *error) {
	for _, l := range h.locks {
		if err := l.Unlock(); err != nil && !errors.Is(err, place.ErrLost) && *first == nil {
			*first = err
		}
	}
}

// consume removes the held files: the set's work is delivered. A file
// taken back meanwhile is place.ErrLost.
func (h *Held) consume() error {
	var first error
	for _, c := range h.claims {
		if err := c.Done(); err != nil && first == nil {
			first = err
		}
	}
	if len(h.locks) > 0 {
		for i, name := range h.Names {
			if err := h.places[i].Remove(name); err != nil && first == nil {
				first = err
			}
		}
	}
	h.unlock(&first)
	return first
}

// moveTo moves each held file to dests[i] (a failed job's files to the
// error places), creating the folders 0700, and lets go of the set. A
// file that cannot be moved goes back to ready, to be seen again.
func (h *Held) moveTo(dests []string) error {
	var first error
	moved := make([]bool, len(dests))
	for i, dst := range dests {
		err := os.MkdirAll(filepath.Dir(dst), 0o700)
		if err == nil {
			err = os.Rename(h.Paths[i], dst)
		}
		if err != nil && first == nil {
			first = err
		}
		moved[i] = err == nil
	}
	for i, c := range h.claims {
		var err error
		if moved[i] {
			// Moved out of the claim directory: Done finds nothing,
			// which is what it should find.
			if err = c.Done(); errors.Is(err, place.ErrLost) {
				err = nil
			}
		} else {
			err = c.Release()
		}
		if err != nil && first == nil {
			first = err
		}
	}
	h.unlock(&first)
	return first
}
