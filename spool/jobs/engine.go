package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/syncio"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/spool/place"
)

// Options configure Run. The zero Options are the defaults.
type Options struct {
	// Workers is how many jobs run at once in this process, over all the
	// stages; 0 means the number of CPUs.
	Workers int
	// Delivery says whether a job's outputs are committed before its
	// inputs are removed (place.AtLeastOnce, the default) or after.
	Delivery place.Delivery
	// Once stops Run when the net is quiet: no stage has a complete job
	// ready, and no owner, in this process or another, holds or is writing
	// a token in any of its places. Without it Run goes on until ctx is
	// done.
	Once bool
	// Lease is how long a claim whose owner stopped renewing it stays its
	// owner's, for workers on other hosts; 0 means place.DefaultLease. On
	// this host a dead owner's claims go back at once.
	Lease time.Duration
	// Host names this host in owners; "" means os.Hostname. Tests play
	// several hosts with it.
	Host string
	// NoSync skips fsync of outputs and directories (see place.Options).
	NoSync bool
	// Worker, if set, is the claim owner Run uses, made and closed by the
	// caller (who shares it with a status file); Lease, Host and NoSync
	// are then its own. nil: Run makes one from Lease, Host and NoSync,
	// and closes it before it returns.
	Worker *place.Worker
	// Places, if set, is where the stages' places are (their In, Out and
	// Failed are its addresses); nil means folders (Folders, opened by
	// Worker).
	Places Places
	// RetryDelay is the pause before a failed job runs again.
	RetryDelay time.Duration
	// Recheck is how often the places are looked at again when nothing
	// was heard of them, to take back claims of owners that died and find
	// what a watch missed; 0 means a quarter of the lease, at most 1s.
	Recheck time.Duration
	// Watch configures the watching of input places.
	Watch place.WatchOptions
	// Settle is how long a file of an intake (an input place that no
	// stage of the run writes: where people and other programs drop
	// jobs) must keep its size and modification time, when no event says
	// it was closed or moved in, before it is a job; 0 means
	// place.DefaultSettle. See place.Judge.
	Settle time.Duration
	// Observer, if set, is told what the workers do.
	Observer Observer
	// Stderr receives one line per failure or take-back, and each job's
	// messages, grouped by job; nil discards them.
	Stderr io.Writer
	// Prog starts each line of the engine's own on Stderr ("tpipe: ...");
	// "" means tpipe. pmjq 1.0's command line says pmjq.
	Prog string

	// trace, if set, is told each step of the committer: "batch" with the
	// number of jobs it delivers together, "sync", "rename" and "consume"
	// with a token's path, "syncdir" with a place's (tests).
	trace func(op, path string)
}

// Counts are what one Run did.
type Counts struct {
	Done    int // jobs delivered
	Failed  int // jobs that failed for good: moved aside, or kept
	Retried int // runs that failed and were tried again
	Kept    int // of Failed, those left in their input places (Stage.KeepFailed)
	PutBack int // runs whose input changed while they ran: put back, to be done again
	Blocked int // jobs that could not be taken (not a lost race: a permission), left where they are
}

// batch is how many jobs a scan hands out, at most, before the places are
// listed again: small enough that jobs that enter downstream places are
// seen soon, large enough that listing a big place costs little per job.
const batch = 64

// engine is one Run: the stages, their places opened by one place.Worker,
// and the jobs in flight. The dispatcher goroutine (dispatch) scans the
// places and hands jobs to the workers, which claim, run and deliver them.
type engine struct {
	o      Options
	places Places
	owned  *place.Worker // the worker Run made, closed when it ends
	stages []*stage
	// quietOrder lists every place (not the failed ones), upstream first.
	quietOrder []Place
	// intake are the input places no stage writes, where jobs come from
	// outside; run watches each as one (WatchConfig.Intake).
	intake   map[Place]bool
	obs      Observer
	stderr   io.Writer
	wake     chan struct{}    // one slot: something changed
	commits  chan *delivery   // jobs run, to the committer (commitLoop)
	removals chan []*delivery // batches made durable, to removeLoop

	mu sync.Mutex
	// inflight are the tokens of the jobs handed out and not finished;
	// kept, those of jobs that failed for good and stay in their places
	// (Stage.KeepFailed). Scans pass over both.
	inflight map[token]bool
	kept     map[token]bool
	counts   Counts
	fatal    error // the first error that stops the run
	cancel   context.CancelFunc
	// settleAt is the earliest time a file of an intake, not complete at
	// the last scan, may have settled (zero: none is settling).
	settleAt time.Time
	// partial are the names of intakes' files seen with a name of work in
	// progress (place.Partial), said once each; waitingSince, when each
	// file of an intake not yet complete was first seen so (zero once the
	// wait was said).
	partial      map[token]bool
	waitingSince map[token]time.Time
	// blocked are tokens that could not be taken (not a lost race), each
	// left alone until its time; said once.
	blocked map[token]time.Time
}

// stage is a Stage with its places open. Its failed places are opened
// when a job first fails, so that a run without failures makes none.
type stage struct {
	*Stage
	in  []Place
	out [][]Place
}

// token is a token of a place, as the engine marks it in flight or kept.
type token struct {
	p    Place
	name string
}

// cand is a job found ready by a scan.
type cand struct {
	st *stage
	set
}

// Run runs the stages until ctx is done, or, with o.Once, until the net is
// quiet; it returns what it did and the first error that stopped it (a
// place that cannot be read or written). Stages must be given upstream
// first: scans look at them last first, so that a job already in the net
// moves on before a new one starts (as Record Oriented Scheduling runs the
// runnable task with the greatest index, in "Thrifty Execution of Task
// Pipelines"). When Run returns, its goroutines have ended and every claim
// it still held is back in its place.
func Run(ctx context.Context, stages []Stage, o Options) (Counts, error) {
	e, err := newEngine(stages, o)
	if err != nil {
		return Counts{}, err
	}
	err = e.run(ctx)
	if e.owned != nil {
		if cerr := e.owned.Close(); err == nil {
			err = cerr
		}
	}
	return e.counts, err
}

func newEngine(stages []Stage, o Options) (*engine, error) {
	if len(stages) == 0 {
		return nil, errors.New("jobs: no stage to run")
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.Lease <= 0 {
		o.Lease = place.DefaultLease
	}
	if o.Worker != nil {
		o.Lease = o.Worker.Lease()
	}
	if o.Recheck <= 0 {
		o.Recheck = min(o.Lease/4, time.Second)
	}
	if o.Prog == "" {
		o.Prog = "tpipe"
	}
	e := &engine{o: o, obs: o.Observer, stderr: o.Stderr, wake: make(chan struct{}, 1), commits: make(chan *delivery, commitQueue), removals: make(chan []*delivery, 1),
		inflight: map[token]bool{}, kept: map[token]bool{}, intake: map[Place]bool{}, partial: map[token]bool{}, waitingSince: map[token]time.Time{}, blocked: map[token]time.Time{}}
	if e.obs == nil {
		e.obs = Observers(nil)
	}
	if e.stderr == nil {
		e.stderr = io.Discard
	}
	e.stderr = syncio.NewLockedWriter(e.stderr)
	e.places = o.Places
	if e.places == nil {
		w := o.Worker
		if w == nil {
			var err error
			if w, err = place.NewWorker(place.Options{Host: o.Host, Lease: o.Lease, NoSync: o.NoSync}); err != nil {
				return nil, err
			}
			e.owned = w
		}
		e.places = NewFolders(w)
	}
	// closeW closes a worker Run made, when newEngine fails.
	closeW := func() {
		if e.owned != nil {
			e.owned.Close()
		}
	}
	seen := map[Place]bool{}
	open := func(dir string) (Place, error) {
		p, err := e.places.Open(dir)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			e.quietOrder = append(e.quietOrder, p)
		}
		return p, nil
	}
	names := map[string]bool{}
	for i := range stages {
		s := &stages[i]
		if err := s.check(); err != nil {
			closeW()
			return nil, err
		}
		if names[s.Name] {
			closeW()
			return nil, fmt.Errorf("two stages are named %s", s.Name)
		}
		names[s.Name] = true
		st := &stage{Stage: s}
		for _, dir := range s.In {
			p, err := open(dir)
			if err != nil {
				closeW()
				return nil, err
			}
			st.in = append(st.in, p)
		}
		for _, dirs := range s.Out {
			var ps []Place
			for _, dir := range dirs {
				p, err := open(dir)
				if err != nil {
					closeW()
					return nil, err
				}
				ps = append(ps, p)
			}
			st.out = append(st.out, ps)
		}
		e.stages = append(e.stages, st)
	}
	written := map[Place]bool{}
	for _, st := range e.stages {
		for _, ps := range st.out {
			for _, p := range ps {
				written[p] = true
			}
		}
	}
	for _, st := range e.stages {
		for _, p := range st.in {
			if !written[p] {
				e.intake[p] = true
			}
		}
	}
	return e, nil
}

// run starts the watchers and workers, dispatches until the end, and
// waits for them all.
func (e *engine) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.cancel = cancel
	var wg sync.WaitGroup
	var watched []Place
	closeWatches := func() {
		for _, p := range watched {
			p.Close()
		}
	}
	for _, st := range e.stages {
		for _, p := range st.in {
			if slices.Contains(watched, p) {
				continue
			}
			c, err := p.Watch(ctx, WatchConfig{Intake: e.intake[p], Settle: e.o.Settle, Watch: e.o.Watch})
			if err != nil {
				cancel()
				wg.Wait()
				closeWatches()
				return err
			}
			watched = append(watched, p)
			wg.Go(func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-c:
						e.poke()
					}
				}
			})
		}
	}
	var committer sync.WaitGroup
	committer.Go(e.commitLoop)
	committer.Go(e.removeLoop)
	work := make(chan cand)
	for range e.o.Workers {
		wg.Go(func() {
			for c := range work {
				e.do(ctx, c)
			}
		})
	}
	err := e.dispatch(ctx, work)
	close(work)
	// Quiet, nothing is in flight; otherwise the jobs running stop and
	// their claims go back. Either way the watchers stop. The jobs that
	// ran to the end before are delivered: the committer ends once it has
	// delivered every job the workers handed it.
	cancel()
	wg.Wait()
	close(e.commits)
	committer.Wait()
	closeWatches()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil {
		err = e.fatal
	}
	return err
}

// poke tells the dispatcher to look again.
func (e *engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// stop ends the run with err (the first one wins).
func (e *engine) stop(err error) {
	e.mu.Lock()
	if e.fatal == nil {
		e.fatal = err
	}
	e.mu.Unlock()
	e.cancel()
}

// dispatch is the dispatcher's loop: take back dead owners' claims, scan,
// hand the jobs found to the workers; when there are none, stop if the
// net is quiet under Once, or wait for a change or the recheck.
func (e *engine) dispatch(ctx context.Context, work chan<- cand) error {
	tick := time.NewTicker(e.o.Recheck)
	defer tick.Stop()
	for {
		if ctx.Err() != nil {
			return nil
		}
		e.reap()
		cands, err := e.scan()
		if err != nil {
			return err
		}
		for _, c := range cands {
			select {
			case work <- c:
			case <-ctx.Done():
				e.finish(c, false)
				return nil
			}
		}
		if len(cands) > 0 {
			continue
		}
		if e.o.Once {
			quiet, err := e.quiet()
			if err != nil {
				return err
			}
			if quiet {
				return nil
			}
		}
		e.mu.Lock()
		settleAt := e.settleAt
		e.mu.Unlock()
		var settled <-chan time.Time
		var timer *time.Timer
		if !settleAt.IsZero() {
			timer = time.NewTimer(max(time.Until(settleAt), time.Millisecond))
			settled = timer.C
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-tick.C:
		case <-settled:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// reap takes back the claims of dead owners in every place, and removes
// the files they were writing (an output place has those too).
func (e *engine) reap() {
	for _, p := range e.quietOrder {
		n, err := p.Reap()
		if n > 0 {
			e.obs.TakenBack(p.Addr(), n)
			e.sayf("took back %d %s of a dead or expired owner in %s", n, say.Plural(n, "claim"), ShortPath(p.Addr()))
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			e.sayf("take back claims in %s: %v", ShortPath(p.Addr()), err)
		}
	}
}

// scan lists the stages' input places, last stage first, and returns up
// to batch ready jobs, marking their tokens in flight. Within a stage the
// jobs start at a random one, so that the workers of several processes
// do not all race for the first.
func (e *engine) scan() ([]cand, error) {
	e.mu.Lock()
	e.settleAt = time.Time{}
	e.mu.Unlock()
	var out []cand
	for i := len(e.stages) - 1; i >= 0 && len(out) < batch; i-- {
		st := e.stages[i]
		sets, _, err := e.ready(st)
		if err != nil {
			return nil, err
		}
		if len(sets) > 1 {
			k := rand.IntN(len(sets))
			sets = append(sets[k:], sets[:k]...)
		}
		e.mu.Lock()
		for _, s := range sets[:min(len(sets), batch-len(out))] {
			for k, n := range s.names {
				e.inflight[token{st.in[k], n}] = true
			}
			out = append(out, cand{st, s})
		}
		e.mu.Unlock()
	}
	return out, nil
}

// ready returns the complete sets of st's input places, made of tokens
// neither in flight nor kept, and how many files of its intakes are not
// jobs yet (being written, or settling: see place.Intake).
func (e *engine) ready(st *stage) ([]set, int, error) {
	lists := make([][]string, len(st.in))
	waiting := 0
	for k, p := range st.in {
		l, err := p.List()
		if err != nil {
			return nil, 0, fmt.Errorf("list %s: %w", p.Addr(), err)
		}
		names := l.Ready
		if e.intake[p] {
			e.noteRefused(p, l.Refused)
			waiting += len(l.Waiting)
			e.noteWaiting(p, l.Waiting)
			if !l.Next.IsZero() {
				e.mu.Lock()
				if e.settleAt.IsZero() || l.Next.Before(e.settleAt) {
					e.settleAt = l.Next
				}
				e.mu.Unlock()
			}
		}
		lists[k] = names
	}
	e.mu.Lock()
	if len(e.inflight)+len(e.kept)+len(e.blocked) > 0 {
		now := time.Now()
		for k, p := range st.in {
			lists[k] = slices.DeleteFunc(lists[k], func(n string) bool {
				t := token{p, n}
				until, blocked := e.blocked[t]
				return e.inflight[t] || e.kept[t] || blocked && now.Before(until)
			})
		}
	}
	e.mu.Unlock()
	return match(lists, st.key), waiting, nil
}

// waitNote is how long a file of an intake is seen still being written
// before the engine says it waits for it (once): a --once that does not
// end says why.
const waitNote = 5 * time.Second

// noteWaiting says once for each file of intake p that has been waited
// for waitNote that it is still being written.
func (e *engine) noteWaiting(p Place, names []string) {
	now := time.Now()
	e.mu.Lock()
	var say []string
	for _, n := range names {
		t := token{p, n}
		first, ok := e.waitingSince[t]
		switch {
		case !ok:
			e.waitingSince[t] = now
		case !first.IsZero() && now.Sub(first) >= waitNote:
			e.waitingSince[t] = time.Time{} // said
			say = append(say, n)
		}
	}
	e.mu.Unlock()
	for _, n := range say {
		e.sayf("waiting for %s: still being written (a process holds it open for writing, or it has not kept its size for the settle time); it is taken once it is complete", ShortPath(filepath.Join(p.Addr(), n)))
	}
}

// noteRefused says once for each file of intake p that is never a job
// why: a name writers use for work in progress, one a place refuses, not
// a regular file. A person who dropped report.part sees why nothing
// happens.
func (e *engine) noteRefused(p Place, refused []place.Refusal) {
	for _, r := range refused {
		t := token{p, r.Name}
		e.mu.Lock()
		seen := e.partial[t]
		e.partial[t] = true
		e.mu.Unlock()
		if !seen {
			e.sayf("%s: never a job: %s; rename it (or move it out)", ShortPath(filepath.Join(p.Addr(), r.Name)), r.Reason)
		}
	}
}

// quiet reports whether the net is quiet (see Options.Once). It looks at
// the places upstream first, each one's claims and writers before the
// ready jobs downstream of it: a token that moves on commits its output
// downstream before its claim upstream goes, so a look in that order sees
// it in one place or the other.
func (e *engine) quiet() (bool, error) {
	e.mu.Lock()
	busy := len(e.inflight) > 0
	e.mu.Unlock()
	if busy {
		return false, nil
	}
	held := func(p Place) (bool, error) { return p.Busy() }
	checked := map[Place]bool{}
	for _, st := range e.stages {
		for _, p := range st.in {
			if checked[p] {
				continue
			}
			checked[p] = true
			if h, err := held(p); h || err != nil {
				return false, err
			}
		}
		sets, waiting, err := e.ready(st)
		if len(sets) > 0 || waiting > 0 || err != nil {
			return false, err
		}
	}
	for _, p := range e.quietOrder {
		if checked[p] {
			continue
		}
		if h, err := held(p); h || err != nil {
			return false, err
		}
	}
	return true, nil
}

// blockFor is how long a token that could not be taken is left alone.
const blockFor = 30 * time.Second

// block leaves c's tokens alone for blockFor, and reports whether this
// is the first time (to be said).
func (e *engine) block(c cand) (first bool) {
	until := time.Now().Add(blockFor)
	e.mu.Lock()
	defer e.mu.Unlock()
	first = true
	for k, n := range c.names {
		t := token{c.st.in[k], n}
		if _, seen := e.blocked[t]; seen {
			first = false
		}
		e.blocked[t] = until
	}
	if first {
		e.counts.Blocked++
	}
	return first
}

// finish marks c's tokens no longer in flight, or kept if keep, and
// wakes the dispatcher.
func (e *engine) finish(c cand, keep bool) {
	e.mu.Lock()
	for k, n := range c.names {
		t := token{c.st.in[k], n}
		delete(e.inflight, t)
		if keep {
			e.kept[t] = true
		}
	}
	e.mu.Unlock()
	e.poke()
}

func (e *engine) sayf(format string, a ...any) {
	fmt.Fprintf(e.stderr, "%s: %s\n", e.o.Prog, visible.Controls(fmt.Sprintf(format, a...)))
}

// rel is path for messages: relative to the current directory when that
// is shorter.
func ShortPath(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && len(r) < len(path) {
			return r
		}
	}
	return path
}
