package task

import (
	"io"
	"sync"
)

// Stderr is the standard error a task writes to, as the runner gives it
// under the spool policy: every write goes on to the writer it wraps, and
// while the policy keeps (between Keep and Kept) a copy of the first
// bytes is kept too, so that a rerun which finds the task's work cached
// can write them again (Replay) instead of leaving the user a failure
// with no message.
//
// It is safe for concurrent use: a builtin writes from its task's
// goroutine, an external program's stderr is copied by a goroutine of
// its own, and the policy calls Keep and Kept from another. A zero
// Stderr is not valid; use NewStderr.
type Stderr struct {
	w io.Writer

	mu      sync.Mutex
	keeping bool
	limit   int
	kept    []byte
	lost    int64
}

// NewStderr returns a Stderr that writes to w.
func NewStderr(w io.Writer) *Stderr { return &Stderr{w: w} }

// Write writes p to the wrapped writer and, while keeping, keeps what of
// p fits under the limit and counts the rest. The copy and the write are
// made under one lock, so the kept bytes are in the order written.
func (s *Stderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keeping {
		n := min(len(p), s.limit-len(s.kept))
		s.kept = append(s.kept, p[:n]...)
		s.lost += int64(len(p) - n)
	}
	return s.w.Write(p)
}

// Keep starts keeping a copy of what is written, at most limit bytes;
// it drops what was kept before.
func (s *Stderr) Keep(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keeping, s.limit, s.kept, s.lost = true, limit, nil, 0
}

// Kept stops keeping and returns the bytes kept (the caller's from then
// on) and the count of bytes written past the limit.
func (s *Stderr) Kept() (kept []byte, lost int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept, lost = s.kept, s.lost
	s.keeping, s.kept, s.lost = false, nil, 0
	return kept, lost
}

// Replay writes b to the wrapped writer, not keeping it: the bytes a
// task wrote on an earlier run.
func (s *Stderr) Replay(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(b)
	return err
}
