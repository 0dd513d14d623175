//go:build !linux

package main

// closedAtStart cannot tell outside Linux; see stdio_linux.go.
func closedAtStart(fd int) bool { return false }
