package task

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// joinArrival is one record arriving on an input of a join.
type joinArrival struct {
	input int
	rec   []byte
}

// runJoinState feeds arrivals to a join with budget memory, as Join does,
// and returns what it wrote and what it reported unmatched, in order.
func runJoinState(t interface{ Fatal(...any) }, n int, arrivals []joinArrival, memory int, dir string) (out, left [][]byte, spilled bool) {
	key := func(rec []byte) ([]byte, bool) {
		k, _, ok := bytes.Cut(rec, []byte(":"))
		return k, ok
	}
	j := newJoin(key, n, JoinOptions{Memory: memory, Dir: dir}, func(_ int64, joined []byte) error {
		out = append(out, slices.Clone(joined))
		return nil
	})
	defer j.close()
	unmatched := func(i int, rec []byte) { left = append(left, fmt.Appendf(nil, "%d:%s", i, rec)) }
	for _, a := range arrivals {
		k, ok := key(a.rec)
		if !ok {
			unmatched(a.input, a.rec)
			continue
		}
		if err := j.add(a.input, k, a.rec); err != nil {
			t.Fatal(err)
		}
	}
	spilled = j.parts != nil
	err := j.end(context.Background(), func(joined []byte) error {
		out = append(out, slices.Clone(joined))
		return nil
	}, unmatched)
	if err != nil {
		t.Fatal(err)
	}
	return out, left, spilled
}

// A join that moves its waiting records to partition files, and splits
// them again, writes the same records in the same order, and reports the
// same unmatched ones, as a join that keeps everything in memory.
func TestJoinSpillSameOutput(t *testing.T) {
	dir := t.TempDir()
	sawSpill := false
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 3).Draw(rt, "inputs")
		keys := rapid.IntRange(1, 40).Draw(rt, "keys")
		count := rapid.IntRange(0, 300).Draw(rt, "records")
		var arrivals []joinArrival
		for i := range count {
			in := rapid.IntRange(0, n-1).Draw(rt, "input")
			k := rapid.IntRange(0, keys-1).Draw(rt, "key")
			rec := fmt.Appendf(nil, "k%d:%d.%d\n", k, in, i)
			if rapid.IntRange(0, 30).Draw(rt, "nokey") == 0 {
				rec = fmt.Appendf(nil, "nokey %d\n", i)
			}
			arrivals = append(arrivals, joinArrival{in, rec})
		}
		memory := rapid.SampledFrom([]int{1, 100, 2000}).Draw(rt, "memory")
		wantOut, wantLeft, _ := runJoinState(rt, n, arrivals, 0, dir)
		out, left, spilled := runJoinState(rt, n, arrivals, memory, dir)
		sawSpill = sawSpill || spilled
		if !slices.EqualFunc(out, wantOut, bytes.Equal) {
			rt.Fatalf("memory %d: joined\n%q\nin memory\n%q", memory, out, wantOut)
		}
		if !slices.EqualFunc(left, wantLeft, bytes.Equal) {
			rt.Fatalf("memory %d: unmatched\n%q\nin memory\n%q", memory, left, wantLeft)
		}
	})
	if !sawSpill {
		t.Error("no case spilled")
	}
	// Partition files are unlinked at once: nothing is left behind.
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left in the temp dir", len(ents))
	}
}
