package suite

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkDAG runs each graph shape (see dagShapes) under each policy:
// one op is one source record of 1 KiB, each stage hashing it once (the
// slow branch of a split shape twice). The chain is the baseline: the
// same hashing with no fork or join. growths/op and spilled-B/op say what
// resolving the split-cat stall took.
func BenchmarkDAG(b *testing.B) {
	rec := make([]byte, 1<<10)
	for i := range rec {
		rec[i] = byte('a' + i%26)
	}
	for _, shape := range dagShapes {
		for _, policy := range []string{"concurrent", "ros", "serial"} {
			b.Run(fmt.Sprintf("%s/%s", shape, policy), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(rec)))
				st, err := runDAG(context.Background(), dagSpec{shape: shape, policy: policy, n: b.N, rounds: 1, rec: rec, tempDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/rec")
				b.ReportMetric(float64(st.Growths)/float64(b.N), "growths/op")
				b.ReportMetric(float64(st.SpilledBytes)/float64(b.N), "spilled-B/op")
				b.ReportMetric(float64(int64(st.Buffers)*int64(st.RecordSize)), "B*S-bytes")
			})
		}
	}
}

// Every shape completes under every policy with every byte delivered.
func TestDAGShapesComplete(t *testing.T) {
	rec := make([]byte, 100)
	for _, shape := range dagShapes {
		for _, policy := range []string{"concurrent", "ros", "serial", "fused"} {
			if _, err := runDAG(context.Background(), dagSpec{shape: shape, policy: policy, n: 5000, rounds: 1, rec: rec, tempDir: t.TempDir()}); err != nil {
				t.Errorf("%s/%s: %v", shape, policy, err)
			}
		}
	}
}

// The channels versions deliver every byte; split-cat has none.
func TestChannelsDAG(t *testing.T) {
	rec := make([]byte, 100)
	for _, shape := range dagShapes {
		err := runChannelsDAG(shape, 5000, rec, 1)
		if channelsHasShape(shape) != (err == nil) {
			t.Errorf("%s: %v", shape, err)
		}
	}
}
