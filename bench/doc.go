// Command bench measures tpipe's scheduling policies side by side with the
// alternatives a user would otherwise pick (plain goroutines and channels,
// bash with coreutils), interleaved in one run so that machine drift hits
// all alike:
//
//	go run ./bench [-quick] [-out DIR]
//
// writes report.md, results.csv and SVG plots into DIR (see README.md).
// The same chains are Go benchmarks too:
//
//	go test -run '^$' -bench BenchmarkChain -benchtime 2s ./bench
//
// Every sub-benchmark reports ns/rec (wall time per record, end to end)
// and allocations per record.
package main
