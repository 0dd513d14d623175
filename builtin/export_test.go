package builtin

// SetGrepBlockSize makes grep read files n bytes at a time, and returns
// what puts the size back. Tests that call it must not run in parallel.
func SetGrepBlockSize(n int) (restore func()) {
	old := grepBlockSize
	grepBlockSize = n
	return func() { grepBlockSize = old }
}
