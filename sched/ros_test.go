package sched

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// The core alone: the greatest index that is neither done, waiting nor on
// its own goroutine.
func TestROSCoreNext(t *testing.T) {
	c := newROSCore(4)
	waiting := map[int]bool{}
	w := func(i int) bool { return waiting[i] }
	for _, step := range []struct {
		set  func()
		want int
	}{
		{func() {}, 3},
		{func() { waiting[3] = true }, 2},
		{func() { c.external[2] = true }, 1},
		{func() { c.done[1] = true; waiting[0] = true }, -1},
		{func() { waiting[3] = false }, 3},
	} {
		step.set()
		if got := c.next(w); got != step.want {
			t.Fatalf("next = %d, want %d", got, step.want)
		}
	}
	c.done[0], c.done[3] = true, true
	if !c.finished() {
		t.Fatal("not finished with every scheduled task done")
	}
}

// The set of tasks woken against a dumb model (a map), over sizes that
// span several words: add, addLocal, above and take agree with it after every step.
func TestWokenSetModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 200).Draw(t, "tasks")
		s := newWokenSet(n)
		model := map[int]bool{}
		for i := range rapid.IntRange(1, 60).Draw(t, "steps") {
			idx := rapid.IntRange(0, n-1).Draw(t, fmt.Sprint("idx", i))
			switch rapid.IntRange(0, 3).Draw(t, fmt.Sprint("op", i)) {
			case 0:
				s.add(idx)
				model[idx] = true
			case 3:
				s.addLocal(idx)
				model[idx] = true
			case 1:
				want := false
				for w := range model {
					want = want || w > idx
				}
				if got := s.above(idx); got != want {
					t.Fatalf("above(%d) = %v, model %v (set %v)", idx, got, want, model)
				}
			case 2:
				top, took := -1, map[int]bool{}
				waits := make([]bool, n)
				for w := range waits {
					waits[w] = true
				}
				got := s.take(waits)
				for w, still := range waits {
					if !still {
						took[w] = true
					}
				}
				for w := range model {
					top = max(top, w)
				}
				if got != top || fmt.Sprint(took) != fmt.Sprint(model) {
					t.Fatalf("take = %d of %v, model %d of %v", got, took, top, model)
				}
				clear(model)
			}
		}
	})
}
