package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// Live streams are tested by causality, not by timers: the input's line
// i+1 is written only once line i's output has come out, so a pipeline
// that holds a line back until more input comes (a buffer filled, a
// look ahead) never gets the next line, and the deadline says which
// line it held.

// liveDeadline is how long a line may take through a pipeline: far more
// than any run takes under load, far less than the test's timeout.
const liveDeadline = 20 * time.Second

// lineCounter is a writer that counts the lines written to it and tells
// whoever waits for a count.
type lineCounter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
	more  chan struct{} // closed and remade at each new line
}

func newLineCounter() *lineCounter { return &lineCounter{more: make(chan struct{})} }

func (c *lineCounter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(b)
	if k := bytes.Count(b, []byte{'\n'}); k > 0 {
		c.lines += k
		close(c.more)
		c.more = make(chan struct{})
	}
	return len(b), nil
}

// wait waits until n lines have been written, or the deadline.
func (c *lineCounter) wait(n int, deadline <-chan time.Time) bool {
	for {
		c.mu.Lock()
		lines, more := c.lines, c.more
		c.mu.Unlock()
		if lines >= n {
			return true
		}
		select {
		case <-more:
		case <-deadline:
			return false
		}
	}
}

func (c *lineCounter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// handshake feeds a pipeline the lines "ERROR 1", "ERROR 2", ... one at
// a time: line i+1 only once seen(i) says the output of line i is out.
// It returns the number of the line the pipeline held back, or 0.
func handshake(w io.WriteCloser, lines int, seen func(i int) bool) int {
	defer w.Close()
	for i := 1; i <= lines; i++ {
		if _, err := fmt.Fprintf(w, "ERROR %d\n", i); err != nil {
			return i
		}
		if !seen(i) {
			return i
		}
	}
	return 0
}

// Every line that a task writes reaches the next one and stdout while
// the input is idle, through builtins (grep's block search and its look
// for binary input too), chains, an external program, and under every
// policy that runs tasks side by side.
func TestLiveLinesFlow(t *testing.T) {
	pipelines := []string{
		"cat", "grep ERROR", "grep -n E", "grep -v x", "grep -i error", "grep -F ERR",
		"grep -A1 E", "grep -o ERROR", "grep -E 'ERR(OR)?'", "grep --line-buffered ERROR",
		"sed s/E/e/", "sed -u p | grep -v '^$' | uniq", "awk '{print $2}'", "awk '{n++; print n, $0}'", "cut -d' ' -f2",
		"tr a-z A-Z", "nl", "rev", "tee /dev/null", "head -n 1000", "tail -n +1", "cat -n",
		"grep ERROR | cut -d' ' -f2 | sed s/^/n/", "cat | grep E | tr E e",
		"sh -c cat", "grep E | sh -c cat | grep E",
	}
	const lines = 4
	for _, pol := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused} {
		for _, pl := range pipelines {
			t.Run(pol.String()+"/"+pl, func(t *testing.T) {
				t.Parallel()
				pr, pw := io.Pipe()
				out := newLineCounter()
				var errb bytes.Buffer
				r := runner.New(runner.Config{Policy: pol, Stdin: pr, Stdout: out, Stderr: &errb})
				defer r.Close()
				status := make(chan int, 1)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() { status <- r.RunScript(ctx, pl) }()
				deadline := time.After(liveDeadline)
				held := handshake(pw, lines, func(i int) bool { return out.wait(i, deadline) })
				if held != 0 {
					cancel()
					<-status
					t.Fatalf("%s held line %d back while its input waited (output so far %q, stderr %q)",
						pl, held, out.String(), errb.String())
				}
				if st := <-status; st != 0 {
					t.Fatalf("status %d, stderr %q", st, errb.String())
				}
			})
		}
	}
}

// A redirect to a file gets each line while the input waits, as stdout
// does.
func TestLiveLinesReachFile(t *testing.T) {
	for _, pol := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused} {
		t.Run(pol.String(), func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "errors.txt")
			pr, pw := io.Pipe()
			var errb bytes.Buffer
			r := runner.New(runner.Config{Policy: pol, Stdin: pr, Stderr: &errb, Dir: dir})
			defer r.Close()
			status := make(chan int, 1)
			go func() { status <- r.RunScript(context.Background(), "grep ERROR | cut -d' ' -f2 > errors.txt") }()
			deadline := time.After(liveDeadline)
			held := handshake(pw, 4, func(i int) bool {
				for {
					b, _ := os.ReadFile(name)
					if bytes.Count(b, []byte{'\n'}) >= i {
						return true
					}
					select {
					case <-deadline:
						return false
					case <-time.After(5 * time.Millisecond):
					}
				}
			})
			if held != 0 {
				pr.Close()
				<-status
				t.Fatalf("line %d never reached the file while the input waited", held)
			}
			if st := <-status; st != 0 {
				t.Fatalf("status %d, stderr %q", st, errb.String())
			}
			if b, _ := os.ReadFile(name); string(b) != "1\n2\n3\n4\n" {
				t.Fatalf("file holds %q", b)
			}
		})
	}
}

// An early exit on an endless, idle input returns at once, and the stop
// reaches every task before it: builtins stop while they wait for input,
// and an external program's stdout is closed so that it ends as under
// bash (GNU tail -f notices; a shell loop gets SIGPIPE at its next echo).
// Nothing is left running. An external program between the two (`tail -f
// log | sh -c cat | head -1`) is a black box: it learns of the exit at
// its next write, as under bash, and not before.
func TestEarlyExitOnIdleInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "app.log")
	if err := os.WriteFile(log, []byte("starting\nREADY now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tail := "tail -f " + strconv.Quote(log)
	loop := "sh -c 'while :; do echo READY x; sleep .2; done'"
	cases := []struct{ script, want string }{
		{tail + " | head -1", "starting\n"},
		{tail + " | sed 1q", "starting\n"},
		{tail + " | grep -m1 READY", "READY now\n"},
		{tail + " | awk '/READY/ {print; exit}'", "READY now\n"},
		{tail + " | cat | head -1", "starting\n"},
		{tail + " | grep -v x | tr a-z A-Z | head -1", "STARTING\n"},
		{loop + " | grep -m1 READY", "READY x\n"},
		{loop + " | head -n 2", "READY x\nREADY x\n"},
		{loop + " | cut -c1-5 | sed 1q", "READY\n"},
	}
	for _, pol := range []sched.Policy{sched.Concurrent, sched.ROS, sched.Fused} {
		for _, c := range cases {
			t.Run(pol.String()+"/"+strings.ReplaceAll(c.script, log, "app.log"), func(t *testing.T) {
				t.Parallel()
				var out, errb bytes.Buffer
				r := runner.New(runner.Config{Policy: pol, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
				defer r.Close()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				status := make(chan int, 1)
				go func() { status <- r.RunScript(ctx, c.script) }()
				select {
				case st := <-status:
					if st != 0 || out.String() != c.want {
						t.Fatalf("status %d, output %q, stderr %q; want 0, %q", st, out.String(), errb.String(), c.want)
					}
				case <-time.After(liveDeadline):
					cancel()
					<-status
					t.Fatalf("did not return after its early exit (output %q)", out.String())
				}
			})
		}
	}
	t.Cleanup(func() {
		if left := childrenNaming(log); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	})
}

// childrenNaming lists the processes whose command line names s (Linux's
// /proc; none elsewhere).
func childrenNaming(s string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}
