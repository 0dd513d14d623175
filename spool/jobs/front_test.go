package jobs_test

// The engine's tests that run its front ends' stages (package
// front/stages stands above the engine, so only an external test can
// use it).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/front/stages"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/jobs/jobstest"
)

// muxStage is tpipe's --inputs form on root/audio and root/video,
// running words with its output in root/out.
func muxStage(root string, words []string, retries int) jobs.Stage {
	return jobs.Stage{
		Name:    "mux",
		In:      []string{filepath.Join(root, "audio"), filepath.Join(root, "video")},
		Key:     jobs.GroupKey(`(.*)\.og[gv]$`, 2),
		Out:     [][]string{{filepath.Join(root, "out")}},
		Run:     stages.Argv(words, nil, runner.Config{}),
		Retries: retries,
	}
}

// TestInputsForm runs tpipe's --inputs form on root/audio and root/video
// and looks at the folders and the observer afterwards.
func TestInputsForm(t *testing.T) {
	for _, tc := range []struct {
		name         string
		audio, video map[string]string
		words        []string
		retries      int
		want         jobs.Counts
		tree         []string
		events       string
	}{{
		name:  "pairs by group, no partner stays",
		audio: map[string]string{"a.ogg": "A-audio", "b.ogg": "B-audio", "lonely.ogg": "no video", "notes.txt": "not a token"},
		video: map[string]string{"a.ogv": "A-video", "b.ogv": "B-video"},
		words: []string{"cat", "$2", "$1"},
		want:  jobs.Counts{Done: 2},
		tree: []string{
			"audio/lonely.ogg=no video",
			"audio/notes.txt=not a token",
			"out/a=A-videoA-audio",
			"out/b=B-videoB-audio",
		},
		events: "claimed a; claimed b; done a; done b",
	}, {
		// grep fails (status 1) on a set whose first file has no 'A'.
		name:    "retries then the failed places",
		audio:   map[string]string{"a.ogg": "A", "bad.ogg": "B"},
		video:   map[string]string{"a.ogv": "A", "bad.ogv": "B"},
		words:   []string{"grep", "A", "$1"},
		retries: 2,
		want:    jobs.Counts{Done: 1, Retried: 2, Failed: 1},
		tree: []string{
			"audio.failed/bad.ogg.status=status 1\ntries 3\nstage mux",
			"audio.failed/bad.ogg.stderr=",
			"audio.failed/bad.ogg=B",
			"out/a=A",
			"video.failed/bad.ogv=B",
		},
		events: "claimed a; claimed bad; done a; failed bad; retry bad; retry bad",
	}, {
		name:  "a command not found keeps its message",
		audio: map[string]string{"a.ogg": "A"},
		video: map[string]string{"a.ogv": "A"},
		words: []string{"no-such-command-tpipe", "$1"},
		want:  jobs.Counts{Failed: 1},
		tree: []string{
			"audio.failed/a.ogg.status=status 127\ntries 1\nstage mux",
			"audio.failed/a.ogg.stderr=tpipe: no-such-command-tpipe: command not found",
			"audio.failed/a.ogg=A",
			"video.failed/a.ogv=A",
		},
		events: "claimed a; failed a",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			jobstest.Drop(t, filepath.Join(root, "audio"), tc.audio)
			jobstest.Drop(t, filepath.Join(root, "video"), tc.video)
			rec := &jobs.Recorder{}
			n, err := jobs.Run(jobstest.Ctx(t), []jobs.Stage{muxStage(root, tc.words, tc.retries)}, jobs.Fast(jobs.Options{Once: true, Observer: rec, Workers: 2}))
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("counts %+v, want %+v", n, tc.want)
			}
			// The status file's owner and time differ from run to run.
			got := regexp.MustCompile(`\nowner .*\ntime .*`).ReplaceAllString(jobstest.Tree(t, root), "")
			if want := strings.Join(tc.tree, "\n"); got != want {
				t.Errorf("after the run:\n%s\nwant\n%s", got, want)
			}
			if got := rec.Summary(); got != tc.events {
				t.Errorf("observer: %s\nwant      %s", got, tc.events)
			}
		})
	}
}

// TestObserver: every job is claimed and done once, in the observer's
// words, under every stage of a served net.
func TestObserver(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	net, err := stages.NewNet(dir, "tr a-z A-Z | rev", runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	work, _ := jobs.JobSet(5)
	jobstest.Drop(t, filepath.Join(dir, "in"), work)
	rec := &jobs.Recorder{}
	if _, err := jobs.Run(jobstest.Ctx(t), net.Stages, jobs.Fast(jobs.Options{Once: true, Observer: jobs.Observers{rec}})); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"claimed", "done"} {
		got := rec.Get(kind)
		slices.Sort(got)
		var want []string
		for _, st := range []string{"rev", "tr"} {
			for i := range 5 {
				want = append(want, fmt.Sprintf("%s job-%03d", st, i))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v", kind, got)
		}
	}
}

// BenchmarkAndMerge10k is pmjq 1.0's bug_cartesianproduct at its size:
// 10,000 files in each of two folders, paired by name, each pair run
// through the builtin cat into an output place.
func BenchmarkAndMerge10k(b *testing.B) {
	const n = 10000
	for b.Loop() {
		b.StopTimer()
		root := b.TempDir()
		for _, d := range []string{"a", "b"} {
			os.MkdirAll(filepath.Join(root, d), 0o700)
			for i := range n {
				os.WriteFile(filepath.Join(root, d, fmt.Sprintf("%06d", i)), []byte(d+"\n"), 0o600)
			}
		}
		st := jobs.Stage{Name: "cat", In: []string{filepath.Join(root, "a"), filepath.Join(root, "b")}, Key: jobs.GroupKey(`(.*)`, 2),
			Out: [][]string{{filepath.Join(root, "out")}}, Run: stages.Argv([]string{"cat", "$1", "$2"}, nil, runner.Config{})}
		b.StartTimer()
		res, err := jobs.Run(context.Background(), []jobs.Stage{st}, jobs.Options{Once: true, NoSync: true, Workers: 2})
		if err != nil || res.Done != n {
			b.Fatalf("%+v, %v", res, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sets/s")
}
