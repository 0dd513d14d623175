package ext_test

import (
	"context"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// idleSource writes nothing and waits until its reader stops or the run
// ends: a terminal nobody types at, a log nobody appends to.
func idleSource(ctx context.Context, p *buffer.Ports) error {
	select {
	case <-p.Out(0).Done():
	case <-ctx.Done():
	}
	return nil
}

// A program that never reads its input and has ended (`sh -c 'echo hi'`
// given tpipe's stdin at a terminal) ends the run, although no record
// ever comes for its input task to find the pipe closed with.
func TestExitedProgramStopsItsFeed(t *testing.T) {
	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("terminal", 0, 1, idleSource)
	c, in, o := addExt(g, command(t, "sh", "-c", "echo hi"))
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in, 0, 0)
	g.Connect(o, 0, sink, 0, 0)
	endsWithin(t, g, "the run waited for input to a program that had exited")
	if got := join(out); got != "hi\n" {
		t.Errorf("got %q", got)
	}
	reaped(t, c.Pid())
}

// When the command after a program stops reading, the program's stdout
// is closed at once, not at its next line: a program that writes nothing
// more but checks its output (GNU tail -f) ends then, as in a shell.
func TestReaderGoneClosesIdleProgram(t *testing.T) {
	dir := t.TempDir()
	o := command(t, "tail", "-f", "/dev/null")
	o.Stdin = devNull(t)
	o.Dir = dir
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	// The reader takes nothing and stops: head -1 on a log with no line.
	stop := g.Add("head", 1, 0, func(ctx context.Context, p *buffer.Ports) error { return nil })
	g.Connect(out, 0, stop, 0, 0)
	endsWithin(t, g, "tail -f was not told that its reader had stopped")
	reaped(t, c.Pid())
}

// endsWithin runs g and fails the test with why if the run has not ended
// after 20 seconds (it would hang for ever).
func endsWithin(t *testing.T, g *graph.Graph, why string) {
	t.Helper()
	ended := make(chan error, 1)
	go func() {
		_, err := sched.Run(context.Background(), g, sched.Options{})
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal(why)
	}
}
