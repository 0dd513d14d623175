package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
)

// errStopped ends a source whose reader has gone; the source then returns
// without error.
var errStopped = errors.New("runner: reader stopped")

// Pump reads an io.Reader that may block indefinitely (a terminal, a pipe)
// on behalf of sources that must be able to give up: a source asks for the
// next chunk and waits for it, its reader's end, or cancellation, whichever
// comes first. A chunk that arrives after its asker gave up waits for the
// next asker, so nothing is lost between the pipelines of one script.
//
// A Pump's one goroutine blocks in Read while a read is asked for. It is
// owned by whoever made the Pump: Close, then Wait, which returns once any
// Read in progress has returned (for os.Stdin, maybe only at exit).
//
// A regular file never keeps a read waiting, so a Pump on one has no
// goroutine: its Reader reads the file in the source's own call (tpipe
// pmjq runs a script per job with the job's file as stdin; a goroutine
// and a 64 KiB chunk per read were most of a small job's cost).
type Pump struct {
	r       io.Reader
	direct  bool          // r is a regular file: read it in the caller's goroutine
	ask     chan struct{} // one slot: at most one read is asked for
	got     chan chunk    // one slot: the pump never blocks on a result
	mu      sync.Mutex
	pending bool // a read was asked for and its chunk not yet taken
	once    sync.Once
	quit    chan struct{}
	done    chan struct{}
}

type chunk struct {
	b   []byte
	err error
}

// NewPump starts a Pump on r.
func NewPump(r io.Reader) *Pump {
	p := &Pump{r: r, ask: make(chan struct{}, 1), got: make(chan chunk, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			p.direct = true
			close(p.done)
			return p
		}
	}
	go p.loop()
	return p
}

func (p *Pump) loop() {
	defer close(p.done)
	for {
		select {
		case <-p.ask:
		case <-p.quit:
			return
		}
		b := make([]byte, 64<<10)
		n, err := p.r.Read(b)
		p.got <- chunk{b[:n], err}
	}
}

// Close stops the pump; it does not wait for a Read in progress.
func (p *Pump) Close() { p.once.Do(func() { close(p.quit) }) }

// Wait waits for the pump's goroutine to end, after Close.
func (p *Pump) Wait() { <-p.done }

// Reader returns an io.Reader over the pump for one source; its Read gives
// up with errStopped when stop is closed and with ctx's error on
// cancellation. Only one Reader of a Pump may be used at a time.
func (p *Pump) Reader(ctx context.Context, stop <-chan struct{}) io.Reader {
	return &pumpReader{p: p, ctx: ctx, stop: stop}
}

type pumpReader struct {
	p    *Pump
	ctx  context.Context
	stop <-chan struct{}
	rest []byte
	err  error
}

func (r *pumpReader) Read(b []byte) (int, error) {
	if r.p.direct && len(r.rest) == 0 && r.err == nil {
		select {
		case <-r.stop:
			return 0, errStopped
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		default:
			return r.p.r.Read(b)
		}
	}
	if len(r.rest) == 0 && r.err == nil {
		p := r.p
		p.mu.Lock()
		if !p.pending {
			p.pending = true
			p.ask <- struct{}{}
		}
		p.mu.Unlock()
		select {
		case c := <-p.got:
			p.mu.Lock()
			p.pending = false
			p.mu.Unlock()
			r.rest, r.err = c.b, c.err
		case <-r.stop:
			return 0, errStopped
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		}
	}
	n := copy(b, r.rest)
	r.rest = r.rest[n:]
	if len(r.rest) == 0 && r.err != nil {
		return n, r.err
	}
	return n, nil
}
