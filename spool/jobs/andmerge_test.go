package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"
)

// These tests run the and-merge of tpipe's --inputs form and pmjq 1.0's
// locking on the one engine.

// events is what the recorder heard, one word and job each, sorted.
func (r *recorder) summary() string {
	var e []string
	for _, kind := range []string{"claimed", "done", "failed"} {
		for _, s := range r.get(kind) {
			f := strings.Fields(s) // stage job [status retry]
			word := kind
			if kind == "failed" && f[3] == "true" {
				word = "retry"
			}
			e = append(e, word+" "+f[1])
		}
	}
	slices.Sort(e)
	return strings.Join(e, "; ")
}

// TestLock: a stage that locks finds its tokens at their own paths while
// it runs, and removes them once delivered.
func TestLock(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	jobstest.Drop(t, in, map[string]string{"j1": "one", "j2": "two"})
	var mu sync.Mutex
	var seen []string
	read := func(_ context.Context, j *Job) (int, error) {
		if j.In[0] != filepath.Join(in, j.Names[0]) {
			return -1, errors.New("held elsewhere: " + j.In[0])
		}
		b, err := os.ReadFile(filepath.Join(in, j.Names[0]))
		mu.Lock()
		seen = append(seen, string(b))
		mu.Unlock()
		return 0, err
	}
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "t", In: []string{in}, Lock: true, Run: read}}, fast(Options{Once: true, Workers: 2}))
	if err != nil || n.Done != 2 {
		t.Fatalf("Run = %+v, %v", n, err)
	}
	slices.Sort(seen)
	if strings.Join(seen, ",") != "one,two" {
		t.Errorf("jobs read %v", seen)
	}
	if got := jobstest.Tree(t, root); got != "" {
		t.Errorf("left: %s", got)
	}
}

// TestKeepFailed: a stage that keeps its failed jobs leaves them where
// they are, does not take them again, and is quiet all the same.
func TestKeepFailed(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobstest.Drop(t, in, map[string]string{"a": "ok\n", "b": "error\n", "c": "ok\n"})
	rec := &recorder{}
	var errb strings.Builder
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "grep", In: []string{in}, Out: [][]string{{out}}, KeepFailed: true, Run: script("grep -v error")}},
		fast(Options{Once: true, Observer: rec, Stderr: &errb, Prog: "pmjq"}))
	if err != nil {
		t.Fatal(err)
	}
	if n != (Counts{Done: 2, Failed: 1, Kept: 1}) {
		t.Errorf("counts %+v", n)
	}
	if got := jobstest.Tree(t, root); got != "in/b=error\nout/a=ok\nout/c=ok" {
		t.Errorf("after the run:\n%s", got)
	}
	if got := rec.get("claimed"); len(got) != 3 {
		t.Errorf("claimed %v: a kept job was taken again", got)
	}
	if !strings.Contains(errb.String(), "pmjq: job b (grep) failed: exit status 1 after 1 try; left in place\n") {
		t.Errorf("stderr: %s", errb.String())
	}
}

// TestFailedName: a stage with failed names (pmjq 1.0's --error) moves a
// failed job's tokens to them, renamed, with nothing beside them; a name
// it cannot make leaves the job in place.
func TestFailedName(t *testing.T) {
	root := t.TempDir()
	in, errs := filepath.Join(root, "in"), filepath.Join(root, "errors")
	jobstest.Drop(t, in, map[string]string{"x": "1\n", "bad name": "2\n"})
	var errb strings.Builder
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "false", In: []string{in}, Run: script("grep nothing"), Failed: []string{errs},
		FailedName: func(j *Job, _ int) (string, error) {
			if strings.Contains(j.Key, " ") {
				return "", errors.New("no spaces here")
			}
			return j.Key + ".err", nil
		}}}, fast(Options{Once: true, Stderr: &errb}))
	if err != nil {
		t.Fatal(err)
	}
	if n != (Counts{Failed: 2, Kept: 1}) {
		t.Errorf("counts %+v", n)
	}
	if got := jobstest.Tree(t, root); got != "errors/x.err=1\nin/bad name=2" {
		t.Errorf("after the run:\n%s", got)
	}
	for _, want := range []string{
		"tpipe: job bad name (false) failed: exit status 1 after 1 try; left in place, for want of a failed name: no spaces here\n",
		"tpipe: job x (false) failed: exit status 1 after 1 try; moved to " + filepath.Join(errs, "x.err") + "\n",
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestSharedFolders: two engines, as two hosts on one shared folder, each
// with several workers, race for the same and-merge jobs. Taking a job is
// all or nothing, so every job runs exactly once, under claims and under
// locks, and the folders are drained.
func TestSharedFolders(t *testing.T) {
	for _, lock := range []bool{false, true} {
		t.Run(map[bool]string{false: "claim", true: "lock"}[lock], func(t *testing.T) {
			const n = 120
			root := t.TempDir()
			dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
			jobs := map[string]string{}
			for i := range n {
				jobs[fmt.Sprintf("k%03d", i)] = "x"
			}
			for _, d := range dirs {
				jobstest.Drop(t, d, jobs)
			}
			var mu sync.Mutex
			runs := map[string]int{}
			count := func(ctx context.Context, j *Job) (int, error) {
				for _, p := range j.In {
					if _, err := os.Stat(p); err != nil {
						return -1, fmt.Errorf("a held token is not where the job says: %v", err)
					}
				}
				mu.Lock()
				runs[j.Key]++
				mu.Unlock()
				return 0, nil
			}
			var wg sync.WaitGroup
			results := make([]Counts, 2)
			for e := range 2 {
				st := Stage{Name: "m", In: dirs, Key: groupKey(`^(k\d+)$`, 2), Lock: lock, Run: count}
				wg.Go(func() {
					res, err := Run(jobstest.Ctx(t), []Stage{st}, fast(Options{Once: true, Host: fmt.Sprint("host", e)}))
					if err != nil {
						t.Error(err)
					}
					results[e] = res
				})
			}
			wg.Wait()
			if len(runs) != n {
				t.Errorf("%d jobs ran, want %d", len(runs), n)
			}
			for k, c := range runs {
				if c != 1 {
					t.Errorf("job %s ran %d times", k, c)
				}
			}
			if results[0].Done+results[1].Done != n {
				t.Errorf("done %d + %d, want %d", results[0].Done, results[1].Done, n)
			}
			if got := jobstest.Tree(t, root); got != "" {
				t.Errorf("left behind:\n%s", got)
			}
		})
	}
}
