package jobs

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// The engine sees places through the interfaces of this file, never a
// folder: the transitions (stages, workers, retries, failures, the group
// commit) are the same whatever holds the tokens. Folders shared by
// workers (Folders, on package place) are one backend; a message system,
// past one file system, is another. A backend must give:
//
//   - a listing of the tokens ready in a place, and a take of one by
//     name that a single worker wins (a rename of a folder's file into
//     the worker's claims; for a queue, the fetch that delivered it);
//   - tokens written under a temporary name, made visible together by
//     one commit, and an input removed only after the outputs of its job
//     are committed (at-least-once; a crash redoes, and outputs named
//     after their job overwrite, never double);
//   - what a dead worker held given back (take-back) and a way to tell
//     that nobody holds or writes anything (Busy), for Once.

// Places are a backend's places, opened by one worker (an owner).
type Places interface {
	// Open opens the place at addr (a folder's path, for Folders).
	Open(addr string) (Place, error)
	// Owner names this worker, in failure records.
	Owner() string
	// Lease is how long a take lasts when its owner stops renewing it.
	Lease() time.Duration
	// Commit makes the pending tokens ts durable and visible in their
	// places, together (a group commit). trace, if not nil, is told each
	// step (tests).
	Commit(ts []Pending, trace func(op, path string)) error
}

// Listing is what a place holds at one look.
type Listing struct {
	// Ready are the names of the tokens ready to take, sorted.
	Ready []string
	// Waiting are tokens seen and not yet complete (an intake's files
	// still being written).
	Waiting []string
	// Refused are entries that are never tokens, and why.
	Refused []place.Refusal
	// Next is when to look again for a waiting token to be complete
	// (zero: no need).
	Next time.Time
}

// WatchConfig says how a place is watched.
type WatchConfig struct {
	// Intake: people and programs outside the protocol put tokens there;
	// only complete ones are listed (see place.Intake).
	Intake bool
	// Settle is an intake's settle time (0: place.DefaultSettle).
	Settle time.Duration
	// Watch configures how a folder is watched.
	Watch place.WatchOptions
}

// Place is one place of a backend. It is safe for concurrent use.
type Place interface {
	// Addr is the place's address, in messages.
	Addr() string
	// Watch starts telling, on the channel, when the place may hold new
	// tokens, until Close.
	Watch(ctx context.Context, c WatchConfig) (<-chan struct{}, error)
	// List looks at the place.
	List() (Listing, error)
	// Take takes the ready token name for a job: claimed (moved into this
	// worker's hands) or, with lock, locked where it is. A token another
	// worker took first, or that is gone, is errLost.
	Take(name string, lock bool) (Token, error)
	// Create starts writing the token name (see Pending).
	Create(name string) (Pending, error)
	// Put writes the whole token name (a failure's record beside it).
	Put(name string, write func(io.Writer) error) error
	// Reap gives back what dead owners held; it returns how many tokens.
	Reap() (int, error)
	// Busy reports whether some owner, here or elsewhere, holds a token
	// of the place or is writing one into it.
	Busy() (bool, error)
	// Close stops the watch.
	Close() error
}

// ErrLost is what Place.Take returns for a token another worker took
// first, or that is gone: a lost race, not a failure.
var ErrLost = errLost

// Lineage is a Place whose tokens carry an identity that a job's outputs
// inherit from its inputs: on a message system a redo's output is a copy
// of one already sent, told from a new job of the same name by it, and
// dropped by the place that receives it. The engine creates each output
// of a job with CreateFrom, given the tokens the job took.
type Lineage interface {
	CreateFrom(name string, from []Token) (Pending, error)
}

// create starts writing the token name in p for the job that holds from.
func create(p Place, name string, from []Token) (Pending, error) {
	if l, ok := p.(Lineage); ok {
		return l.CreateFrom(name, from)
	}
	return p.Create(name)
}

// Token is a token a job holds, from Place.Take. It belongs to the
// goroutine that took it.
type Token interface {
	// Path is where the job's Func reads it.
	Path() string
	// Changed reports whether the token was written to since it was taken
	// (or is held open by a writer): its job ran on part of it. last says
	// it is about to be removed: a backend may skip a look that would
	// itself keep the token from going.
	Changed(last bool) bool
	// Suspect has the place judge the token again from scratch when it
	// comes back (its writer was not done).
	Suspect()
	// Done removes the token: its job is delivered. spares, if not nil,
	// is the place the job's output went to, where the backend may keep
	// the token's storage for a next output. lost says it had been taken
	// back meanwhile.
	Done(spares Place) (lost bool, err error)
	// Release gives the token back, ready for any worker.
	Release() error
	// MoveTo moves the token into another place of the backend, ready
	// there (a place of failed jobs).
	MoveTo(p Place) error
	// MoveToPath moves it to a path of the backend's own naming (pmjq
	// 1.0's --error names).
	MoveToPath(path string) error
}

// Pending is a token being written, from Place.Create: invisible until
// Places.Commit, gone at Abort.
type Pending interface {
	Name() string
	// File is the token's file, for the job's Func to write.
	File() *os.File
	// Write writes to the file (as a backend best writes a large one).
	Write(b []byte) (int, error)
	Place() Place
	Abort() error
}
