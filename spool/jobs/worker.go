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
	keep := false
	defer func() { e.finish(c, keep) }()
	st := c.st
	h, err := take(st.in, c.names, st.Lock)
	if err != nil {
		if !errors.Is(err, errLost) && ctx.Err() == nil {
			e.sayf("take %s (%s): %v", c.key, st.Name, err)
		}
		return
	}
	j := &Job{Stage: st.Name, Key: c.key, Names: c.names, In: h.paths}
	start := time.Now()
	e.obs.Claimed(st.Name, j.name())
	for try := 1; ; try++ {
		j.Try = try
		status, log, err := e.attempt(ctx, st, j, h)
		switch {
		case ctx.Err() != nil:
			h.release()
			return
		case err != nil && errors.Is(err, errDeliver):
			e.stop(err)
			return
		case err == nil && status == 0:
			e.obs.Done(st.Name, j.name(), time.Since(start))
			e.count(func(n *Counts) { n.Done++ })
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

// errDeliver marks an error committing a job's outputs or removing its
// inputs: the disk or the place is at fault, not the job, and the run
// stops with it (the job's inputs are back in their places).
var errDeliver = errors.New("deliver")

// attempt runs the job once; on success it delivers it. log holds what the
// job wrote on its stderr, which has also been printed.
func (e *engine) attempt(ctx context.Context, st *stage, j *Job, h *held) (status int, log *capture, err error) {
	log = &capture{max: maxLog}
	defer func() {
		if b := log.bytes(); len(b) > 0 {
			e.stderr.Write(b)
		}
	}()
	outs := make([]*place.Pending, len(st.out))
	abort := func() {
		for _, p := range outs {
			if p != nil {
				p.Abort()
			}
		}
	}
	j.Stderr, j.Out, j.discard = log, j.Out[:0], make([]bool, len(st.out))
	for k, ps := range st.out {
		name, err := st.outName(j, k)
		var p *place.Pending
		if err == nil {
			p, err = ps[0].Create(name)
		}
		if err != nil {
			abort()
			return -1, log, err
		}
		outs[k] = p
		j.Out = append(j.Out, p.File())
	}
	status, err = st.Run(ctx, j)
	if err != nil || status != 0 || ctx.Err() != nil {
		abort()
		return status, log, err
	}
	for k, p := range outs {
		if j.discard[k] {
			p.Abort()
			outs[k] = nil
		}
	}
	if err := e.deliver(st, j, h, outs); err != nil {
		abort()
		back := "; its inputs are back in their places"
		if e.o.Delivery == place.AtMostOnce {
			back = "; its inputs were removed first (at-most-once), so it is lost"
		}
		return -1, log, fmt.Errorf("%w: job %s (%s): %w%s", errDeliver, j.name(), st.Name, err, back)
	}
	return 0, log, nil
}

// deliver commits the outputs (each port's copies, then its first place)
// and removes the inputs, in the order of the Delivery.
func (e *engine) deliver(st *stage, j *Job, h *held, outs []*place.Pending) error {
	commit := func() error {
		for k, p := range outs {
			if p == nil {
				continue // discarded
			}
			for _, q := range st.out[k][1:] {
				if err := copyToken(p, q); err != nil {
					return err
				}
			}
			if err := p.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	consume := func() error {
		lost, err := h.consume()
		if lost {
			e.sayf("job %s (%s) was taken back while it ran (is the lease, %v, too short?); its taker may run it again", j.name(), st.Name, e.w.Lease())
		}
		return err
	}
	if e.o.Delivery == place.AtMostOnce {
		if err := consume(); err != nil {
			return err
		}
		return commit()
	}
	if err := commit(); err != nil {
		h.release()
		return err
	}
	return consume()
}

// copyToken commits a copy of the pending token p, which is written but
// not committed, in place q under the same name.
func copyToken(p *place.Pending, q *place.Place) error {
	f, err := os.Open(p.File().Name())
	if err != nil {
		return err
	}
	defer f.Close()
	return q.Put(p.Name(), func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
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
			rels[k] = rel(d)
		}
		where = strings.Join(rels, ", ")
		err = h.moveTo(dests)
	} else {
		where, err = e.toFailedPlaces(st, j, h, status, log)
		where = rel(where)
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
	fps := make([]*place.Place, len(j.Names))
	for k := range j.Names {
		fp, err := e.w.Open(st.failedDir(k))
		if err != nil {
			return st.failedDir(k), err
		}
		fps[k] = fp
	}
	f := Failure{Name: j.Names[0], Stage: st.Name, Status: status, Tries: j.Try, Owner: e.w.Owner().String(), Time: time.Now()}
	err := writeFailure(fps[0], f, log.bytes())
	if errors.Is(err, place.ErrBadName) {
		// NAME.status would be too long a name: the token goes all the
		// same, and the message says what the file would.
		e.sayf("job %s (%s): no %s or %s beside it: %v", j.name(), st.Name, StatusSuffix, StderrSuffix, err)
	} else if err != nil {
		return fps[0].Dir(), err
	}
	return fps[0].Dir(), h.moveToPlaces(fps)
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
