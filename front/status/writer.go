// Package status keeps and reads the state of the workers on a spool
// folder: each worker rewrites one status file, and `tpipe status DIR`
// puts them together with what the places hold.
//
// # Status files
//
// A worker (pmjq, serve) writes DIR/.status/OWNER.json, OWNER being its
// place.Owner (host, boot, pid, start time), at most once a second and
// atomically (a temporary file renamed over the old one). It holds the
// worker's stages (a Petri net's transitions, with their input, output
// and failed places, as paths relative to DIR where they are inside it),
// its counters per stage, and, as PipeFlow measures them, exponentially
// weighted moving averages of each stage's delivery rate and of its
// latency from claim to delivery. On a clean stop the file stays, marked
// stopped, so its counters still count.
//
// Places and token counts are never in the files: Read takes them from
// the folders (place.Inspect) each time, so they are right whoever did
// the work.
package status

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

// Dir is the folder of the status files inside a spool folder.
const Dir = ".status"

// Stage is a transition: a stage of workers and its places.
type Stage struct {
	Name    string   `json:"name"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs,omitempty"`
	// FailedPlaces are where the stage puts jobs that failed for good.
	FailedPlaces []string `json:"failed_places,omitempty"`
}

// StageStatus is a stage as one worker saw it.
type StageStatus struct {
	Stage
	Claimed int64 `json:"claimed"`
	Done    int64 `json:"done"`
	Failed  int64 `json:"failed"`
	Retried int64 `json:"retried"`
	// PutBack counts runs whose input changed while they ran (its writer
	// was not done): their output was discarded and the job put back.
	PutBack  int64 `json:"put_back,omitempty"`
	InFlight int64 `json:"in_flight"`
	// Rate is the EWMA of deliveries per second.
	Rate float64 `json:"rate_per_second"`
	// Latency is the EWMA of the seconds from claim to delivery.
	Latency float64 `json:"latency_seconds"`
}

// File is one worker's status file.
type File struct {
	Owner        string        `json:"owner"`
	Started      time.Time     `json:"started"`
	Updated      time.Time     `json:"updated"`
	Stopped      bool          `json:"stopped,omitempty"`
	LeaseSeconds float64       `json:"lease_seconds"`
	TakenBack    int64         `json:"taken_back"`
	Stages       []StageStatus `json:"stages"`
}

// Smoothing is the time constant of the rates' moving averages: a
// change of rate shows by two thirds after this long.
const Smoothing = 10 * time.Second

// latencyWeight is the weight of each new latency in its average.
const latencyWeight = 0.2

// Writer keeps one worker's status file. It is a jobs.Observer, safe for
// concurrent use. NewWriter starts its goroutine; Close stops it.
type Writer struct {
	dir  string // the spool folder
	path string
	now  func() time.Time

	mu        sync.Mutex
	f         File
	byName    map[string]int
	delivered []int64 // deliveries since the last tick, per stage
	lastTick  time.Time
	changed   bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

var _ jobs.Observer = (*Writer)(nil)

// Options configure a Writer; the zero Options are the defaults.
type Options struct {
	// Every is how often the file is rewritten when something changed;
	// 0 means once a second.
	Every time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewWriter writes the status file of owner in dir/.status (creating it
// 0700), declaring stages, and keeps it up to date until Close. lease is
// the worker's lease, by which readers judge a file no longer renewed.
func NewWriter(dir string, owner place.Owner, lease time.Duration, stages []Stage, o Options) (*Writer, error) {
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	sd := filepath.Join(dir, Dir)
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	now := o.Now()
	w := &Writer{
		dir: dir, path: filepath.Join(sd, owner.String()+".json"), now: o.Now,
		f:        File{Owner: owner.String(), Started: now, Updated: now, LeaseSeconds: lease.Seconds()},
		byName:   map[string]int{},
		lastTick: now,
		stop:     make(chan struct{}), done: make(chan struct{}),
	}
	for _, s := range stages {
		w.stage(s.Name).Stage = relStage(dir, s)
	}
	if err := w.write(); err != nil {
		return nil, err
	}
	go w.loop(o.Every)
	return w, nil
}

// relStage writes a stage's places relative to dir where they are in it.
func relStage(dir string, s Stage) Stage {
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = relPath(dir, p)
		}
		return out
	}
	return Stage{Name: s.Name, Inputs: rel(s.Inputs), Outputs: rel(s.Outputs), FailedPlaces: rel(s.FailedPlaces)}
}

// relPath is p (relative to dir, or absolute) relative to dir when it is
// inside it, else absolute.
func relPath(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	ad, err1 := filepath.Abs(dir)
	ap, err2 := filepath.Abs(p)
	if err1 != nil || err2 != nil {
		return p
	}
	if r, err := filepath.Rel(ad, ap); err == nil && r != ".." && !filepath.IsAbs(r) && !startsUp(r) {
		return r
	}
	return ap
}

func startsUp(r string) bool { return len(r) >= 3 && r[:3] == ".."+string(filepath.Separator) }

// stage returns the stage named name, adding it; w.mu is held.
func (w *Writer) stage(name string) *StageStatus {
	i, ok := w.byName[name]
	if !ok {
		i = len(w.f.Stages)
		w.byName[name] = i
		w.f.Stages = append(w.f.Stages, StageStatus{Stage: Stage{Name: name}})
		w.delivered = append(w.delivered, 0)
	}
	return &w.f.Stages[i]
}

func (w *Writer) update(stage string, f func(*StageStatus)) {
	w.mu.Lock()
	f(w.stage(stage))
	w.changed = true
	w.mu.Unlock()
}

// Claimed counts a claim.
func (w *Writer) Claimed(stage, job string) {
	w.update(stage, func(s *StageStatus) { s.Claimed++; s.InFlight++ })
}

// Done counts a delivery and its latency.
func (w *Writer) Done(stage, job string, d time.Duration) {
	w.mu.Lock()
	s := w.stage(stage)
	s.Done++
	s.InFlight--
	if s.Latency == 0 {
		s.Latency = d.Seconds()
	} else {
		s.Latency += latencyWeight * (d.Seconds() - s.Latency)
	}
	w.delivered[w.byName[stage]]++
	w.changed = true
	w.mu.Unlock()
}

// Failed counts a failure.
func (w *Writer) Failed(stage, job string, status int, retry bool) {
	w.update(stage, func(s *StageStatus) {
		s.InFlight--
		if retry {
			s.Retried++
		} else {
			s.Failed++
		}
	})
}

// PutBack counts a job put back because its input changed under it.
func (w *Writer) PutBack(stage, job string) {
	w.update(stage, func(s *StageStatus) {
		s.InFlight--
		s.PutBack++
	})
}

// TakenBack counts claims given back.
func (w *Writer) TakenBack(dir string, n int) {
	w.mu.Lock()
	w.f.TakenBack += int64(n)
	w.changed = true
	w.mu.Unlock()
}

// Tick folds the deliveries since the last tick into the rates, at time
// now. The Writer's goroutine calls it; tests call it with a clock of
// their own.
func (w *Writer) Tick(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	dt := now.Sub(w.lastTick).Seconds()
	if dt <= 0 {
		return
	}
	alpha := 1 - math.Exp(-dt/Smoothing.Seconds())
	for i := range w.f.Stages {
		s := &w.f.Stages[i]
		inst := float64(w.delivered[i]) / dt
		old := s.Rate
		s.Rate += alpha * (inst - s.Rate)
		if s.Rate < 1e-3 {
			s.Rate = 0
		}
		if s.Rate != old {
			w.changed = true
		}
		w.delivered[i] = 0
	}
	w.lastTick = now
}

// Snapshot returns the file as it would be written now.
func (w *Writer) Snapshot() File {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.f
	f.Stages = append([]StageStatus(nil), w.f.Stages...)
	return f
}

func (w *Writer) loop(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	renew := time.Duration(w.f.LeaseSeconds*float64(time.Second)) / 4
	last := w.now()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := w.now()
		w.Tick(now)
		w.mu.Lock()
		due := w.changed || now.Sub(last) >= renew
		w.mu.Unlock()
		if due {
			w.write() // a failure is tried again at the next tick
			last = now
		}
	}
}

// write rewrites the file atomically.
func (w *Writer) write() error {
	w.mu.Lock()
	w.f.Updated = w.now()
	b, err := json.MarshalIndent(w.f, "", "  ")
	w.changed = false
	w.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(w.path), "."+filepath.Base(w.path)+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// Close stops the Writer and writes its file a last time, marked
// stopped.
func (w *Writer) Close() error {
	var err error
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.Tick(w.now())
		w.mu.Lock()
		w.f.Stopped = true
		for i := range w.f.Stages {
			w.f.Stages[i].Rate, w.f.Stages[i].InFlight = 0, 0
		}
		w.mu.Unlock()
		err = w.write()
	})
	return err
}
