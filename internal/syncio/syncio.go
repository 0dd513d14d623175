// Package syncio holds writers safe for concurrent use.
package syncio

import (
	"io"
	"sync"
)

// A LockedWriter serializes writes to W: each Write reaches W whole,
// never interleaved with another. It is safe for concurrent use; the zero
// value is not usable (W is nil), and W must not be changed after the
// first Write. Writes from elsewhere to W bypass the lock.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

// NewLockedWriter returns a LockedWriter over w.
func NewLockedWriter(w io.Writer) *LockedWriter { return &LockedWriter{W: w} }

// Write writes p to W under the lock. It does not retain p.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
