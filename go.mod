module github.com/tpipe/tpipe

go 1.25

require (
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)
