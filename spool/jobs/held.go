package jobs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tpipe/tpipe/spool/place"
)

// errLost is a job another worker took (a token of it) first: a lost
// race, not a failure.
var errLost = errors.New("jobs: job taken by another worker")

// held is a job's tokens as a worker holds them while it runs: claimed
// (moved into the worker's claim folder) or locked (left where they are,
// a place.Lock on each name). It belongs to the worker goroutine that
// took it.
type held struct {
	names  []string
	paths  []string // where the Func finds each token
	places []*place.Place
	claims []*place.Claim
	locks  []*place.Lock
	// intakes are, per token, the intake it came from (nil for a place a
	// stage writes), and stamps its stamp when taken: checked again
	// before the token is removed (see changed).
	intakes []*place.Intake
	stamps  []place.Stamp
}

// take takes one token of each place (names[i] in places[i]), all or
// none: the places are tried in order, so that two workers after the
// same job meet at its first place, and when one token is lost those
// already taken are given back and the error is errLost. intakes[i], if
// not nil, is the intake places[i] is: the token's stamp is taken then.
func take(places []*place.Place, names []string, lock bool, intakes []*place.Intake) (*held, error) {
	h := &held{names: names, places: places, paths: make([]string, 0, len(names)), intakes: intakes}
	for i, name := range names {
		var err error
		if lock {
			var l *place.Lock
			if l, err = places[i].Lock(name); err == nil {
				h.locks = append(h.locks, l)
				h.paths = append(h.paths, filepath.Join(places[i].Dir(), name))
				// The token may have been consumed between the listing and
				// the lock (pmjq 1.0's bug 10): a lock on nothing is lost.
				if ok, herr := places[i].Has(name); herr != nil || !ok {
					err = place.ErrClaimed
				}
			}
		} else {
			var c *place.Claim
			if c, err = places[i].Claim(name); err == nil {
				h.claims = append(h.claims, c)
				h.paths = append(h.paths, c.Path())
			}
		}
		if err == nil && intakes != nil && intakes[i] != nil {
			if h.stamps == nil {
				h.stamps = make([]place.Stamp, len(names))
			}
			if h.stamps[i], err = intakes[i].Stamp(h.paths[i]); errors.Is(err, fs.ErrNotExist) {
				err = place.ErrClaimed // (a lock on a file removed meanwhile)
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

// changed returns the tokens from intakes whose stamp is not the one they
// had when taken, or that a process holds open for writing: a writer
// still wrote to them while the job ran, or may yet (or one cannot be
// looked at any more). Such a job was done on part of its input.
// last says the tokens are about to be removed: then tokens of a network
// file system are not looked at, since a stamp there opens the file, and
// FUSE's release of it, which comes after the close, would find it
// removed and keep it as a .fuse_hidden file in the claim folder; the
// look before the outputs' commit has been taken.
func (h *held) changed(last bool) []int {
	var ch []int
	for i, in := range h.intakes {
		if in == nil || last && in.Remote() {
			continue
		}
		s, err := in.Stamp(h.paths[i])
		if err != nil || s.Changed(h.stamps[i]) || in.Open(h.paths[i]) == place.Writing {
			ch = append(ch, i)
		}
	}
	return ch
}

// release gives every token back, ready for any worker. One taken back
// meanwhile is already back.
func (h *held) release() error {
	var first error
	for _, c := range h.claims {
		keepLost(&first, c.Release())
	}
	h.unlock(&first)
	return first
}

func (h *held) unlock(first *error) {
	for _, l := range h.locks {
		keepLost(first, l.Unlock())
	}
}

// consume removes the tokens: the job is delivered. A claimed token's file
// may instead become a spare of the place spares (nil: none), for a next
// output there to reuse (see place.Place.Recycle). A token taken back
// meanwhile (the lease ran out while the job ran) is not an error, since
// the outputs are in place and a redo by the taker overwrites them; lost
// says there was one.
func (h *held) consume(spares *place.Place) (lost bool, err error) {
	var first error
	for _, c := range h.claims {
		err := c.DoneInto(spares)
		lost = lost || errors.Is(err, place.ErrLost)
		keepLost(&first, err)
	}
	if len(h.locks) > 0 {
		for i, name := range h.names {
			keepLost(&first, h.places[i].Remove(name))
		}
	}
	for _, l := range h.locks {
		err := l.Unlock()
		lost = lost || errors.Is(err, place.ErrLost)
		keepLost(&first, err)
	}
	return lost, first
}

// moveToPlaces moves each token into places[i], under its name (a failed
// place), and lets go of the job.
func (h *held) moveToPlaces(places []*place.Place) error {
	if len(h.locks) == 0 {
		var first error
		for i, c := range h.claims {
			keepLost(&first, c.MoveTo(places[i]))
		}
		return first
	}
	dests := make([]string, len(places))
	for i, p := range places {
		dests[i] = filepath.Join(p.Dir(), h.names[i])
	}
	return h.moveTo(dests)
}

// moveTo moves each token to the path dests[i], creating its folder 0700
// (pmjq 1.0's --error names), and lets go of the job. A token that cannot
// be moved goes back to ready, to be seen again.
func (h *held) moveTo(dests []string) error {
	var first error
	moved := make([]bool, len(dests))
	for i, dst := range dests {
		err := os.MkdirAll(filepath.Dir(dst), 0o700)
		if err == nil {
			err = os.Rename(h.paths[i], dst)
		}
		keepLost(&first, err)
		moved[i] = err == nil
	}
	for i, c := range h.claims {
		if moved[i] {
			// Moved out of the claim folder: Done finds nothing there,
			// which is what it should find.
			c.Done()
		} else {
			keepLost(&first, c.Release())
		}
	}
	h.unlock(&first)
	return first
}

// keepLost keeps err in *first unless one is there already or err is
// place.ErrLost (what was held was taken back: nothing to undo).
func keepLost(first *error, err error) {
	if err != nil && !errors.Is(err, place.ErrLost) && *first == nil {
		*first = err
	}
}
