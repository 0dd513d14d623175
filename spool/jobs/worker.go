package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// do is one worker's handling of one job: claim its tokens, run it until
// it succeeds or has no try left, then deliver it or move it to the failed
// places. A job whose run is cancelled (ctx done) goes back to its places.
func (e *engine) do(ctx context.Context, c cand) {
	defer e.finish(c)
	st := c.st
	claims, err := claimAll(st.in, c.names)
	if err != nil {
		if !errors.Is(err, place.ErrClaimed) && ctx.Err() == nil {
			e.sayf("claim %s in %s: %v", c.key, st.Name, err)
		}
		return
	}
	start := time.Now()
	e.obs.Claimed(st.Name, c.key)
	for try := 1; ; try++ {
		status, log, err := e.attempt(ctx, c, claims, try)
		switch {
		case ctx.Err() != nil:
			releaseAll(claims)
			return
		case err != nil && errors.Is(err, errDeliver):
			e.stop(err)
			return
		case err == nil && status == 0:
			e.obs.Done(st.Name, c.key, time.Since(start))
			e.count(func(n *Counts) { n.Done++ })
			return
		}
		if err != nil {
			status = -1
			fmt.Fprintf(log, "tpipe: %v\n", err)
		}
		retry := try <= st.Retries
		e.obs.Failed(st.Name, c.key, status, retry)
		if retry {
			e.count(func(n *Counts) { n.Retried++ })
			e.sayf("job %s (%s) failed: %s; try %d of %d next", c.key, st.Name, describeStatus(status), try+1, st.Retries+1)
			if !sleep(ctx, e.o.RetryDelay) {
				releaseAll(claims)
				return
			}
			continue
		}
		e.count(func(n *Counts) { n.Failed++ })
		where, err := e.fail(c, claims, status, try, log)
		if err != nil {
			e.stop(fmt.Errorf("job %s (%s) failed (%s) and could not be moved to %s: %w; it is back in its place", c.key, st.Name, describeStatus(status), where, err))
			releaseAll(claims)
			return
		}
		e.sayf("job %s (%s) failed: %s after %s; moved to %s, with its stderr and status beside it", c.key, st.Name, describeStatus(status), tries(try), rel(where))
		return
	}
}

// errDeliver marks an error committing a job's outputs or removing its
// inputs: the disk or the place is at fault, not the job, and the run
// stops with it (the job's inputs are back in their places).
var errDeliver = errors.New("deliver")

// attempt runs the job once; on success it delivers it. log holds what the
// job wrote on its stderr, which has also been printed.
func (e *engine) attempt(ctx context.Context, c cand, claims []*place.Claim, try int) (status int, log *capture, err error) {
	st := c.st
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
	j := &Job{Stage: st.Name, Key: c.key, Stderr: log, Try: try}
	for k, ps := range st.out {
		p, err := ps[0].Create(st.outName(c.key, k))
		if err != nil {
			abort()
			return -1, log, err
		}
		outs[k] = p
		j.Out = append(j.Out, p.File())
	}
	for _, cl := range claims {
		j.In = append(j.In, cl.Path())
	}
	status, err = st.Run(ctx, j)
	if err != nil || status != 0 || ctx.Err() != nil {
		abort()
		return status, log, err
	}
	if err := e.deliver(st, claims, outs); err != nil {
		abort()
		back := "; its inputs are back in their places"
		if e.o.Delivery == place.AtMostOnce {
			back = "; its inputs were removed first (at-most-once), so it is lost"
		}
		return -1, log, fmt.Errorf("%w: job %s (%s): %w%s", errDeliver, c.key, st.Name, err, back)
	}
	return 0, log, nil
}

// deliver commits the outputs (each port's copies, then its first place)
// and removes the inputs, in the order of the Delivery. A claim taken back
// meanwhile (ErrLost: this worker's lease ran out while it worked) is not
// an error: the outputs are in place, and a redo by the taker overwrites
// them.
func (e *engine) deliver(st *stage, claims []*place.Claim, outs []*place.Pending) error {
	commit := func() error {
		for k, p := range outs {
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
	done := func() error {
		var first error
		for _, cl := range claims {
			if err := cl.Done(); err != nil && !errors.Is(err, place.ErrLost) && first == nil {
				first = err
			}
		}
		return first
	}
	if e.o.Delivery == place.AtMostOnce {
		if err := done(); err != nil {
			return err
		}
		return commit()
	}
	if err := commit(); err != nil {
		releaseAll(claims)
		return err
	}
	return done()
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

// fail moves a job that failed for good to its stage's failed places: its
// stderr and status first, beside its first token, then its tokens. It
// returns the first failed place.
func (e *engine) fail(c cand, claims []*place.Claim, status, tries int, log *capture) (string, error) {
	st := c.st
	var first *place.Place
	for k, cl := range claims {
		fp, err := e.w.Open(st.failedDir(k))
		if err != nil {
			return st.failedDir(k), err
		}
		if k == 0 {
			first = fp
			f := Failure{Name: cl.Name(), Stage: st.Name, Status: status, Tries: tries, Owner: e.w.Owner().String(), Time: time.Now()}
			err := writeFailure(fp, f, log.bytes())
			if errors.Is(err, place.ErrBadName) {
				// NAME.status would be too long a name: the token goes
				// all the same, and the message says what the file would.
				e.sayf("job %s (%s): no %s or %s beside it: %v", c.key, st.Name, StatusSuffix, StderrSuffix, err)
			} else if err != nil {
				return fp.Dir(), err
			}
		}
		if err := cl.MoveTo(fp); err != nil && !errors.Is(err, place.ErrLost) {
			return fp.Dir(), err
		}
	}
	return first.Dir(), nil
}

// claimAll claims one token in each place, all or none: the places are
// tried in order, so that two workers after the same set meet at the
// first place and one of them gives up there.
func claimAll(in []*place.Place, names []string) ([]*place.Claim, error) {
	claims := make([]*place.Claim, 0, len(in))
	for k, p := range in {
		c, err := p.Claim(names[k])
		if err != nil {
			releaseAll(claims)
			return nil, err
		}
		claims = append(claims, c)
	}
	return claims, nil
}

// releaseAll puts claimed tokens back; one taken back meanwhile is already
// back.
func releaseAll(claims []*place.Claim) {
	for _, c := range claims {
		c.Release()
	}
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
