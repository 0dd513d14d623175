package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// do is one worker's handling of one job: take its tokens, run it until
// it succeeds or has no try left, then deliver it or deal with its
// failure. A job whose run is cancelled (ctx done) goes back to its
// places.
func (e *engine) do(ctx context.Context, c cand) {
	keep, handed := false, false
	defer func() {
		if !handed {
			e.finish(c, keep)
		}
	}()
	st := c.st
	h, err := take(st.in, c.names, st.Lock)
	if err != nil {
		if !errors.Is(err, errLost) && ctx.Err() == nil {
			// Not a lost race: the file cannot be taken (a sticky folder
			// and another user's file, a permission). Taken again at once
			// it would fail again, in a loop: it is left alone a while.
			if e.block(c) {
				e.sayf("take %s (%s): %v; left where it is, tried again every %v", c.key, st.Name, err, blockFor)
			}
		}
		return
	}
	j := &Job{Stage: st.Name, Key: c.key, Names: c.names, In: h.paths, from: h.toks}
	start := time.Now()
	e.obs.Claimed(st.Name, j.name())
	for try := 1; ; try++ {
		j.Try = try
		status, log, outs, err := e.attempt(ctx, st, j)
		switch {
		case ctx.Err() != nil:
			h.release()
			return
		case err != nil && errors.Is(err, errDeliver):
			h.release()
			e.stop(err)
			return
		case err == nil && status == 0:
			// The committer delivers it, with the jobs that finish while it
			// syncs, and finishes it; first it checks that its inputs did
			// not change while it ran (dropChanged).
			e.commits <- &delivery{c: c, j: j, h: h, outs: outs, start: start}
			handed = true
			return
		}
		if err != nil {
			status = -1
			fmt.Fprintf(log, "%s: %v\n", e.o.Prog, err)
		}
		retry := try <= st.Retries
		e.obs.Failed(st.Name, j.name(), status, retry)
		if retry {
			e.count(func(n *Counts) { n.Retried++ })
			e.sayf("job %s (%s) failed: %s; try %d of %d next", j.name(), st.Name, describeStatus(status), try+1, st.Retries+1)
			if !sleep(ctx, e.o.RetryDelay) {
				h.release()
				return
			}
			continue
		}
		keep = e.fail(st, j, h, status, log)
		return
	}
}

// putBack gives back a job whose tokens ch (from intakes) changed while it
// ran: their writer was not done, so what the job made of them is not
// its output. Each is judged again from scratch (place.Intake.Suspect),
// then released, to be done again once complete. committed says the
// job's outputs were committed already (the change came between the
// commit and the removal): the redo overwrites them.
func (e *engine) putBack(st *stage, j *Job, h *held, ch []int, committed bool) {
	var paths []string
	for _, k := range ch {
		h.toks[k].Suspect()
		paths = append(paths, ShortPath(filepath.Join(h.places[k].Addr(), h.names[k])))
	}
	h.release()
	e.count(func(n *Counts) { n.PutBack++ })
	e.obs.PutBack(st.Name, j.name())
	what := "its output is discarded"
	if committed {
		what = "the output it committed will be overwritten"
	}
	e.sayf("job %s (%s): %s changed while the job ran (still being written?); %s and the job is put back, to be done again once its input is complete", j.name(), st.Name, strings.Join(paths, ", "), what)
}

// errDeliver marks an error committing a job's outputs or removing its
// inputs: the disk or the place is at fault, not the job, and the run
// stops with it (the job's inputs are back in their places).
var errDeliver = errors.New("deliver")

// attempt runs the job once. On success it returns the tokens to commit,
// written and not committed: one per output port that is not discarded,
// and a copy of it in each further place of the port. log holds what the
// job wrote on its stderr, which has also been printed.
func (e *engine) attempt(ctx context.Context, st *stage, j *Job) (status int, log *capture, outs []Pending, err error) {
	log = &capture{max: maxLog}
	defer func() {
		if b := log.bytes(); len(b) > 0 {
			e.stderr.Write(b)
		}
	}()
	abort := func() {
		for _, p := range outs {
			p.Abort()
		}
	}
	j.Stderr, j.Out, j.discard = log, j.Out[:0], make([]bool, len(st.out))
	for k, ps := range st.out {
		name, err := st.outName(j, k)
		var p Pending
		if err == nil {
			p, err = create(ps[0], name, j.from)
		}
		if err != nil {
			abort()
			return -1, log, nil, err
		}
		outs = append(outs, p)
		j.Out = append(j.Out, p.File())
	}
	status, err = st.Run(ctx, j)
	if err != nil || status != 0 || ctx.Err() != nil {
		abort()
		return status, log, nil, err
	}
	ports := outs
	outs = nil
	for k, p := range ports {
		if j.discard[k] {
			p.Abort()
			continue
		}
		outs = append(outs, p)
		for _, q := range st.out[k][1:] {
			cp, err := copyToken(p, q, j.from)
			if err != nil {
				for _, p := range ports[k+1:] {
					p.Abort()
				}
				abort()
				return -1, log, nil, fmt.Errorf("%w: job %s (%s): %w; its inputs are back in their places", errDeliver, j.name(), st.Name, err)
			}
			outs = append(outs, cp)
		}
	}
	return 0, log, outs, nil
}

// copyToken writes a copy of the pending token p, which is written but
// not committed, as a pending token of place q under the same name, for
// the job that holds from.
func copyToken(p Pending, q Place, from []Token) (Pending, error) {
	f, err := os.Open(p.File().Name())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cp, err := create(q, p.Name(), from)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(cp, f); err != nil {
		cp.Abort()
		return nil, err
	}
	return cp, nil
}

// fail deals with a job that failed for good, after try runs: it moves
// it to its stage's failed places, or keeps it where it is (see
// Stage.KeepFailed), and says so. keep reports a job left in its places,
// which this run does not take again.
func (e *engine) fail(st *stage, j *Job, h *held, status int, log *capture) (keep bool) {
	e.count(func(n *Counts) { n.Failed++ })
	what := fmt.Sprintf("job %s (%s) failed: %s after %s", j.name(), st.Name, describeStatus(status), tries(j.Try))
	var dests []string
	if st.FailedName != nil {
		for k := range j.Names {
			name, err := st.FailedName(j, k)
			if err != nil {
				e.sayf("%s; left in place, for want of a failed name: %v", what, err)
				dests = nil
				break
			}
			dests = append(dests, filepath.Join(st.failedDir(k), name))
		}
	}
	if st.KeepFailed || st.FailedName != nil && dests == nil {
		h.release()
		e.count(func(n *Counts) { n.Kept++ })
		if st.KeepFailed {
			e.sayf("%s; left in place", what)
		}
		return true
	}
	var where string
	var err error
	if dests != nil {
		rels := make([]string, len(dests))
		for k, d := range dests {
			rels[k] = ShortPath(d)
		}
		where = strings.Join(rels, ", ")
		err = h.moveTo(dests)
	} else {
		where, err = e.toFailedPlaces(st, j, h, status, log)
		where = ShortPath(where)
	}
	if err != nil {
		h.release()
		e.stop(fmt.Errorf("%s and could not be moved to %s: %w; it is back in its place", what, where, err))
		return false
	}
	if dests != nil {
		e.sayf("%s; moved to %s", what, where)
	} else {
		e.sayf("%s; moved to %s, with its stderr and status beside it", what, where)
	}
	return false
}

// toFailedPlaces moves a job that failed for good to its stage's failed
// places: its stderr and status first, beside its first token, then its
// tokens. It returns the first failed place.
func (e *engine) toFailedPlaces(st *stage, j *Job, h *held, status int, log *capture) (string, error) {
	fps := make([]Place, len(j.Names))
	for k := range j.Names {
		fp, err := e.places.Open(st.failedDir(k))
		if err != nil {
			return st.failedDir(k), err
		}
		fps[k] = fp
	}
	f := Failure{Name: j.Names[0], Stage: st.Name, Status: status, Tries: j.Try, Owner: e.places.Owner(), Time: time.Now()}
	err := writeFailure(fps[0], f, log.bytes())
	if errors.Is(err, place.ErrBadName) {
		// NAME.status would be too long a name: the token goes all the
		// same, and the message says what the file would.
		e.sayf("job %s (%s): no %s or %s beside it: %v", j.name(), st.Name, StatusSuffix, StderrSuffix, err)
	} else if err != nil {
		return fps[0].Addr(), err
	}
	return fps[0].Addr(), h.moveToPlaces(fps)
}

func (e *engine) count(f func(*Counts)) {
	e.mu.Lock()
	f(&e.counts)
	e.mu.Unlock()
}

// sleep waits d or until ctx is done; it reports whether ctx is still
// live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

func describeStatus(status int) string {
	if status < 0 {
		return "it could not run"
	}
	return fmt.Sprintf("exit status %d", status)
}

// maxLog is the most of a job's stderr kept in memory; the rest is counted.
const maxLog = 1 << 20

// capture keeps the first max bytes written to it and counts the rest. It
// is safe for concurrent use (a job's commands write at once).
type capture struct {
	mu      sync.Mutex
	max     int
	b       []byte
	dropped int64
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := max(c.max-len(c.b), 0); room < n {
		c.dropped += int64(n - room)
		p = p[:room]
	}
	c.b = append(c.b, p...)
	return n, nil
}

// bytes returns what was kept, with a line saying how much was not.
func (c *capture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return c.b
	}
	return fmt.Appendf(append([]byte(nil), c.b...), "tpipe: ... %d more bytes of stderr not kept\n", c.dropped)
}
