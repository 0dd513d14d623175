package builtin

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// The property, against a dumb model: a folding buffer holds the lines
// added, each distinct line once in the order of its first copy with the
// count of its copies, until it stops folding (few copies, or a table
// that would pass the budget); from then on every line is held apart. The
// lines it stands for, copies included, are the lines added, and the
// memory it counts stays within its budget.
func TestSortFoldModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		budget := rapid.SampledFrom([]int{1 << 30, 1 << 20}).Draw(rt, "budget")
		b := newSortBuffer(budget, true)
		distinct := rapid.IntRange(1, 5000).Draw(rt, "distinct")
		n := rapid.IntRange(0, 3*sortFoldCheck).Draw(rt, "lines")
		seed := rapid.Uint64().Draw(rt, "seed")
		var added []string
		for i := range n {
			// A cheap spread over distinct values, different per seed.
			line := fmt.Sprintf("l%d", (uint64(i)*2654435761+seed)%uint64(distinct))
			if !b.add([]byte(line)) {
				break // full: the sort would spill here
			}
			added = append(added, line)
		}
		b.settle()
		if b.used > budget && b.n > 1 {
			rt.Fatalf("used %d bytes of a budget of %d", b.used, budget)
		}
		// The model: the held lines, copies spread back out, are the
		// lines added; a line held twice was added after folding stopped.
		var spread []string
		first := map[string]int{}
		for i := range b.n {
			r := *b.ref(i)
			line := string(b.at(r))
			if j, ok := first[line]; ok && b.fold != nil {
				rt.Fatalf("line %q held at %d and %d while folding", line, j, i)
			}
			if _, ok := first[line]; !ok {
				first[line] = i
			}
			for range b.times(r, false) {
				spread = append(spread, line)
			}
		}
		count := func(ls []string) map[string]int {
			m := map[string]int{}
			for _, l := range ls {
				m[l]++
			}
			return m
		}
		want, got := count(added), count(spread)
		if len(want) != len(got) {
			rt.Fatalf("%d distinct lines held, %d added", len(got), len(want))
		}
		for l, c := range want {
			if got[l] != c {
				rt.Fatalf("line %q: %d copies held, %d added", l, got[l], c)
			}
		}
		// Distinct lines are held in the order of their first copies.
		seen := map[string]bool{}
		var order []string
		for _, l := range added {
			if !seen[l] {
				seen[l] = true
				order = append(order, l)
			}
		}
		for i, l := range order {
			if i > 0 && first[order[i-1]] > first[l] {
				rt.Fatalf("%q (first added before %q) is held after it", order[i-1], l)
			}
		}
		// Reset keeps the table (if folding) and its cost, nothing else.
		b.reset()
		if b.n != 0 || b.fold != nil && b.used != b.fold.bytes() || b.fold == nil && b.used != 0 {
			rt.Fatalf("after reset: %d lines, %d bytes used", b.n, b.used)
		}
	})
}

// Few copies: the table goes at the first check.
// A budget too small for the table's first size holds lines one by one:
// a table taking most of it would leave runs of a few lines.
func TestSortFoldSmallBudget(t *testing.T) {
	if b := newSortBuffer(sortFoldShare*sortFoldFirst-1, true); b.fold != nil || b.used != 0 {
		t.Errorf("a budget of %d bytes folds (%d bytes used)", b.budget, b.used)
	}
	if b := newSortBuffer(sortFoldShare*sortFoldFirst, true); b.fold == nil {
		t.Errorf("a budget of %d bytes does not fold", b.budget)
	}
}

func TestSortFoldStops(t *testing.T) {
	b := newSortBuffer(1<<30, true)
	for i := range sortFoldCheck + 1 {
		b.add(fmt.Appendf(nil, "line %d", i))
	}
	if b.fold != nil {
		t.Errorf("folding %d distinct lines: the table is still there", b.n)
	}
	// Many copies: it stays.
	b = newSortBuffer(1<<30, true)
	for i := range 4 * sortFoldCheck {
		b.add(fmt.Appendf(nil, "line %d", i%100))
	}
	if b.fold == nil || b.n != 100 {
		t.Errorf("folding 100 distinct lines: table %v, %d lines held", b.fold != nil, b.n)
	}
}
