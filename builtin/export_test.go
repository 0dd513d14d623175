package builtin

// SetGrepBlockSize makes grep read files n bytes at a time, and returns
// what puts the size back. Tests that call it must not run in parallel.
func SetGrepBlockSize(n int) (restore func()) {
	old := grepBlockSize
	grepBlockSize = n
	return func() { grepBlockSize = old }
}

// AwkOwnInterpreter reports whether awk's program src (with no options)
// runs on the builtin's own interpreter under the locale's UTF-8
// question utf8.
func AwkOwnInterpreter(src string, utf8 bool) bool {
	if fixed, ok := awkRewriteNumbers(src); ok {
		src = fixed
	}
	return compileAwkVM(src, nil, nil, utf8) != nil
}
