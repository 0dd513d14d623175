package ext_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
)

// helperEnv makes the test binary a helper process (see helper).
const helperEnv = "TPIPE_EXT_TEST_HELPER"

// helper runs `sleep 1000` through ext, prints its pid and waits to be
// killed.
func helper() {
	path, err := ext.LookPath("sleep")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	c := ext.New(ext.Options{Args: []string{"sleep", "1000"}, Path: path, Stdin: null, Stdout: null})
	g := &graph.Graph{}
	g.Add("sleep", 0, 0, c.Output())
	go sched.Run(context.Background(), g, sched.Options{})
	for c.Pid() == 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(c.Pid())
	select {}
}

// dead reports whether pid is gone or a zombie.
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// waitDead fails the test unless pid is dead within a generous deadline.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !dead(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A child dies with the process that started it even when that process is
// killed by SIGKILL and runs no code of its own (the parent-death signal).
func TestChildDiesWithSIGKILL(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q: %v %v", line, err, perr)
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitDead(t, pid)
}

// A thread of the runtime that ends (a goroutine returning while locked to
// it) does not take a child with it: children are started from a thread no
// other goroutine runs on.
func TestChildOutlivesEndedThreads(t *testing.T) {
	o := command(t, "sleep", "30")
	o.Stdin, o.Stdout = devNull(t), devNull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &graph.Graph{}
	c, _, _ := addExt(g, o)
	errc := make(chan error, 1)
	go func() {
		_, err := sched.Run(ctx, g, sched.Options{})
		errc <- err
	}()
	for c.Pid() == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() { runtime.LockOSThread() }) // the thread ends with it
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond) // a parent-death signal would have arrived
	if dead(c.Pid()) {
		t.Fatal("the child died when a thread ended")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	reaped(t, c.Pid())
}

// KillAll reaches a process that is still running.
func TestKillAll(t *testing.T) {
	o := command(t, "sleep", "30")
	o.Stdin, o.Stdout = devNull(t), devNull(t)
	g := &graph.Graph{}
	c, _, _ := addExt(g, o)
	errc := make(chan error, 1)
	go func() {
		_, err := sched.Run(context.Background(), g, sched.Options{})
		errc <- err
	}()
	for c.Pid() == 0 {
		time.Sleep(time.Millisecond)
	}
	ext.KillAll(syscall.SIGKILL)
	select {
	case err := <-errc:
		if got := exitCode(err); got != 128+int(syscall.SIGKILL) {
			t.Fatalf("err = %v, want status %d", err, 128+int(syscall.SIGKILL))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end")
	}
	reaped(t, c.Pid())
}
