package main

import "syscall"

// closedAtStart reports whether the standard descriptor fd (0, 1 or 2) was
// closed when tpipe started (as by `tpipe ... >&-`). The Go runtime opens
// /dev/null read-write on such a descriptor before main runs, so that no
// file opened later takes its number; writes to it would then succeed
// silently where a shell's commands report EBADF.
//
// What the runtime leaves is told apart from a /dev/null the caller gave on
// purpose by its mode, read-write (a shell's '> /dev/null' opens it
// write-only), and by being open on this descriptor alone: a daemon's
// standard descriptors are one read-write /dev/null shared by all three.
// A caller that gives fd its own read-write /dev/null ('1<>/dev/null') is
// taken for a closed one.
func closedAtStart(fd int) bool {
	if !devNullRW(fd) {
		return false
	}
	for other := range 3 {
		if other != fd && devNullRW(other) && sameOpenFile(fd, other) {
			return false
		}
	}
	return true
}

// devNullRW reports whether fd is /dev/null open for reading and writing.
func devNullRW(fd int) bool {
	var st, null syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || syscall.Stat("/dev/null", &null) != nil {
		return false
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != null.Rdev {
		return false
	}
	fl, err := getfl(fd)
	return err == nil && fl&syscall.O_ACCMODE == syscall.O_RDWR
}

// sameOpenFile reports whether the descriptors a and b, both /dev/null,
// share one open file description: a status flag set through a shows
// through b. O_APPEND on /dev/null changes nothing, and it is put back.
func sameOpenFile(a, b int) bool {
	fa, err := getfl(a)
	if err != nil {
		return false
	}
	fb, err := getfl(b)
	if err != nil {
		return false
	}
	if setfl(a, fa^syscall.O_APPEND) != nil {
		return false
	}
	fb2, err := getfl(b)
	setfl(a, fa)
	return err == nil && fb2 != fb
}

func getfl(fd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func setfl(fd, fl int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFL, uintptr(fl)); e != 0 {
		return e
	}
	return nil
}
