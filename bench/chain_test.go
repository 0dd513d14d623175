package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// The chain: a source writes n records of the given size, `stages` copy
// stages pass them on, and a sink reads them. One benchmark op is one
// record, so ns/op is the cost of a record end to end and allocs/op the
// allocations per record (setup included, which vanishes as b.N grows).
var (
	chainStages = []int{3, 10}
	chainSizes  = []int{64, 4 << 10, 1 << 20}
)

// queueCap is the capacity of every tpipe queue in the benchmark; the
// channels baseline gets the same record memory per edge.
const queueCap = 2

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
						n = runChannels(b.N, stages, rec)
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

// recordSize is S for a benchmark record: 64 KiB buffers batch small
// records; a large record gets a buffer of its own size.
func recordSize(rec int) int { return max(64<<10, rec) }

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
	var total int64
	tasks := []*graph.Task{{Name: "src", Out: 1, Fn: func(ctx context.Context, p *buffer.Proc) error {
		out := p.Out(0)
		for i := 0; i < n; i++ {
			if err := out.Write(rec); err != nil {
				return err
			}
		}
		return nil
	}}}
	for i := 0; i < stages; i++ {
		c := task.Copy()
		tasks = append(tasks, &graph.Task{Name: fmt.Sprint("copy", i+1), In: 1, Out: 1, Rec: &c})
	}
	tasks = append(tasks, &graph.Task{Name: "sink", In: 1, Fn: func(ctx context.Context, p *buffer.Proc) error {
		in := p.In(0)
		for {
			r, err := in.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			total += int64(len(r))
		}
	}})
	c := queueCap
	if policy == "ros" {
		c = 1 // Theorem 4.1: one buffer, capacities 1
	}
	st, err := sched.Run(context.Background(), graph.Chain(c, tasks...), sched.Options{Policy: policy, RecordSize: s})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(int64(st.Buffers)*int64(st.RecordSize)), "B*S-bytes")
	return total
}

// runChannels is the plain Go pipeline a user would write: a goroutine per
// stage, a buffered channel per edge, one record per send. Record buffers
// are recycled through a free list so memory stays bounded, as in tpipe;
// each channel holds as many records as a tpipe queue of queueCap buffers.
func runChannels(n, stages int, rec []byte) int64 {
	perBuf := max(1, min(recordSize(len(rec))/max(len(rec), 1), buffer.MaxRecords))
	depth := queueCap * perBuf
	free := make(chan []byte, depth*(stages+1)+2)
	for i := 0; i < cap(free); i++ {
		free <- make([]byte, len(rec))
	}
	chans := make([]chan []byte, stages+1)
	for i := range chans {
		chans[i] = make(chan []byte, depth)
	}
	var wg sync.WaitGroup
	wg.Add(stages + 1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			buf := <-free
			copy(buf, rec)
			chans[0] <- buf
		}
		close(chans[0])
	}()
	for s := 0; s < stages; s++ {
		in, out := chans[s], chans[s+1]
		go func() {
			defer wg.Done()
			for r := range in {
				out <- r
			}
			close(out)
		}()
	}
	var total int64
	for r := range chans[stages] {
		total += int64(len(r))
		free <- r
	}
	wg.Wait()
	return total
}
