//go:build !linux

package place

import (
	"errors"
	"os"
	"syscall"
)

// events: no folder events but Linux's; an intake polls (see
// inotify_linux.go).
type events struct{}

func openEvents(dir string) (*events, error) {
	return nil, errors.New("no folder events on this system")
}

func (e *events) read(each func(name string, ev Event)) {}

func (e *events) close() error { return nil }

// openForWriting cannot tell here.
func openForWriting(path string) Writers { return Untold }

// remoteStamp: open and fstat.
func remoteStamp(path string) (Stamp, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Stamp{}, err
	}
	return Stamp{Size: fi.Size(), Mtime: fi.ModTime()}, nil
}
