package ext_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER of prctl(2)

// Cancelling a command kills what it started too: its whole process group.
// The test process is made a subreaper so that the orphaned sleep becomes
// its child and can be reaped: a zombie would still count as a member of the
// group (and pid 1 of a container may not reap it).
func TestCancelKillsProcessGroup(t *testing.T) {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		t.Skip("prctl:", e)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)

	o := command(t, "sh", "-c", "sleep 30 & echo started; sleep 30")
	o.Stdin = devNull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	sink := g.Add("sink", 1, 0, func(_ context.Context, p *buffer.Ports) error {
		if _, err := p.In(0).Read(); err != nil {
			return err
		}
		cancel() // the background sleep has been started
		return task.Collect(new([][]byte))(ctx, p)
	})
	g.Connect(out, 0, sink, 0, 0)
	err := run(t, ctx, g, 3*time.Second)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	reaped(t, c.Pid())

	// Reap the orphans, which must all be dead already.
	pgid := c.Pid()
	deadline := time.Now().Add(2 * time.Second)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if pid == 0 && time.Now().After(deadline) {
			t.Fatalf("process group %d still has live members", pgid)
		}
		if pid == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still there: kill 0: %v", pgid, err)
	}
}
