package place

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Marking is what one look at a place found: its ready tokens and who
// holds what. Inspect takes it without a Worker and without writing
// anything, so that a monitor (tpipe status, a metrics scrape) changes
// nothing it looks at and needs no right to write.
type Marking struct {
	Dir     string
	Tokens  int      // ready tokens (the place's marking in the Petri net)
	Pending int      // tokens being written, in .tmp
	Aside   int      // tokens moved aside, in .bad
	Holders []Holder // one per claim directory, sorted by name
}

// Holder is one claim directory of a place: an owner's claims and locks.
type Holder struct {
	Owner Owner
	// Taker is set when the directory is a dead owner's, being given back
	// by Taker (.claim/TAKER~OWNER).
	Taker *Owner
	// Renewed is when the owner last renewed its lease here (the
	// directory's modification time).
	Renewed time.Time
	Claims  []string // names of the claimed tokens
	Locks   []string // names it holds locks on
}

// Live reports whether h's owner still holds its claims, judged as a
// worker of this host would with the given lease (see Worker.Alive): on
// this host by its process, elsewhere by its last renewal.
func (h Holder) Live(lease time.Duration, now time.Time) bool {
	if h.Taker != nil {
		return false
	}
	me, err := self("")
	if err == nil && h.Owner.Host == me.Host {
		if alive, known := sameProcess(h.Owner, me); known {
			return alive
		}
	}
	return now.Sub(h.Renewed) <= lease
}

// Inspect looks at the place at dir without changing it. A directory
// that is not (yet) a place is an empty marking; one that does not exist
// is an error.
func Inspect(dir string) (*Marking, error) {
	if err := isDir(dir); err != nil {
		return nil, err
	}
	m := &Marking{Dir: filepath.Clean(dir)}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && ValidName(e.Name()) == nil {
			m.Tokens++
		}
	}
	m.Pending = countFiles(filepath.Join(dir, tmpDir), isSpare)
	m.Aside = countFiles(filepath.Join(dir, badDir), nil)
	claims, err := sortedDir(filepath.Join(dir, claimDir))
	if err != nil {
		return nil, err
	}
	for _, e := range claims {
		if !e.IsDir() {
			continue
		}
		h, ok := inspectHolder(filepath.Join(dir, claimDir), e)
		if ok {
			m.Holders = append(m.Holders, h)
		}
	}
	return m, nil
}

// inspectHolder reads one claim directory; ok is false for a directory
// that is not the protocol's, or that went away while it was read.
func inspectHolder(claims string, e fs.DirEntry) (h Holder, ok bool) {
	name := e.Name()
	if i := strings.IndexByte(name, '~'); i >= 0 {
		taker, err := ParseOwner(name[:i])
		if err != nil {
			return h, false
		}
		h.Taker = &taker
		name = name[i+1:]
	}
	o, err := ParseOwner(name)
	if err != nil {
		return h, false
	}
	h.Owner = o
	fi, err := e.Info()
	if err != nil {
		return h, false
	}
	h.Renewed = fi.ModTime()
	dir := filepath.Join(claims, e.Name())
	ents, err := sortedDir(dir)
	if err != nil {
		return h, false
	}
	for _, t := range ents {
		switch {
		case t.Name() == locksDir:
			locks, _ := sortedDir(filepath.Join(dir, locksDir))
			for _, l := range locks {
				h.Locks = append(h.Locks, l.Name())
			}
		case ValidName(t.Name()) == nil:
			h.Claims = append(h.Claims, t.Name())
		}
	}
	return h, true
}

// countFiles counts the entries of dir but those skip says to skip, 0
// when it is missing.
func countFiles(dir string, skip func(name string) bool) int {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	n := 0
	for _, e := range ents {
		if skip == nil || !skip(e.Name()) {
			n++
		}
	}
	return n
}
