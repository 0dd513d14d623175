package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// hangLimit is the harness's deadline for one run: a run still going then
// is a hang (the runs below take well under a second).
const hangLimit = 30 * time.Second

// runScript runs script under cfg with a deadline and fails the test if
// the deadline passes or a child process is left behind.
func runScript(t *testing.T, cfg runner.Config, script string) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	cfg.Stdin, cfg.Stdout, cfg.Stderr = strings.NewReader(""), &out, &errb
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	r := runner.New(cfg)
	// What each queue moved and how long each task waited, to tell a run
	// that was stuck (every task blocked for most of the limit) from one
	// that was slow.
	var stats bytes.Buffer
	r.OnStats = func(st *sched.Stats) { runner.WriteStats(&stats, st) }
	status := r.RunScript(ctx, script)
	r.Close()
	if ctx.Err() != nil {
		t.Fatalf("%q under %s, B %d, cap %d, S %d: hung (stopped after %v); stderr %q; statistics:\n%s",
			script, cfg.Policy, cfg.Buffers, cfg.Cap, cfg.RecordSize, hangLimit, errb.String(), stats.String())
	}
	if kids := children(t); len(kids) > 0 {
		t.Fatalf("%q under %s: child processes left: %v", script, cfg.Policy, kids)
	}
	return outcome{out.String(), errb.String(), status}
}

// children lists the processes whose parent is this test process, as
// "pid name"; a zombie counts (nobody reaped it).
func children(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	me := strconv.Itoa(os.Getpid())
	var kids []string
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at
		// the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == me {
			kids = append(kids, d.Name()+" "+s[strings.IndexByte(s, '(')+1:i])
		}
	}
	return kids
}

func needPrograms(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skip(err)
		}
	}
}

// Issue 13, fixed bugs: deadlocks that ran through an external program
// hung under every policy. Each must now finish with the right output.
func TestNoHangThroughPrograms(t *testing.T) {
	needPrograms(t, "/usr/bin/cat", "/usr/bin/tee", "/usr/bin/awk")
	for _, tc := range []struct {
		name, script string
		buffers      int
		out          string
	}{
		// cat reads all of @a before @b: the tee fills @b, cat's pipe
		// for @b is full, and @a is starved.
		{name: "external cat reads two edges in turn", script: "seq 1 100000 | tee @a @b > /dev/null\n/usr/bin/cat @a @b | wc -l", out: "200000\n"},
		// With 2 buffers, awk's feeder held one through a full pipe
		// while awk's reader waited for FREE.
		{name: "awk at two buffers", script: "seq 100000 | /usr/bin/awk '{print}' | wc -l", buffers: 2, out: "100000\n"},
		// The same line since awk runs in process: a chain of builtins
		// given fewer buffers than its bound has its stalls spilled
		// (sched.Options.SpillBelowBound) instead of reported.
		{name: "builtin awk at two buffers", script: "seq 100000 | awk '{print}' | wc -l", buffers: 2, out: "100000\n"},
		// The same with an external tee whose output goes to a file: the
		// task waiting for tee to exit looked busy, so tee looked able to
		// act and the stall was never seen.
		{name: "external tee into edges read in turn", script: "seq 1 100000 | /usr/bin/tee @a @b > /dev/null\n/usr/bin/cat @a @b | wc -l", out: "200000\n"},
		{name: "external tee into a builtin cat", script: "seq 1 100000 | /usr/bin/tee @a @b > /dev/null\ncat @a @b | wc -l", out: "200000\n"},
	} {
		for _, p := range sched.Policies() {
			t.Run(tc.name+"/"+p.String(), func(t *testing.T) {
				got := runScript(t, runner.Config{Policy: p, Buffers: tc.buffers}, tc.script)
				if got.status != 0 || got.out != tc.out {
					t.Fatalf("status %d, out %q, stderr %q; want %q", got.status, got.out, got.errText, tc.out)
				}
			})
		}
	}
}

// Fixed bug, found by the soak test: below the bound, a deadlock reported
// before GNU tee had started cancelled the run, tee never started, and the
// bridges of its /dev/fd edges waited for ever on pipes whose other ends
// tpipe itself still held. The run must end, with the output or a one-line
// report, every time (the hang came one run in three).
func TestNoHangWhenAProgramNeverStarts(t *testing.T) {
	needPrograms(t, "/usr/bin/tee")
	script := "seq 20000 | rev | /usr/bin/tee @a @b > /dev/null\ncat @a @b | wc -l"
	for range 10 {
		got := runScript(t, runner.Config{Policy: sched.Concurrent, Buffers: 1, Cap: 1}, script)
		if got.out == "40000\n" && got.status == 0 {
			continue
		}
		if got.status == 0 || !strings.Contains(got.errText, "tpipe: deadlock") {
			t.Fatalf("status %d, out %q, stderr %q; want 40000 lines or a deadlock report", got.status, got.out, got.errText)
		}
	}
}

// The soak test of issue 13: random graphs of builtins and external
// programs, random B, capacities and record sizes, under every policy.
// Each must end with the output the serial policy gives at its defaults
// (Theorem 2.2) and leave no process behind; a hang is caught by the
// harness's deadline. TPIPE_SOAK=N runs N graphs; -short runs few.
func TestSoakProgramsNeverHang(t *testing.T) {
	needPrograms(t, "/usr/bin/cat", "/usr/bin/tee", "/usr/bin/tr", "/usr/bin/sort", "/usr/bin/paste", "/usr/bin/awk")
	n := 200
	if testing.Short() {
		n = 20
	}
	if s := os.Getenv("TPIPE_SOAK"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("TPIPE_SOAK=%q: %v", s, err)
		}
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TPIPE_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (TPIPE_SOAK_SEED), %d graphs (TPIPE_SOAK)", seed, n)
	rng := rand.New(rand.NewPCG(seed, 13))
	start := time.Now()
	reported := 0
	for i := range n {
		script := randomScript(rng)
		cfg := runner.Config{
			Policy:     sched.Policies()[rng.IntN(len(sched.Policies()))],
			Buffers:    []int{0, 1, 2, 3, 5, 8}[rng.IntN(6)],
			Cap:        rng.IntN(4), // 0: the policy's default
			RecordSize: []int{0, 64, 4096}[rng.IntN(3)],
		}
		want := runScript(t, runner.Config{Policy: sched.Serial}, script)
		got := runScript(t, cfg, script)
		if cfg.Buffers > 0 && got.status != 0 && strings.Contains(got.errText, "tpipe: deadlock") {
			// Below the bound a stall may be beyond repair (a builtin
			// holding the only buffer): a clear report, not a hang.
			msg := got.errText[strings.Index(got.errText, "tpipe: deadlock"):]
			if strings.Count(msg, "\n") != 1 {
				t.Fatalf("%q: report is not one line: %q", script, msg)
			}
			reported++
			if os.Getenv("TPIPE_SOAK_V") != "" {
				t.Logf("%s B %d cap %d S %d: %q: %s", cfg.Policy, cfg.Buffers, cfg.Cap, cfg.RecordSize, script, msg)
			}
			continue
		}
		if got.status != want.status || got.out != want.out {
			t.Fatalf("graph %d (seed %d): %q under %s, B %d, cap %d, S %d:\n got  status %d, %d bytes, stderr %q\n want status %d, %d bytes, stderr %q",
				i, seed, script, cfg.Policy, cfg.Buffers, cfg.Cap, cfg.RecordSize,
				got.status, len(got.out), got.errText, want.status, len(want.out), want.errText)
		}
	}
	t.Logf("%d graphs in %v, %d of them reported a deadlock below the bound", n, time.Since(start).Round(time.Millisecond), reported)
}

// Stages of a random chain; each keeps lines short, so S = 64 holds them.
var soakStages = []string{
	"cat", "tr 0-4 a-e", "sort", "rev", "grep -v 7",
	"/usr/bin/cat", "/usr/bin/tr 5-9 f-j", "/usr/bin/sort", "/usr/bin/awk '{print $1}'", "awk '{print $1}'", "/usr/bin/paste - -",
}

// randomScript is a chain, or a tee (tpipe's or GNU's) whose two edges
// meet again in a builtin or an external reader, then a chain.
func randomScript(rng *rand.Rand) string {
	lines := []int{10, 1000, 20000}[rng.IntN(3)]
	chain := func() string {
		var sb strings.Builder
		for range rng.IntN(3) {
			sb.WriteString(" | " + soakStages[rng.IntN(len(soakStages))])
		}
		return sb.String()
	}
	if rng.IntN(2) == 0 {
		return fmt.Sprintf("seq %d%s | wc -l", lines, chain())
	}
	join := []string{"cat @a @b", "/usr/bin/cat @a @b", "/usr/bin/paste @a @b", "/usr/bin/sort -m @a @b"}[rng.IntN(4)]
	split := []string{"tee", "/usr/bin/tee"}[rng.IntN(2)]
	return fmt.Sprintf("seq %d%s | %s @a @b > /dev/null\n%s%s | wc -l", lines, chain(), split, join, chain())
}
