//go:build !linux

package place

import "errors"

// events: no folder events but Linux's; an intake polls (see
// inotify_linux.go).
type events struct{}

func openEvents(dir string) (*events, error) {
	return nil, errors.New("no folder events on this system")
}

func (e *events) read(each func(name string, ev Event)) {}

func (e *events) close() error { return nil }

// openForWriting cannot tell here.
func openForWriting(path string) bool { return false }
