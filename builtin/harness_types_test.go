package builtin_test

import "io"

type (
	ioReadCloser  = io.ReadCloser
	ioWriteCloser = io.WriteCloser
)
