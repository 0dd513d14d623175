package place

import (
	"context"
	"hash/fnv"
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configure Watch. The zero WatchOptions are the defaults.
type WatchOptions struct {
	// NoEvents polls even where the file system sends events.
	NoEvents bool
	// Poll is the first interval between two looks at a directory that
	// sends no events; each look that finds nothing new doubles it, up to
	// MaxPoll, and a change brings it back. 0 means 50ms.
	Poll time.Duration
	// MaxPoll is the longest interval between two polls; 0 means 2s.
	MaxPoll time.Duration
	// Rescan is how often the watcher says "look again" in any case, for
	// the events a watch misses; 0 means 30s.
	Rescan time.Duration
}

// Watcher says when to look at a directory again: C receives a value
// after the directory may have changed. Values do not pile up: one
// waiting value stands for any number of changes. Close stops it.
type Watcher struct {
	// C receives a value when the directory may have changed.
	C <-chan struct{}
	// Events is true when the watcher is told of changes by the system,
	// false when it polls.
	Events bool

	c      chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	fw     *fsnotify.Watcher
}

// Watch watches dir until ctx is done or Close is called. It uses
// inotify unless o.NoEvents is set or dir is on a file system whose
// events do not cover other hosts' changes (NFS, FUSE, SMB), where it
// polls with back-off. Either way it also says "look again" every
// o.Rescan.
func Watch(ctx context.Context, dir string, o WatchOptions) (*Watcher, error) {
	if err := isDir(dir); err != nil {
		return nil, err
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.MaxPoll <= 0 {
		o.MaxPoll = 2 * time.Second
	}
	if o.Rescan <= 0 {
		o.Rescan = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{c: make(chan struct{}, 1), cancel: cancel}
	w.C = w.c
	if !o.NoEvents && !remoteFS(dir) {
		if fw, err := fsnotify.NewWatcher(); err == nil {
			if err := fw.Add(dir); err == nil {
				w.fw, w.Events = fw, true
			} else {
				fw.Close()
			}
		}
	}
	// The first listing is taken now: a change made after Watch returns
	// is a change.
	first := listing(dir)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if w.Events {
			w.events(ctx, o)
		} else {
			w.poll(ctx, dir, first, o)
		}
	}()
	return w, nil
}

// Watch watches the place's ready tokens (see the function Watch): a
// worker waits on C, then lists Tokens and claims what it finds.
func (p *Place) Watch(ctx context.Context, o WatchOptions) (*Watcher, error) {
	return Watch(ctx, p.dir, o)
}

// Close stops the watcher and waits for its goroutine.
func (w *Watcher) Close() error {
	w.cancel()
	w.wg.Wait()
	if w.fw != nil {
		return w.fw.Close()
	}
	return nil
}

func (w *Watcher) signal() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

func (w *Watcher) events(ctx context.Context, o WatchOptions) {
	rescan := time.NewTicker(o.Rescan)
	defer rescan.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.signal()
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.signal() // an overflow: events were lost
		case <-rescan.C:
			w.signal()
		}
	}
}

func (w *Watcher) poll(ctx context.Context, dir string, last uint64, o WatchOptions) {
	wait := o.Poll
	t := time.NewTimer(wait)
	defer t.Stop()
	lastScan := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := listing(dir)
		if now != last {
			last, wait = now, o.Poll
			w.signal()
			lastScan = time.Now()
		} else {
			if time.Since(lastScan) >= o.Rescan {
				w.signal()
				lastScan = time.Now()
			}
			wait = min(2*wait, o.MaxPoll)
		}
		t.Reset(wait)
	}
}

// listing sums up the names in dir, in one number that changes when a
// name comes or goes (0 when dir cannot be read).
func listing(dir string) uint64 {
	f, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	var sum uint64
	for _, n := range names {
		h := fnv.New64a()
		h.Write([]byte(n))
		sum += h.Sum64() // order-free: Readdirnames does not sort
	}
	return sum + uint64(len(names))
}
