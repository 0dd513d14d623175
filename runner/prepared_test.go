package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// writeFile writes text to a new file in a test's folder and returns its
// path.
func writeFile(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOnce is RunScript on src with the file at path as stdin.
func runOnce(t *testing.T, src, path string) (out, errs string, status int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var o, e bytes.Buffer
	r := runner.New(runner.Config{Stdin: f, Stdout: &o, Stderr: &e})
	defer r.Close()
	status = r.RunScript(context.Background(), src)
	return o.String(), e.String(), status
}

// TestPrepared: a prepared script gives, run after run and in runs side
// by side, what RunScript gives for the same input: output, messages and
// status, with a file, a reader or nothing as stdin.
func TestPrepared(t *testing.T) {
	input := "pear\napple\nfig\napple\nkiwi"
	for _, src := range []string{
		"tr a-z A-Z | rev",
		"sort | uniq -c | sort -rn",
		"tee @a > /dev/null\ncat @a | wc -l",
		"grep -v apple",
		"head -1; cat",
		"cat - /no/such/file",
	} {
		t.Run(src, func(t *testing.T) {
			path := writeFile(t, input)
			wantOut, wantErr, wantStatus := runOnce(t, src, path)
			p, err := runner.Prepare(src, runner.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Go(func() {
					var in io.Reader
					switch i % 3 {
					case 0:
						f, err := os.Open(path)
						if err != nil {
							t.Error(err)
							return
						}
						defer f.Close()
						in = f
					case 1:
						in = strings.NewReader(input)
					}
					var o, e bytes.Buffer
					status := p.Run(context.Background(), in, &o, &e)
					if in == nil {
						return // no input: only that it ends
					}
					if o.String() != wantOut || e.String() != wantErr || status != wantStatus {
						t.Errorf("run %d: %q, %q, %d; RunScript: %q, %q, %d", i, o.String(), e.String(), status, wantOut, wantErr, wantStatus)
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestPrepareErrors: what does not compile is refused once, by Prepare,
// with the error Report words as RunScript does.
func TestPrepareErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cat |", "tpipe: 1:5: syntax error"},
		{"cat @a", "@a"},
	} {
		_, err := runner.Prepare(tc.src, runner.Config{})
		if err == nil {
			t.Errorf("Prepare(%q): no error", tc.src)
			continue
		}
		var e bytes.Buffer
		r := runner.New(runner.Config{Stderr: &e})
		if st := r.Report(tc.src, err); st != runner.StatusUsage || !strings.Contains(e.String(), tc.want) {
			t.Errorf("Prepare(%q): status %d, %q; want 2 and %q", tc.src, st, e.String(), tc.want)
		}
		r.Close()
	}
}

// TestPumpRegularFile: a pump on a regular file reads it in the reader's
// own call, whole, and a reader told to stop stops.
func TestPumpRegularFile(t *testing.T) {
	text := strings.Repeat("0123456789\n", 10000)
	f, err := os.Open(writeFile(t, text))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := runner.NewPump(f)
	defer func() { p.Close(); p.Wait() }()
	b, err := io.ReadAll(p.Reader(context.Background(), nil))
	if err != nil || string(b) != text {
		t.Fatalf("read %d bytes, %v; want %d", len(b), err, len(text))
	}
	stop := make(chan struct{})
	close(stop)
	if n, err := p.Reader(context.Background(), stop).Read(make([]byte, 8)); n != 0 || err == nil {
		t.Fatalf("a stopped reader read %d, %v", n, err)
	}
}

// BenchmarkSmallRun is one small job of tpipe pmjq without the folders:
// 4 KiB through 'tr a-z A-Z | rev', by RunScript (parse and compile each
// time) and by a Prepared script.
func BenchmarkSmallRun(b *testing.B) {
	path := writeFile(b, strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!\n", 64))
	const src = "tr a-z A-Z | rev"
	p, err := runner.Prepare(src, runner.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"RunScript", "Prepared"} {
		b.Run(how, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				status := 0
				if how == "Prepared" {
					status = p.Run(context.Background(), f, io.Discard, io.Discard)
				} else {
					r := runner.New(runner.Config{Stdin: f})
					status = r.RunScript(context.Background(), src)
					r.Close()
				}
				f.Close()
				if status != 0 {
					b.Fatal(fmt.Sprint("status ", status))
				}
			}
		})
	}
}
