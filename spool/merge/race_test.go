package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/spool/place"
)

// TestEnginesShareFolders: two engines, as two hosts on one shared
// folder, each with several workers, race for the same sets. Taking a set
// is all or nothing, so every set runs exactly once, under claims and
// under locks, and the folders are drained.
func TestEnginesShareFolders(t *testing.T) {
	for _, how := range []Take{TakeClaim, TakeLock} {
		t.Run(map[Take]string{TakeClaim: "claim", TakeLock: "lock"}[how], func(t *testing.T) {
			const n = 120
			root := t.TempDir()
			dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
			for _, d := range dirs {
				os.MkdirAll(d, 0o700)
				for i := range n {
					os.WriteFile(filepath.Join(d, fmt.Sprintf("k%03d", i)), []byte("x"), 0o600)
				}
			}
			var mu sync.Mutex
			runs := map[string]int{}
			re := regexp.MustCompile(`^(k\d+)$`)
			var wg sync.WaitGroup
			results := make([]Result, 2)
			for e := range 2 {
				w, err := place.NewWorker(place.Options{Host: fmt.Sprint("host", e), NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				eng, err := New(Config{
					Worker: w, Take: how, Workers: 3, Once: true,
					Inputs: []Input{{Dir: dirs[0], Pattern: re, Key: GroupKey}, {Dir: dirs[1], Pattern: re, Key: GroupKey}},
					Run: func(ctx context.Context, h *Held) (func() error, error) {
						for _, p := range h.Paths {
							if _, err := os.Stat(p); err != nil {
								return nil, fmt.Errorf("a held file is not where the set says: %v", err)
							}
						}
						mu.Lock()
						runs[h.Key]++
						mu.Unlock()
						return nil, nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					res, err := eng.Run(testCtx(t))
					if err != nil {
						t.Error(err)
					}
					results[e] = res
				})
			}
			wg.Wait()
			if len(runs) != n {
				t.Errorf("%d sets ran, want %d", len(runs), n)
			}
			for k, c := range runs {
				if c != 1 {
					t.Errorf("set %s ran %d times", k, c)
				}
			}
			if results[0].Done+results[1].Done != n {
				t.Errorf("done %d + %d, want %d", results[0].Done, results[1].Done, n)
			}
			if got := tree(t, root); got != "" {
				t.Errorf("left behind:\n%s", got)
			}
		})
	}
}
