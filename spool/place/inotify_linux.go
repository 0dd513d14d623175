package place

import (
	"errors"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// events reads inotify's events of one folder. It is read here, not
// through fsnotify, because an intake needs two things fsnotify does not
// give: IN_CLOSE_WRITE (a writer closed the file: it is complete), and
// IN_MOVED_TO told apart from IN_CREATE (fsnotify makes both Create, but
// a file renamed in is whole, and one created is being written).
type events struct {
	f *os.File // the inotify descriptor, non-blocking, on Go's poller
}

// intakeMask: the events of the folder's files an intake needs, and of
// the folder itself going away.
const intakeMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

func openEvents(dir string) (*events, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, intakeMask); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("inotify_add_watch", err)
	}
	// A non-blocking descriptor given to os.NewFile is read through the
	// poller, so that close ends a read in progress.
	return &events{f: os.NewFile(uintptr(fd), "inotify")}, nil
}

// read calls each with every event until the descriptor is closed. An
// overflow of the queue, or the folder gone, is Lost.
func (e *events) read(each func(name string, ev Event)) {
	var buf [64 << 10]byte
	for {
		n, err := e.f.Read(buf[:])
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				each("", Lost)
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ie := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ie.Len > 0 {
				b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ie.Len)]
				for len(b) > 0 && b[len(b)-1] == 0 {
					b = b[:len(b)-1]
				}
				name = string(b)
			}
			off += unix.SizeofInotifyEvent + int(ie.Len)
			m := ie.Mask
			switch {
			case m&(unix.IN_Q_OVERFLOW|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0:
				each("", Lost)
			case m&unix.IN_ISDIR != 0 || name == "":
			case m&unix.IN_CLOSE_WRITE != 0:
				each(name, Closed)
			case m&unix.IN_MOVED_TO != 0:
				each(name, MovedIn)
			case m&(unix.IN_MOVED_FROM|unix.IN_DELETE) != 0:
				each(name, Gone)
			case m&(unix.IN_CREATE|unix.IN_MODIFY) != 0:
				each(name, Written)
			}
		}
	}
}

func (e *events) close() error { return e.f.Close() }

// openForWriting says whether a process has the file at path open for
// writing, by asking for a read lease (fcntl F_SETLEASE F_RDLCK), which
// the kernel refuses with EAGAIN while any process does, and giving it
// back at once. A file of another user (without CAP_LEASE: EACCES), or a
// file system without leases, cannot tell: Untold.
func openForWriting(path string) Writers {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Untold
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EBUSY) {
			return Writing
		}
		return Untold
	}
	unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	return NoWriter
}

// remoteStamp is Intake.Stamp on a network file system (see there).
func remoteStamp(path string) (Stamp, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stamp{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	unix.Close(fd)
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_FORCE_SYNC, unix.STATX_SIZE|unix.STATX_MTIME, &st); err != nil {
		return Stamp{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	return Stamp{Size: int64(st.Size), Mtime: time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec))}, nil
}
