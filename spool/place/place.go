package place

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The protocol's entries of a place (see the package doc).
const (
	tmpDir   = ".tmp"
	claimDir = ".claim"
	lockDir  = ".lock"
	locksDir = ".locks" // inside an owner's claim directory
	badDir   = ".bad"
)

// Place is a directory of tokens, opened by a Worker (Worker.Open). It is
// safe for concurrent use.
type Place struct {
	w    *Worker
	dir  string
	own  string      // .claim/OWNER
	perm fs.FileMode // of the tokens it writes: 0600, or 0640 in a shared place
	seq  atomic.Uint64

	mu      sync.Mutex
	hasOwn  bool     // own exists
	used    uint8    // the protocol's entries this place has made or used (use*)
	spares  []string // files in .tmp to reuse (see recycle.go)
	claims  map[string]bool
	locks   map[string]bool
	closed  bool
	renewed time.Time
}

// The protocol's entries of a place, as bits of Place.used: each is made
// when first needed, and removed at Close once empty.
const (
	useTmp uint8 = 1 << iota
	useClaim
	useLock
	useBad
)

// protocolEntries are the protocol's entries, in the order Close removes them.
var protocolEntries = [...]struct {
	bit  uint8
	name string
}{{useClaim, claimDir}, {useLock, lockDir}, {useTmp, tmpDir}, {useBad, badDir}}

// inEntry runs op, which makes something inside the protocol's entry sub
// of the place; when op fails because sub is not there (never made, or
// removed by a worker that ended since), it makes sub and runs op again.
// A worker that ends removes an entry only when it is empty, so a few
// tries are enough for any race with one.
func (p *Place) inEntry(bit uint8, sub string, op func() error) error {
	p.mu.Lock()
	first := p.used&bit == 0
	p.used |= bit
	p.mu.Unlock()
	if first {
		// Made, or checked to be a directory and not a link, once.
		if err := mkdir(filepath.Join(p.dir, sub)); err != nil {
			return err
		}
	}
	err := op()
	for try := 0; try < 5 && errors.Is(err, fs.ErrNotExist); try++ {
		if merr := mkdir(filepath.Join(p.dir, sub)); merr != nil && !errors.Is(merr, fs.ErrNotExist) {
			return merr
		}
		err = op()
	}
	return err
}

// Dir returns the place's directory.
func (p *Place) Dir() string { return p.dir }

// Worker returns the worker that opened p.
func (p *Place) Worker() *Worker { return p.w }

func (p *Place) path(name string) string { return filepath.Join(p.dir, name) }

// tokenPerm is the mode of the tokens written in dir: 0640 when dir is
// set-group-ID (a place shared with the group of the stage that reads
// it, as tpipe scripts sets up pmjq's permission model), else 0600.
func tokenPerm(dir string) fs.FileMode {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSetgid != 0 {
		return 0o640
	}
	return 0o600
}

// mkdir creates dir 0700, or checks that it is a directory and not a
// symbolic link.
func mkdir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return isDir(dir)
	}
	return err
}

// mkdirAll is mkdir of dir and its missing parents. Parents that exist
// may be links (/tmp often is); dir itself may not.
func mkdirAll(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	return mkdir(dir)
}

func isDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "open", Path: dir, Err: errors.New("is a symbolic link, which a place never follows")}
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

// Tokens returns the names of the ready tokens, sorted: the regular files
// of the place with valid names. Anything else (a link, a directory, a
// name ValidName refuses) is not a token and is left alone.
func (p *Place) Tokens() ([]string, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && ValidName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil // ReadDir sorts
}

// Refusal is a file of a place that is not a token, and why.
type Refusal struct {
	Name   string
	Reason string
}

// Listing is Tokens, with the entries that are not tokens and why: a
// name ValidName refuses, a link, a folder, a FIFO. Hidden names (the
// protocol's entries among them) are neither.
func (p *Place) Listing() (tokens []string, refused []Refusal, err error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if err := ValidName(name); err != nil {
			var ne *NameError
			reason := err.Error()
			if errors.As(err, &ne) {
				reason = "its name " + ne.Reason
			}
			refused = append(refused, Refusal{name, reason})
			continue
		}
		switch t := e.Type(); {
		case t.IsRegular():
			tokens = append(tokens, name)
		case t&fs.ModeSymlink != 0:
			refused = append(refused, Refusal{name, "a symbolic link (a place follows none)"})
		case t.IsDir():
			refused = append(refused, Refusal{name, "a folder"})
		default:
			refused = append(refused, Refusal{name, "not a regular file"})
		}
	}
	return tokens, refused, nil
}

// Open opens the ready token name for reading. A link is refused
// (O_NOFOLLOW), and so is anything but a regular file.
func (p *Place) Open(name string) (*os.File, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	return openFile(p.path(name))
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Has reports whether the ready token name exists.
func (p *Place) Has(name string) (bool, error) {
	if err := ValidName(name); err != nil {
		return false, err
	}
	fi, err := os.Lstat(p.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}

// Remove removes the ready token name; one that is not there is not an
// error.
func (p *Place) Remove(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := os.Remove(p.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Aside moves the ready token name to the place's .bad directory (a
// corrupt token, kept for a person to look at) and returns its new path.
func (p *Place) Aside(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	bad := filepath.Join(p.dir, badDir)
	p.tidyLater(useBad)
	if err := mkdir(bad); err != nil {
		return "", err
	}
	to := filepath.Join(bad, name)
	return to, os.Rename(p.path(name), to)
}

// Pending is a token being written under a temporary name in the place's
// .tmp directory. Write to it, then Commit or Abort. It is not safe for
// concurrent use.
type Pending struct {
	p    *Place
	name string
	f    *os.File
	done bool
	// written and started count the bytes Write wrote and those whose
	// writeback it has started.
	written, started int64
	// synced: SyncAll made its data durable; its commit does not sync it
	// again.
	synced bool
}

// writebackEvery is how many bytes Write lets build up before it starts
// their writeback, when the worker syncs.
const writebackEvery = 1 << 20

// Create starts writing the token name. Nobody sees it until Commit.
func (p *Place) Create(name string) (*Pending, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	if f := p.spare(); f != nil {
		return &Pending{p: p, name: name, f: f}, nil
	}
	tmp := filepath.Join(p.dir, tmpDir, p.w.name+"~"+strconv.FormatUint(p.seq.Add(1), 10))
	var f *os.File
	err := p.inEntry(useTmp, tmpDir, func() (err error) {
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, p.perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Pending{p: p, name: name, f: f}, nil
}

// Name returns the token's name.
func (t *Pending) Name() string { return t.name }

// Place returns the place the token is written into.
func (t *Pending) Place() *Place { return t.p }

// Write writes to the token's file. Unless the worker does not sync, it
// starts the writeback of every MiB written, so that the sync at commit
// has little left to wait for.
func (t *Pending) Write(b []byte) (int, error) {
	n, err := t.f.Write(b)
	t.written += int64(n)
	if t.written-t.started >= writebackEvery && !t.p.w.o.NoSync {
		startWriteback(t.f, t.started, t.written-t.started)
		t.started = t.written
	}
	return n, err
}

// File returns the token's file, for a caller that writes it otherwise
// (io.Copy, ReadFrom). It must not be closed.
func (t *Pending) File() *os.File { return t.f }

// Commit makes the token ready: it syncs the file, renames it to its name
// in the place (replacing a token of that name) and syncs the directory.
// After an error the token is aborted.
func (t *Pending) Commit() error { return t.commitOnce(true) }

// CommitAs is Commit under another name than Create's: for a token named
// after its content, known only once it is written.
func (t *Pending) CommitAs(name string) error {
	if err := t.Rename(name); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// Rename changes the name the token is to have at Commit.
func (t *Pending) Rename(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	t.name = name
	return nil
}

// CommitNoDirSync is Commit without the sync of the directory: the token
// is whole under its name (its file was synced before the rename), but
// after a power loss the rename may be undone, leaving the file in .tmp
// for Reap. A caller that commits many tokens syncs the directory once
// after them (SyncDir); until then it must not count them as durable.
func (t *Pending) CommitNoDirSync() error { return t.commitOnce(false) }

// commitOnce commits the token, or aborts it on error; once only.
func (t *Pending) commitOnce(dirSync bool) error {
	if t.done {
		return errors.New("place: commit after commit or abort")
	}
	err := t.commit(dirSync)
	if err != nil {
		t.Abort()
	}
	t.done = true
	return err
}

// OpenWritten opens what has been written to the token so far for
// reading, under its temporary name: a reader may read a token the writer
// has finished before Commit makes it durable, and keep reading it after
// the rename. The caller closes the file.
func (t *Pending) OpenWritten() (*os.File, error) {
	if t.done {
		return nil, errors.New("place: open of a committed or aborted token")
	}
	return openFile(t.f.Name())
}

func (t *Pending) commit(dirSync bool) error {
	sync := !t.p.w.o.NoSync
	if sync && !t.synced {
		if err := t.f.Sync(); err != nil {
			return err
		}
	}
	if err := t.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(t.f.Name(), t.p.path(t.name)); err != nil {
		return err
	}
	if sync && dirSync {
		return syncDir(t.p.dir)
	}
	return nil
}

// SyncDir makes the names of the place's tokens durable: those committed
// with CommitNoDirSync before it returns. It does nothing when the worker
// does not sync (Options.NoSync).
func (p *Place) SyncDir() error {
	if p.w.o.NoSync {
		return nil
	}
	return syncDir(p.dir)
}

// Abort removes the token's file. After Commit it does nothing.
func (t *Pending) Abort() error {
	if t.done {
		return nil
	}
	t.done = true
	t.f.Close()
	return os.Remove(t.f.Name())
}

// Put writes the token name with write and commits it: a reader finds
// either no token or the whole of it.
func (p *Place) Put(name string, write func(w io.Writer) error) error {
	t, err := p.Create(name)
	if err != nil {
		return err
	}
	if err := write(t.f); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// ownDir returns the worker's claim directory in p, creating it.
func (p *Place) ownDir() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", ErrClosed
	}
	if !p.hasOwn {
		p.used |= useClaim
		err := mkdir(filepath.Join(p.dir, claimDir))
		if err == nil {
			err = mkdir(p.own)
		}
		for try := 0; try < 5 && errors.Is(err, fs.ErrNotExist); try++ {
			// .claim is not there, or was just removed by a worker that
			// ended (it removes it only when empty): make it again.
			if merr := mkdir(filepath.Join(p.dir, claimDir)); merr != nil && !errors.Is(merr, fs.ErrNotExist) {
				return "", merr
			}
			err = mkdir(p.own)
		}
		if err != nil {
			return "", err
		}
		if err := mkdir(filepath.Join(p.own, locksDir)); err != nil {
			return "", err
		}
		// The lease starts on the worker's clock, as its renewals do.
		now := p.w.o.Now()
		if err := os.Chtimes(p.own, now, now); err != nil {
			return "", err
		}
		p.hasOwn = true
		p.claims, p.locks = map[string]bool{}, map[string]bool{}
	}
	return p.own, nil
}

func (p *Place) renew(now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasOwn || p.closed {
		return nil
	}
	p.renewed = now
	return os.Chtimes(p.own, now, now)
}

// Close gives back the tokens the worker still has claimed in p, drops
// its locks and removes its claim directory; then it removes each of the
// protocol's entries it made or used (.claim, .lock, .tmp, .bad) that is
// empty, so that a folder is left as it was found. An entry another
// worker still uses is not empty and stays; one that a worker starting
// meanwhile needs again, it makes again. Worker.Close calls it.
func (p *Place) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	has, used := p.hasOwn, p.used
	p.mu.Unlock()
	p.dropSpares()
	var err error
	if has {
		err = p.giveBack(p.own)
	}
	for _, e := range protocolEntries {
		if used&e.bit != 0 {
			os.Remove(filepath.Join(p.dir, e.name)) // (only if empty: rmdir)
		}
	}
	return err
}

// tmpOwner returns the owner part of a name in .tmp or .claim: what comes
// before the first '~', or the whole name.
func tmpOwner(name string) string {
	if i := strings.IndexByte(name, '~'); i >= 0 {
		return name[:i]
	}
	return name
}

// sortedDir lists dir's entries, none if it is gone.
func sortedDir(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}
