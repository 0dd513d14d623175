// Package bench measures tpipe's scheduling policies side by side with the
// alternatives a user would otherwise pick, in the same run so that machine
// drift hits all alike. The chain benchmark is
//
//	go test -run '^$' -bench BenchmarkChain -benchtime 2s ./bench
//
// Every sub-benchmark reports ns/rec (wall time per record, end to end)
// and allocations per record.
package bench
