//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/internal/natstest"
	"github.com/tpipe/tpipe/spool/natsq"
)

// tpipeCmd is this test binary run as tpipe with args.
func tpipeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TPIPE_TEST_MAIN=1")
	return cmd
}

// proc is a tpipe child process, its stderr kept.
type proc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	out    bytes.Buffer
	done   chan struct{}
	err    error
}

func startTpipe(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: tpipeCmd(args...), done: make(chan struct{})}
	p.cmd.Stderr, p.cmd.Stdout = &p.stderr, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for p to exit by itself, at most d.
func (p *proc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		if len(p.cmd.Args) > 2 && strings.HasPrefix(p.cmd.Args[len(p.cmd.Args)-2], "nats://") || true {
			for _, a := range p.cmd.Args {
				if strings.HasPrefix(a, "nats://") {
					b, _ := tpipeCmd("status", a).CombinedOutput()
					t.Logf("status:\n%s", b)
				}
			}
		}
		p.kill()
		t.Fatalf("tpipe %s did not end in %v:\n%s", strings.Join(p.cmd.Args[1:], " "), d, p.stderr.String())
	}
}

// TestNATSCrashes runs a net of two stages on NATS while workers are
// killed with SIGKILL one after another (24 kills) and the server is
// killed and started again on its store twice, then drains it with
// serve --once and get --once: every job comes out, once, whole.
func TestNATSCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("kills workers and a nats-server for about 20s")
	}
	s := natstest.Start(t)
	url := s.URL() + "/crash"
	src, res := t.TempDir(), t.TempDir()
	const jobs = 1500
	var files []string
	want := map[string]string{}
	for i := range jobs {
		name := fmt.Sprintf("j%04d", i)
		body := fmt.Sprintf("b %d\na %d\n", i, i)
		if i%500 == 7 {
			body = strings.Repeat(fmt.Sprintf("line of the large job %d\n", i), 2<<20/24) // an object
		}
		f := filepath.Join(src, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		want[name] = sortLines(strings.ToUpper(body))
	}
	put := startTpipe(t, append([]string{"put", url}, files...)...)
	put.wait(t, time.Minute)
	if put.err != nil {
		t.Fatalf("put: %v\n%s", put.err, put.stderr.String())
	}
	pipeline := "tr a-z A-Z | sort"
	serve := func() *proc {
		return startTpipe(t, "serve", "--lease", "2s", "--workers", "2", url, pipeline)
	}
	var mu sync.Mutex
	workers := []*proc{serve(), serve()}
	get := startTpipe(t, "get", "--lease", "2s", "--no-sync", url, res)
	kills, restarts := 0, 0
	for kills < 24 {
		time.Sleep(time.Duration(150+rand.IntN(200)) * time.Millisecond)
		mu.Lock()
		k := rand.IntN(len(workers))
		workers[k].kill()
		workers[k] = serve()
		kills++
		mu.Unlock()
		if kills%8 == 0 && restarts < 2 {
			s.Restart()
			restarts++
		}
		if kills == 12 {
			get.kill()
			get = startTpipe(t, "get", "--lease", "2s", "--no-sync", url, res)
		}
	}
	for _, w := range workers {
		w.kill()
	}
	get.kill()
	st := tpipeCmd("status", url)
	b, _ := st.CombinedOutput()
	t.Logf("when the killing stopped:\n%s", b)
	// Drain: what the killed workers held comes back after the lease.
	last := startTpipe(t, "serve", "--once", "--lease", "2s", url, pipeline)
	last.wait(t, 40*time.Second)
	if last.err != nil {
		t.Fatalf("serve --once: %v\n%s", last.err, last.stderr.String())
	}
	out := startTpipe(t, "get", "--once", "--lease", "2s", url, res)
	out.wait(t, 3*time.Minute)
	if out.err != nil {
		t.Fatalf("get --once: %v\n%s", out.err, out.stderr.String())
	}
	ents, err := os.ReadDir(res)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range ents {
		got[e.Name()] = true
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("unexpected file %s in the results", e.Name())
		}
	}
	bad := 0
	for name, body := range want {
		b, err := os.ReadFile(filepath.Join(res, name))
		if err != nil || string(b) != body {
			bad++
			if bad < 5 {
				t.Errorf("%s: %d bytes, %v; want %d", name, len(b), err, len(body))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d jobs missing or wrong after %d worker kills and %d server restarts", bad, jobs, kills, restarts)
	}
	// Nothing is left anywhere, and nothing failed.
	a, _ := natsq.Parse(url)
	n, err := natsq.Dial(context.Background(), a, natsq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	cs, err := n.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Waiting != 0 || c.InFlight != 0 || c.Failed != 0 || c.Done != jobs {
			t.Errorf("place %s: %+v, want all %d done", c.Place, c, jobs)
		}
	}
	t.Logf("%d jobs through %d worker kills, %d server restarts, a get killed: all out, each once", jobs, kills, restarts)
}

// sortLines is what sort makes of s.
func sortLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	cmd := exec.Command("sort")
	cmd.Stdin = strings.NewReader(strings.Join(lines, ""))
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	b, err := cmd.Output()
	if err != nil {
		panic(err)
	}
	return string(b)
}
