package place

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// An intake is a folder that programs outside the protocol fill: people,
// cp, curl, rsync, a script's redirection. They do not write under .tmp
// and rename; they create the file under its name and write it for as
// long as they take. A file there is a job only once it is complete:
//
//   - where the folder gives events (inotify on a local file system), a
//     file closed after writing (IN_CLOSE_WRITE) or moved in
//     (IN_MOVED_TO) is complete at once; one created or written since
//     is not, until it is closed, or has not been written for the settle
//     time (a hard link made in gives no close);
//   - whatever says so, a file that a process holds open for writing is
//     not complete (on Linux, asked of the kernel as a read lease);
//   - a file found otherwise (present at start, after lost events, or on
//     a folder that gives no events: NFS, sshfs, SMB, polling) is
//     complete once its size and modification time have stayed the same
//     for the settle time; on a local file system one whose modification
//     time is already that old is complete when first seen;
//   - names a writer uses for work in progress are never jobs (Partial).
//
// Judge is the deterministic core of it (no goroutine, no clock of its
// own); Intake drives it from the folder's events and the caller's looks.

// DefaultSettle is how long a file seen without events must keep its size
// and modification time before it is a job, when IntakeOptions.Settle is 0.
const DefaultSettle = time.Second

// AttrCache is what a network file system adds to the settle time: the
// kernel answers stat from a cache of attributes up to this old (FUSE's
// attr_timeout, which sshfs keeps at its default of 1s), so a file must
// show the same size this much longer to have truly kept it for the
// settle time. (Stamps there also pass the client's own caches: see
// Intake.Stamp.)
const AttrCache = time.Second

// partialSuffixes are the endings of names that writers use for a file
// in progress, to rename it when complete: never jobs.
var partialSuffixes = []string{
	".tmp", ".temp", ".part", ".partial", ".crdownload", ".download", ".filepart", ".swp", ".swx", "~",
}

// PartialNames lists the endings that Partial refuses, for help texts.
func PartialNames() string {
	return strings.Join(partialSuffixes, " ")
}

// Partial reports whether name is one a writer uses while it writes, and
// so never a job: a hidden name (.x: rsync's .x.XXXXXX, the protocol's own
// entries), an editor's #x# or .x.swp, or one of the usual suffixes of
// downloads and copies in progress (see PartialNames).
func Partial(name string) bool {
	if name == "" || name[0] == '.' || len(name) > 1 && name[0] == '#' && name[len(name)-1] == '#' {
		return true
	}
	lower := strings.ToLower(name) // (x.TMP, as some tools of Windows write)
	for _, s := range partialSuffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

// Stamp is what tells one state of a file's content from another: its
// size and modification time.
type Stamp struct {
	Size  int64
	Mtime time.Time
}

// Changed reports whether s and t are stamps of different contents.
func (s Stamp) Changed(t Stamp) bool { return s.Size != t.Size || !s.Mtime.Equal(t.Mtime) }

// Event is what a folder's events say of a name in it.
type Event uint8

const (
	// Written: the file was created or written, and a writer may still
	// have it open.
	Written Event = iota + 1
	// Closed: a writer closed the file after writing it.
	Closed
	// MovedIn: the file was renamed into the folder, whole.
	MovedIn
	// Gone: the file was removed or renamed out of the folder.
	Gone
	// Lost: events were lost (the queue overflowed); nothing known from
	// events holds any more.
	Lost
)

// how a Judge knows a file.
const (
	unknown  uint8 = iota // by its stamps alone
	writing               // created or written since its last close, or open for writing
	complete              // closed after writing, moved in, or settled
)

type fileState struct {
	how    uint8
	probed bool      // complete, and seen open for writing by no one since
	seen   bool      // stamp holds a look
	stamp  Stamp     // the last look
	since  time.Time // when stamp was first seen
	gen    uint64    // the last Ready that listed it (or the next, when an event made it)
}

// Writers says whether a file is open for writing.
type Writers uint8

const (
	// Untold: it cannot be told (a network file system, a file of
	// another user, a system without leases).
	Untold Writers = iota
	// NoWriter: no process has the file open for writing.
	NoWriter
	// Writing: some process has the file open for writing.
	Writing
)

// Looks are how a Judge looks at a file of the folder now.
type Looks struct {
	// Stamp takes the file's stamp; an error means it is gone.
	Stamp func(name string) (Stamp, error)
	// Open says whether some process has the file open for writing. nil:
	// never told.
	Open func(name string) Writers
}

func (l Looks) open(name string) Writers {
	if l.Open == nil {
		return Untold
	}
	return l.Open(name)
}

// Judge decides which files of an intake are complete. The zero Judge is
// not usable; make one with NewJudge. It is not safe for concurrent use.
//
// A close is not the end of a writer: a shell's redirection of a loop
// (for ...; do date; done > f) closes the file each time a command of
// the loop exits, and cp -r's or a script's next write may reopen it. So
// a file that events, its stamps or its age call complete is taken only
// if, looked at then, no process holds it open for writing (Looks.Open:
// on Linux, a read lease, which the kernel refuses while any process
// has the file open for writing).
type Judge struct {
	settle     time.Duration
	events     bool
	trustMtime bool
	files      map[string]*fileState
	suspect    map[string]bool
	gen        uint64
}

// NewJudge returns a Judge for a folder where a file must keep its stamp
// for settle to be complete. events says the folder gives events (Note):
// a file seen open for writing then waits for its close; and its
// modification times are on the caller's own clock (a local file
// system), so that a file found with one settle old is complete when
// first seen.
func NewJudge(settle time.Duration, events bool) *Judge {
	return &Judge{settle: settle, events: events, trustMtime: events, files: map[string]*fileState{}, suspect: map[string]bool{}}
}

func (j *Judge) file(name string) *fileState {
	f := j.files[name]
	if f == nil {
		f = &fileState{}
		j.files[name] = f
	}
	return f
}

// Note tells the judge an event of name (any name, for Lost), at now.
func (j *Judge) Note(name string, ev Event, now time.Time) {
	if ev == Lost {
		for _, f := range j.files {
			f.how, f.seen, f.probed = unknown, false, false
		}
		return
	}
	if Partial(name) {
		return
	}
	if ev == Gone {
		delete(j.files, name)
		return
	}
	f := j.file(name)
	f.gen = j.gen + 1 // listed or not by the next Ready, it is not swept by it
	f.probed = false
	switch ev {
	case Written:
		f.how, f.since = writing, now
	case Closed:
		f.how = complete
	case MovedIn:
		if j.suspect[name] {
			// The engine put it back after it changed under a claim: a
			// rename is no proof that its writer is done.
			f.how, f.seen = unknown, false
		} else {
			f.how = complete
		}
	}
}

// Suspect says that name changed while it was being processed: its
// writer was not done. It is complete again only once closed (events),
// or settled, whatever moves it makes.
func (j *Judge) Suspect(name string) {
	j.suspect[name] = true
	if f := j.files[name]; f != nil {
		f.how, f.seen, f.probed = unknown, false, false
	}
}

// Ready returns which of names (a listing of the folder) are complete,
// which others are not yet (partial names not counted), and the earliest
// time at which one of those may be complete by settling (zero when none
// is settling). The looks are taken only where events do not tell, and
// then only when due. Files no longer listed are forgotten.
func (j *Judge) Ready(names []string, now time.Time, look Looks) (ready, waiting []string, next time.Time) {
	j.gen++
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	// take says name is complete, unless a writer holds it open: then it
	// waits for its close (events) or settles again. sure asks that the
	// system tell that no writer holds it (a file created or written, and
	// not closed since: only that would tell that its writer is done).
	take := func(name string, f *fileState, sure bool) {
		if !f.probed {
			if w := look.open(name); w == Writing || sure && w == Untold {
				if j.events {
					if f.how != writing {
						f.how, f.since = writing, now
					}
				} else {
					f.how, f.seen = unknown, false
				}
				waiting = append(waiting, name)
				return
			}
		}
		f.how, f.probed = complete, true
		delete(j.suspect, name)
		ready = append(ready, name)
	}
	for _, name := range names {
		if Partial(name) {
			continue
		}
		f := j.file(name)
		f.gen = j.gen
		switch f.how {
		case complete:
			take(name, f, false)
			continue
		case writing:
			// No close may come: a hard link made into the folder, a
			// writer killed by a signal. A file not written for the
			// settle time that the system says nobody holds open for
			// writing is done; where it cannot say (another user's file),
			// only a close ends the wait.
			if now.Sub(f.since) >= j.settle {
				f.probed = false
				if take(name, f, true); f.how == writing {
					f.since = now
				}
			} else {
				waiting = append(waiting, name)
			}
			if f.how == writing {
				due(f.since.Add(j.settle))
			}
			continue
		}
		if f.seen && now.Sub(f.since) < j.settle {
			waiting = append(waiting, name)
			due(f.since.Add(j.settle))
			continue
		}
		s, err := look.Stamp(name)
		if err != nil {
			delete(j.files, name) // gone since the listing
			continue
		}
		if !f.seen || s.Changed(f.stamp) {
			first := !f.seen
			f.seen, f.stamp, f.since = true, s, now
			if !(first && j.trustMtime && !j.suspect[name] && now.Sub(s.Mtime) >= j.settle) {
				waiting = append(waiting, name)
				due(now.Add(j.settle))
				continue
			}
		}
		take(name, f, false)
		if f.how == unknown {
			due(now.Add(j.settle))
		}
	}
	for name, f := range j.files {
		if f.gen < j.gen {
			delete(j.files, name)
		}
	}
	return ready, waiting, next
}

// IntakeOptions configure an Intake. The zero IntakeOptions are the
// defaults.
type IntakeOptions struct {
	// Settle is how long a file seen without events must keep its size
	// and modification time; 0 means DefaultSettle.
	Settle time.Duration
	// Watch configures the look at the folder when it gives no events
	// (and its rescans in any case).
	Watch WatchOptions
}

// Intake watches an intake folder (see the top of this file): C says
// when to look again, Ready which of the files listed are jobs. It is
// safe for concurrent use; Close stops it.
type Intake struct {
	// C receives a value when the folder may have changed.
	C <-chan struct{}
	// Events is true when the folder gives events, false when it is
	// polled.
	Events bool
	// Settle is the time a file seen without events must keep its stamp
	// (on a network file system, with AttrCache added).
	Settle time.Duration

	dir    string
	remote bool
	c      chan struct{}
	mu     sync.Mutex
	judge  *Judge
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closer func() error // of the events or of the poller
}

// WatchIntake watches dir as an intake until ctx is done or Close. The
// watch is set before the folder is first listed, so that no write after
// WatchIntake returns goes unseen.
func WatchIntake(ctx context.Context, dir string, o IntakeOptions) (*Intake, error) {
	if err := isDir(dir); err != nil {
		return nil, err
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	ctx, cancel := context.WithCancel(ctx)
	in := &Intake{dir: dir, remote: remoteFS(dir), c: make(chan struct{}, 1), cancel: cancel}
	in.C = in.c
	in.Settle = o.Settle
	if in.remote {
		in.Settle += AttrCache
	}
	var ev *events
	if !o.Watch.NoEvents && !in.remote {
		if e, err := openEvents(dir); err == nil {
			ev, in.Events, in.closer = e, true, e.close
		}
	}
	in.judge = NewJudge(in.Settle, in.Events)
	if in.Events {
		rescan := o.Watch.Rescan
		if rescan <= 0 {
			rescan = 30 * time.Second
		}
		in.wg.Go(func() { in.readEvents(ev) })
		in.wg.Go(func() { in.tick(ctx, rescan) })
	} else {
		w, err := Watch(ctx, dir, WatchOptions{NoEvents: true, Poll: o.Watch.Poll, MaxPoll: o.Watch.MaxPoll, Rescan: o.Watch.Rescan})
		if err != nil {
			cancel()
			return nil, err
		}
		in.C, in.closer = w.C, w.Close
	}
	return in, nil
}

// Dir returns the folder.
func (in *Intake) Dir() string { return in.dir }

func (in *Intake) signal() {
	select {
	case in.c <- struct{}{}:
	default:
	}
}

func (in *Intake) tick(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			in.signal()
		}
	}
}

func (in *Intake) readEvents(ev *events) {
	ev.read(func(name string, e Event) {
		in.mu.Lock()
		in.judge.Note(name, e, time.Now())
		in.mu.Unlock()
		if e != Written { // (a write makes no job; a big copy makes thousands)
			in.signal()
		}
	})
}

// Ready returns which of names, a listing of the folder, are complete
// jobs, which others are still being written or settling, and when to
// look again for one of those to have settled (zero: no need).
func (in *Intake) Ready(names []string) (ready, waiting []string, next time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.judge.Ready(names, time.Now(), Looks{
		Stamp: func(name string) (Stamp, error) { return in.Stamp(in.dir + "/" + name) },
		Open:  func(name string) Writers { return in.Open(in.dir + "/" + name) },
	})
}

// Open says whether some process has the file at path open for writing:
// on a local file system of Linux the kernel tells, by refusing a read
// lease on such a file; Untold on a network file system, or for a file
// of another user when this process may not take leases on it.
func (in *Intake) Open(path string) Writers {
	if in.remote {
		return Untold
	}
	return openForWriting(path)
}

// Suspect says that the file name changed while a job held it: it is
// judged again from scratch, and a rename back into the folder does not
// make it complete.
func (in *Intake) Suspect(name string) {
	in.mu.Lock()
	in.judge.Suspect(name)
	in.mu.Unlock()
}

// Remote reports whether the folder is on a network file system, where
// Stamp opens the file.
func (in *Intake) Remote() bool { return in.remote }

// Stamp takes a stamp of the file at path, wherever the job holds it. On
// a local file system it is lstat's. A network file system answers from
// caches: NFS revalidates a file's attributes when it is opened
// (close-to-open), and sshfs keeps the attributes its listings brought
// for 20s, and gives them to the kernel at every listing, except that an
// open asks the server again. So there the file is opened (and closed at
// once), then its attributes are asked past the kernel's cache
// (statx with AT_STATX_FORCE_SYNC), which meets what the open fetched.
func (in *Intake) Stamp(path string) (Stamp, error) {
	if !in.remote {
		fi, err := os.Lstat(path)
		if err != nil {
			return Stamp{}, err
		}
		return Stamp{Size: fi.Size(), Mtime: fi.ModTime()}, nil
	}
	return remoteStamp(path)
}

// Close stops the intake's watch and waits for its goroutines.
func (in *Intake) Close() error {
	in.cancel()
	var err error
	if in.closer != nil {
		err = in.closer()
	}
	in.wg.Wait()
	return err
}

// IntakeRule says in words how files of the folder dir become jobs with
// the settle time settle (0: DefaultSettle), for --explain: whether it
// gives events, and the times that apply.
func IntakeRule(dir string, settle time.Duration, noEvents bool) string {
	if settle <= 0 {
		settle = DefaultSettle
	}
	if remoteFS(dir) {
		return fmt.Sprintf("a network file system, polled: a file is a job once its size and modification time have stayed the same for %v (the settle time %v, and %v for the attribute cache of network file systems)", settle+AttrCache, settle, AttrCache)
	}
	if noEvents {
		return fmt.Sprintf("polled: a file is a job once its size and modification time have stayed the same for %v", settle)
	}
	return fmt.Sprintf("events (inotify): a file is a job once its writer closes it or it is moved in; one found otherwise (at start, after lost events), once its size and modification time have stayed the same for %v (at once if it was last modified that long ago)", settle)
}
