package builtin_test

// Tests of the builtins that work on whole buffers (cat's files read with
// ScanFrom, grep's literal search with PassSeek, wc's counting on batches)
// with a small record size, so that lines, words and matches fall across
// buffer boundaries.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// runSized runs argv as runBuiltin does, with records of at most size
// bytes and stdin read from r.
func runSized(t testing.TB, dir string, argv []string, r io.Reader, size int) result {
	t.Helper()
	var stderr, stdout bytes.Buffer
	env := &builtin.Env{Stderr: &stderr}
	if dir != "" {
		env.Open = func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }
	}
	return runGraph(t, env, &stdout, &stderr, argv, r, size)
}

// batchText makes n lines of random words from a small vocabulary (so
// that literals match now and then), some long, with a final newline or
// not.
func batchText(r *rand.Rand, n int, final bool) string {
	words := []string{"alpha", "beta", "Gamma", "delta", "ERROR", "error", "zz", "z", "x\ty", "a\x01b", "\x80", "  ", "\v"}
	var b strings.Builder
	for i := range n {
		k := r.IntN(12)
		if r.IntN(50) == 0 {
			k = 300 + r.IntN(600) // a long line
		}
		for j := range k {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		if i < n-1 || final {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// grep's literal filter searches whole buffers (PassSeek): the same
// output and status as GNU, with matches anywhere in a buffer, dense or
// rare, and a last line without '\n'.
func TestGrepSeekSameAsGNU(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	argvs := [][]string{
		{"grep", "ERROR"}, {"grep", "-v", "ERROR"}, {"grep", "-v", "zzz"}, {"grep", "zzz"},
		{"grep", "z"}, {"grep", "-v", "z"}, {"grep", "-v", "a"}, {"grep", "-i", "error"},
		{"grep", "-vi", "gamma"}, {"grep", "-e", "delta", "-e", "a\x01b"},
		{"grep", "-v", "-e", "zz", "-e", "Gamma"}, {"grep", "-F", "x\ty"}, {"grep", "-vF", "-e", "zz", "-e", "beta"},
		{"grep", "-i", "-e", "GAMMA", "-e", "zz z"},
		// Fixed: two patterns, one empty, cut the window to -1.
		{"grep", "-e", "", "-e", "zz"}, {"grep", "-v", "-e", "zz", "-e", ""},
		// Regexps search buffers too: a sequence, a needed string, a
		// few strings, many.
		{"grep", "took [0-9]ms"}, {"grep", "-v", "[ab]et"}, {"grep", "ERROR.*zz"}, {"grep", "-E", "ERROR|zz"},
		{"grep", "-vF", "-e", "zz", "-e", "beta", "-e", "Gamma", "-e", "a\x01b", "-e", "lph"},
	}
	for _, n := range []int{0, 1, 2, 7, 300, 3000} {
		for _, final := range []bool{true, false} {
			in := batchText(r, n, final)
			for _, argv := range argvs {
				c, err := builtin.New(nil, argv)
				if err != nil {
					t.Fatal(err)
				}
				if c.Rec == nil || c.Fn == nil {
					t.Fatalf("%q: want the seek filter and its per-record form", argv)
				}
				want := runGNU(t, "", argv, in)
				for _, size := range []int{1 << 12, 1 << 16} {
					got := runSized(t, "", argv, strings.NewReader(in), size)
					if got.out != want.out || got.code != want.code {
						t.Errorf("%q on %d lines (final newline %v), record size %d:\n tpipe: status %d, %d bytes\n   GNU: status %d, %d bytes",
							argv, n, final, size, got.code, len(got.out), want.code, len(want.out))
					}
				}
			}
		}
	}
}

// wc counts on whole batches: a word or a line may run from one buffer
// into the next.
func TestWcBatchesSameAsGNU(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 50, 3000} {
		for _, final := range []bool{true, false} {
			in := batchText(r, n, final)
			dir := textFiles(t, "in", in, "f2", "x\ny\n")
			for _, argv := range [][]string{{"wc"}, {"wc", "-w"}, {"wc", "-l"}, {"wc", "-cm"}, {"wc", "in"}, {"wc", "-w", "in", "-", "f2"}} {
				want := runGNU(t, dir, argv, in)
				got := runSized(t, dir, argv, strings.NewReader(in), 1<<12)
				if got.out != want.out || got.code != want.code {
					t.Errorf("%q on %d lines: tpipe %d %q, GNU %d %q", argv, n, got.code, got.out, want.code, want.out)
				}
			}
		}
	}
}

// slowReader hands out its text in small pieces, now and then after a
// pause, like a pipe a slow program writes to.
type slowReader struct {
	s string
	r *rand.Rand
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.s == "" {
		return 0, io.EOF
	}
	if s.r.IntN(4) == 0 {
		time.Sleep(time.Millisecond)
	}
	n := copy(p[:min(len(p), 1+s.r.IntN(200))], s.s)
	s.s = s.s[n:]
	return n, nil
}

// cat with FILEs writes the bytes of its operands one after the other, a
// line without '\n' at the end of one running into the next, and its
// output is cut into lines as that byte stream would be: only the last
// record may lack its '\n'. A slow input ("-") must not cut a line held
// over from a file.
func TestCatJoinsOperands(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	var files []string
	contents := map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("f%d", i)
		var text string
		switch i {
		case 0:
			text = ""
		case 1:
			text = "no newline"
		case 2:
			text = "\n"
		default:
			text = batchText(r, r.IntN(400), r.IntN(2) == 0)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
		contents[name] = text
	}
	for range 60 {
		stdin := batchText(r, r.IntN(200), r.IntN(2) == 0)
		if r.IntN(4) == 0 {
			stdin = "in"
		}
		argv := []string{"cat"}
		var want strings.Builder
		wantCode := 0
		read := false
		for range 1 + r.IntN(5) {
			name := files[r.IntN(len(files))]
			switch r.IntN(5) {
			case 0:
				name = "-"
			case 1:
				name = "missing"
			}
			argv = append(argv, name)
			switch {
			case name == "missing":
				wantCode = 1
			case name != "-":
				want.WriteString(contents[name])
			case !read:
				want.WriteString(stdin)
				read = true
			}
		}
		for _, size := range []int{1 << 12, 1 << 16} {
			out, code := runCatRecords(t, dir, argv, &slowReader{s: stdin, r: r}, size)
			if out != want.String() || code != wantCode {
				t.Errorf("%q, record size %d: status %d, %d bytes; want status %d, %d bytes",
					argv, size, code, len(out), wantCode, want.Len())
			}
		}
	}
}

// runCatRecords runs the cat command argv, reading stdin from r, into a
// sink that checks that every record but the last ends in '\n'.
func runCatRecords(t *testing.T, dir string, argv []string, r io.Reader, size int) (string, int) {
	t.Helper()
	env := &builtin.Env{Open: func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }}
	return runLinesChecked(t, env, argv, r, sched.Options{RecordSize: size})
}

// runLinesChecked runs the builtin argv with env, reading stdin from r,
// into a sink that checks that every record is one line: no '\n' but at
// its end, and only the last without one.
func runLinesChecked(t *testing.T, env *builtin.Env, argv []string, r io.Reader, o sched.Options) (string, int) {
	t.Helper()
	c, err := builtin.New(env, argv)
	if err != nil {
		t.Fatal(err)
	}
	g := &graph.Graph{}
	me := g.Add(c.Name, 0, 1, c.Fn)
	if c.ReadsInput {
		g.Tasks[me].In = 1
		src := g.Add("stdin", 0, 1, task.ReadFrom(r, record.Lines))
		g.Connect(src, 0, me, 0, 2)
	}
	var out bytes.Buffer
	var cut error
	sink := g.Add("check", 1, 0, func(ctx context.Context, p *buffer.Ports) error {
		in := p.In(0)
		start := true // the next piece starts a record
		for {
			piece, more, err := in.ReadChunk()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			i := bytes.IndexByte(piece, '\n')
			switch {
			case cut != nil:
			case start && out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n':
				cut = fmt.Errorf("a record ends in %q, before %q", out.Bytes()[max(0, out.Len()-10):], piece[:min(10, len(piece))])
			case i >= 0 && (i != len(piece)-1 || more):
				cut = fmt.Errorf("a record holds several lines: %.20q", piece)
			}
			start = !more
			out.Write(piece)
		}
	})
	g.Connect(me, 0, sink, 0, 2)
	_, err = sched.Run(context.Background(), g, o)
	if cut != nil {
		t.Errorf("%q: %v", argv, cut)
	}
	var ee *task.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.Code
	}
	t.Fatalf("%q: run: %v", argv, err)
	return "", 0
}

// A line over the record size is copied like any other, whether it ends
// a file or not: cat moves bytes, the line travels as a chain.
func TestCatLongLines(t *testing.T) {
	long := strings.Repeat("w", 5000)
	dir := textFiles(t, "a", "x\ny\n", "big", "ok\n"+long+"\nafter\n", "bignonl", long)
	for _, tc := range []struct {
		argv []string
		out  string
	}{
		{[]string{"cat", "a", "big", "a"}, "x\ny\nok\n" + long + "\nafter\nx\ny\n"},
		{[]string{"cat", "big", "-", "a"}, "ok\n" + long + "\nafter\nin\nx\ny\n"},
		{[]string{"cat", "bignonl", "a"}, long + "x\ny\n"},
		{[]string{"cat", "bignonl", "-", "bignonl"}, long + "in\n" + long},
	} {
		got := runSized(t, dir, tc.argv, strings.NewReader("in\n"), 1<<12)
		if got.out != tc.out || got.err != "" || got.code != 0 {
			t.Errorf("%q: status %d, out %d bytes, err %q; want status 0, out %d bytes", tc.argv, got.code, len(got.out), got.err, len(tc.out))
		}
	}
}
