package place

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultLease is how long an owner on another host keeps its claims
// without renewing them, when Options.Lease is 0.
const DefaultLease = 30 * time.Second

// Options configure a Worker. The zero Options are the defaults.
type Options struct {
	// Host is the worker's host in its Owner; "" means os.Hostname. Two
	// workers with different hosts judge each other by lease only (tests
	// use this to play two hosts in one process).
	Host string
	// Lease is how long a claim directory not renewed stays its owner's,
	// for workers on other hosts; 0 means DefaultLease.
	Lease time.Duration
	// Heartbeat is how often the worker renews its lease; 0 means Lease/4,
	// and a negative value means never on its own (the caller calls
	// Renew: tests with a Now of their own).
	Heartbeat time.Duration
	// Now is the clock; nil means time.Now. Leases are set and judged
	// with it.
	Now func() time.Time
	// NoSync skips fsync of tokens and directories: faster, and a power
	// loss may then lose tokens already committed (benchmarks, tmpfs).
	NoSync bool
}

// Worker is one owner of claims: this process, under an identity, with a
// lease it renews on its own goroutine. It opens places (Open). A Worker
// is safe for concurrent use; Close stops it. Two Workers in one process
// have the same Owner unless their Hosts differ, and must not open the
// same place.
type Worker struct {
	me     Owner
	name   string // me.String()
	o      Options
	mu     sync.Mutex
	places []*Place
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// NewWorker returns a Worker for this process; it starts renewing its
// lease at once, unless o.Heartbeat is negative.
func NewWorker(o Options) (*Worker, error) {
	me, err := self(o.Host)
	if err != nil {
		return nil, err
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = o.Lease / 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &Worker{me: me, name: me.String(), o: o, stop: make(chan struct{}), done: make(chan struct{})}
	if o.Heartbeat > 0 {
		go w.heartbeat()
	} else {
		close(w.done)
	}
	return w, nil
}

// Owner returns the worker's identity.
func (w *Worker) Owner() Owner { return w.me }

// Lease returns the worker's lease.
func (w *Worker) Lease() time.Duration { return w.o.Lease }

func (w *Worker) heartbeat() {
	defer close(w.done)
	t := time.NewTicker(w.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Renew() // a failure is seen again at the next beat, or by a claim
		}
	}
}

// Renew renews the worker's lease in every place it has claims in: it
// sets their claim directories' modification time to now. It returns the
// first error.
func (w *Worker) Renew() error {
	w.mu.Lock()
	places := append([]*Place(nil), w.places...)
	w.mu.Unlock()
	var first error
	now := w.o.Now()
	for _, p := range places {
		if err := p.renew(now); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open opens the place at dir, creating it (and its parent directories)
// 0700 when it does not exist. dir must not be a symbolic link; its last
// element must be a ValidName. The place stays open until the worker
// closes; opening it again returns the same *Place. Open makes nothing
// inside the directory: the protocol's entries (.tmp, .claim, .lock) are
// made when first needed, so a place that is only written gets .tmp and
// nothing else, and Close removes them once empty. Several places may be
// opened at once: their directories are made outside the worker's lock.
func (w *Worker) Open(dir string) (*Place, error) {
	if err := ValidName(filepath.Base(dir)); err != nil {
		return nil, fmt.Errorf("place %s: %w", dir, err)
	}
	dir = filepath.Clean(dir)
	if p, err := w.opened(dir); p != nil || err != nil {
		return p, err
	}
	if err := mkdirAll(dir); err != nil {
		return nil, err
	}
	perm := tokenPerm(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	// Another Open of dir may have made it meanwhile: one *Place a dir.
	if p := w.findLocked(dir); p != nil {
		return p, nil
	}
	p := &Place{w: w, dir: dir, own: filepath.Join(dir, claimDir, w.name), perm: perm}
	w.places = append(w.places, p)
	return p, nil
}

// opened returns the open place at dir, nil if there is none, or
// ErrClosed.
func (w *Worker) opened(dir string) (*Place, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	return w.findLocked(dir), nil
}

// findLocked returns the open place at dir or nil; w.mu is held.
func (w *Worker) findLocked(dir string) *Place {
	for _, p := range w.places {
		if p.dir == dir {
			return p
		}
	}
	return nil
}

// ErrClosed is returned by Open after Close.
var ErrClosed = errors.New("place: worker closed")

// Close stops the heartbeat and closes every place the worker opened
// (Place.Close: claims go back, locks are dropped). It returns the first
// error.
func (w *Worker) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	places := w.places
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	var first error
	for _, p := range places {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// alive reports whether owner o still holds what it claimed; renewed is
// when its claim directory in the place was last renewed.
func (w *Worker) alive(o Owner, renewed time.Time) bool {
	if o == w.me {
		return true
	}
	if o.Host == w.me.Host {
		if alive, known := sameProcess(o, w.me); known {
			return alive
		}
	}
	return w.o.Now().Sub(renewed) <= w.o.Lease
}

// Alive reports whether o, which holds claims in place p, is alive: on
// this host its process is still running; on another, its claim
// directory in p was renewed within the lease. An owner with no claim
// directory in p is alive only if its process is seen running here.
func (w *Worker) Alive(p *Place, o Owner) bool {
	fi, err := os.Lstat(filepath.Join(p.dir, claimDir, o.String()))
	if err != nil {
		return o.Host == w.me.Host && w.alive(o, time.Time{})
	}
	return w.alive(o, fi.ModTime())
}
