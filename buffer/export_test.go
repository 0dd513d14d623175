package buffer

import "time"

// MaxRecordsPerBuf is the most records one buffer of p can carry.
func (p *Pool) MaxRecordsPerBuf() int { return p.nrec }

// SetClock makes the package read the time from f (the start of a wait
// outside, its grace and the grace timer's delay are all measured on it)
// until restore is called. Call both while no pool has tasks running.
func SetClock(f func() time.Time) (restore func()) {
	old := now
	now = f
	return func() { now = old }
}

// FireWatch stops p's grace timer and does at once what the timer does
// when it fires.
func (p *Pool) FireWatch() {
	p.mu.Lock()
	if p.watch != nil && p.watch.Stop() {
		p.watchers.Done()
	}
	gen := p.watchGen
	p.mu.Unlock()
	p.watchFired(gen)
}

// Carried returns the bytes ScanFrom on o copied from one buffer to the
// next (a line cut by a buffer's end, or lines its index had no room for).
func (o *Output) Carried() int64 { return o.carried }
