package runner

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/sched"
)

// What the runner does for the spool policy (--spool DIR): it says what
// each task is (graph.Task.Ident, the spool's causal hashes) and which
// reads a file as it is (graph.Task.File), and writes '>' files under a
// temporary name that replaces the file only when the run ends well.

// spoolOptions are the sched options of the spool policy.
func (r *Runner) spoolOptions() *sched.SpoolOptions {
	dir := r.cfg.Spool
	if dir != "" {
		dir = r.path(dir)
	}
	return &sched.SpoolOptions{Dir: dir, Segment: r.cfg.Segment, NoSync: r.cfg.NoSync, Codec: r.cfg.Compress, AfterCommit: r.AfterCommit}
}

// spooled reports whether pipelines run on a spool directory of the
// user's (not a temporary one).
func (r *Runner) spooled() bool { return r.cfg.Policy.Persistent() && r.cfg.Spool != "" }

// spoolPolicy is the policy whose folder --spool gives: setting the
// folder chooses it.
var spoolPolicy, _ = sched.FolderPolicy("spool")

// ident says what a command does, for graph.Task.Ident: its kind and
// words, and the size and modification time of every word that names a
// regular file (a FILE operand, a pattern file), so that editing one of
// them reruns the command. A file named otherwise (--file=x) is missed.
func (r *Runner) ident(kind string, argv []string) string {
	parts := []string{kind}
	for _, a := range argv {
		parts = append(parts, strconv.Quote(a))
	}
	for _, a := range argv[1:] {
		if st := r.stamp(a); st != "" {
			parts = append(parts, st)
		}
	}
	return strings.Join(parts, " ")
}

// programIdent is ident for an external program at path: the program's
// own file and the locale it runs in are part of what it does.
func (r *Runner) programIdent(path string, argv []string, env []string) string {
	var locale []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			locale = append(locale, strconv.Quote(kv))
		}
	}
	return r.ident("exec "+strconv.Quote(path)+" "+r.stamp(path)+" "+strings.Join(locale, " "), argv)
}

// namesStream reports whether one of words names a pipe, FIFO, socket or
// terminal (/dev/stdin on a pipe, a FIFO a log is written to): a command
// reading it may wait outside tpipe for long, so it is a blocking task
// (graph.Task.Blocking), which a policy running tasks in turn gives a
// goroutine of its own.
func (r *Runner) namesStream(words []string) bool {
	for _, w := range words {
		if w == "" || w[0] == '-' {
			continue
		}
		fi, err := os.Stat(r.path(w))
		if err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeCharDevice) != 0 && w != "/dev/null" {
			return true
		}
	}
	return false
}

// stamp is "file NAME SIZE MTIME" for a regular file, or "".
func (r *Runner) stamp(name string) string {
	fi, err := os.Stat(r.path(name))
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return fmt.Sprintf("file %q %d %d", name, fi.Size(), fi.ModTime().UnixNano())
}

// fileIdent is the Ident of a task that reads the '<' file f.
func fileIdent(f *os.File) string {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "" // a pipe or a device: named by content
	}
	return fmt.Sprintf("read %q %d %d", f.Name(), fi.Size(), fi.ModTime().UnixNano())
}

// atomicOut is a '>' or '>>' file of a spooled run: the run writes a
// temporary file beside it (for '>>' a copy of the file as it was), and
// commit renames it over the file, so that the file is never seen half
// written and a run that fails leaves it as it was. On Linux the
// temporary file has no name until commit (O_TMPFILE), so a killed run
// leaves nothing behind.
type atomicOut struct {
	f       *os.File
	name    string
	unnamed bool
	done    bool
}

// openAtomic opens name as atomicOut for '>' (appendTo false) or '>>'.
func openAtomic(name string, appendTo bool) (*atomicOut, error) {
	mode := os.FileMode(0o666)
	old, err := os.Open(name)
	if err == nil {
		defer old.Close()
		if fi, err := old.Stat(); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	dropStaleTemps(name)
	a := &atomicOut{name: name, unnamed: true}
	a.f, err = openUnnamed(filepath.Dir(name), mode)
	if err != nil {
		a.unnamed = false
		a.f, err = os.OpenFile(tempName(name), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return nil, err
		}
	}
	if appendTo && old != nil {
		if _, err := io.Copy(a.f, old); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// tempName is a new name beside name: .NAME.tpipe-PID-RANDOM.
func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s.%d-%s", tempPrefix(name), os.Getpid(), hex.EncodeToString(b[:]))
}

func tempPrefix(name string) string {
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tpipe")
}

// dropStaleTemps removes the temporary names beside name that a tpipe
// killed between naming its output and renaming it left: those whose pid
// is no longer running.
func dropStaleTemps(name string) {
	olds, _ := filepath.Glob(tempPrefix(name) + ".*")
	for _, old := range olds {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(old, tempPrefix(name)+"."), "-", 2)[0])
		if err == nil && pid > 0 && pid != os.Getpid() && pidGone(pid) {
			os.Remove(old)
		}
	}
}

// commit syncs the temporary file and renames it over the file.
func (a *atomicOut) commit() error {
	if a.done {
		return nil
	}
	a.done = true
	tmp := a.f.Name()
	err := a.f.Sync()
	if err == nil && a.unnamed {
		tmp = tempName(a.name)
		err = linkUnnamed(a.f, tmp)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, a.name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", a.name, err)
	}
	return nil
}

// Close drops the temporary file unless commit was called.
func (a *atomicOut) Close() error {
	if a.done {
		return nil
	}
	a.done = true
	a.f.Close()
	if a.unnamed {
		return nil
	}
	return os.Remove(a.f.Name())
}

// errSpoolGraphs refuses a script of several graphs under --spool: one
// spool keeps one graph.
var errSpoolGraphs = errors.New("--spool keeps one graph: run one pipeline (or pipelines joined by @edges) per spool directory")
