package suite

import (
	"context"
	"fmt"
	"testing"
)

// The chain: a source writes n records of the given size, `stages` copy
// stages pass them on, and a sink reads them. One benchmark op is one
// record, so ns/op is the cost of a record end to end and allocs/op the
// allocations per record (setup included, which vanishes as b.N grows).
var (
	chainStages = []int{3, 10}
	chainSizes  = []int{64, 4 << 10, 1 << 20}
)

func BenchmarkChain(b *testing.B) {
	for _, policy := range []string{"concurrent", "ros", "fused", "serial", "channels"} {
		for _, stages := range chainStages {
			for _, size := range chainSizes {
				b.Run(fmt.Sprintf("%s/stages=%d/rec=%d", policy, stages, size), func(b *testing.B) {
					rec := make([]byte, size)
					for i := range rec {
						rec[i] = byte('a' + i%26)
					}
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					var n int64
					if policy == "channels" {
						n = runChannels(b.N, rec, make([]int, stages))
					} else {
						n = runTpipe(b, policy, b.N, stages, rec)
					}
					b.StopTimer()
					if n != int64(b.N)*int64(size) {
						b.Fatalf("sink saw %d bytes, want %d", n, int64(b.N)*int64(size))
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/rec")
				})
			}
		}
	}
}

// BenchmarkChainUnbatched is the chain with S equal to the record size, so
// every record is a buffer of its own: the cost of a queue handoff (a
// coroutine switch under ros) per record per stage.
func BenchmarkChainUnbatched(b *testing.B) {
	for _, policy := range []string{"concurrent", "ros"} {
		for _, stages := range chainStages {
			b.Run(fmt.Sprintf("%s/stages=%d/rec=64", policy, stages), func(b *testing.B) {
				rec := make([]byte, 64)
				b.ReportAllocs()
				b.ResetTimer()
				n := runTpipeS(b, policy, b.N, stages, rec, len(rec))
				b.StopTimer()
				if n != int64(b.N)*64 {
					b.Fatalf("sink saw %d bytes", n)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/rec")
			})
		}
	}
}

// BenchmarkMemmove is the bandwidth every 1 MiB chain is measured against:
// one copy of a 1 MiB record (the source's fill) per op.
func BenchmarkMemmove(b *testing.B) {
	src := make([]byte, 1<<20)
	dst := make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
}

func runTpipe(b *testing.B, policy string, n, stages int, rec []byte) int64 {
	return runTpipeS(b, policy, n, stages, rec, recordSize(len(rec)))
}

func runTpipeS(b *testing.B, policy string, n, stages int, rec []byte, s int) int64 {
	st, err := runChain(context.Background(), chainSpec{policy: policy, n: n, rec: rec, rounds: make([]int, stages), s: s})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(int64(st.Buffers)*int64(st.RecordSize)), "B*S-bytes")
	return int64(n) * int64(len(rec))
}
