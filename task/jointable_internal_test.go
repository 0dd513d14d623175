package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// joinModel is the obvious join: a FIFO of records per key and input.
type joinModel struct {
	n     int
	fifos map[string][][]joinArrival
}

func (m *joinModel) add(a joinArrival, k []byte) (joined []byte) {
	f := m.fifos[string(k)]
	if f == nil {
		f = make([][]joinArrival, m.n)
		m.fifos[string(k)] = f
	}
	for x := range m.n {
		if x != a.input && len(f[x]) == 0 || x == a.input && len(f[x]) > 0 {
			f[a.input] = append(f[a.input], a)
			return nil
		}
	}
	for x := range m.n {
		if x > 0 {
			joined = append(joined, '\t')
		}
		r := a.rec
		if x != a.input {
			r, f[x] = f[x][0].rec, f[x][1:]
		}
		joined = append(joined, bytes.TrimSuffix(r, []byte("\n"))...)
	}
	return append(joined, '\n')
}

// left returns the records still waiting, input by input, in arrival
// order (each record carries its arrival number after the key).
func (m *joinModel) left(arrivals []joinArrival, keyOf func([]byte) ([]byte, bool)) [][]byte {
	var out [][]byte
	for in := range m.n {
		counts := map[string]int{}
		for _, f := range m.fifos {
			for _, a := range f[in] {
				counts[string(a.rec)]++
			}
		}
		for _, a := range arrivals {
			if _, ok := keyOf(a.rec); ok && a.input == in && counts[string(a.rec)] > 0 {
				counts[string(a.rec)]--
				out = append(out, fmt.Appendf(nil, "%d:%s", in, a.rec))
			}
		}
	}
	return out
}

// The table, the spill to partitions and their splits write what the
// obvious join writes, in the same order, and report the same records
// unmatched: with empty keys, keys outside their record, many records of
// one key, 1 to 3 inputs and budgets small enough to spill at once and
// split partitions again. Records are unique (they carry their arrival
// number), so that the unmatched ones can be told apart.
func TestJoinTableAgainstModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(rt, "inputs")
		keys := rapid.IntRange(1, 50).Draw(rt, "keys")
		count := rapid.IntRange(0, 400).Draw(rt, "records")
		outside := rapid.Bool().Draw(rt, "outside")
		// A key is what precedes ':', or with outside a copy of it with a
		// suffix, which is no part of the record.
		keyOf := func(rec []byte) ([]byte, bool) {
			k, _, ok := bytes.Cut(rec, []byte(":"))
			if outside && ok {
				return append(slices.Clone(k), '#'), true
			}
			return k, ok
		}
		var arrivals []joinArrival
		for i := range count {
			in := rapid.IntRange(0, n-1).Draw(rt, "input")
			var rec []byte
			switch k := rapid.IntRange(-2, keys-1).Draw(rt, "key"); k {
			case -2:
				rec = fmt.Appendf(nil, "nokey %d\n", i)
			case -1:
				rec = fmt.Appendf(nil, ":%d\n", i) // the empty key
			default:
				rec = fmt.Appendf(nil, "k%d:%d", k, i)
				if rapid.Bool().Draw(rt, "eol") {
					rec = append(rec, '\n')
				}
			}
			arrivals = append(arrivals, joinArrival{in, rec})
		}
		m := &joinModel{n: n, fifos: map[string][][]joinArrival{}}
		var want [][]byte
		for _, a := range arrivals {
			if k, ok := keyOf(a.rec); ok {
				if j := m.add(a, k); j != nil {
					want = append(want, j)
				}
			}
		}
		wantLeft := m.left(arrivals, keyOf)
		memory := rapid.SampledFrom([]int{0, 1, 300, 5000}).Draw(rt, "memory")
		var out, left [][]byte
		j := newJoin(keyOf, n, JoinOptions{Memory: memory, Dir: dir}, func(_ int64, joined []byte) error {
			out = append(out, slices.Clone(joined))
			return nil
		})
		defer j.close()
		for _, a := range arrivals {
			if k, ok := keyOf(a.rec); ok {
				if err := j.add(a.input, k, a.rec); err != nil {
					rt.Fatal(err)
				}
			}
		}
		err := j.end(context.Background(), func(joined []byte) error {
			out = append(out, slices.Clone(joined))
			return nil
		}, func(i int, rec []byte) { left = append(left, fmt.Appendf(nil, "%d:%s", i, rec)) })
		if err != nil {
			rt.Fatal(err)
		}
		if !slices.EqualFunc(out, want, bytes.Equal) {
			rt.Fatalf("memory %d: joined\n%q\nmodel\n%q", memory, out, want)
		}
		if !slices.EqualFunc(left, wantLeft, bytes.Equal) {
			rt.Fatalf("memory %d: unmatched\n%q\nmodel\n%q", memory, left, wantLeft)
		}
	})
}

// Records matched out of their arrival order leave chunks mostly
// released: the table compacts them, and a long run holds about what
// waits, not everything that passed.
func TestJoinTableCompacts(t *testing.T) {
	tab := newJoinTable(2)
	emitted := 0
	emit := func(int64, []byte) error { emitted++; return nil }
	rec := func(i int) []byte { return fmt.Appendf(nil, "%08d some padding\n", i) }
	const total, window = 200000, 1000
	for i := range total {
		// Keep window records waiting, then match three in four, so
		// that no chunk empties on its own.
		r := rec(i)
		if err := tab.add(int64(2*i), 0, r[:8], r, nil, emit); err != nil {
			t.Fatal(err)
		}
		if i >= window && i%4 != 0 {
			o := rec(i - window)
			if err := tab.add(int64(2*i+1), 1, o[:8], o, nil, emit); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := (total - window) * 3 / 4; emitted != want {
		t.Fatalf("%d joined, want %d", emitted, want)
	}
	if waiting := total - emitted; tab.arena.used > 2*waiting*30 {
		t.Fatalf("%d waiting records use %d bytes of arena", waiting, tab.arena.used)
	}
	if tab.packed == 0 {
		t.Error("no compaction")
	}
	if tab.arena.size > 3*tab.arena.used+2*joinMaxChunk {
		t.Errorf("arena holds %d bytes for %d live", tab.arena.size, tab.arena.used)
	}
}

// openFiles counts this process's open file descriptors.
func openFiles(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// A spilled join closes its partition files at the end and when it is
// cancelled while it matches partitions; they were unlinked when made,
// so nothing is left in the directory either way.
func TestJoinSpillFilesClosed(t *testing.T) {
	dir := t.TempDir()
	keyOf := func(rec []byte) ([]byte, bool) { return rec, true }
	for _, cancel := range []bool{false, true} {
		before := openFiles(t)
		ctx, stop := context.WithCancel(context.Background())
		emitted := 0
		out := func([]byte) error {
			emitted++
			return nil
		}
		j := newJoin(keyOf, 2, JoinOptions{Memory: 4 << 10, Dir: dir}, func(int64, []byte) error { return nil })
		for i := range 20000 {
			r := fmt.Appendf(nil, "%d", i)
			if err := j.add(0, r, r); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20000 {
			r := fmt.Appendf(nil, "%d", 19999-i)
			if err := j.add(1, r, r); err != nil {
				t.Fatal(err)
			}
		}
		if cancel {
			stop()
		}
		err := j.end(ctx, out, nil)
		j.close()
		stop()
		switch {
		case cancel && !errors.Is(err, context.Canceled):
			t.Errorf("cancelled: %v", err)
		case !cancel && (err != nil || emitted != 20000):
			t.Errorf("%d joined, %v", emitted, err)
		}
		if after := openFiles(t); after != before {
			t.Errorf("cancel %v: %d files open, %d before", cancel, after, before)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("cancel %v: %d files left in the temp dir", cancel, len(ents))
		}
	}
}
