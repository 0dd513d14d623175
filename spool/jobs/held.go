package jobs

import (
	"errors"
)

// errLost is a job another worker took (a token of it) first: a lost
// race, not a failure.
var errLost = errors.New("jobs: job taken by another worker")

// held is a job's tokens as a worker holds them while it runs (see
// Token). It belongs to the worker goroutine that took it.
type held struct {
	names  []string
	places []Place
	toks   []Token
	paths  []string // where the Func finds each token
}

// take takes one token of each place (names[i] in places[i]), all or
// none: the places are tried in order, so that two workers after the
// same job meet at its first place, and when one token is lost those
// already taken are given back and the error is errLost.
func take(places []Place, names []string, lock bool) (*held, error) {
	h := &held{names: names, places: places, paths: make([]string, 0, len(names))}
	for i, name := range names {
		t, err := places[i].Take(name, lock)
		if err != nil {
			h.release()
			return nil, err
		}
		h.toks = append(h.toks, t)
		h.paths = append(h.paths, t.Path())
	}
	return h, nil
}

// release gives every token back, ready for any worker.
func (h *held) release() error {
	var first error
	for _, t := range h.toks {
		keep(&first, t.Release())
	}
	return first
}

// changed returns the tokens that changed since they were taken (see
// Token.Changed): the job ran on part of its input.
func (h *held) changed(last bool) []int {
	var ch []int
	for i, t := range h.toks {
		if t.Changed(last) {
			ch = append(ch, i)
		}
	}
	return ch
}

// consume removes the tokens: the job is delivered; spares is where its
// output went (see Token.Done). lost says one was taken back meanwhile
// (the lease ran out while the job ran): not an error, since the outputs
// are in place and a redo by the taker overwrites them.
func (h *held) consume(spares Place) (lost bool, err error) {
	var first error
	for _, t := range h.toks {
		l, err := t.Done(spares)
		lost = lost || l
		keep(&first, err)
	}
	return lost, first
}

// moveToPlaces moves each token into places[i], under its name (a failed
// place), and lets go of the job.
func (h *held) moveToPlaces(places []Place) error {
	var first error
	for i, t := range h.toks {
		keep(&first, t.MoveTo(places[i]))
	}
	return first
}

// moveTo moves each token to the path dests[i] (pmjq 1.0's --error
// names), and lets go of the job. A token that cannot be moved goes back
// to ready, to be seen again.
func (h *held) moveTo(dests []string) error {
	var first error
	for i, t := range h.toks {
		keep(&first, t.MoveToPath(dests[i]))
	}
	return first
}

// keep keeps err in *first unless one is there already.
func keep(first *error, err error) {
	if err != nil && *first == nil {
		*first = err
	}
}
