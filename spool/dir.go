package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tpipe/tpipe/spool/place"
)

// GraphToken is the name of the Record in DIR.
const GraphToken = "graph"

// runLock is the name of the lock a run or a gc holds on DIR.
const runLock = "run"

func validPlace(name string) error {
	if err := place.ValidName(name); err != nil {
		return err
	}
	if name == GraphToken {
		return &place.NameError{Name: name, Reason: "is the graph's record"}
	}
	return nil
}

// Record is what DIR/graph says of the graph that uses the spool.
type Record struct {
	Version int `json:"version"`
	// Shape is the hash of the graph's tasks and edges without what the
	// tasks do: two graphs of one shape differ only in their stages,
	// which the cache handles.
	Shape  string        `json:"shape"`
	Tasks  []RecordTask  `json:"tasks"`
	Places []RecordPlace `json:"places"`
	// Live lists, per place, the tokens the last complete run used; GC
	// keeps these and drops the rest. Empty until a run completes.
	Live map[string][]string `json:"live,omitempty"`
}

// RecordTask is one task of a Record.
type RecordTask struct {
	Name  string `json:"name"`
	Ident string `json:"ident,omitempty"`
}

// RecordPlace is one edge of a Record.
type RecordPlace struct {
	Name string `json:"name"` // the directory
	Edge string `json:"edge"`
	From string `json:"from"`
	To   string `json:"to"`
}

// recordVersion is the Version this code writes and reads.
const recordVersion = 1

// NotSpoolError is a DIR that holds files and is not a spool: tpipe
// refuses to use it (or gc it), so that a mistyped --spool never fills or
// empties a directory of the user's.
type NotSpoolError struct{ Dir string }

func (e *NotSpoolError) Error() string {
	return fmt.Sprintf("spool %s: a directory with files and no %s: it is not a spool; give a new or empty directory", e.Dir, GraphToken)
}

// InUseError is a DIR whose run lock a live process holds.
type InUseError struct {
	Dir   string
	Owner place.Owner
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("spool %s: in use by pid %d on host %s; wait for it, or give another directory", e.Dir, e.Owner.PID, e.Owner.Host)
}

// OtherGraphError is a DIR made by a graph of another shape.
type OtherGraphError struct {
	Dir   string
	Tasks []string // the other graph's tasks
}

func (e *OtherGraphError) Error() string {
	return fmt.Sprintf("spool %s: made by another pipeline (%s); give another directory, or empty this one with tpipe gc --all %s",
		e.Dir, strings.Join(e.Tasks, " | "), e.Dir)
}

// DirError is a failure of the spool DIR's disk, said with the DIR: its
// text is "spool DIR: " and Err's. A caller that words disk errors asks
// for it (errors.As) to know that the DIR is said already.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return "spool " + e.Dir + ": " + e.Err.Error() }
func (e *DirError) Unwrap() error { return e.Err }

// Spool is an open DIR, locked for one run or gc. It is safe for
// concurrent use.
type Spool struct {
	dir  string
	w    *place.Worker
	root *place.Place
	lock *place.Lock

	mu     sync.Mutex
	onDisk []byte // the Record's file as last read or written
}

// Open opens (creating it 0700) and locks the spool at dir, first taking
// back what dead runs held. A directory that holds files but no Record is
// a *NotSpoolError, one locked by a live run an *InUseError.
func Open(dir string, o place.Options) (*Spool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkSpool(abs); err != nil {
		return nil, err
	}
	w, err := place.NewWorker(o)
	if err != nil {
		return nil, err
	}
	s := &Spool{dir: abs, w: w}
	if s.root, err = w.Open(abs); err != nil {
		w.Close()
		return nil, &DirError{Dir: abs, Err: err}
	}
	s.lock, err = s.root.Lock(runLock)
	var le *place.LockedError
	if errors.As(err, &le) {
		w.Close()
		return nil, &InUseError{Dir: abs, Owner: le.Owner}
	}
	if err != nil {
		w.Close()
		return nil, &DirError{Dir: abs, Err: err}
	}
	if _, err := s.root.Reap(); err != nil {
		s.Close()
		return nil, &DirError{Dir: abs, Err: err}
	}
	return s, nil
}

// checkSpool refuses a dir that is not a directory, is a link, or holds
// files without being a spool.
func checkSpool(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("spool %s: not a directory (a spool is never reached through a link)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 || slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == GraphToken }) {
		return nil
	}
	// A run killed before it wrote its Record leaves only the places'
	// protocol directories.
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			return &NotSpoolError{Dir: dir}
		}
	}
	return nil
}

// Dir returns the spool's absolute directory.
func (s *Spool) Dir() string { return s.dir }

// Worker returns the worker that holds the spool.
func (s *Spool) Worker() *place.Worker { return s.w }

// Place opens the place name of the spool, taking back what dead runs
// held in it.
func (s *Spool) Place(name string) (*place.Place, error) {
	if err := validPlace(name); err != nil {
		return nil, err
	}
	p, err := s.w.Open(filepath.Join(s.dir, name))
	if err != nil {
		return nil, err
	}
	if _, err := p.Reap(); err != nil {
		return nil, err
	}
	return p, nil
}

// Record returns the spool's Record; nil for a new spool.
func (s *Spool) Record() (*Record, error) {
	f, err := s.root.Open(GraphToken)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, &DirError{Dir: s.dir, Err: fmt.Errorf("%s: %w", GraphToken, err)}
	}
	s.mu.Lock()
	s.onDisk = b
	s.mu.Unlock()
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("spool %s: %s: %w; give another directory, or empty this one with tpipe gc --all", s.dir, GraphToken, err)
	}
	if r.Version != recordVersion {
		return nil, fmt.Errorf("spool %s: %s has version %d, this tpipe reads %d; give another directory", s.dir, GraphToken, r.Version, recordVersion)
	}
	return &r, nil
}

// Check refuses a Record of another shape than r's: the spool was made
// by another graph. r's Live is taken from the old Record, so that a run
// that stops early leaves GC what the last complete one used.
func (s *Spool) Check(r *Record) error {
	old, err := s.Record()
	if err != nil || old == nil {
		return err
	}
	if old.Shape != r.Shape {
		var names []string
		for _, t := range old.Tasks {
			if t.Name != ">stdout" { // every pipeline has it: it tells nothing
				names = append(names, t.Name)
			}
		}
		return &OtherGraphError{Dir: s.dir, Tasks: names}
	}
	if r.Live == nil {
		r.Live = old.Live
	}
	return nil
}

// SetRecord writes r as the spool's Record, atomically. A Record the
// file already holds (a rerun's) is not written again: that saved a cached
// rerun two fsyncs of the file and two of DIR, most of its time on a disk.
func (s *Spool) SetRecord(r *Record) error {
	r.Version = recordVersion
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Equal(b, s.onDisk) {
		return nil
	}
	err = s.root.Put(GraphToken, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err == nil {
		s.onDisk = b
	}
	return err
}

// Close unlocks the spool and closes its places.
func (s *Spool) Close() error {
	var err error
	if s.lock != nil {
		err = s.lock.Unlock()
		s.lock = nil
	}
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// GCStats say what GC removed.
type GCStats struct {
	Tokens int   // tokens removed
	Places int   // places removed
	Bytes  int64 // their bytes
}

// GC removes from the spool at dir what no current graph refers to: the
// places its Record does not name, and in the others the tokens its last
// complete run did not use (all of them kept if no run has completed),
// with what dead runs left behind. With all, it empties dir. A directory
// that is not a spool is refused, as by Open.
func GC(dir string, all bool, o place.Options) (GCStats, error) {
	s, err := Open(dir, o)
	if err != nil {
		return GCStats{}, err
	}
	st, err := s.gc(all)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if all && err == nil {
		// The run lock's own directories, empty once it is dropped.
		for _, sub := range []string{".lock", ".claim", ".tmp"} {
			os.Remove(filepath.Join(s.dir, sub))
		}
	}
	return st, err
}

func (s *Spool) gc(all bool) (GCStats, error) {
	var st GCStats
	rec, err := s.Record()
	if err != nil && !all {
		return st, err
	}
	live := map[string]map[string]bool{}
	if !all && rec != nil {
		for _, p := range rec.Places {
			live[p.Name] = nil // a place to keep
			if names, ok := rec.Live[p.Name]; ok {
				live[p.Name] = map[string]bool{}
				for _, n := range names {
					live[p.Name][n] = true
				}
			}
		}
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return st, err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == GraphToken && !all {
			continue
		}
		path := filepath.Join(s.dir, name)
		keep, known := live[name]
		if !known || !e.IsDir() {
			st.Bytes += du(path)
			if err := os.RemoveAll(path); err != nil {
				return st, err
			}
			if e.IsDir() {
				st.Places++
			} else if name != GraphToken {
				st.Tokens++
			}
			continue
		}
		p, err := s.Place(name)
		if err != nil {
			return st, err
		}
		if keep == nil {
			continue
		}
		tokens, err := p.Tokens()
		if err != nil {
			return st, err
		}
		for _, t := range tokens {
			if !keep[t] {
				st.Bytes += du(filepath.Join(p.Dir(), t))
				if err := p.Remove(t); err != nil {
					return st, err
				}
				st.Tokens++
			}
		}
	}
	return st, nil
}

// NotFinishedError is a spool whose graph has not run to its end: its
// places are what a rerun resumes from, so GCIntermediate keeps them.
type NotFinishedError struct{ Dir string }

func (e *NotFinishedError) Error() string {
	return fmt.Sprintf("spool %s: no run of its graph has finished: its places are what a rerun resumes from; run it to the end first, or empty the spool with --all", e.Dir)
}

// GCIntermediate does what GC does, and then empties the places between
// stages of the graph in dir, keeping each place an output ('>' FILE,
// stdout) reads: a rerun of the same graph finds its last stages cached
// and reads only those, while a rerun of a changed graph makes again
// what it needs (from its input files; what came on stdin is gone). It
// refuses a spool whose graph has never run to its end.
func GCIntermediate(dir string, o place.Options) (GCStats, error) {
	s, err := Open(dir, o)
	if err != nil {
		return GCStats{}, err
	}
	defer s.Close()
	rec, err := s.Record()
	if err != nil {
		return GCStats{}, err
	}
	if rec == nil || len(rec.Live) == 0 {
		return GCStats{}, &NotFinishedError{Dir: dir}
	}
	st, err := s.gc(false)
	if err != nil {
		return st, err
	}
	outputs := map[string]bool{}
	for _, t := range rec.Tasks {
		if strings.HasPrefix(t.Name, ">") {
			outputs[t.Name] = true
		}
	}
	for _, rp := range rec.Places {
		if outputs[rp.To] {
			continue
		}
		p, err := s.Place(rp.Name)
		if err != nil {
			return st, err
		}
		tokens, err := p.Tokens()
		if err != nil {
			return st, err
		}
		for _, t := range tokens {
			st.Bytes += du(filepath.Join(p.Dir(), t))
			if err := p.Remove(t); err != nil {
				return st, err
			}
			st.Tokens++
		}
		rec.Live[rp.Name] = []string{} // nothing of it to keep
	}
	return st, s.SetRecord(rec)
}

// du is the size of the files under path, not following links.
func du(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
