package sched

import (
	"context"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
)

// spoolEdge is one edge's place and what the run knows of it. Its
// segments come in by position; several map jobs may commit them out of
// order.
type spoolEdge struct {
	k       int
	p       *place.Place
	virtual bool // inside a chain of map tasks: never written (KeptEdge.Virtual)

	mu    sync.Mutex
	names []string // committed segments by position; "" not yet
	ready int      // names[:ready] are all committed
	done  bool     // complete: names is all of it
	gen   string   // the causal hash of the whole edge, once known
	gone  bool     // the reader stopped early: write no more
	goneC chan struct{}
	// stopped is gone, read without e.mu: a sink asks it before every
	// record, and the lock there was a twentieth of a run's CPU time.
	stopped atomic.Bool
	changed chan struct{}
	// file, for an edge read in place, is the file; bounds[k] and
	// bounds[k+1] delimit its segment k.
	file   *os.File
	bounds []int64
	// early holds the files of committed segments not yet durable (see
	// spoolsync.go); pending counts the segments the syncer has not
	// renamed yet.
	early   map[int]*os.File
	pending sync.WaitGroup
	lost    bool // a segment failed to commit: the edge is not complete on disk
	// errTok is the token that keeps its writer stage's stderr (spool.
	// StderrName), once written or found; "" if it has none.
	errTok string
	// ended is closed once the edge's end token is on disk (or it needs
	// none: a file read in place, a virtual edge); see writeEnd.
	ended     chan struct{}
	endedOnce sync.Once
}

func newSpoolEdge(k int, p *place.Place) *spoolEdge {
	return &spoolEdge{k: k, p: p, changed: make(chan struct{}), ended: make(chan struct{})}
}

// markEnded records that the edge's end token is on disk.
func (e *spoolEdge) markEnded() { e.endedOnce.Do(func() { close(e.ended) }) }

// signal wakes every waiter; e.mu is held.
func (e *spoolEdge) signal() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// commit records segment k.
func (e *spoolEdge) commit(k int, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.names) <= k {
		e.names = append(e.names, "")
	}
	e.names[k] = name
	for e.ready < len(e.names) && e.names[e.ready] != "" {
		e.ready++
	}
	e.signal()
}

// setGen records the edge's causal hash.
func (e *spoolEdge) setGen(gen string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen == "" {
		e.gen = gen
		e.signal()
	}
}

// complete records that names are all the edge's segments.
func (e *spoolEdge) complete(gen string, names []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.names, e.ready, e.done = names, len(names), true
	if e.gen == "" {
		e.gen = gen
	}
	e.signal()
}

// setGone records that the edge's reader stopped early.
func (e *spoolEdge) setGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.gone && e.goneC != nil {
		close(e.goneC)
	}
	e.gone = true
	e.stopped.Store(true)
	e.signal()
}

// isGone reports whether the edge's reader stopped early (setGone).
func (e *spoolEdge) isGone() bool { return e.stopped.Load() }

// segment waits for segment k and returns its name; ok is false once the
// edge is complete with fewer segments. It returns early when ctx is done
// or stop is closed (the reader has gone).
func (e *spoolEdge) segment(ctx context.Context, k int, stop <-chan struct{}) (name string, ok bool, err error) {
	for {
		e.mu.Lock()
		switch {
		case k < e.ready:
			name = e.names[k]
			e.mu.Unlock()
			return name, true, nil
		case e.done:
			e.mu.Unlock()
			return "", false, nil
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			return "", false, buffer.ErrReaderGone
		case <-ctx.Done():
			return "", false, context.Cause(ctx)
		}
	}
}

// waitGen waits until the edge's causal hash is known.
func (e *spoolEdge) waitGen(ctx context.Context) (string, error) {
	for {
		e.mu.Lock()
		gen, ch := e.gen, e.changed
		e.mu.Unlock()
		if gen != "" {
			return gen, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	}
}

// peekGen returns the edge's causal hash, "" if not yet known.
func (e *spoolEdge) peekGen() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen
}

// isDone reports whether the edge is complete.
func (e *spoolEdge) isDone() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done
}

// name returns the name of committed segment k.
func (e *spoolEdge) name(k int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.names[k]
}

// goneCh returns a channel closed once the edge's reader has stopped.
func (e *spoolEdge) goneCh() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.goneC == nil {
		e.goneC = make(chan struct{})
		if e.gone {
			close(e.goneC)
		}
	}
	return e.goneC
}

// all returns the committed names, for the Record's live list; a
// virtual edge has none.
func (e *spoolEdge) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	if e.virtual {
		return nil
	}
	for _, n := range e.names {
		if n != "" {
			out = append(out, n)
		}
	}
	if e.done {
		out = append(out, spool.EndName(e.gen))
	}
	if e.errTok != "" {
		out = append(out, e.errTok)
	}
	return out
}

// setErrTok records the token that keeps the stderr of the edge's writer.
func (e *spoolEdge) setErrTok(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errTok = name
}
