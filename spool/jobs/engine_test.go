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

	"github.com/tpipe/tpipe/runner"
)

// deadline is the most any test here waits: a hang fails, it does not
// block the suite.
const deadline = 60 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

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

// drop writes jobs into dir as files name -> text.
func drop(t *testing.T, dir string, jobs map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range jobs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// files reads the regular files of dir that are not the protocol's.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// stray lists what is left in the protocol's directories of the places
// under root: claims, temporary files, locks.
func stray(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
			if part == ".tmp" || part == ".claim" || part == ".lock" {
				left = append(left, rel)
				break
			}
		}
		return nil
	})
	return left
}

func script(src string) Func { return Script(src, runner.Config{}) }

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
	drop(t, in, jobs)
	var errb strings.Builder
	n, err := Run(testCtx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: script("tr a-z A-Z | rev | sort")}},
		fast(Options{Once: true, Stderr: &syncWriter{w: &errb}}))
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 40 || n.Failed != 0 {
		t.Errorf("counts %+v", n)
	}
	if got := files(t, out); !mapsEqual(got, want) {
		t.Errorf("out = %v\nwant %v", got, want)
	}
	if left := files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %v", left)
	}
	if s := stray(t, root); len(s) != 0 {
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

// syncWriter makes a writer safe for the engine's goroutines and the test.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.w)
}

// TestRetriesThenFailed: a job that keeps failing runs 1+Retries times,
// then goes to the failed place with its stderr and status; the others
// are delivered, and nothing of the failing job reaches the output.
func TestRetriesThenFailed(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	drop(t, in, map[string]string{"good": "ok\n", "bad": "boom\n", "good2": "fine\n"})
	rec := &recorder{}
	var errb strings.Builder
	sw := &syncWriter{w: &errb}
	// grep -v boom fails (status 1) when every line is boom.
	n, err := Run(testCtx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Retries: 2,
		Run: script(`grep -v boom`)}}, fast(Options{Once: true, Stderr: sw, Observer: rec}))
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 2 || n.Failed != 1 || n.Retried != 2 {
		t.Errorf("counts %+v, want 2 done, 1 failed, 2 retried", n)
	}
	if got := files(t, out); !mapsEqual(got, map[string]string{"good": "ok\n", "good2": "fine\n"}) {
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
	if got := files(t, in+".failed")["bad"]; got != "boom\n" {
		t.Errorf("failed token = %q", got)
	}
	if left := files(t, in); len(left) != 0 {
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
	drop(t, in, map[string]string{"j": "x\n"})
	_, err := Run(testCtx(t), []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}},
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
	if got := files(t, out); len(got) != 0 {
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
