package jobs

import "time"

// An Observer is told what workers do. Its methods are called from many
// goroutines at once and must not block.
type Observer interface {
	// Claimed: a worker of stage took the job.
	Claimed(stage, job string)
	// Done: the job's outputs are committed and its inputs removed, d after it was claimed.
	Done(stage, job string, d time.Duration)
	// Failed: the job's filter failed (status, or -1 for an error before it ran); retry says whether it will run again.
	Failed(stage, job string, status int, retry bool)
	// TakenBack: n claims of a dead or expired owner went back to ready in place.
	TakenBack(place string, n int)
	// PutBack: the job's input changed while it ran (its writer was not
	// done); its output was discarded and it went back, to be done again.
	PutBack(stage, job string)
}

// Observers calls every observer in turn.
type Observers []Observer

var _ Observer = Observers(nil)

// Claimed calls Claimed of each observer.
func (os Observers) Claimed(stage, job string) {
	for _, o := range os {
		o.Claimed(stage, job)
	}
}

// Done calls Done of each observer.
func (os Observers) Done(stage, job string, d time.Duration) {
	for _, o := range os {
		o.Done(stage, job, d)
	}
}

// Failed calls Failed of each observer.
func (os Observers) Failed(stage, job string, status int, retry bool) {
	for _, o := range os {
		o.Failed(stage, job, status, retry)
	}
}

// TakenBack calls TakenBack of each observer.
func (os Observers) TakenBack(place string, n int) {
	for _, o := range os {
		o.TakenBack(place, n)
	}
}

// PutBack calls PutBack of each observer.
func (os Observers) PutBack(stage, job string) {
	for _, o := range os {
		o.PutBack(stage, job)
	}
}
