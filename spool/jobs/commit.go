package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// Group commit. A job's delivery costs the disk three waits when done
// alone: the sync of its output, the rename, the sync of the output's
// directory (4 ms a job on the shared disk, against 0.14 ms of CPU for a
// filter of builtins). So a worker that has run a job hands it to the
// engine's one committer and goes on to the next; the committer takes
// every job handed to it while it was busy with the last batch (no timer:
// a batch is what came in meanwhile) and delivers them together:
//
//  1. syncs all their output files (place.SyncAll, the fsyncs in flight
//     together, so that the file system joins them in one journal commit);
//  2. renames each output into its place;
//  3. syncs each output place's directory once;
//  4. removes the inputs of every job of the batch.
//
// Under place.AtMostOnce step 4 comes first. A crash anywhere before step
// 3 has ended leaves the inputs in their claims, taken back and redone
// under the same output names (overwriting any output that was renamed
// but whose name may not be durable); a crash after it leaves outputs
// that are durable, and inputs that a redo overwrites the outputs of.
// The removals are not synced: a power loss that undoes one redoes its
// job, which at-least-once allows, and it was so before batching too.
//
// Why step 1 is fsyncs and not one syncfs(2): see place.SyncAll's doc.

// commitQueue is how many run jobs may wait for the committer; a worker
// with one more waits. Each holds its output files open.
const commitQueue = 256

// delivery is a job run with success, waiting for the committer: its
// outputs written and not committed, its inputs held.
type delivery struct {
	c     cand
	j     *Job
	h     *held
	outs  []Pending
	start time.Time
}

// commitLoop is the committer: it delivers the jobs sent on e.commits in
// batches until the channel is closed and drained, then closes
// e.removals. It makes a batch's outputs durable and hands the batch to
// removeLoop, which removes its inputs while the next batch is synced:
// both steps are mostly waits on the disk, and in different directories.
// Each runs on one goroutine, owned by run.
func (e *engine) commitLoop() {
	defer close(e.removals)
	for d := range e.commits {
		ds := []*delivery{d}
	more:
		for len(ds) < commitQueue {
			select {
			case d, ok := <-e.commits:
				if !ok {
					break more
				}
				ds = append(ds, d)
			default:
				break more
			}
		}
		if ds = e.commitBatch(ds); ds != nil {
			e.removals <- ds
		}
	}
}

// removeLoop removes the inputs of the batches commitLoop made durable
// (under at-least-once: under at-most-once they are gone already) and
// finishes their jobs.
func (e *engine) removeLoop() {
	for ds := range e.removals {
		if e.o.Delivery == place.AtMostOnce {
			e.done(ds)
			continue
		}
		var done []*delivery
		for i, d := range ds {
			consumed, err := e.consume(d)
			if err != nil {
				// The outputs of the rest are durable; their inputs go
				// back, and a later run redoes them, overwriting.
				e.failBatch(ds[i:], err)
				break
			}
			if consumed {
				done = append(done, d)
			} else {
				e.finish(d.c, false)
			}
		}
		e.done(done)
	}
}

// commitBatch makes the outputs of the jobs ds durable together (see the
// top of the file), their inputs removed first under at-most-once. It
// returns the batch for removeLoop, or nil after an error, which stops
// the run: under at-least-once every job of the batch goes back to its
// places, its outputs aborted; under at-most-once they are lost.
func (e *engine) commitBatch(ds []*delivery) []*delivery {
	ds = e.dropChanged(ds)
	if len(ds) == 0 {
		return nil
	}
	e.trace("batch", strconv.Itoa(len(ds)))
	if e.o.Delivery == place.AtMostOnce {
		for _, d := range ds {
			if _, err := e.consume(d); err != nil {
				e.failBatch(ds, err)
				return nil
			}
		}
	}
	if err := e.commitOutputs(ds); err != nil {
		e.failBatch(ds, err)
		return nil
	}
	return ds
}

// commitOutputs makes the outputs of ds durable under their names: sync
// the files, rename each, sync each place's directory once.
func (e *engine) commitOutputs(ds []*delivery) error {
	var ts []Pending
	for _, d := range ds {
		ts = append(ts, d.outs...)
	}
	return e.places.Commit(ts, e.o.trace)
}

// dropChanged puts back the jobs of ds whose inputs changed since they
// were taken, their outputs aborted, and returns the others.
func (e *engine) dropChanged(ds []*delivery) []*delivery {
	keep := ds[:0]
	for _, d := range ds {
		if ch := d.h.changed(false); ch != nil {
			for _, t := range d.outs {
				t.Abort()
			}
			e.putBack(d.c.st, d.j, d.h, ch, false)
			e.finish(d.c, false)
			continue
		}
		keep = append(keep, d)
	}
	return keep
}

// consume removes d's inputs, unless one changed since it was taken: then
// the job is put back (its outputs, committed, are overwritten by the
// redo) and consumed is false.
func (e *engine) consume(d *delivery) (consumed bool, err error) {
	if e.o.Delivery != place.AtMostOnce {
		if ch := d.h.changed(true); ch != nil {
			e.putBack(d.c.st, d.j, d.h, ch, true)
			return false, nil
		}
	}
	var spares Place
	if outs := d.c.st.out; len(outs) > 0 {
		spares = outs[0][0]
	}
	lost, err := d.h.consume(spares)
	if lost {
		e.sayf("job %s (%s) was taken back while it ran (is the lease, %v, too short?); its taker may run it again", d.j.name(), d.c.st.Name, e.places.Lease())
	}
	for _, p := range d.h.paths {
		e.trace("consume", p)
	}
	return true, err
}

// done counts the jobs ds delivered and finishes them.
func (e *engine) done(ds []*delivery) {
	for _, d := range ds {
		e.obs.Done(d.c.st.Name, d.j.name(), time.Since(d.start))
		e.count(func(n *Counts) { n.Done++ })
		e.finish(d.c, false)
	}
}

// failBatch ends the jobs ds, whose delivery failed with err, and stops
// the run.
func (e *engine) failBatch(ds []*delivery, err error) {
	names := make([]string, 0, len(ds))
	for _, d := range ds {
		for _, t := range d.outs {
			t.Abort() // (a token already renamed stays)
		}
		if e.o.Delivery != place.AtMostOnce {
			d.h.release()
		}
		names = append(names, d.j.name()+" ("+d.c.st.Name+")")
		e.finish(d.c, false)
	}
	what := "job " + names[0]
	if len(names) > 1 {
		what = fmt.Sprintf("%d jobs: %s", len(names), strings.Join(names[:min(len(names), 3)], ", "))
		if len(names) > 3 {
			what += ", ..."
		}
	}
	back := "; its inputs are back in their places"
	if e.o.Delivery == place.AtMostOnce {
		back = "; its inputs were removed first (at-most-once), so it is lost"
	}
	if len(ds) > 1 {
		back = strings.NewReplacer("its inputs", "their inputs", "it is lost", "they are lost").Replace(back)
	}
	e.stop(fmt.Errorf("%w: %s: %w%s", errDeliver, what, err, back))
}

// trace tells Options.trace, if set, of a step of a commit.
func (e *engine) trace(op, path string) {
	if e.o.trace != nil {
		e.o.trace(op, path)
	}
}
