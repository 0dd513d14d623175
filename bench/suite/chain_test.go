package suite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// BenchmarkChain's ros-ends row is ros with the source and the sink in
// per-record form (task.Source, task.Sink), run as calls: what the forms
// cost or save when a buffer holds many records.
func BenchmarkChain(b *testing.B) {
	for _, policy := range []string{"concurrent", "ros", "ros-ends", "fused", "serial", "channels"} {
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
					cpu0 := cpuTime()
					var n int64
					switch policy {
					case "channels":
						n = runChannels(b.N, rec, make([]int, stages))
					case "ros-ends":
						n = runTpipeEnds(b, "ros", b.N, stages, rec, recordSize(len(rec)), true)
					default:
						n = runTpipe(b, policy, b.N, stages, rec)
					}
					b.StopTimer()
					cpu := cpuTime() - cpu0
					if n != int64(b.N)*int64(size) {
						b.Fatalf("sink saw %d bytes, want %d", n, int64(b.N)*int64(size))
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/rec")
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
				})
			}
		}
	}
}

// BenchmarkChainUnbatched is the chain with S equal to the record size, so
// every record is a buffer of its own: the cost of a queue handoff (a
// coroutine switch under ros) per record per stage, the ns/stage metric.
// Beside tpipe's policies run the two handoffs Go itself has, moving the
// same records through as many edges: goroutines over buffered channels of
// capacity 1 to 4 (channels-capK; concurrent's yardstick) and a chain of
// iter.Pull coroutines (pull; ros's yardstick). Interleave them with
// -count, since the machine drifts. tpipe's source and sink are in
// per-record form (task.Source, task.Sink), which ros runs as calls, as
// it runs the stages; ros-loops is ros with them as task functions with
// loops of their own, which ros runs as coroutines.
func BenchmarkChainUnbatched(b *testing.B) {
	kinds := []string{"concurrent", "ros", "ros-loops", "channels-cap1", "channels-cap2", "channels-cap3", "channels-cap4", "pull"}
	for _, stages := range chainStages {
		for _, kind := range kinds {
			b.Run(fmt.Sprintf("%s/stages=%d/rec=64", kind, stages), func(b *testing.B) {
				rec := make([]byte, 64)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				var n int64
				var depth int
				switch {
				case kind == "pull":
					n = runPull(b.N, rec, make([]int, stages))
				case strings.HasPrefix(kind, "channels-cap"):
					depth, _ = strconv.Atoi(strings.TrimPrefix(kind, "channels-cap"))
					n = runChannelsDepth(b.N, rec, make([]int, stages), depth)
				case kind == "ros-loops":
					n = runTpipeEnds(b, "ros", b.N, stages, rec, len(rec), false)
				default:
					n = runTpipeEnds(b, kind, b.N, stages, rec, len(rec), true)
				}
				b.StopTimer()
				cpu := cpuTime() - cpu0
				if n != int64(b.N)*64 {
					b.Fatalf("sink saw %d bytes", n)
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns, "ns/rec")
				b.ReportMetric(ns/float64(stages), "ns/stage")
				// CPU time is steadier than wall time on a loaded machine;
				// it includes the runtime's spinning for work.
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(stages), "cpu-ns/stage")
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
	return runTpipeEnds(b, policy, n, stages, rec, s, false)
}

// runTpipeEnds is runTpipeS with the chain's ends in per-record form if
// ends is set.
func runTpipeEnds(b *testing.B, policy string, n, stages int, rec []byte, s int, ends bool) int64 {
	st, err := runChain(context.Background(), chainSpec{policy: policy, n: n, rec: rec, rounds: make([]int, stages), s: s, ends: ends})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(int64(st.Buffers)*int64(st.RecordSize)), "B*S-bytes")
	return int64(n) * int64(len(rec))
}
