package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// result is what one command did: its stdout, stderr and exit status.
type result struct {
	out, err string
	code     int
}

// runBuiltin runs argv as a builtin on stdin through the real scheduler
// (stdin source -> builtin -> stdout sink), in directory dir ("" for the
// current one; file arguments are relative to it). A usage error is
// status 2 with the message on stderr, as the tpipe command reports it.
func runBuiltin(t testing.TB, dir string, argv []string, stdin string) result {
	t.Helper()
	var stderr, stdout bytes.Buffer
	// The C locale, as the GNU tools compared with run (runGNU).
	env := &builtin.Env{Stderr: &stderr, TempDir: t.TempDir(), Environ: append(os.Environ(), "LC_ALL=C")}
	if dir != "" {
		env.Open = func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }
		env.Create = func(name string, app bool) (ioWriteCloser, error) {
			flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if app {
				flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			return os.OpenFile(join(dir, name), flag, 0o666)
		}
	}
	return runWithEnv(t, env, &stdout, &stderr, argv, stdin)
}

func runWithEnv(t testing.TB, env *builtin.Env, stdout, stderr *bytes.Buffer, argv []string, stdin string) result {
	t.Helper()
	return runGraph(t, env, stdout, stderr, argv, strings.NewReader(stdin), 1<<16)
}

// runGraph runs argv as a builtin with stdin read from r and records of at
// most size bytes: stdin source -> builtin -> stdout sink.
func runGraph(t testing.TB, env *builtin.Env, stdout, stderr *bytes.Buffer, argv []string, r io.Reader, size int) result {
	t.Helper()
	c, err := builtin.New(env, argv)
	var ue *builtin.UsageError
	if errors.As(err, &ue) {
		return result{err: ue.Error() + "\n", code: 2}
	}
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return runCmd(t, c, stdout, stderr, argv, r, size)
}

// cmdGraph is the graph the runner would build for c: stdin, if c reads
// its input, then c, then stdout.
func cmdGraph(c *builtin.Cmd, stdin io.Reader, stdout io.Writer) *graph.Graph {
	g := &graph.Graph{}
	me := g.Add(c.Name, 0, 1, c.Fn)
	if c.ReadsInput {
		g.Tasks[me].In = 1
		src := g.Add("stdin", 0, 1, task.ReadFrom(stdin, record.Lines))
		g.Connect(src, 0, me, 0, 2)
	}
	sink := g.Add("stdout", 1, 0, task.WriteTo(stdout, record.Lines))
	g.Connect(me, 0, sink, 0, 2)
	return g
}

// runCmd runs c, made from argv, as runGraph does.
func runCmd(t testing.TB, c *builtin.Cmd, stdout, stderr *bytes.Buffer, argv []string, r io.Reader, size int) result {
	t.Helper()
	_, err := sched.Run(context.Background(), cmdGraph(c, r, stdout), sched.Options{RecordSize: size})
	res := result{out: stdout.String(), err: stderr.String()}
	var ee *task.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.Code
	default:
		t.Fatalf("%q: run: %v", argv, err)
	}
	return res
}

// runAsTpipe runs argv as the tpipe command runs a builtin (runner/
// compile.go, build.go), in dir with env, whose Stderr it sets: a usage
// error is GNU's whole text (UsageError.Message) with GNU's status
// (ExitStatus); a command line the builtin does not implement
// (*UnsupportedError) runs the system's program of that name instead,
// which fellBack reports.
func runAsTpipe(t testing.TB, env *builtin.Env, dir string, argv []string, stdin string) (res result, fellBack bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env.Stderr = &stderr
	c, err := builtin.New(env, argv)
	var unsup *builtin.UnsupportedError
	var ue *builtin.UsageError
	switch {
	case errors.As(err, &unsup):
		return runGNU(t, dir, argv, stdin), true
	case errors.As(err, &ue):
		return result{err: ue.Message(), code: ue.ExitStatus()}, false
	case err != nil:
		t.Fatalf("%q: %v", argv, err)
	}
	res = runCmd(t, c, &stdout, &stderr, argv, strings.NewReader(stdin), 1<<16)
	return res, false
}

// runGNU runs argv with the system's GNU tools under LC_ALL=C in dir, or
// skips the test when the tool is missing.
func runGNU(t testing.TB, dir string, argv []string, stdin string) result {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Skipf("%s not installed: %v", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{out: out.String(), err: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return r
}

// sameAsGNU checks that the builtin and GNU give the same stdout and exit
// status on stdin (stderr wording is checked by separate tests).
func sameAsGNU(t *testing.T, dir string, argv []string, stdin string) {
	t.Helper()
	want := runGNU(t, dir, argv, stdin)
	got := runBuiltin(t, dir, argv, stdin)
	if got.out != want.out || got.code != want.code {
		t.Errorf("%q on %q:\n tpipe: status %d, %q\n   GNU: status %d, %q", argv, stdin, got.code, got.out, want.code, want.out)
	}
}

func join(dir, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return dir + "/" + name
}
