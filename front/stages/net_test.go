package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/jobs/jobstest"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/place"
)

// direct is what tpipe gives for src with the job on stdin.
func direct(t *testing.T, src, job string) string {
	t.Helper()
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Stdin: strings.NewReader(job), Stdout: &out, Stderr: &errb})
	defer r.Close()
	if st := r.RunScript(context.Background(), src); st != 0 {
		t.Fatalf("%q: status %d: %s", src, st, errb.String())
	}
	return out.String()
}

// TestServeSameOutput: a served pipeline's result for each job is what the
// pipeline gives run in memory on that job (Theorem 2.2 of "Thrifty
// Execution of Task Pipelines" carried to the spool: the schedule, here
// one stage per command with places between, does not change the output).
func TestServeSameOutput(t *testing.T) {
	work := map[string]string{
		"a": "pear\napple\nfig\napple\n",
		"b": "one two\nthree\n",
		"c": "",
		"d": "x 1\ny 2\nx 3\nz 4\n",
	}
	for _, src := range []string{
		"tr a-z A-Z",
		"tr a-z A-Z | rev | sort",
		"sort | uniq -c | sort -rn",
		"tee @a @b > /dev/null\ncat @b @a | sort",
		"tee @l @r > /dev/null\nsed -n /x/p @l > @xs\nsed /x/d @r > @others\nmerge @xs @others | sort",
		`route "^x" @yes @no > /dev/null; prefix YES < @yes > @y; merge @y @no | sort`,
		"cat | wc -l",
	} {
		t.Run(src, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "spool")
			net, err := NewNet(dir, src, runner.Config{})
			if err != nil {
				t.Fatal(err)
			}
			jobstest.Drop(t, filepath.Join(dir, "in"), work)
			var errb strings.Builder
			if _, err := jobs.Run(jobstest.Ctx(t), net.Stages, jobs.Options{NoSync: true, Recheck: 20 * time.Millisecond, Workers: 3, Once: true, Stderr: &errb}); err != nil {
				t.Fatal(err)
			}
			got := jobstest.Files(t, filepath.Join(dir, "out"))
			for name, job := range work {
				if want := direct(t, src, job); got[name] != want {
					t.Errorf("job %s: served %q, in memory %q", name, got[name], want)
				}
			}
			if len(got) != len(work) {
				t.Errorf("out has %d results, want %d", len(got), len(work))
			}
			if s := jobstest.Stray(t, dir); len(s) != 0 {
				t.Errorf("stray: %v", s)
			}
			for _, st := range net.Stages {
				for _, in := range st.In {
					if left := jobstest.Files(t, in); len(left) != 0 {
						t.Errorf("%s left in %s", fmt.Sprint(len(left)), in)
					}
				}
			}
			if errb.String() != "" {
				t.Errorf("stderr: %s", errb.String())
			}
		})
	}
}

// TestServePlaces: the places of a net are named after its edges.
func TestServePlaces(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"tr a-z A-Z | rev", "tr: in -> [tr-rev]; rev: tr-rev -> [out]"},
		{"tee @a @b > /dev/null\ncat @b @a | sort", "tee: in -> [@a] [@b]; cat: @b @a -> [cat-sort]; sort: cat-sort -> [out]"},
		{"seq 3 | sort", ""},
		{"tee @a > /dev/null; cat @a | sort; grep x @a > @g; cat @g > /dev/null", "tee: in -> [@a-cat @a-grep]; cat: @a-cat -> [cat-sort]; sort: cat-sort -> [out]; grep: @a-grep -> [@g]; cat#2: @g ->"},
	} {
		net, err := NewNet("D", tc.src, runner.Config{})
		if err != nil {
			if tc.want != "" {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		var got []string
		for _, st := range net.Stages {
			s := st.Name + ":"
			for _, in := range st.In {
				s += " " + strings.TrimPrefix(in, "D/")
			}
			s += " ->"
			for _, ps := range st.Out {
				var names []string
				for _, p := range ps {
					names = append(names, strings.TrimPrefix(p, "D/"))
				}
				s += fmt.Sprintf(" %v", names)
			}
			got = append(got, s)
		}
		if g := strings.Join(got, "; "); g != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, g, tc.want)
		}
	}
}

// TestServeRefused: what cannot be served says why.
func TestServeRefused(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"seq 3 | sort", "seq (at 1:1) reads no job"},
		{"sort; sort", "2 graphs"},
		{"tee @a > /dev/null; cat @a; cat @a", "cat, cat#2 all write standard output"},
	} {
		_, err := NewNet("D", tc.src, runner.Config{})
		var ne *NetError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a NetError with %q", tc.src, err, tc.want)
		}
	}
	if _, err := NewNet("D", "cat @nowhere", runner.Config{}); err == nil || errors.As(err, new(*NetError)) {
		t.Errorf("a broken edge rule: %v, want the runner's error", err)
	}
}

// FuzzNewNet: any script either is refused with an error or makes a net
// whose places are folders under the spool, named validly, with one
// stage reading DIR/in, and a stage script that compiles for any job.
func FuzzNewNet(f *testing.F) {
	for _, s := range []string{
		"tr a-z A-Z | rev", "tee @a @b > /dev/null\ncat @b @a | sort", "seq 3 | sort",
		`route "^x" @yes @no > /dev/null; prefix YES < @yes > @y; merge @y @no | sort`,
		"grep x > @a; tr a b < @a", "cat | wc -l 2> err", "sort; sort", "paste @a @b", "md5sum",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		net, err := NewNet("/spool", src, runner.Config{Getenv: func(string) string { return "" }})
		if err != nil {
			return
		}
		readsIn := 0
		for _, st := range net.Stages {
			if len(st.In) == 0 {
				t.Fatalf("%q: stage %s reads nothing", src, st.Name)
			}
			var all []string
			all = append(all, st.In...)
			for _, ps := range st.Out {
				all = append(all, ps...)
			}
			for _, p := range all {
				if filepath.Dir(p) != "/spool" || place.ValidName(filepath.Base(p)) != nil {
					t.Fatalf("%q: place %q", src, p)
				}
				if p == "/spool/in" && slices.Contains(st.In, p) {
					readsIn++
				}
			}
			j := &jobs.Job{Key: "job", Stderr: io.Discard}
			for range st.In {
				j.In = append(j.In, "/spool/x/.claim/o/it's a job")
			}
			for range st.Out {
				j.Out = append(j.Out, os.NewFile(0, "/spool/y/.tmp/o~1"))
			}
			r := runner.New(runner.Config{})
			_, _, err := r.Commands(net.script[st.Name](j))
			r.Close()
			if err != nil {
				t.Fatalf("%q: stage %s's script does not compile: %v", src, st.Name, err)
			}
		}
		if readsIn != 1 {
			t.Fatalf("%q: %d stages read DIR/in", src, readsIn)
		}
	})
}
