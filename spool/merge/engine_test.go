package merge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/place"
)

// write puts files (name -> text) in dir, creating it.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists the regular files under dir with their text, protocol
// directories (.tmp, .claim, .lock) left out when empty.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if ents, _ := os.ReadDir(p); len(ents) == 0 && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, rel+"="+strings.TrimSpace(string(b)))
		return nil
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// testCtx bounds a test's run: no test hangs.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string)              { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) Claimed(stage, job string) { r.add("claimed " + job) }
func (r *recorder) Done(stage, job string, d time.Duration) {
	r.add("done " + job)
}
func (r *recorder) Failed(stage, job string, status int, retry bool) {
	if retry {
		r.add("retry " + job)
	} else {
		r.add("failed " + job)
	}
}
func (r *recorder) TakenBack(place string, n int) { r.add("takenback") }

func (r *recorder) sorted() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := slices.Clone(r.events)
	slices.Sort(e)
	return strings.Join(e, "; ")
}

// inputsConfig is tpipe's --inputs form on root/audio and root/video,
// running words with its output in root/out.
func inputsConfig(t *testing.T, root string, words []string) Config {
	t.Helper()
	w, err := place.NewWorker(place.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	out, err := w.Open(filepath.Join(root, "out"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(.*)\.og[gv]$`)
	c := Config{
		Worker:  w,
		Run:     CommandRun(words, out, nil, runner.Config{}),
		Stage:   "mux",
		Inputs:  []Input{{Dir: filepath.Join(root, "audio"), Pattern: re, Key: GroupKey}, {Dir: filepath.Join(root, "video"), Pattern: re, Key: GroupKey}},
		Workers: 2,
		Once:    true,
		Watch:   place.WatchOptions{Poll: 5 * time.Millisecond},
	}
	return c
}

// TestEngineInputs runs tpipe's --inputs form on root/audio and
// root/video and looks at the folders and the observer afterwards.
func TestEngineInputs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		audio, video map[string]string
		words        []string
		retries      int
		want         Result
		tree         []string
		events       string
	}{{
		name:  "pairs by group, no partner stays",
		audio: map[string]string{"a.ogg": "A-audio", "b.ogg": "B-audio", "lonely.ogg": "no video", "notes.txt": "not a token"},
		video: map[string]string{"a.ogv": "A-video", "b.ogv": "B-video"},
		words: []string{"cat", "$2", "$1"},
		want:  Result{Done: 2},
		tree: []string{
			"audio/lonely.ogg=no video",
			"audio/notes.txt=not a token",
			"out/a=A-videoA-audio",
			"out/b=B-videoB-audio",
		},
		events: "claimed a; claimed b; done a; done b",
	}, {
		// grep fails (status 1) on a set whose first file has no 'A'.
		name:    "retries then the failed place",
		audio:   map[string]string{"a.ogg": "A", "bad.ogg": "B"},
		video:   map[string]string{"a.ogv": "A", "bad.ogv": "B"},
		words:   []string{"grep", "A", "$1"},
		retries: 2,
		want:    Result{Done: 1, Retried: 2, Failed: 1},
		tree: []string{
			"audio.failed/bad.ogg.status=1",
			"audio.failed/bad.ogg.stderr=",
			"audio.failed/bad.ogg=B",
			"out/a=A",
			"video.failed/bad.ogv.status=1",
			"video.failed/bad.ogv.stderr=",
			"video.failed/bad.ogv=B",
		},
		events: "claimed a; claimed bad; claimed bad; claimed bad; done a; failed bad; retry bad; retry bad",
	}, {
		name:  "a command not found keeps its message",
		audio: map[string]string{"a.ogg": "A"},
		video: map[string]string{"a.ogv": "A"},
		words: []string{"no-such-command-tpipe", "$1"},
		want:  Result{Failed: 1},
		tree: []string{
			"audio.failed/a.ogg.status=127",
			"audio.failed/a.ogg.stderr=tpipe: no-such-command-tpipe: command not found",
			"audio.failed/a.ogg=A",
			"video.failed/a.ogv.status=127",
			"video.failed/a.ogv.stderr=tpipe: no-such-command-tpipe: command not found",
			"video.failed/a.ogv=A",
		},
		events: "claimed a; failed a",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "audio"), tc.audio)
			write(t, filepath.Join(root, "video"), tc.video)
			c := inputsConfig(t, root, tc.words)
			rec := &recorder{}
			c.Observer = rec
			c.OnFailure = RetryThenAside(tc.retries)
			e, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if res != tc.want {
				t.Errorf("result %+v, want %+v", res, tc.want)
			}
			if got, want := tree(t, root), strings.Join(tc.tree, "\n"); got != want {
				t.Errorf("after the run:\n%s\nwant\n%s", got, want)
			}
			if got := rec.sorted(); got != tc.events {
				t.Errorf("observer: %s\nwant      %s", got, tc.events)
			}
		})
	}
}

// TestEngineLockLeavesInputsInPlace: under TakeLock the command finds
// its inputs at their own paths while it runs.
func TestEngineLock(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	write(t, in, map[string]string{"j1": "one", "j2": "two"})
	re := regexp.MustCompile(`.*`)
	var mu sync.Mutex
	var seen []string
	c := Config{
		Stage:  "t",
		Inputs: []Input{{Dir: in, Pattern: re, Key: ExpandKey(re, "$0")}},
		Take:   TakeLock, Workers: 2, Once: true,
		Place: place.Options{NoSync: true},
		Run: func(ctx context.Context, h *Held) (func() error, error) {
			b, err := os.ReadFile(filepath.Join(in, h.Names[0]))
			mu.Lock()
			seen = append(seen, string(b))
			mu.Unlock()
			if h.Paths[0] != filepath.Join(in, h.Names[0]) {
				return nil, errors.New("held elsewhere: " + h.Paths[0])
			}
			return nil, err
		},
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(testCtx(t))
	if err != nil || res.Done != 2 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	slices.Sort(seen)
	if strings.Join(seen, ",") != "one,two" {
		t.Errorf("commands read %v", seen)
	}
	if got := tree(t, root); got != "" {
		t.Errorf("left: %s", got)
	}
}
