package runner_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
)

// slowReader returns its chunks one per Read, each after a signal.
type slowReader struct {
	chunks []string
	next   chan struct{}
}

func (s *slowReader) Read(b []byte) (int, error) {
	<-s.next
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, s.chunks[0])
	s.chunks = s.chunks[1:]
	return n, nil
}

// A reader that gives up while the pump is reading loses nothing: the
// chunk goes to the next reader.
func TestPumpKeepsAbandonedChunk(t *testing.T) {
	src := &slowReader{chunks: []string{"one\n", "two\n"}, next: make(chan struct{})}
	p := runner.NewPump(src)
	defer func() { p.Close(); close(src.next); p.Wait() }()

	stop := make(chan struct{})
	r1 := p.Reader(context.Background(), stop)
	errc := make(chan error, 1)
	go func() {
		_, err := r1.Read(make([]byte, 16))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it ask
	close(stop)
	if err := <-errc; err == nil {
		t.Fatal("first reader did not give up")
	}
	src.next <- struct{}{} // the read it asked for completes now

	r2 := p.Reader(context.Background(), make(chan struct{}))
	b := make([]byte, 16)
	n, err := r2.Read(b)
	if err != nil || string(b[:n]) != "one\n" {
		t.Fatalf("second reader got %q, %v; want the abandoned chunk", b[:n], err)
	}
}

func TestRunScriptStatusAndStats(t *testing.T) {
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Stdin: strings.NewReader("b\na\n"), Stdout: &out, Stderr: &errb})
	defer r.Close()
	var runs []*sched.Stats
	r.OnStats = func(st *sched.Stats) { runs = append(runs, st) }
	if got := r.RunScript(context.Background(), "sort; seq 3 | grep 7"); got != 1 {
		t.Fatalf("status %d, want 1 (grep found nothing)", got)
	}
	if out.String() != "a\nb\n" || len(runs) != 2 {
		t.Fatalf("out %q, %d runs", out.String(), len(runs))
	}
	if got := r.RunScript(context.Background(), "seq 3 |"); got != runner.StatusUsage {
		t.Fatalf("syntax error: status %d", got)
	}
	if !strings.Contains(errb.String(), "1:7: syntax error: missing command after `|`\nseq 3 |\n      ^\n") {
		t.Fatalf("stderr %q", errb.String())
	}
}

func TestExplainDoesNotTouchOutputFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("precious\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := runner.New(runner.Config{Dir: dir, Stdout: &out})
	defer r.Close()
	if got := r.Explain(context.Background(), "seq 3 > keep.txt", &out); got != 0 {
		t.Fatalf("status %d", got)
	}
	if b, _ := os.ReadFile(keep); string(b) != "precious\n" {
		t.Fatalf("explain truncated the file: %q", b)
	}
	if !strings.Contains(out.String(), "seq -> >keep.txt") {
		t.Fatalf("explain output:\n%s", out.String())
	}
}
