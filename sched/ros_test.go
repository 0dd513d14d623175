package sched

import "testing"

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
