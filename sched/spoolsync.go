package sched

import (
	"context"
	"os"
	"sync"

	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
)

// This file takes the spool's fsyncs off the path of the records. A token
// is committed in three steps: its file is synced, renamed into its place,
// and the place's directory synced. Done in the task that wrote the token,
// each step made the next task wait for the disk: a chain of five places
// waited for ten fsyncs in a row at its end, 0.2 s of a 0.35 s run on the
// shared disk. Now a finished token is handed to its reader at once,
// through its file under .tmp (spool.TokenWriter.OpenWritten), and a
// syncer commits it in the background; each place's directory is synced
// once, when the run ends.
//
// Why that keeps what a crash may leave correct: a token's file is synced
// before it is renamed, so a name in a place always holds the whole token;
// an end token is written only once every segment it names has been
// renamed; names are causal, so a token lost with a power cut (its rename
// undone, its file left in .tmp for Reap) is made again under the same
// name by the next run, and what was made from it is found there and kept.
// A reader may thus get ahead of the disk, never of the records, and the
// run reports success only once everything is durable.

// spoolSyncer commits the finished tokens of a run on a few goroutines
// of its own. Its methods are safe for concurrent use; close waits for
// the goroutines.
type spoolSyncer struct {
	jobs chan func()
	wg   sync.WaitGroup
	fail func(error) // called with each error of a job

	mu    sync.Mutex
	dirty map[*place.Place]bool // places with names not yet synced
}

// newSpoolSyncer starts n goroutines; at most 2n tokens wait for them, and
// a writer with one more waits.
func newSpoolSyncer(n int, fail func(error)) *spoolSyncer {
	y := &spoolSyncer{jobs: make(chan func(), 2*n), fail: fail, dirty: map[*place.Place]bool{}}
	for range n {
		y.wg.Go(func() {
			for job := range y.jobs {
				job()
			}
		})
	}
	return y
}

// commit has the syncer commit tw, a finished token of edge e, segment k:
// sync its file and rename it (spool.TokenWriter.CommitNoDirSync), then
// call done with the error of that, nil if none; done returns the error
// to report, which fails the run. The edge counts the token as pending
// until then (spoolEdge.pending), and as lost if it failed.
func (y *spoolSyncer) commit(ctx context.Context, e *spoolEdge, k int, tw *spool.TokenWriter, done func(error) error) error {
	e.pending.Add(1)
	job := func() {
		defer e.pending.Done()
		err := tw.CommitNoDirSync()
		if err == nil {
			y.mu.Lock()
			y.dirty[e.p] = true
			y.mu.Unlock()
			e.durable(k)
		} else {
			e.setLost()
		}
		if err := done(err); err != nil {
			y.fail(err)
		}
	}
	select {
	case y.jobs <- job:
		return nil
	case <-ctx.Done():
		e.pending.Done()
		tw.Abort()
		return context.Cause(ctx)
	}
}

// synced records that the names of p's tokens are durable: its end token
// was committed, with a sync of its directory, after every segment.
func (y *spoolSyncer) synced(p *place.Place) {
	y.mu.Lock()
	delete(y.dirty, p)
	y.mu.Unlock()
}

// close waits for the tokens handed over, then syncs, all at once, the
// directory of every place that got one and no end token after it. It
// returns the first error of those syncs.
func (y *spoolSyncer) close() error {
	close(y.jobs)
	y.wg.Wait()
	errs := make(chan error, len(y.dirty))
	for p := range y.dirty {
		go func() { errs <- p.SyncDir() }()
	}
	var first error
	for range y.dirty {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// publish hands segment k, named name, to the edge's reader before it is
// durable: f is the token's file, open for reading, which the edge owns
// until its reader takes it (takeEarly) or the token is durable.
func (e *spoolEdge) publish(k int, name string, f *os.File) {
	e.mu.Lock()
	if e.early == nil {
		e.early = map[int]*os.File{}
	}
	e.early[k] = f
	e.mu.Unlock()
	e.commit(k, name)
}

// takeEarly returns the file of segment k if it is not yet durable; the
// caller then reads the token from it (spool.ReadWritten) and closes it.
// Otherwise it returns nil: read the token from the place.
func (e *spoolEdge) takeEarly(k int) *os.File {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.early[k]
	delete(e.early, k)
	return f
}

// durable records that segment k is in the place under its name; its
// early file, if no reader took it, is closed.
func (e *spoolEdge) durable(k int) {
	e.mu.Lock()
	f := e.early[k]
	delete(e.early, k)
	e.mu.Unlock()
	if f != nil {
		f.Close()
	}
}

// setLost records that a segment of the edge could not be committed: its
// end token must not be written.
func (e *spoolEdge) setLost() {
	e.mu.Lock()
	e.lost = true
	e.mu.Unlock()
}

// closeEarly closes the files of segments that never became durable (a
// run that failed).
func (e *spoolEdge) closeEarly() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, f := range e.early {
		f.Close()
		delete(e.early, k)
	}
}
