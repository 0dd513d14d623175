package main

import (
	"os"
	"syscall"
)

// outFile is a file that a flag names for tpipe to write (--trace,
// --stats-json). It is opened on the first write, so that a run that fails
// before it has anything to write (a syntax error, a bad option) leaves an
// existing file as it was; and it is opened with O_NOFOLLOW, so that a
// symbolic link planted at the name (in a shared directory) makes the open
// fail instead of truncating the file it points to. The first error is
// kept for err.
//
// Writing to a temporary name and renaming was the other way; it was not
// taken because it creates the file 0600 where a user expects their umask,
// and leaves a stray temporary file behind a tpipe killed mid-run.
type outFile struct {
	name  string
	f     *os.File
	first error
}

func (o *outFile) Write(p []byte) (int, error) {
	if o.first != nil {
		return 0, o.first
	}
	if o.f == nil {
		o.f, o.first = os.OpenFile(o.name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666)
		if o.first != nil {
			return 0, o.first
		}
	}
	n, err := o.f.Write(p)
	if err != nil {
		o.first = err
	}
	return n, err
}

// close closes the file, if it was opened, and returns the first error.
func (o *outFile) close() error {
	if o.f != nil {
		if err := o.f.Close(); o.first == nil {
			o.first = err
		}
		o.f = nil
	}
	return o.first
}
