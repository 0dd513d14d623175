package runner

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a file with no name in dir (O_TMPFILE): it goes away
// with the process however the process ends, until linkUnnamed names it.
func openUnnamed(dir string, mode os.FileMode) (*os.File, error) {
	return os.OpenFile(dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, mode)
}

// linkUnnamed gives the unnamed file f the name path.
func linkUnnamed(f *os.File, path string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
}

// pidGone reports whether no process has the id pid.
func pidGone(pid int) bool { return unix.Kill(pid, 0) == unix.ESRCH }
