package ext_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// command returns Options for args, with Path looked up; the test is
// skipped if the program is missing.
func command(t *testing.T, args ...string) ext.Options {
	t.Helper()
	path, err := ext.LookPath(args[0])
	if err != nil {
		t.Skip(err)
	}
	return ext.Options{Args: args, Path: path}
}

// devNull opens /dev/null for reading, closed at the end of the test.
func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// addExt adds the tasks of a command to g: in is -1 when the command has no
// input task.
func addExt(g *graph.Graph, o ext.Options) (c *ext.Cmd, in, out int) {
	c = ext.New(o)
	name := strings.Join(o.Args, " ")
	in = -1
	if fn := c.Input(); fn != nil {
		in = g.Add(name+" <", 1, 0, fn)
	}
	nout := 1
	if o.Stdout != nil {
		nout = 0
	}
	out = g.Add(name+" >", 0, nout, c.Output())
	return c, in, out
}

// run runs g and fails the test if the run takes longer than limit.
func run(t *testing.T, ctx context.Context, g *graph.Graph, limit time.Duration) error {
	t.Helper()
	start := time.Now()
	_, err := sched.Run(ctx, g, sched.Options{})
	if d := time.Since(start); d > limit {
		t.Errorf("run took %v, want under %v", d, limit)
	}
	return err
}

// lines returns the records "<prefix>0\n" ... for i < n.
func lines(prefix string, n int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "%s%d\n", prefix, i)
	}
	return recs
}

func join(recs [][]byte) string {
	var b strings.Builder
	for _, r := range recs {
		b.Write(r)
	}
	return b.String()
}

// endless is a source task writing rec until its reader stops.
func endless(rec []byte) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		for {
			if err := p.Out(0).Write(rec); err != nil {
				return err
			}
		}
	}
}

// first is a sink task that keeps the first record and returns.
func first(dst *string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		rec, err := p.In(0).Read()
		if err == io.EOF {
			return nil
		}
		*dst = string(rec)
		return err
	}
}

// reaped fails the test unless the process pid is gone (not even a zombie).
func reaped(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("process did not start")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still there after the run (kill 0: %v)", pid, err)
	}
}

// exitCode returns the status carried by err, or -1 if there is none.
func exitCode(err error) int {
	var ee *task.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	return ee.Code
}
