package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

// Config is one transition and how to run it.
type Config struct {
	// Stage names the transition for observers and status.
	Stage  string
	Inputs []Input
	Take   Take
	// Workers is how many sets run at once; 0 means 1.
	Workers int
	// Once ends Run when no complete set remains and no live worker holds
	// a file of an input; without it Run waits for more until ctx is done.
	Once bool
	// Delivery is the order of committing outputs and removing inputs.
	Delivery place.Delivery
	// Worker holds the engine's claims; the caller opens its output
	// places with it too, so that one lease covers all, and closes it
	// after Run. Nil: the engine makes one with Place and closes it.
	Worker *place.Worker
	// Place configures the engine's own place.Worker (host, lease).
	Place place.Options
	// Watch configures how input folders are watched.
	Watch place.WatchOptions
	// Observer is told of claims, completions and failures; nil: none.
	Observer jobs.Observer
	// Run does a held set's work: it runs the command and writes its
	// outputs as pending tokens. It returns commit, which makes them
	// visible (nil: nothing to commit), or an error: a *Failure when the
	// command failed, any other error when it could not be run.
	Run func(ctx context.Context, h *Held) (commit func() error, err error)
	// OnFailure says what becomes of a set whose Run failed on its
	// attempt-th try (1 for the first); nil: it is left in place.
	OnFailure func(h *Held, f *Failure, attempt int) Verdict
	// Log receives one line per failure and per problem; nil: discarded.
	Log io.Writer
}

// Verdict is what becomes of a failed set.
type Verdict struct {
	// Retry gives the set back, to be run again.
	Retry bool
	// MoveTo, when set, moves the set's files there (one per input).
	MoveTo []string
	// Neither: the files are given back and this engine does not try
	// the set again (pmjq 1.0 without --error).
}

// Failure is a set whose command failed.
type Failure struct {
	// Status is the command's exit status, -1 when it did not run.
	Status int
	// Stderr is the end of what it wrote on stderr.
	Stderr []byte
	// Err says why it did not run, when Status is -1.
	Err error
}

func (f *Failure) Error() string {
	if f.Status < 0 && f.Err != nil {
		return f.Err.Error()
	}
	return fmt.Sprintf("exit status %d", f.Status)
}

// Result counts what an engine did.
type Result struct {
	Done    int // sets delivered
	Retried int // failures given back for another try
	Failed  int // sets that failed for good: moved aside or left in place
	Kept    int // of Failed, those left in place (no place to move them to)
}

// Engine runs one transition. Make it with New, then call Run once.
type Engine struct {
	c      Config
	w      *place.Worker
	ownW   bool // w is the engine's: Run closes it
	places []*place.Place
	log    io.Writer
	obs    jobs.Observer

	mu       sync.Mutex // guards what workers report
	res      Result
	attempts map[string]int  // set ID -> failed tries
	skip     map[string]bool // sets this engine will not run again
}

// New checks c and opens the input places (creating missing folders
// 0700).
func New(c Config) (*Engine, error) {
	if len(c.Inputs) == 0 {
		return nil, errors.New("merge: no input")
	}
	if c.Run == nil {
		return nil, errors.New("merge: no Run")
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	w, own := c.Worker, false
	if w == nil {
		var err error
		if w, err = place.NewWorker(c.Place); err != nil {
			return nil, err
		}
		own = true
	}
	e := &Engine{c: c, w: w, ownW: own, log: c.Log, obs: c.Observer, attempts: map[string]int{}, skip: map[string]bool{}}
	if e.log == nil {
		e.log = io.Discard
	}
	if e.obs == nil {
		e.obs = jobs.Observers(nil)
	}
	for _, in := range c.Inputs {
		p, err := w.Open(in.Dir)
		if err != nil {
			if own {
				w.Close()
			}
			return nil, err
		}
		e.places = append(e.places, p)
	}
	return e, nil
}

// done is what a worker goroutine reports after a set.
type done struct {
	s     Set
	retry bool // given back: look again
}

// Run runs the transition until ctx is done or, with Once, until no
// complete set remains and nobody holds one. It closes the engine's
// worker, if it made it (claims still held go back), before it returns.
// The error is nil when ctx ended it.
func (e *Engine) Run(ctx context.Context) (Result, error) {
	if e.ownW {
		defer e.w.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	dirty := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: stop the watchers and workers
	if err := e.watch(ctx, &wg, dirty); err != nil {
		return e.result(), err
	}

	todo := make(chan Set)
	results := make(chan done)
	for range e.c.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range todo {
				r := e.runSet(ctx, s)
				select {
				case results <- r:
				case <-ctx.Done():
				}
			}
		}()
	}
	defer close(todo) // runs before cancel and wg.Wait

	var (
		queue    []Set
		inflight = map[string]bool{} // "i\x00name" of the files being worked
		busy     = 0
		look     = true // the folders may have changed since the last scan
		poll     *time.Timer
	)
	pollC := func() <-chan time.Time {
		if poll == nil {
			return nil
		}
		return poll.C
	}
	for {
		if len(queue) == 0 && look {
			look = false
			sets, err := e.scan(inflight)
			if err != nil {
				return e.result(), err
			}
			queue = sets
			if len(queue) == 0 && busy == 0 && e.c.Once {
				held, err := e.othersHold()
				if err != nil {
					return e.result(), err
				}
				if !held {
					return e.result(), nil
				}
				// Another worker holds files: wait for it to finish or
				// to be found dead.
				poll = time.NewTimer(100 * time.Millisecond)
			}
		}
		var send chan Set
		var next Set
		if len(queue) > 0 && busy < e.c.Workers {
			send, next = todo, queue[0]
		}
		select {
		case <-ctx.Done():
			return e.result(), nil
		case send <- next:
			queue = queue[1:]
			busy++
			for i, n := range next.Names {
				inflight[fmt.Sprint(i)+"\x00"+n] = true
			}
		case r := <-results:
			busy--
			for i, n := range r.s.Names {
				delete(inflight, fmt.Sprint(i)+"\x00"+n)
			}
			if r.retry || busy == 0 {
				look = true
			}
		case <-dirty:
			look = true
		case <-pollC():
			poll = nil
			look = true
		}
	}
}

// watch starts a watcher on each input folder; each change marks dirty.
func (e *Engine) watch(ctx context.Context, wg *sync.WaitGroup, dirty chan struct{}) error {
	seen := map[string]bool{}
	for _, p := range e.places {
		if seen[p.Dir()] {
			continue
		}
		seen[p.Dir()] = true
		w, err := place.Watch(ctx, p.Dir(), e.c.Watch)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			for {
				select {
				case <-ctx.Done():
					return
				case <-w.C:
					select {
					case dirty <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	return nil
}

// scan takes back dead workers' claims, lists the inputs and returns the
// complete sets not in flight and not given up, starting at a random one
// so that workers of several processes do not all race for the first.
func (e *Engine) scan(inflight map[string]bool) ([]Set, error) {
	names := make([][]string, len(e.places))
	for i, p := range e.places {
		n, err := p.Reap()
		if n > 0 {
			e.obs.TakenBack(p.Dir(), n)
		}
		if err != nil {
			fmt.Fprintf(e.log, "take back in %s: %v\n", p.Dir(), err)
		}
		toks, err := p.Tokens()
		if err != nil {
			return nil, err
		}
		names[i] = toks
	}
	all := Match(e.c.Inputs, names)
	sets := all[:0]
	e.mu.Lock()
	for _, s := range all {
		if e.skip[s.ID()] {
			continue
		}
		busy := false
		for i, n := range s.Names {
			busy = busy || inflight[fmt.Sprint(i)+"\x00"+n]
		}
		if !busy {
			sets = append(sets, s)
		}
	}
	e.mu.Unlock()
	if len(sets) > 1 {
		k := rand.IntN(len(sets))
		sets = append(sets[k:], sets[:k]...)
	}
	return sets, nil
}

// othersHold reports whether a live worker holds a file in an input.
func (e *Engine) othersHold() (bool, error) {
	now := time.Now()
	for _, p := range e.places {
		m, err := place.Inspect(p.Dir())
		if err != nil {
			return false, err
		}
		for _, h := range m.Holders {
			if h.Owner == e.w.Owner() || len(h.Claims)+len(h.Locks) == 0 {
				continue
			}
			if h.Live(e.w.Lease(), now) {
				return true, nil
			}
		}
	}
	return false, nil
}

// runSet takes s, runs it and delivers it or deals with its failure.
func (e *Engine) runSet(ctx context.Context, s Set) done {
	h, err := take(e.c.Take, e.places, s)
	if err != nil {
		if !errors.Is(err, errLost) {
			fmt.Fprintf(e.log, "take %s: %v\n", strings.Join(s.Names, ", "), err)
		}
		return done{s: s}
	}
	job := jobName(s)
	e.obs.Claimed(e.c.Stage, job)
	start := time.Now()
	commit, err := e.c.Run(ctx, h)
	if ctx.Err() != nil {
		// Stopped, not failed: the set goes back for the next worker.
		h.release()
		return done{s: s}
	}
	if err == nil {
		err = e.deliver(h, commit)
		if err == nil {
			e.obs.Done(e.c.Stage, job, time.Since(start))
			e.count(func(r *Result) { r.Done++ })
			return done{s: s}
		}
		if errors.Is(err, place.ErrLost) {
			fmt.Fprintf(e.log, "%s: taken back while it ran (lease %v too short?); another worker redoes it\n", job, e.w.Lease())
			return done{s: s}
		}
	}
	return e.failed(h, err)
}

// deliver commits the outputs and consumes the inputs, in the order of
// the Delivery.
func (e *Engine) deliver(h *Held, commit func() error) error {
	if commit == nil {
		commit = func() error { return nil }
	}
	if e.c.Delivery == place.AtMostOnce {
		if err := h.consume(); err != nil {
			return err
		}
		return commit()
	}
	if err := commit(); err != nil {
		h.release()
		return err
	}
	return h.consume()
}

// failed deals with a set whose run or delivery failed.
func (e *Engine) failed(h *Held, err error) done {
	var f *Failure
	if !errors.As(err, &f) {
		f = &Failure{Status: -1, Err: err}
	}
	id := h.ID()
	e.mu.Lock()
	e.attempts[id]++
	attempt := e.attempts[id]
	e.mu.Unlock()
	var v Verdict
	if e.c.OnFailure != nil {
		v = e.c.OnFailure(h, f, attempt)
	}
	job := jobName(h.Set)
	e.obs.Failed(e.c.Stage, job, f.Status, v.Retry)
	switch {
	case v.Retry:
		fmt.Fprintf(e.log, "%s: %v; trying again (%d)\n", job, f, attempt)
		h.release()
		e.count(func(r *Result) { r.Retried++ })
		return done{s: h.Set, retry: true}
	case v.MoveTo != nil:
		if merr := h.moveTo(v.MoveTo); merr != nil {
			fmt.Fprintf(e.log, "%s: %v; and moving it aside: %v\n", job, f, merr)
		} else {
			fmt.Fprintf(e.log, "%s: %v; moved to %s\n", job, f, strings.Join(v.MoveTo, ", "))
		}
		e.count(func(r *Result) { r.Failed++ })
	default:
		h.release()
		e.mu.Lock()
		e.skip[id] = true
		e.mu.Unlock()
		fmt.Fprintf(e.log, "%s: %v; left in place\n", job, f)
		e.count(func(r *Result) { r.Failed++; r.Kept++ })
	}
	return done{s: h.Set}
}

func (e *Engine) count(f func(*Result)) {
	e.mu.Lock()
	f(&e.res)
	e.mu.Unlock()
}

func (e *Engine) result() Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.res
}

// jobName is how observers and messages name a set: its key, or its
// first file when all files share the empty key.
func jobName(s Set) string {
	if s.Key != "" {
		return s.Key
	}
	return s.Names[0]
}
