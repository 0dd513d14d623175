package ext_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

func TestCatKeepsRecords(t *testing.T) {
	recs := [][]byte{[]byte("a\n"), []byte("\n"), []byte("bb\n"), []byte("no newline")}
	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records(recs...))
	c, in, o := addExt(g, command(t, "cat"))
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in, 0, 0)
	g.Connect(o, 0, sink, 0, 0)
	if err := run(t, context.Background(), g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := join(out), join(recs); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(out) != len(recs) {
		t.Errorf("got %d records, want %d", len(out), len(recs))
	}
	reaped(t, c.Pid())
}

// tr in the middle of a chain, with enough data to fill the pipes both ways.
func TestTrInChain(t *testing.T) {
	const n = 50000
	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records(lines("line ", n)...))
	_, in, o := addExt(g, command(t, "tr", "a-z", "A-Z"))
	cp := g.AddRecord("copy", task.Copy())
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in, 0, 0)
	g.Connect(o, 0, cp, 0, 0)
	g.Connect(cp, 0, sink, 0, 0)
	if err := run(t, context.Background(), g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := join(out), join(lines("LINE ", n)); got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
	if len(out) != n {
		t.Errorf("got %d records, want %d", len(out), n)
	}
}

// Two external commands in a row: an output task feeds an input task.
func TestTwoCommands(t *testing.T) {
	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records(lines("x", 1000)...))
	_, in1, o1 := addExt(g, command(t, "cat"))
	_, in2, o2 := addExt(g, command(t, "tr", "x", "y"))
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in1, 0, 0)
	g.Connect(o1, 0, in2, 0, 0)
	g.Connect(o2, 0, sink, 0, 0)
	if err := run(t, context.Background(), g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := join(out), join(lines("y", 1000)); got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		input bool // feed the command from an endless source
		code  int
	}{
		{[]string{"sh", "-c", "exit 3"}, false, 3},
		{[]string{"sh", "-c", "exit 3"}, true, 3},
		{[]string{"false"}, false, 1},
		{[]string{"true"}, true, 0},
		{[]string{"sh", "-c", "kill -TERM $$"}, false, 143},
		// SIGPIPE from a pipe of its own: not the early-exit case.
		{[]string{"sh", "-c", "kill -PIPE $$"}, false, 141},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := command(t, tc.args...)
			g := &graph.Graph{}
			if !tc.input {
				o.Stdin = devNull(t)
			}
			c, in, out := addExt(g, o)
			if tc.input {
				src := g.Add("src", 0, 1, endless([]byte("y\n")))
				g.Connect(src, 0, in, 0, 0)
			}
			sink := g.Add("sink", 1, 0, task.Collect(new([][]byte)))
			g.Connect(out, 0, sink, 0, 0)
			err := run(t, context.Background(), g, 5*time.Second)
			if got := exitCode(err); tc.code == 0 && err != nil || tc.code != 0 && got != tc.code {
				t.Fatalf("err = %v, want status %d", err, tc.code)
			}
			var te *sched.TaskError
			if tc.code != 0 && (!errors.As(err, &te) || te.Task != strings.Join(tc.args, " ")+" >") {
				t.Errorf("err = %v, want it from the output task", err)
			}
			reaped(t, c.Pid())
		})
	}
}

// `yes | head -n 1` with yes external: the reader stops, yes dies of
// SIGPIPE, and that is success.
func TestReaderStopsCommand(t *testing.T) {
	o := command(t, "yes")
	o.Stdin = devNull(t)
	var got string
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	sink := g.Add("head", 1, 0, first(&got))
	g.Connect(out, 0, sink, 0, 0)
	st, err := sched.Run(context.Background(), g, sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != "y\n" {
		t.Errorf("got %q", got)
	}
	for _, ts := range st.Tasks {
		if ts.Err != "" || ts.Status != 0 {
			t.Errorf("task %s: status %d, error %q", ts.Name, ts.Status, ts.Err)
		}
	}
	reaped(t, c.Pid())
}

// `seq | head -n 1` with head external: head exits, its input task stops,
// and the source gets ErrReaderGone.
func TestCommandStopsWriter(t *testing.T) {
	var out [][]byte
	var srcErr error
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
		for i := 0; i < 1_000_000; i++ {
			if srcErr = p.Out(0).Write(lines("line ", 1)[0]); srcErr != nil {
				return srcErr
			}
		}
		return nil
	})
	c, in, o := addExt(g, command(t, "head", "-n", "1"))
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in, 0, 0)
	g.Connect(o, 0, sink, 0, 0)
	if err := run(t, context.Background(), g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := join(out); got != "line 0\n" {
		t.Errorf("got %q", got)
	}
	if !errors.Is(srcErr, buffer.ErrReaderGone) {
		t.Errorf("source got %v, want ErrReaderGone", srcErr)
	}
	reaped(t, c.Pid())
}

// Lines go through a process one at a time: each record comes back out
// before the next goes in (`ping | sed`).
func TestLinesFlowAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	echoed := make(chan string)
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
		for _, rec := range lines("ping ", 5) {
			if err := p.Out(0).Write(rec); err != nil {
				return err
			}
			p.Flush()
			select {
			case got := <-echoed:
				if got != string(rec) {
					return errors.New("echoed " + got)
				}
			case <-ctx.Done():
				return errors.New("record " + string(rec) + " not echoed")
			}
		}
		return nil
	})
	_, in, o := addExt(g, command(t, "cat"))
	sink := g.Add("sink", 1, 0, func(ctx context.Context, p *buffer.Ports) error {
		for {
			rec, err := p.In(0).Read()
			if err != nil {
				return nil
			}
			echoed <- string(rec)
		}
	})
	g.Connect(src, 0, in, 0, 0)
	g.Connect(o, 0, sink, 0, 0)
	if err := run(t, ctx, g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestCancel(t *testing.T) {
	for _, input := range []bool{false, true} {
		name := "no input"
		if input {
			name = "input"
		}
		t.Run(name, func(t *testing.T) {
			o := command(t, "sleep", "30")
			if !input {
				o.Stdin = devNull(t)
			}
			g := &graph.Graph{}
			c, in, out := addExt(g, o)
			if input {
				// sleep does not read: the input task blocks on a
				// full pipe.
				src := g.Add("src", 0, 1, endless([]byte("y\n")))
				g.Connect(src, 0, in, 0, 0)
			}
			sink := g.Add("sink", 1, 0, task.Collect(new([][]byte)))
			g.Connect(out, 0, sink, 0, 0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(100*time.Millisecond, cancel)
			err := run(t, ctx, g, 3*time.Second)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			reaped(t, c.Pid())
		})
	}
}

// A process that ignores SIGTERM gets SIGKILL after the grace.
func TestCancelKillsStubbornProcess(t *testing.T) {
	o := command(t, "sh", "-c", `trap "" TERM; echo ready; sleep 30`)
	o.Stdin = devNull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	sink := g.Add("sink", 1, 0, func(_ context.Context, p *buffer.Ports) error {
		if _, err := p.In(0).Read(); err != nil {
			return err
		}
		cancel() // the trap is set
		for {
			if _, err := p.In(0).Read(); err != nil {
				return err
			}
		}
	})
	g.Connect(out, 0, sink, 0, 0)
	start := time.Now()
	err := run(t, ctx, g, 3*time.Second)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d < ext.KillDelay {
		t.Errorf("run took %v, less than the grace of %v", d, ext.KillDelay)
	}
	reaped(t, c.Pid())
}

// A line longer than the record size comes out of a process as a chain;
// one longer than the longest record a task holds whole fails the task
// that reads it, and the process is killed rather than waited for.
func TestLongLineFromProcess(t *testing.T) {
	o := command(t, "sh", "-c", "echo 0123456789012345678901234567890123456789")
	o.Stdin = devNull(t)
	g := &graph.Graph{}
	_, _, out := addExt(g, o)
	var got [][]byte
	sink := g.Add("sink", 1, 0, task.Collect(&got))
	g.Connect(out, 0, sink, 0, 0)
	if _, err := sched.Run(context.Background(), g, sched.Options{RecordSize: 16}); err != nil {
		t.Fatal(err)
	}
	if join(got) != "0123456789012345678901234567890123456789\n" || len(got) != 1 {
		t.Fatalf("got %q", got)
	}
}

func TestLineTooLongKillsProcess(t *testing.T) {
	o := command(t, "sh", "-c", "echo 0123456789012345678901234567890123456789; exec sleep 30")
	o.Stdin = devNull(t)
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	sink := g.Add("sink", 1, 0, task.Collect(new([][]byte)))
	g.Connect(out, 0, sink, 0, 0)
	start := time.Now()
	_, err := sched.Run(context.Background(), g, sched.Options{RecordSize: 16, MaxRecord: 32})
	if !errors.Is(err, record.ErrTooLarge) {
		t.Fatalf("err = %v, want a record too large", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("run took %v", d)
	}
	reaped(t, c.Pid())
}

func TestStartFailure(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, path string
		code       int
		msg        string
	}{
		{"plain", write("plain", "echo hi\n", 0o644), 126, "plain: permission denied"},
		{"junk", write("junk", "\x00\x01\x02junk", 0o755), 126, "junk: exec format error"},
		{"gone", filepath.Join(dir, "gone"), 127, "gone: no such file or directory"},
		{"dir", dir, 126, "dir: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &graph.Graph{}
			var srcErr error
			src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
				for {
					if srcErr = p.Out(0).Write([]byte("x\n")); srcErr != nil {
						return srcErr
					}
				}
			})
			c, in, out := addExt(g, ext.Options{Args: []string{tc.name}, Path: tc.path})
			sink := g.Add("sink", 1, 0, task.Collect(new([][]byte)))
			g.Connect(src, 0, in, 0, 0)
			g.Connect(out, 0, sink, 0, 0)
			err := run(t, context.Background(), g, 5*time.Second)
			if exitCode(err) != tc.code || !strings.HasSuffix(err.Error(), ": "+tc.msg) {
				t.Fatalf("err = %v, want status %d with %q", err, tc.code, tc.msg)
			}
			if !errors.Is(srcErr, buffer.ErrReaderGone) {
				t.Errorf("source got %v, want ErrReaderGone", srcErr)
			}
			if c.Pid() != 0 {
				t.Errorf("pid %d, want 0", c.Pid())
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	path, err := ext.LookPath("sh")
	if err != nil || !filepath.IsAbs(path) {
		t.Errorf("LookPath(sh) = %q, %v; want an absolute path", path, err)
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		code int
		msg  string
	}{
		{"nosuch", 127, "nosuch: command not found"},
		{plain, 126, plain + ": permission denied"},
		{dir + "/nosuch", 127, dir + "/nosuch: no such file or directory"},
	} {
		_, err := ext.LookPath(tc.name)
		if exitCode(err) != tc.code || err.Error() != tc.msg {
			t.Errorf("LookPath(%q) = %v, want status %d with %q", tc.name, err, tc.code, tc.msg)
		}
	}
}

// A relative entry of PATH works as in a shell, and gives an absolute path.
func TestLookPathDot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("PATH", ".")
	path, err := ext.LookPath("prog")
	if err != nil || path != filepath.Join(dir, "prog") {
		t.Errorf("LookPath(prog) = %q, %v", path, err)
	}
}

// With Stdin and Stdout files there are no ports: the output task only
// waits.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(inPath, []byte("hello\nworld"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(inPath)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	o := command(t, "tr", "a-z", "A-Z")
	o.Stdin, o.Stdout = in, out
	g := &graph.Graph{}
	_, i, _ := addExt(g, o)
	if i != -1 {
		t.Fatal("an input task with Stdin set")
	}
	if err := run(t, context.Background(), g, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(outPath)
	if err != nil || string(data) != "HELLO\nWORLD" {
		t.Errorf("got %q, %v", data, err)
	}
}

func TestStderr(t *testing.T) {
	var stderr bytes.Buffer
	o := command(t, "sh", "-c", "echo out; echo oops >&2; exit 2")
	o.Stdin = devNull(t)
	o.Stderr = &stderr
	o.Dir = t.TempDir()
	var out [][]byte
	g := &graph.Graph{}
	_, _, o2 := addExt(g, o)
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(o2, 0, sink, 0, 0)
	err := run(t, context.Background(), g, 5*time.Second)
	if exitCode(err) != 2 {
		t.Errorf("err = %v, want status 2", err)
	}
	if join(out) != "out\n" || stderr.String() != "oops\n" {
		t.Errorf("stdout %q, stderr %q", join(out), stderr.String())
	}
}

// A process that closes its output and lives on: its last line is handed
// over while it runs, not when it exits, even without its newline.
func TestLastLineBeforeExit(t *testing.T) {
	o := command(t, "sh", "-c", "printf last; exec >&-; exec sleep 30")
	o.Stdin = devNull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(3*time.Second, cancel)
	defer timer.Stop()
	var got string
	g := &graph.Graph{}
	c, _, out := addExt(g, o)
	sink := g.Add("sink", 1, 0, func(ctx context.Context, p *buffer.Ports) error {
		err := first(&got)(ctx, p)
		cancel()
		return err
	})
	g.Connect(out, 0, sink, 0, 0)
	err := run(t, ctx, g, 2*time.Second)
	if !errors.Is(err, context.Canceled) || got != "last" {
		t.Fatalf("err = %v, got %q; want context.Canceled after \"last\"", err, got)
	}
	reaped(t, c.Pid())
}

// Fixed bug: a program that never started (not found, or its run
// cancelled first) kept the child's ends of its /dev/fd pipes open in
// tpipe, so a bridge on the other end (Drain, Feed) waited for ever on a
// pipe nobody would write or read.
func TestFdBridgesEndWhenProgramNeverStarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		code   int
	}{
		{name: "not found", code: 127},
		{name: "run cancelled before it starts", cancel: true, code: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			g := &graph.Graph{}
			// The program would write the edge on its fd 3.
			c := ext.New(ext.Options{Args: []string{"tpipe-no-such-program"}, Stdin: devNull(t), ExtraFiles: []*os.File{w}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				o := command(t, "cat")
				o.Stdin, o.ExtraFiles = devNull(t), []*os.File{w}
				c = ext.New(o)
				cancel()
			}
			drain := g.Add("drain", 0, 1, ext.Drain(r, "prog"))
			out := g.Add("prog", 0, 1, c.Output())
			var got, edge [][]byte
			sink := g.Add("sink", 1, 0, task.Collect(&got))
			esink := g.Add("edge", 1, 0, task.Collect(&edge))
			g.Connect(out, 0, sink, 0, 0)
			g.Connect(drain, 0, esink, 0, 0)
			done := make(chan error, 1)
			go func() {
				_, err := sched.Run(ctx, g, sched.Options{})
				done <- err
			}()
			deadline := time.NewTimer(20 * time.Second)
			defer deadline.Stop()
			select {
			case err := <-done:
				if tc.code >= 0 && exitCode(err) != tc.code {
					t.Errorf("err = %v, want status %d", err, tc.code)
				}
				if tc.cancel && !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want the cancellation", err)
				}
			case <-deadline.C:
				t.Fatal("the run did not end: the bridge waits on a pipe of a program that never started")
			}
		})
	}
}
