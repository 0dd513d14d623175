package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"

	"github.com/tpipe/tpipe/runner"
)

// fast are Options for tests: no fsync, quick rechecks.
func fast(o Options) Options {
	o.NoSync = true
	if o.Recheck == 0 {
		o.Recheck = 20 * time.Millisecond
	}
	if o.Workers == 0 {
		o.Workers = 3
	}
	return o
}

// script runs the tpipe pipeline src, which the test knows compiles, on
// each job's first input, as the front end's stages.Script does (the
// engine's package may not import it: it stands above the engine).
func script(src string) Func {
	p, err := runner.Prepare(src, runner.Config{})
	if err != nil {
		panic(fmt.Sprintf("script %q: %v", src, err))
	}
	return func(ctx context.Context, j *Job) (int, error) {
		var out io.Writer = io.Discard
		if len(j.Out) > 0 {
			out = j.Out[0]
		}
		return p.RunFile(ctx, j.In[0], out, j.Stderr)
	}
}

func TestPmjqBuiltins(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobs := map[string]string{}
	want := map[string]string{}
	for i := range 40 {
		name := fmt.Sprintf("job %02d.txt", i)
		jobs[name] = fmt.Sprintf("hello %d\nworld\n", i)
		want[name] = fmt.Sprintf("%s OLLEH\nDLROW\n", reverse(fmt.Sprint(i)))
	}
	jobstest.Drop(t, in, jobs)
	var errb strings.Builder
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: script("tr a-z A-Z | rev | sort")}},
		fast(Options{Once: true, Stderr: &errb})) // Run serializes its writes
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 40 || n.Failed != 0 {
		t.Errorf("counts %+v", n)
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, want) {
		t.Errorf("out = %v\nwant %v", got, want)
	}
	if left := jobstest.Files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %v", left)
	}
	if s := jobstest.Stray(t, root); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
	if _, err := os.Stat(in + ".failed"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed place was made with no failure: %v", err)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRetriesThenFailed: a job that keeps failing runs 1+Retries times,
// then goes to the failed place with its stderr and status; the others
// are delivered, and nothing of the failing job reaches the output.
func TestRetriesThenFailed(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobstest.Drop(t, in, map[string]string{"good": "ok\n", "bad": "boom\n", "good2": "fine\n"})
	rec := &recorder{}
	sw := &strings.Builder{}
	// grep -v boom fails (status 1) when every line is boom.
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Retries: 2,
		Run: script(`grep -v boom`)}}, fast(Options{Once: true, Stderr: sw, Observer: rec}))
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 2 || n.Failed != 1 || n.Retried != 2 {
		t.Errorf("counts %+v, want 2 done, 1 failed, 2 retried", n)
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, map[string]string{"good": "ok\n", "good2": "fine\n"}) {
		t.Errorf("out = %v", got)
	}
	fs, err := Failures(in + ".failed")
	if err != nil || len(fs) != 1 {
		t.Fatalf("failures = %v, %v", fs, err)
	}
	f := fs[0]
	if f.Name != "bad" || f.Status != 1 || f.Tries != 3 || f.Stage != "f" {
		t.Errorf("failure = %+v", f)
	}
	if got := jobstest.Files(t, in+".failed")["bad"]; got != "boom\n" {
		t.Errorf("failed token = %q", got)
	}
	if left := jobstest.Files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %v", left)
	}
	if got := rec.get("failed"); !slices.Equal(got, []string{"f bad 1 true", "f bad 1 true", "f bad 1 false"}) {
		t.Errorf("observer failed = %v", got)
	}
	if !strings.Contains(sw.String(), "job bad (f) failed: exit status 1 after 3 tries; moved to") {
		t.Errorf("stderr = %s", sw.String())
	}
}

// TestFailedStderr: a failing program's stderr is kept beside the job.
func TestFailedStderr(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobstest.Drop(t, in, map[string]string{"j": "x\n"})
	_, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}},
		Run: script(`cat | sed -n 'p;q 3' | cat /no/such/file`)}}, fast(Options{Once: true}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(in+".failed", "j"+StderrSuffix))
	if err != nil || !strings.Contains(string(b), "cat: /no/such/file: No such file or directory") {
		t.Errorf("stderr kept = %q, %v", b, err)
	}
	fs, _ := Failures(in + ".failed")
	if len(fs) != 1 || fs[0].Status != 1 || fs[0].Tries != 1 {
		t.Errorf("failures = %+v", fs)
	}
	if got := jobstest.Files(t, out); len(got) != 0 {
		t.Errorf("a failed job reached the output: %v", got)
	}
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	events map[string][]string
}

func (r *recorder) add(kind, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events == nil {
		r.events = map[string][]string{}
	}
	r.events[kind] = append(r.events[kind], s)
}

func (r *recorder) get(kind string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events[kind])
}

func (r *recorder) Claimed(stage, job string) { r.add("claimed", stage+" "+job) }
func (r *recorder) Done(stage, job string, d time.Duration) {
	r.add("done", stage+" "+job)
}
func (r *recorder) Failed(stage, job string, status int, retry bool) {
	r.add("failed", fmt.Sprintf("%s %s %d %v", stage, job, status, retry))
}
func (r *recorder) TakenBack(place string, n int) {
	r.add("takenback", fmt.Sprintf("%s %d", filepath.Base(place), n))
}
func (r *recorder) PutBack(stage, job string) { r.add("putback", stage+" "+job) }

// TestAndMerge: a stage with two input places runs a job only when both
// hold a token with its key; a token with no partner stays where it is,
// and the net is quiet all the same.
func TestAndMerge(t *testing.T) {
	root := t.TempDir()
	left, right, out := filepath.Join(root, "left"), filepath.Join(root, "right"), filepath.Join(root, "out")
	jobstest.Drop(t, left, map[string]string{"1.l": "one\n", "2.l": "two\n", "3.l": "three\n", "notes.txt": "?"})
	jobstest.Drop(t, right, map[string]string{"1.r": "uno\n", "3.r": "tres\n", "4.r": "cuatro\n"})
	key := func(_ int, name string) (string, bool) {
		k, _, ok := strings.Cut(name, ".")
		return k, ok && (strings.HasSuffix(name, ".l") || strings.HasSuffix(name, ".r"))
	}
	join := func(_ context.Context, j *Job) (int, error) {
		for _, p := range j.In {
			b, err := os.ReadFile(p)
			if err != nil {
				return -1, err
			}
			j.Out[0].Write(b)
		}
		return 0, nil
	}
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "join", In: []string{left, right}, Key: key, Out: [][]string{{out}},
		OutName: func(j *Job, _ int) (string, error) { return j.Key + ".both", nil }, Run: join}}, fast(Options{Once: true}))
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 2 {
		t.Errorf("done %d, want 2", n.Done)
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, map[string]string{"1.both": "one\nuno\n", "3.both": "three\ntres\n"}) {
		t.Errorf("out = %v", got)
	}
	if got := jobstest.Files(t, left); !mapsEqual(got, map[string]string{"2.l": "two\n", "notes.txt": "?"}) {
		t.Errorf("left kept %v", got)
	}
	if got := jobstest.Files(t, right); !mapsEqual(got, map[string]string{"4.r": "cuatro\n"}) {
		t.Errorf("right kept %v", got)
	}
}

// TestAtMostOnce: the input goes before the output is committed; the
// result is the same when nothing crashes.
func TestAtMostOnce(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobstest.Drop(t, in, map[string]string{"a": "x\n", "b": "y\n"})
	n, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: script("tr x-y X-Y")}},
		fast(Options{Once: true, Delivery: 1}))
	if err != nil || n.Done != 2 {
		t.Fatalf("%+v, %v", n, err)
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, map[string]string{"a": "X\n", "b": "Y\n"}) {
		t.Errorf("out = %v", got)
	}
}

// TestBranch: an output port with several places puts the same token in
// each; a stage with two ports fills both.
func TestBranch(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	o1, o2, o3 := filepath.Join(root, "o1"), filepath.Join(root, "o2"), filepath.Join(root, "o3")
	jobstest.Drop(t, in, map[string]string{"j": "hello\n"})
	two := func(_ context.Context, j *Job) (int, error) {
		fmt.Fprint(j.Out[0], "first\n")
		fmt.Fprint(j.Out[1], "second\n")
		return 0, nil
	}
	if _, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{o1, o2}, {o3}}, Run: two}}, fast(Options{Once: true})); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{o1: "first\n", o2: "first\n", o3: "second\n"} {
		if got := jobstest.Files(t, dir)["j"]; got != want {
			t.Errorf("%s/j = %q, want %q", filepath.Base(dir), got, want)
		}
	}
}

// TestCancel: a run stopped in the middle of jobs puts them back: nothing
// is lost, no claim is left, and a later run finishes them.
func TestCancel(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobs, want := jobSet(20)
	jobstest.Drop(t, in, jobs)
	ctx, cancel := context.WithCancel(jobstest.Ctx(t))
	started := make(chan struct{}, 20)
	block := func(ctx context.Context, j *Job) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		return -1, ctx.Err()
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: block}}, fast(Options{}))
		done <- err
	}()
	for range 3 {
		<-started
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := jobstest.Files(t, in); len(got) != len(jobs) {
		t.Errorf("%d jobs back in place, want %d", len(got), len(jobs))
	}
	if s := jobstest.Stray(t, root); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
	if _, err := Run(jobstest.Ctx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: script(helperFilter)}}, fast(Options{Once: true})); err != nil {
		t.Fatal(err)
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, want) {
		t.Errorf("after a second run: %d outputs", len(got))
	}
}

// TestStageErrors: a stage that cannot run says why before anything runs.
func TestStageErrors(t *testing.T) {
	f := script("cat")
	for _, tc := range []struct {
		st   Stage
		want string
	}{
		{Stage{In: []string{"x"}, Run: f}, "no name"},
		{Stage{Name: "s", Run: f}, "stage s: no input place"},
		{Stage{Name: "s", In: []string{"x"}}, "nothing to run"},
		{Stage{Name: "s", In: []string{"x"}, Run: f, Retries: -1}, "-1 retries"},
		{Stage{Name: "s", In: []string{"x"}, Run: f, Out: [][]string{{}}}, "output 0 goes to no place"},
		{Stage{Name: "s", In: []string{"x", "y"}, Run: f, Failed: []string{"z"}}, "1 failed places for 2 input places"},
	} {
		_, err := Run(jobstest.Ctx(t), []Stage{tc.st}, fast(Options{Once: true}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.st, err, tc.want)
		}
	}
	if _, err := Run(jobstest.Ctx(t), nil, Options{}); err == nil {
		t.Error("no stage: no error")
	}
}
