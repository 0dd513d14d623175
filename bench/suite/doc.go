// Package suite is tpipe's benchmark suite: it measures tpipe's scheduling
// policies side by side with the alternatives a user would otherwise pick
// (plain goroutines and channels, bash with coreutils), interleaved in one
// run so that machine drift hits all alike. Two commands run it, through
// Main:
//
//	go run ./bench [-quick] [-out DIR] [-runs N]
//	tpipe bench [-quick] [-out DIR] [-runs N]
//
// Both write report.md, results.csv and SVG plots into DIR (see
// bench/README.md). The same chains and graphs are Go benchmarks too:
//
//	go test -run '^$' -bench 'BenchmarkChain|BenchmarkDAG' -benchtime 2s ./bench/suite
//
// Every sub-benchmark reports ns/rec (wall time per record, end to end)
// and allocations per record. BenchmarkLiveView runs chains with and
// without the live view of --progress, side by side:
//
//	go test -run '^$' -bench LiveView -benchtime 20s ./bench/suite
package suite
