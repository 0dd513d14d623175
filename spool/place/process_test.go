package place

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests start the test binary again as real worker processes
// (helper) and kill them with SIGKILL.

const helperEnv = "PLACE_TEST_HELPER"

// helper is the body of a worker process: mode "hold" claims $PLACE_NAME
// and locks "unit" in $PLACE_DIR, says "held" and waits to be killed;
// mode "work" moves every token of $PLACE_DIR to $PLACE_OUT, logging each
// claim to $PLACE_LOG, and exits when none is left.
func helper(mode string, _ []string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	w, err := NewWorker(Options{NoSync: true})
	if err != nil {
		return fail(err)
	}
	in, err := w.Open(os.Getenv("PLACE_DIR"))
	if err != nil {
		return fail(err)
	}
	switch mode {
	case "hold":
		if _, err := in.Claim(os.Getenv("PLACE_NAME")); err != nil {
			return fail(err)
		}
		if _, err := in.Lock("unit"); err != nil {
			return fail(err)
		}
		fmt.Println("held")
		select {}
	case "work":
		out, err := w.Open(os.Getenv("PLACE_OUT"))
		if err != nil {
			return fail(err)
		}
		log, err := os.OpenFile(os.Getenv("PLACE_LOG"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fail(err)
		}
		fmt.Println("started")
		if err := work(in, out, log, time.Millisecond); err != nil {
			return fail(err)
		}
		// A worker that ends closes, as the engine's do: the last one out
		// removes the protocol's empty entries.
		if err := w.Close(); err != nil {
			return fail(err)
		}
		return 0
	}
	return fail(fmt.Errorf("no mode %q", mode))
}

// work moves every token of in to out, with "!" added, logging "PID NAME"
// to log at each claim; pause is a nap per token, so that a killer finds
// workers in the middle of things.
func work(in, out *Place, log io.Writer, pause time.Duration) error {
	for {
		names, err := in.Tokens()
		if err != nil || len(names) == 0 {
			return err
		}
		for _, name := range names {
			c, err := in.Claim(name)
			if errors.Is(err, ErrClaimed) {
				continue
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(log, "%d %s\n", os.Getpid(), name)
			f, err := c.Open()
			if err != nil {
				return err
			}
			body, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return err
			}
			time.Sleep(pause)
			err = c.Complete(AtLeastOnce, func() error {
				return out.Put(name, func(w io.Writer) error { _, err := w.Write(append(body, '!')); return err })
			})
			if err != nil {
				return err
			}
		}
	}
}

// start starts a helper process in mode with env and waits for its first
// line; the process is killed at the end of the test if still running.
func start(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s: %v", mode, err)
	}
	t.Logf("helper %s, pid %d: %s", mode, cmd.Process.Pid, strings.TrimSpace(line))
	return cmd
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// TestKilledHolder: a process that claimed a token and took a lock is
// killed; this host sees at once that its pid is dead and takes both
// back, with no lease to wait for.
func TestKilledHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	w := worker(t, "", nil)
	p := open(t, w, dir)
	put(t, p, "tok", "t")
	cmd := start(t, "hold", "PLACE_DIR="+dir, "PLACE_NAME=tok")
	if n, err := p.Reap(); n != 0 || err != nil {
		t.Fatalf("Reap of a live process's claim = %d, %v", n, err)
	}
	var le *LockedError
	if _, err := p.Lock("unit"); !errors.As(err, &le) || le.Owner.PID != cmd.Process.Pid {
		t.Fatalf("Lock held by a live process = %v", err)
	}
	kill(t, cmd)
	if n, err := p.Reap(); n != 1 || err != nil {
		t.Fatalf("Reap after SIGKILL = %d, %v; want the token back", n, err)
	}
	if got := text(p.Open("tok")); got != "t" {
		t.Errorf("token after take-back = %q", got)
	}
	l, err := p.Lock("unit")
	if err != nil {
		t.Fatalf("Lock after its holder was killed: %v", err)
	}
	l.Unlock()
	if e := entries(t, p, claimDir); len(e) != 1 || e[0] != w.Owner().String() {
		t.Errorf(".claim after take-back: %v", e)
	}
}

// TestKilledWorkers: three processes move 120 tokens between two places
// while one of them is killed at a random moment; this process then takes
// back what it held and finishes the work. Every token is delivered once,
// only the killed worker's tokens are claimed twice, and nothing is left
// of the protocol's entries once this process's worker closes.
func TestKilledWorkers(t *testing.T) {
	const n = 120
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	in, out, logName := filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "log")
	os.WriteFile(logName, nil, 0o600)
	w := worker(t, "", nil)
	pin, pout := open(t, w, in), open(t, w, out)
	for i := range n {
		put(t, pin, fmt.Sprintf("%04d", i), strconv.Itoa(i))
	}
	var cmds []*exec.Cmd
	for range 3 {
		cmds = append(cmds, start(t, "work", "PLACE_DIR="+in, "PLACE_OUT="+out, "PLACE_LOG="+logName))
	}
	time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
	victim := cmds[0].Process.Pid
	kill(t, cmds[0])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range cmds[1:] {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("worker: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("workers did not finish")
		}
	}
	if _, err := pin.Reap(); err != nil {
		t.Fatal(err)
	}
	pout.Reap()
	log, err := os.OpenFile(logName, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := work(pin, pout, log, 0); err != nil {
		t.Fatal(err)
	}
	log.Close()

	b, _ := os.ReadFile(logName)
	claims := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var pid int
		var name string
		fmt.Sscan(line, &pid, &name)
		claims[name] = append(claims[name], pid)
	}
	for i := range n {
		name := fmt.Sprintf("%04d", i)
		pids := claims[name]
		switch {
		case len(pids) == 0:
			t.Errorf("%s never claimed", name)
		case len(pids) > 2 || len(pids) == 2 && pids[0] != victim:
			t.Errorf("%s claimed by %v: more than once, not after the killed worker %d", name, pids, victim)
		}
		if got := text(pout.Open(name)); got != strconv.Itoa(i)+"!" {
			t.Errorf("output %s = %q", name, got)
		}
	}
	if names, _ := pout.Tokens(); len(names) != n {
		t.Errorf("%d outputs, want %d", len(names), n)
	}
	// The worker that took the killed one's claims back tidies what it
	// left when it closes: in/ is empty, out/ holds the outputs alone.
	w.Close()
	if e := entries(t, pin, ""); len(e) > 0 {
		t.Errorf("in/ left: %v", e)
	}
	for _, e := range entries(t, pout, "") {
		if strings.HasPrefix(e, ".") {
			t.Errorf("out/ left: %s, holding %v", e, entries(t, pout, e))
		}
	}
}
