package jobs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"

	"github.com/tpipe/tpipe/spool/place"
)

// TestGroupCommitOrder records every step of the committer while 40 jobs
// of a stage whose port branches into two places are delivered, with
// fsync on. The committer's first batch is held at its sync until the
// other 39 jobs wait for it, so that they make one batch. Then, for each
// job, under at-least-once: its outputs were synced, then renamed, then
// their directories synced, all before its input was removed; under
// at-most-once the input went before its outputs were synced. Each output
// directory is synced once per batch.
func TestGroupCommitOrder(t *testing.T) {
	for _, d := range []place.Delivery{place.AtLeastOnce, place.AtMostOnce} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := jobstest.Ctx(t)
			root := t.TempDir()
			in, outA, outB := filepath.Join(root, "in"), filepath.Join(root, "a"), filepath.Join(root, "b")
			jobs, want := jobSet(40)
			jobstest.Drop(t, in, jobs)
			var (
				mu     sync.Mutex
				steps  []string
				e      *engine
				queued bool
			)
			o := Options{Once: true, Workers: 4, Delivery: d, Recheck: 20 * time.Millisecond}
			o.trace = func(op, path string) {
				if op == "batch" && !queued {
					queued = true
					n, _ := strconv.Atoi(path)
					for len(e.commits) < len(jobs)-n {
						if !sleep(ctx, time.Millisecond) {
							t.Error("the other jobs never reached the committer")
							break
						}
					}
				}
				mu.Lock()
				steps = append(steps, op+" "+path)
				mu.Unlock()
			}
			st := []Stage{{Name: "f", In: []string{in}, Out: [][]string{{outA, outB}}, Run: script(helperFilter)}}
			var err error
			if e, err = newEngine(st, o); err != nil {
				t.Fatal(err)
			}
			err = e.run(ctx)
			if cerr := e.owned.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.counts.Done != len(jobs) {
				t.Fatalf("done %d, want %d", e.counts.Done, len(jobs))
			}
			for _, dir := range []string{outA, outB} {
				if got := jobstest.Files(t, dir); !mapsEqual(got, want) {
					t.Errorf("%s: %d outputs of %d, or wrong", dir, len(got), len(want))
				}
			}
			checkOrder(t, steps, d, in, []string{outA, outB}, len(jobs))
		})
	}
}

// checkOrder checks the committer's steps (see TestGroupCommitOrder).
func checkOrder(t *testing.T, steps []string, d place.Delivery, in string, outs []string, n int) {
	t.Helper()
	first := map[string]int{} // step -> its first index
	syncdirs := map[string][]int{}
	batches := 0
	for i, s := range steps {
		op, path, _ := strings.Cut(s, " ")
		switch op {
		case "syncdir":
			syncdirs[path] = append(syncdirs[path], i)
			continue
		case "batch":
			batches++
			continue
		case "consume":
			// A claimed input is in the worker's claim folder: key it by
			// its place and name.
			s = "consume " + filepath.Join(in, filepath.Base(path))
		}
		if _, ok := first[s]; ok {
			t.Errorf("step %q twice", s)
		}
		first[s] = i
	}
	if batches != 2 {
		t.Errorf("%d batches, want 2", batches)
	}
	for _, dir := range outs {
		if len(syncdirs[dir]) != 2 {
			t.Errorf("%s synced %d times for 2 batches, want 2", dir, len(syncdirs[dir]))
		}
	}
	for k := range n {
		name := fmt.Sprintf("job-%03d", k)
		consume, ok := first["consume "+filepath.Join(in, name)]
		if !ok {
			t.Errorf("%s: input never removed", name)
			continue
		}
		for _, dir := range outs {
			out := filepath.Join(dir, name)
			sync, ok1 := first["sync "+out]
			rename, ok2 := first["rename "+out]
			if !ok1 || !ok2 || sync > rename {
				t.Errorf("%s: sync at %d (%v), rename at %d (%v)", out, sync, ok1, rename, ok2)
				continue
			}
			if d == place.AtMostOnce {
				if consume > sync {
					t.Errorf("%s: at-most-once removed the input (step %d) after syncing its output (%d)", name, consume, sync)
				}
				continue
			}
			// The first sync of the directory after the rename must come
			// before the input's removal.
			synced := false
			for _, i := range syncdirs[dir] {
				if i > rename && i < consume {
					synced = true
				}
			}
			if !synced || consume < rename {
				t.Errorf("%s: input removed at step %d, output renamed at %d, its directory synced at %v", name, consume, rename, syncdirs[dir])
			}
		}
	}
}
