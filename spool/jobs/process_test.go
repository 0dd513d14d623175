package jobs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"
)

// These tests run the engine in real processes (the test binary started
// again, helper) on the same folders, and kill them with SIGKILL.

const helperEnv = "JOBS_TEST_HELPER"

// The filter of every helper: builtins only, so no process per job.
const helperFilter = "tr a-z A-Z | rev"

// helper is the body of a worker process. Mode "work" runs the pmjq stage
// $JOBS_IN -> $JOBS_OUT under --once, $JOBS_PAUSE per job, logging "PID
// NAME" to $JOBS_LOG for every job done, with fsync if $JOBS_SYNC is set. Mode "hold" says "running NAME"
// for the first job it gets and holds it until killed.
func helper(mode string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	lease, _ := time.ParseDuration(os.Getenv("JOBS_LEASE"))
	pause, _ := time.ParseDuration(os.Getenv("JOBS_PAUSE"))
	o := Options{Once: true, NoSync: os.Getenv("JOBS_SYNC") == "", Workers: 2, Lease: lease, Host: os.Getenv("JOBS_HOST"), Recheck: 20 * time.Millisecond,
		Stderr: os.Stderr}
	filter := script(helperFilter)
	run := func(ctx context.Context, j *Job) (int, error) {
		if !sleep(ctx, pause) {
			return -1, ctx.Err()
		}
		return filter(ctx, j)
	}
	switch mode {
	case "work":
		log, err := os.OpenFile(os.Getenv("JOBS_LOG"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fail(err)
		}
		o.Observer = &doneLog{w: log}
	case "hold":
		o.Workers = 1
		var once sync.Once
		run = func(ctx context.Context, j *Job) (int, error) {
			once.Do(func() { fmt.Printf("running %s\n", j.Key) })
			<-ctx.Done()
			return -1, ctx.Err()
		}
	default:
		return fail(fmt.Errorf("no mode %q", mode))
	}
	fmt.Println("started")
	if gate := os.Getenv("JOBS_GATE"); gate != "" {
		// Wait for the test to open the gate, so that workers started one
		// after another begin together.
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	st := Stage{Name: "f", In: []string{os.Getenv("JOBS_IN")}, Out: [][]string{{os.Getenv("JOBS_OUT")}}, Run: run}
	if _, err := Run(context.Background(), []Stage{st}, o); err != nil {
		return fail(err)
	}
	return 0
}

// doneLog writes "PID NAME" for every job done; each line is one write to
// a file opened O_APPEND, so lines of several processes do not mix.
type doneLog struct {
	Observers
	w io.Writer
}

func (d *doneLog) Done(stage, job string, _ time.Duration) {
	fmt.Fprintf(d.w, "%d %s\n", os.Getpid(), job)
}

// proc is a helper process and its stdout, line by line.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

func startHelper(t *testing.T, mode string, env ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// expect waits for the helper to print a line starting with prefix.
func (p *proc) expect(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("helper ended before %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-ctx.Done():
			t.Fatalf("no %q from the helper: %v", prefix, ctx.Err())
		}
	}
}

// wait waits for the helper to exit and returns its error.
func (p *proc) wait(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		for range p.lines {
		}
		done <- p.cmd.Wait()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		p.cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

// jobSet makes n jobs and what the helper filter makes of each.
func jobSet(n int) (jobs, want map[string]string) {
	jobs, want = map[string]string{}, map[string]string{}
	for i := range n {
		name := fmt.Sprintf("job-%03d", i)
		jobs[name] = fmt.Sprintf("line one of %d\nline two\n", i)
		want[name] = reverse(fmt.Sprintf("LINE ONE OF %d", i)) + "\n" + "OWT ENIL\n"
	}
	return jobs, want
}

// logFolders makes ROOT/in with n jobs (jobSet) and an empty ROOT/log for
// helpers in mode work; ROOT/out is their output place.
func logFolders(t *testing.T, n int) (root, in, out, logf string, jobs, want map[string]string) {
	root = t.TempDir()
	in, out, logf = filepath.Join(root, "in"), filepath.Join(root, "out"), filepath.Join(root, "log")
	jobs, want = jobSet(n)
	jobstest.Drop(t, in, jobs)
	if err := os.WriteFile(logf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, in, out, logf, jobs, want
}

// TestKilledWorker: three worker processes share 300 jobs; one is killed
// with SIGKILL in the middle. Its claims go back at once (its pid is dead
// on this host), and every job's output is there exactly once and right,
// the input place is drained and no claim or temporary file is left.
func TestKilledWorker(t *testing.T) {
	ctx := jobstest.Ctx(t)
	root, in, out, logf, jobs, want := logFolders(t, 300)
	env := []string{"JOBS_IN=" + in, "JOBS_OUT=" + out, "JOBS_LOG=" + logf, "JOBS_PAUSE=3ms", "JOBS_LEASE=30s"}
	var ps []*proc
	for range 3 {
		p := startHelper(t, "work", env...)
		p.expect(t, ctx, "started")
		ps = append(ps, p)
	}
	// Kill the first once it has done some jobs and holds others.
	victim := strconv.Itoa(ps[0].cmd.Process.Pid)
	for {
		b, _ := os.ReadFile(logf)
		if strings.Count(string(b), victim+" ") >= 10 {
			break
		}
		if !sleep(ctx, 2*time.Millisecond) {
			t.Fatal("the victim did no job")
		}
	}
	if err := ps[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ps[0].wait(ctx)
	for _, p := range ps[1:] {
		if err := p.wait(ctx); err != nil {
			t.Fatalf("a surviving worker: %v", err)
		}
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, want) {
		t.Errorf("outputs: %d of %d, or wrong", len(got), len(want))
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s = %q, want %q", name, got[name], w)
				break
			}
		}
	}
	if left := jobstest.Files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %d left", len(left))
	}
	if s := jobstest.Stray(t, root); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
	// A job is logged done once its input is removed, so no job is logged
	// twice: a job whose input went is never run again. The victim may
	// have delivered jobs and died before logging them; the outputs,
	// checked above, are what proves every job was done, and the
	// survivors logged the rest.
	b, _ := os.ReadFile(logf)
	done := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, name, ok := strings.Cut(l, " "); ok {
			done[name]++
		}
	}
	for name, n := range done {
		if _, ok := jobs[name]; !ok || n > 1 {
			t.Errorf("%s logged done %d times; want once, and only for a job", name, n)
		}
	}
	if len(done) < len(jobs)/2 {
		t.Errorf("%d of %d jobs logged done", len(done), len(jobs))
	}
}

// TestLeaseTakeover: a worker of another host ("ha", a real process) holds
// a job. A worker of host "hb" (this test) leaves it alone while ha renews
// its lease, well past the lease, and does the rest; once ha is killed,
// hb takes the job back when the lease runs out, not before, since it
// cannot see another host's processes.
func TestLeaseTakeover(t *testing.T) {
	ctx := jobstest.Ctx(t)
	root := t.TempDir()
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	jobs, want := jobSet(6)
	jobstest.Drop(t, in, jobs)
	const lease = time.Second
	holder := startHelper(t, "hold", "JOBS_IN="+in, "JOBS_OUT="+out, "JOBS_LEASE="+lease.String(), "JOBS_HOST=ha")
	held := strings.TrimPrefix(holder.expect(t, ctx, "running "), "running ")

	rec := &recorder{}
	var errb strings.Builder
	type result struct {
		n   Counts
		err error
	}
	res := make(chan result, 1)
	go func() {
		n, err := Run(ctx, []Stage{{Name: "f", In: []string{in}, Out: [][]string{{out}}, Run: script(helperFilter)}},
			fast(Options{Once: true, Lease: lease, Host: "hb", Observer: rec, Stderr: &errb}))
		res <- result{n, err}
	}()
	// Three leases with ha alive and renewing: hb does the other jobs and
	// waits for this one.
	if !sleep(ctx, 3*lease) {
		t.Fatal(ctx.Err())
	}
	for _, c := range rec.get("claimed") {
		if c == "f "+held {
			t.Fatalf("hb claimed %s while ha held it and renewed its lease", held)
		}
	}
	if got := len(rec.get("done")); got != len(jobs)-1 {
		t.Fatalf("hb did %d jobs while ha held one, want %d", got, len(jobs)-1)
	}
	killed := time.Now()
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	holder.wait(ctx)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	// ha renewed at most a quarter lease before it died: the take-back
	// comes at least three quarters of a lease after the kill.
	if waited := time.Since(killed); waited < 3*lease/4 {
		t.Errorf("hb took %s back %v after ha died, before the lease ran out", held, waited)
	}
	if tb := rec.get("takenback"); len(tb) != 1 || tb[0] != "in 1" {
		t.Errorf("taken back: %v, want [in 1]", tb)
	}
	if r.n.Done != len(jobs) {
		t.Errorf("hb did %d jobs, want %d", r.n.Done, len(jobs))
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, want) {
		t.Errorf("outputs = %v", got)
	}
	if s := jobstest.Stray(t, root); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
	if !strings.Contains(errb.String(), "took back 1 claim of a dead or expired owner") {
		t.Errorf("stderr: %s", errb.String())
	}
}

// TestKilledDuringGroupCommit: worker processes that fsync are killed
// with SIGKILL one after another, each a random 0 to 5 ms after its log
// shows it delivered a batch, which is while it commits the next (the
// commit is most of a job's time); then a last worker runs to the end.
// Every job's output is there exactly once and right, the input place is
// drained, and no claim or temporary file is left.
func TestKilledDuringGroupCommit(t *testing.T) {
	ctx := jobstest.Ctx(t)
	root, in, out, logf, _, want := logFolders(t, 300)
	env := []string{"JOBS_IN=" + in, "JOBS_OUT=" + out, "JOBS_LOG=" + logf, "JOBS_LEASE=30s", "JOBS_SYNC=1"}
	logged := func() int {
		b, _ := os.ReadFile(logf)
		return strings.Count(string(b), "\n")
	}
	kills := 0
	for kills < 5 {
		before := logged()
		p := startHelper(t, "work", env...)
		p.expect(t, ctx, "started")
		exited := make(chan error, 1)
		go func() { exited <- p.cmd.Wait() }()
		for logged() == before {
			select {
			case <-exited:
				t.Fatalf("a worker ended on its own, %d jobs logged: kill it sooner", logged())
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(200 * time.Microsecond):
			}
		}
		sleep(ctx, time.Duration(rand.IntN(5000))*time.Microsecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		kills++
		if left := jobstest.Files(t, in); len(left) == 0 {
			break // (it delivered the last batch before the kill)
		}
	}
	last := startHelper(t, "work", env...)
	if err := last.wait(ctx); err != nil {
		t.Fatalf("the last worker: %v", err)
	}
	t.Logf("%d workers killed, %d jobs logged done", kills, logged())
	got := jobstest.Files(t, out)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %q, want %q", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("an output no job makes: %s", name)
		}
	}
	if left := jobstest.Files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %d left", len(left))
	}
	if s := jobstest.Stray(t, root); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
}
