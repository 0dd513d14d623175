package place

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Recycling. A job engine removes one input file and creates one output
// file per job; on ext4 without a journal (this project's machines) the
// inode allocator skips every inode deleted in the last half minute, and
// reads its inode to know, so at a thousand jobs a second each create
// walked thousands of dead inodes: most of a job's CPU was that walk. So
// an input whose job is done may be moved, instead of removed, into the
// .tmp of the place its output went to, as a spare, and the next Create
// there truncates and reuses it: no inode freed, none allocated. Only a
// file that is nobody else's is reused: a regular file of this process's
// user, with no other link, small (its blocks stay held until reused),
// into a place whose tokens are this user's alone (not a shared place).

// spareSuffix marks a spare in .tmp; Inspect does not count spares as
// tokens being written.
const spareSuffix = ".spare"

// maxSpares is how many spares a place keeps; maxSpareSize the largest
// file kept as one.
const (
	maxSpares    = 64
	maxSpareSize = 1 << 20
)

// Recycle moves the file at path, a claimed token of another place on the
// same file system that its job no longer needs, into p's .tmp as a spare,
// and reports whether it did; when it did not, the caller removes it.
func (p *Place) Recycle(path string) bool {
	if p.perm != 0o600 {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSpareSize {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink != 1 || int(st.Uid) != os.Geteuid() {
		return false
	}
	// The lock is held over the rename so that a Close cannot come
	// between the check and the spare's listing and leave it in .tmp.
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.spares) >= maxSpares || p.closed || p.used&useTmp == 0 {
		return false
	}
	spare := filepath.Join(p.dir, tmpDir, p.w.name+"~"+strconv.FormatUint(p.seq.Add(1), 10)+spareSuffix)
	if err := os.Rename(path, spare); err != nil {
		return false // (another file system, or .tmp gone: remove it instead)
	}
	p.spares = append(p.spares, spare)
	return true
}

// spare opens a spare of p for writing, emptied, with the place's mode,
// or returns nil when there is none.
func (p *Place) spare() *os.File {
	for {
		p.mu.Lock()
		n := len(p.spares)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		path := p.spares[n-1]
		p.spares = p.spares[:n-1]
		p.mu.Unlock()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
		if err != nil {
			os.Remove(path)
			continue
		}
		if f.Chmod(p.perm) != nil {
			f.Close()
			os.Remove(path)
			continue
		}
		return f
	}
}

// dropSpares removes p's spares (at Close).
func (p *Place) dropSpares() {
	p.mu.Lock()
	spares := p.spares
	p.spares = nil
	p.mu.Unlock()
	for _, s := range spares {
		if err := os.Remove(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
}

// isSpare reports whether name, in .tmp, is a spare.
func isSpare(name string) bool { return strings.HasSuffix(name, spareSuffix) }
