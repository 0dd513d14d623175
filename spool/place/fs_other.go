//go:build !linux

package place

import "os"

// startWriteback does nothing: the fsync at commit writes the whole file.
func startWriteback(f *os.File, off, n int64) {}

// remoteFS cannot tell without statfs's type: events are trusted, and the
// periodic rescan covers what they miss.
func remoteFS(dir string) bool { return false }
