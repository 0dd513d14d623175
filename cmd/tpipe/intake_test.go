package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The job intake's tests with real processes: the built binary serving
// folders, writers that take their time, scrapes over HTTP.

// TestServeMetricsThreeStages scrapes a tpipe serve of a three-stage net
// over HTTP on 127.0.0.1 and parses the exposition, as Prometheus does:
// a place between two stages is both one's output and the next one's
// input, and was collected twice, which failed every scrape with 500.
func TestServeMetricsThreeStages(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--metrics", "127.0.0.1:0", "--workers", "1", dir, "sort | uniq -c | sort -rn")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatalf("no line from serve: %v", lines.Err())
	}
	m := regexp.MustCompile(`^tpipe serve: metrics on (http://127\.0\.0\.1:\d+/metrics)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q does not say where the metrics are", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	put(t, filepath.Join(dir, "in"), "words", "b\na\nb\n")
	var body string
	waitFile(t, "the job to come out", filepath.Join(dir, "out", "words"))
	body = get(t, m[1])
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	tokens := fams["tpipe_place_tokens"]
	if tokens == nil {
		t.Fatalf("no tpipe_place_tokens in:\n%s", body)
	}
	seen := map[string]int{}
	for _, mt := range tokens.GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "place" {
				seen[filepath.Base(l.GetValue())]++
			}
		}
	}
	for _, want := range []string{"in", "sort-uniq", "uniq-sort#2", "out"} {
		if seen[want] != 1 {
			t.Errorf("place %s reported %d times, want once (all: %v)", want, seen[want], seen)
		}
	}
	done := fams["tpipe_jobs_done_total"]
	if done == nil || len(done.GetMetric()) != 3 {
		t.Errorf("tpipe_jobs_done_total: want one series per stage, got %v", done)
	}
}

// put hands a job to a watched folder as a producer should: written
// beside it, then renamed in.
func put(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(dir), "."+name+".put")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// protocolLeft lists the protocol's entries (.claim, .lock, .tmp, .bad)
// left in dir and in the folders under it.
func protocolLeft(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		switch d.Name() {
		case ".claim", ".lock", ".tmp", ".bad":
			rel, _ := filepath.Rel(dir, path)
			left = append(left, rel)
			return filepath.SkipDir
		case ".status":
			return filepath.SkipDir // serve's status files stay, marked stopped
		}
		return nil
	})
	return left
}

// TestFoldersLeftAsFound: after workers end, cleanly or after one was
// killed with SIGKILL and a second took its claims back, no folder they
// touched keeps the protocol's entries; every job is done once.
func TestFoldersLeftAsFound(t *testing.T) {
	bin := tpipeBinary(t)
	t.Run("pmjq", func(t *testing.T) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		for _, n := range []string{"a", "b", "c"} {
			put(t, in, n, n+"\n")
		}
		if b, err := exec.Command(bin, "pmjq", "--once", in, "wc -l", out).CombinedOutput(); err != nil {
			t.Fatalf("pmjq: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		for _, n := range []string{"a", "b", "c"} {
			if b, _ := os.ReadFile(filepath.Join(out, n)); string(b) != "1\n" {
				t.Errorf("out/%s = %q", n, b)
			}
		}
	})
	t.Run("serve", func(t *testing.T) {
		dir := t.TempDir()
		put(t, filepath.Join(dir, "in"), "j", "b\na\nb\n")
		if b, err := exec.Command(bin, "serve", "--once", dir, "sort | uniq -c | sort -rn").CombinedOutput(); err != nil {
			t.Fatalf("serve: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "out", "j")); string(b) != "      2 b\n      1 a\n" {
			t.Errorf("out/j = %q", b)
		}
	})
	t.Run("killed", func(t *testing.T) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
		for _, n := range []string{"a", "b", "c", "d"} {
			put(t, in, n, n+"\n")
		}
		first := exec.Command(bin, "pmjq", "--workers", "2", in, "sh -c 'sleep 5; cat'", out)
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the first worker to claim jobs", func() bool {
			ents, _ := os.ReadDir(filepath.Join(in, ".claim"))
			for _, e := range ents {
				if jobs, _ := os.ReadDir(filepath.Join(in, ".claim", e.Name())); len(jobs) > 1 {
					return true
				}
			}
			return false
		})
		first.Process.Kill()
		first.Wait()
		if b, err := exec.Command(bin, "pmjq", "--once", in, "cat", out).CombinedOutput(); err != nil {
			t.Fatalf("second pmjq: %v\n%s", err, b)
		}
		if left := protocolLeft(t, dir); len(left) > 0 {
			t.Errorf("left behind after the killed worker's claims were taken back: %v", left)
		}
		for _, n := range []string{"a", "b", "c", "d"} {
			if b, _ := os.ReadFile(filepath.Join(out, n)); string(b) != n+"\n" {
				t.Errorf("out/%s = %q", n, b)
			}
		}
	})
}

// TestSlowWriters: writers that take their time, run as real processes
// into the folder of a running worker: a shell loop writing a line every
// 0.3s (the case, which lost all ten lines), a copy in two
// halves with a pause, a file written slowly under a partial name and
// renamed in, a loop of external commands each of which closes the file
// as it ends. Each job is taken whole: its output is that of the whole
// file, and it is removed only once done.
func TestSlowWriters(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o700)
	big := filepath.Join(dir, "big")
	var b strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&b, "line %d of a file copied in two halves\n", i)
	}
	os.WriteFile(big, []byte(b.String()), 0o600)
	writers := map[string]string{
		"slow.txt": `for i in $(seq 10); do echo line $i; sleep .3; done > in/slow.txt`,
		"halves":   `{ cat big; sleep 1.5; cat big; } > in/halves`,
		"renamed":  `for i in $(seq 5); do echo line $i; sleep .2; done > in/renamed.part && mv in/renamed.part in/renamed`,
		// Each /bin/echo closes the file as it ends; the shell holds it.
		"external": `for i in $(seq 6); do /bin/echo line $i; sleep .3; done > in/external`,
	}
	want := map[string]string{"slow.txt": "10\n", "halves": "200000\n", "renamed": "5\n", "external": "6\n"}
	worker := exec.Command(bin, "pmjq", "--workers", "2", in, "wc -l", out)
	var errb strings.Builder
	worker.Stderr = &errb
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { worker.Process.Kill(); worker.Wait() }()
	var running []*exec.Cmd
	for _, script := range writers {
		w := exec.Command("sh", "-c", script)
		w.Dir = dir
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		running = append(running, w)
	}
	for _, w := range running {
		if err := w.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	for name, w := range want {
		waitFor(t, "out/"+name, func() bool {
			_, err := os.Stat(filepath.Join(out, name))
			return err == nil
		})
		if got, _ := os.ReadFile(filepath.Join(out, name)); strings.TrimLeft(string(got), " ") != w {
			t.Errorf("out/%s = %q, want %q: the job was taken before its writer was done", name, got, w)
		}
	}
	waitFor(t, "the inputs to be removed", func() bool {
		ents, _ := os.ReadDir(in)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				return false
			}
		}
		return true
	})
	worker.Process.Signal(os.Interrupt)
	worker.Wait()
	if strings.Contains(errb.String(), "put back") {
		t.Logf("stderr:\n%s", errb.String())
	}
}

// TestOnceWaitsForWriter: tpipe pmjq --once started while a job is still
// being written waits for it rather than declaring the folder quiet, and
// takes it whole.
func TestOnceWaitsForWriter(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o700)
	w := exec.Command("sh", "-c", `for i in $(seq 8); do echo line $i; sleep .25; done > in/job`)
	w.Dir = dir
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, "the writer to start", filepath.Join(in, "job"))
	b, err := exec.Command(bin, "pmjq", "--once", in, "wc -l", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pmjq --once: %v\n%s", err, b)
	}
	w.Wait()
	if got, _ := os.ReadFile(filepath.Join(out, "job")); string(got) != "8\n" {
		t.Errorf("out/job = %q, want the 8 lines counted", got)
	}
}

// TestInputChangedWhileRunning is the last line of defence: a file that
// looks complete (a hard link made into the folder, written by no one
// for the settle time) whose writer writes again, through its own name
// for it, while the job runs. The change is seen before the input is
// removed: the output is discarded, the job put back, and done again
// once it has settled; the status file counts it. Nothing is removed
// that was not processed whole.
func TestInputChangedWhileRunning(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o700)
	staging := filepath.Join(dir, "staging")
	os.WriteFile(staging, []byte("first\n"), 0o600)
	if err := os.Link(staging, filepath.Join(in, "job")); err != nil {
		t.Fatal(err)
	}
	appendLine := func(line string) {
		f, err := os.OpenFile(staging, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	worker := exec.Command(bin, "pmjq", "--workers", "1", "--status", dir, in, "sh -c 'sleep 1; wc -l'", out)
	var errb strings.Builder
	worker.Stderr = &errb
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { worker.Process.Kill(); worker.Wait() }()
	waitFor(t, "the job to be claimed", func() bool {
		_, err := os.Stat(filepath.Join(in, "job"))
		return errors.Is(err, fs.ErrNotExist)
	})
	appendLine("second\n") // through the writer's own name, to the claimed file
	time.Sleep(200 * time.Millisecond)
	appendLine("third\n")
	waitFor(t, "out/job", func() bool {
		b, _ := os.ReadFile(filepath.Join(out, "job"))
		return string(b) == "3\n"
	})
	waitFor(t, "the input to be removed", func() bool {
		_, err := os.Stat(filepath.Join(in, "job"))
		return errors.Is(err, fs.ErrNotExist) && len(protocolLeft(t, in)) <= 1
	})
	worker.Process.Signal(os.Interrupt)
	worker.Wait()
	if b, _ := os.ReadFile(staging); string(b) != "first\nsecond\nthird\n" {
		t.Errorf("the writer's own name for the file now holds %q", b)
	}
	if !strings.Contains(errb.String(), "changed while the job ran") {
		t.Errorf("stderr does not say the job was put back:\n%s", errb.String())
	}
	st, err := exec.Command(bin, "status", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(st), "put back: 1 of pmjq") {
		t.Errorf("tpipe status: %v\n%s", err, st)
	}
}

// TestServeSlowWriter: a served net's intake is DIR/in; a job written
// slowly there flows through the stages whole.
func TestServeSlowWriter(t *testing.T) {
	bin := tpipeBinary(t)
	dir := t.TempDir()
	serve := exec.Command(bin, "serve", dir, "sort | uniq -c")
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	waitFile(t, "serve to make its intake", filepath.Join(dir, "in"))
	w := exec.Command("sh", "-c", `for i in 1 2 1 2 1; do echo $i; sleep .3; done > in/job`)
	w.Dir = dir
	if err := w.Run(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, "out/job", filepath.Join(dir, "out", "job"))
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "job")); string(b) != "      3 1\n      2 2\n" {
		t.Errorf("out/job = %q: the job was taken before its writer was done", b)
	}
}

// TestOtherUsersWriter: the worker runs as another user than the writer
// (nobody, by setpriv), so the kernel will not tell it whether the file
// is open for writing; a writer that pauses longer than the settle time
// while it holds the file it created must still not lose what it writes
// after: a file seen created and not closed waits for its close. (A file
// found at start is judged by the settle time: docs/scale-out.md.)
func TestOtherUsersWriter(t *testing.T) {
	setpriv, nbin, dir := asNobody(t)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		os.Mkdir(d, 0o777)
		os.Chmod(d, 0o777)
	}
	worker := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", nbin, "pmjq", in, "cat", out)
	var errb strings.Builder
	worker.Stderr = &errb
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { worker.Process.Kill(); worker.Wait() }()
	time.Sleep(500 * time.Millisecond) // (its watch is set: the file's creation is seen)
	w := exec.Command("sh", "-c", `(echo a; sleep 2.5; echo b; sleep 2.5; echo c) > in/f`)
	w.Dir = dir
	if err := w.Run(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, "out/f", filepath.Join(out, "f"))
	if b, _ := os.ReadFile(filepath.Join(out, "f")); string(b) != "a\nb\nc\n" {
		t.Errorf("out/f = %q, want the whole file: taken while its writer, another user, held it", b)
	}
}

// TestStickyFolder: in a sticky folder (1777, as /tmp) a worker cannot
// claim (rename) another user's file. It says so once and leaves the
// file alone, instead of trying again in a loop and flooding its log;
// --once then ends with status 1.
func TestStickyFolder(t *testing.T) {
	setpriv, nbin, dir := asNobody(t)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o777)
	os.Chmod(in, os.ModeSticky|0o777)
	os.Mkdir(out, 0o777)
	os.Chmod(out, 0o777)
	put(t, in, "roots", "x\n") // root's file
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	worker := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", nbin, "pmjq", "--once", in, "cat", out)
	got, err := worker.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatal("the worker did not end")
	}
	if exitStatus(worker.ProcessState) != 1 {
		t.Errorf("status %v, want 1:\n%s", err, got)
	}
	if n := strings.Count(string(got), "left where it is"); n != 1 {
		t.Errorf("said %d times that the job is left where it is, want once:\n%.2000s", n, got)
	}
	if _, err := os.Stat(filepath.Join(in, "roots")); err != nil {
		t.Errorf("the job is not where it was: %v", err)
	}
}

// asNobody readies a run of the binary under test as user nobody: it
// returns setpriv, the binary copied where nobody can run it, and a
// folder nobody can reach. It skips the test unless it runs as root with
// setpriv (util-linux) installed.
func asNobody(t *testing.T) (setpriv, bin, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the worker as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	dir = t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755) // (the test's own folder)
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(tpipeBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	bin = filepath.Join(dir, "bin", "tpipe")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return setpriv, bin, dir
}

// waitFile waits until the file at path exists (what names it).
func waitFile(t *testing.T, what, path string) {
	t.Helper()
	waitFor(t, what, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}
