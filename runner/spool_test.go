package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/spool/place"
	"pgregory.net/rapid"
)

// spoolRun runs script under --spool dir and returns what it did, with
// the segments each task ran and found cached.
type spoolOutcome struct {
	outcome
	run, cached map[string]int
}

func runSpooled(dir, script, stdin string, segment int, cwd string) spoolOutcome {
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Spool: dir, Policy: sched.Spool, Segment: segment, NoSync: true, Dir: cwd,
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	defer r.Close()
	o := spoolOutcome{run: map[string]int{}, cached: map[string]int{}}
	r.OnStats = func(st *sched.Stats) {
		for _, t := range st.Tasks {
			o.run[t.Name] += t.SegmentsRun
			o.cached[t.Name] += t.SegmentsCached
		}
	}
	o.status = r.RunScript(context.Background(), script)
	o.out, o.errText = out.String(), errb.String()
	return o
}

// runConcurrentIn runs script under the concurrent policy in directory
// cwd with stdin.
func runConcurrentIn(cwd, script, stdin string) outcome {
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Policy: sched.Concurrent, Dir: cwd, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	defer r.Close()
	status := r.RunScript(context.Background(), script)
	return outcome{out.String(), errb.String(), status}
}

func (o spoolOutcome) ran() int {
	n := 0
	for _, v := range o.run {
		n += v
	}
	return n
}

// Theorem 2.2 carried over to the spool: random chains of builtins on
// random input, cut into segments of a random size, give under --spool the
// bytes and status they give under the concurrent policy. A rerun on the
// same directory gives them again and runs no segment at all (the cache).
func TestSpoolAgreesWithConcurrent(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "commands")
		cmds := make([]string, n)
		for i := range cmds {
			cmds[i] = rapid.SampledFrom(chainCommands).Draw(rt, "command")
		}
		script := strings.Join(cmds, " | ")
		lines := rapid.SliceOfN(rapid.StringOfN(rapid.SampledFrom([]rune("abcz ")), 0, 12, -1), 0, 60).Draw(rt, "lines")
		stdin := strings.Join(lines, "\n")
		if rapid.Bool().Draw(rt, "final newline") && stdin != "" {
			stdin += "\n"
		}
		segment := rapid.SampledFrom([]int{1, 16, 100, 64 << 10}).Draw(rt, "segment")
		cwd := t.TempDir()
		dir := filepath.Join(cwd, "spool")
		// The input on stdin (segments named by content), or in a file
		// read in place: 'cat in.txt | ...' or '... < in.txt'.
		spooled, input := script, stdin
		switch rapid.IntRange(0, 2).Draw(rt, "input") {
		case 1:
			spooled, input = "cat in.txt | "+script, ""
		case 2:
			first, rest, _ := strings.Cut(script, " | ")
			spooled, input = first+" < in.txt", ""
			if rest != "" {
				spooled += " | " + rest
			}
		}
		if err := os.WriteFile(filepath.Join(cwd, "in.txt"), []byte(stdin), 0o644); err != nil {
			rt.Fatal(err)
		}
		// The same line on the same input, concurrent: wc < in.txt sizes
		// its columns by the file, as GNU's does, where wc on a pipe
		// takes 7.
		want := runConcurrentIn(cwd, spooled, input)
		for _, pass := range []string{"first run", "rerun"} {
			got := runSpooled(dir, spooled, input, segment, cwd)
			if got.status != want.status || got.out != want.out {
				rt.Fatalf("%s of %q (segment %d) on %q: status %d, out %q, stderr %q; concurrent: %d %q",
					pass, spooled, segment, stdin, got.status, got.out, got.errText, want.status, want.out)
			}
			if pass == "rerun" && got.ran() != 0 {
				rt.Fatalf("rerun of %q ran segments %v", script, got.run)
			}
		}
	})
}

// The cache: a rerun does no stage work; a changed stage reruns itself and
// what follows it, and nothing before it; a changed input file reruns
// everything.
func TestSpoolCache(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, "sp")
	in := filepath.Join(cwd, "in.txt")
	var text strings.Builder
	for i := range 3000 {
		text.WriteString(strings.Repeat("xyz", i%7) + " line\n")
	}
	os.WriteFile(in, []byte(text.String()), 0o644)
	script := "cat in.txt | rev | cut -c1-5 | sort | uniq -c"
	run := func(script string) spoolOutcome {
		t.Helper()
		o := runSpooled(dir, script, "", 4096, cwd)
		if o.status != 0 {
			t.Fatalf("%q: status %d: %s", script, o.status, o.errText)
		}
		return o
	}
	first := run(script)
	for _, task := range []string{"rev", "cut", "sort", "uniq"} {
		if first.run[task] == 0 || first.cached[task] != 0 {
			t.Errorf("first run: %s ran %d segments, cached %d", task, first.run[task], first.cached[task])
		}
	}
	// cat FILE is not run: its file is read in place, never copied.
	if first.run["cat"] != 0 {
		t.Errorf("cat ran %d segments", first.run["cat"])
	}
	if toks, _ := filepath.Glob(filepath.Join(dir, "F1", "0*")); len(toks) != 0 {
		t.Errorf("the input was copied into F1: %d segments", len(toks))
	}
	if first.run["rev"] < 5 {
		t.Errorf("rev ran %d segments: the input was not cut", first.run["rev"])
	}
	again := run(script)
	if again.out != first.out || again.ran() != 0 {
		t.Errorf("rerun: ran %v; same output: %v", again.run, again.out == first.out)
	}
	changed := run("cat in.txt | rev | cut -c1-5 | sort -r | uniq -c")
	for task, want := range map[string]bool{"cat": false, "rev": false, "cut": false, "sort": true, "uniq": true} {
		if (changed.run[task] > 0) != want {
			t.Errorf("after sort changed: %s ran %d segments; want it to run: %v", task, changed.run[task], want)
		}
	}
	// The file changes (size and time): everything reruns.
	later := time.Now().Add(time.Second)
	os.WriteFile(in, []byte(text.String()+"new line\n"), 0o644)
	os.Chtimes(in, later, later)
	touched := run(script)
	for _, task := range []string{"rev", "cut", "sort", "uniq"} {
		if touched.run[task] == 0 {
			t.Errorf("after the input changed: %s ran nothing", task)
		}
	}
	if touched.out == first.out {
		t.Errorf("after the input changed: the output did not")
	}
}

// What --spool refuses, each with one line that says what to do.
func TestSpoolRefuses(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "mine")
	os.Mkdir(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep me"), 0o644)
	o := runSpooled(mine, "seq 3", "", 0, "")
	if o.status == 0 || !strings.Contains(o.errText, "not a spool") || strings.Count(o.errText, "\n") != 1 {
		t.Errorf("a directory of the user's: status %d, %q", o.status, o.errText)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(b) != "keep me" {
		t.Error("the user's file was touched")
	}

	sp := filepath.Join(root, "sp")
	if o := runSpooled(sp, "seq 3 | sort", "", 0, ""); o.status != 0 {
		t.Fatalf("status %d: %s", o.status, o.errText)
	}
	o = runSpooled(sp, "seq 3 | rev | sort", "", 0, "")
	if o.status == 0 || !strings.Contains(o.errText, "made by another pipeline") || !strings.Contains(o.errText, "tpipe gc --all") {
		t.Errorf("another graph: status %d, %q", o.status, o.errText)
	}
	if o := runSpooled(sp, "seq 5 | sort -r", "", 0, ""); o.status != 0 || o.out != "5\n4\n3\n2\n1\n" {
		t.Errorf("a changed stage on the same graph: status %d, out %q, %s", o.status, o.out, o.errText)
	}
	o = runSpooled(sp, "seq 3 > /dev/null\nseq 2", "", 0, "")
	if o.status != 2 || !strings.Contains(o.errText, "one graph") {
		t.Errorf("two graphs: status %d, %q", o.status, o.errText)
	}

	// A live run on another host holds the spool.
	w, err := place.NewWorker(place.Options{Host: "elsewhere", Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, err := w.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Lock("run"); err != nil {
		t.Fatal(err)
	}
	o = runSpooled(sp, "seq 5 | sort -r", "", 0, "")
	if o.status == 0 || !strings.Contains(o.errText, "in use by pid") || !strings.Contains(o.errText, "elsewhere") {
		t.Errorf("a spool in use: status %d, %q", o.status, o.errText)
	}
}

// A '>' file of a spooled run is replaced when the run ends well, and
// left as it was when it fails.
func TestSpoolOutputFile(t *testing.T) {
	cwd := t.TempDir()
	out := filepath.Join(cwd, "out.txt")
	os.WriteFile(out, []byte("before\n"), 0o644)
	o := runSpooled(filepath.Join(cwd, "sp1"), "seq 3 | sed s/2/X/ | cat nosuchfile - > out.txt", "", 0, cwd)
	if o.status == 0 {
		t.Fatalf("a failing run succeeded: %s", o.errText)
	}
	if b, _ := os.ReadFile(out); string(b) != "before\n" {
		t.Errorf("after a failed run the file holds %q", b)
	}
	o = runSpooled(filepath.Join(cwd, "sp2"), "seq 3 | sed s/2/X/ > out.txt", "", 0, cwd)
	if b, _ := os.ReadFile(out); o.status != 0 || string(b) != "1\nX\n3\n" {
		t.Errorf("status %d, file %q, %s", o.status, b, o.errText)
	}
	o = runSpooled(filepath.Join(cwd, "sp3"), "seq 2 >> out.txt", "", 0, cwd)
	if b, _ := os.ReadFile(out); o.status != 0 || string(b) != "1\nX\n3\n1\n2\n" {
		t.Errorf(">>: status %d, file %q, %s", o.status, b, o.errText)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 4 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in the directory: %v", names)
	}
}
