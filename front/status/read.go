package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tpipe/tpipe/spool/place"
)

// Report is the state of a spool folder: its places, who holds what, its
// stages and their rates, and the bottleneck.
type Report struct {
	Dir     string
	At      time.Time
	Places  []Place
	Stages  []StageReport
	Workers []Worker
	// Bottleneck names the stage that will take longest to drain its
	// input, and Why says by how much; "" when no stage has work waiting.
	Bottleneck, Why string
}

// Place is one place and what it holds.
type Place struct {
	Name    string // relative to the report's Dir when inside it
	Path    string
	Marking *place.Marking // nil when Err is set
	Err     error
}

// Held counts the place's tokens claimed or locked by a worker.
func (p *Place) Held() int {
	n := 0
	if p.Marking != nil {
		for _, h := range p.Marking.Holders {
			n += len(h.Claims) + len(h.Locks)
		}
	}
	return n
}

// Worker is one status file and whether its worker is alive.
type Worker struct {
	File
	Live bool
}

// StageReport is a stage summed over its workers.
type StageReport struct {
	Stage
	Workers                        int // live
	Claimed, Done, Failed, Retried int64
	PutBack                        int64 // runs put back: their input changed under them
	InFlight                       int64
	Rate                           float64 // deliveries per second, live workers
	Latency                        float64 // seconds, weighted by deliveries
	Waiting                        int     // tokens ready in its input places
	FailedTokens                   int     // jobs in its failed places
	Drain                          float64 // seconds to drain Waiting at Rate; +Inf when stalled
	latSum, latN                   float64 // latency times deliveries, deliveries
}

// Read reads the status files under dir and looks at every place they
// name, and at every sub-folder of dir that is a place.
func Read(dir string, now time.Time) (*Report, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	r := &Report{Dir: dir, At: now}
	files, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	byStage := map[string]*StageReport{}
	var order []string
	for _, f := range files {
		wk := Worker{File: f}
		if !f.Stopped {
			if o, err := place.ParseOwner(f.Owner); err == nil {
				lease := time.Duration(f.LeaseSeconds * float64(time.Second))
				wk.Live = place.Holder{Owner: o, Renewed: f.Updated}.Live(lease, now)
			}
		}
		r.Workers = append(r.Workers, wk)
		for _, s := range f.Stages {
			sr := byStage[s.Name]
			if sr == nil {
				sr = &StageReport{Stage: s.Stage}
				byStage[s.Name] = sr
				order = append(order, s.Name)
			}
			sr.Claimed += s.Claimed
			sr.Done += s.Done
			sr.Failed += s.Failed
			sr.Retried += s.Retried
			sr.PutBack += s.PutBack
			if wk.Live {
				sr.Workers++
				sr.InFlight += s.InFlight
				sr.Rate += s.Rate
				if s.Done > 0 {
					sr.latSum += s.Latency * float64(s.Done)
					sr.latN += float64(s.Done)
				}
			}
		}
	}
	// The places: those the stages name, then any other sub-folder that
	// is a place.
	seen := map[string]int{}
	addPlace := func(name string) int {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, name)
		}
		if i, ok := seen[path]; ok {
			return i
		}
		p := Place{Name: relPath(dir, path), Path: path}
		p.Marking, p.Err = place.Inspect(path)
		seen[path] = len(r.Places)
		r.Places = append(r.Places, p)
		return len(r.Places) - 1
	}
	for _, name := range order {
		sr := byStage[name]
		for j, in := range sr.Inputs {
			i := addPlace(in)
			tokens := 0
			if m := r.Places[i].Marking; m != nil {
				tokens = m.Tokens
			}
			if j == 0 || tokens < sr.Waiting {
				sr.Waiting = tokens // an and-merge takes one of each
			}
		}
		for _, out := range sr.Outputs {
			addPlace(out)
		}
		for _, fp := range sr.FailedPlaces {
			sr.FailedTokens += countFailed(resolve(dir, fp))
		}
		if sr.latN > 0 {
			sr.Latency = sr.latSum / sr.latN
		}
	}
	failedPlaces := map[string]bool{}
	for _, sr := range byStage {
		for _, fp := range sr.FailedPlaces {
			failedPlaces[resolve(dir, fp)] = true
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		failed := failedPlaces[path] || strings.HasSuffix(e.Name(), ".failed") // (counted as failed jobs)
		if e.IsDir() && e.Name() != Dir && !failed && isPlace(path) {
			addPlace(e.Name())
		}
	}
	if len(r.Places) == 0 && holdsTokens(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			addPlace(abs) // tpipe status in: the folder is itself a place
		}
	}
	for _, name := range order {
		r.Stages = append(r.Stages, *byStage[name])
	}
	r.findBottleneck()
	return r, nil
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// isPlace reports whether dir is a place: it holds one of the protocol's
// entries, or tokens. (A place no worker uses has no entries: they are
// removed once empty.)
func isPlace(dir string) bool {
	for _, sub := range []string{".claim", ".tmp", ".lock"} {
		if fi, err := os.Lstat(filepath.Join(dir, sub)); err == nil && fi.IsDir() {
			return true
		}
	}
	return holdsTokens(dir)
}

// holdsTokens reports whether dir holds a regular file with a token's name.
func holdsTokens(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(64)
		for _, e := range ents {
			if e.Type().IsRegular() && place.ValidName(e.Name()) == nil {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// countFailed counts the failed jobs in a failed place: its files, less
// the .stderr and .status kept beside each.
func countFailed(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if e.Type().IsRegular() && place.ValidName(name) == nil && !strings.HasSuffix(name, ".stderr") && !strings.HasSuffix(name, ".status") {
			n++
		}
	}
	return n
}

// readFiles reads dir/.status/*.json, sorted by owner; a file that does
// not parse (being replaced on a file system without atomic rename) is
// skipped.
func readFiles(dir string) ([]File, error) {
	ents, err := os.ReadDir(filepath.Join(dir, Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, Dir, e.Name()))
		if err != nil {
			continue
		}
		var f File
		if json.Unmarshal(b, &f) == nil {
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Owner < files[j].Owner })
	return files, nil
}

// findBottleneck picks the stage whose waiting tokens take longest to
// drain at its present rate (a stage with work and no rate is stalled,
// and the worst); ties go to the slower stage per job.
func (r *Report) findBottleneck() {
	best := -1
	for i := range r.Stages {
		s := &r.Stages[i]
		switch {
		case s.Waiting == 0:
			s.Drain = 0
			continue
		case s.Rate > 0:
			s.Drain = float64(s.Waiting) / s.Rate
		default:
			s.Drain = math.Inf(1)
		}
		if best < 0 || s.Drain > r.Stages[best].Drain || s.Drain == r.Stages[best].Drain && s.Latency > r.Stages[best].Latency {
			best = i
		}
	}
	if best < 0 {
		return
	}
	s := r.Stages[best]
	r.Bottleneck = s.Name
	if math.IsInf(s.Drain, 1) {
		if s.Workers == 0 {
			r.Why = fmt.Sprintf("%d waiting and no live worker", s.Waiting)
		} else {
			r.Why = fmt.Sprintf("%d waiting and nothing delivered lately", s.Waiting)
		}
		return
	}
	r.Why = fmt.Sprintf("%d waiting at %.2f/s: about %s to drain", s.Waiting, s.Rate, round(time.Duration(s.Drain*float64(time.Second))))
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
