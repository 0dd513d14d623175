package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/progress"
	"github.com/tpipe/tpipe/sched"
)

// The input meter reads offsets: what a read moved, what a closed file
// finished; a file opened before the run (decode planning it) does not
// count.
func TestInputMeter(t *testing.T) {
	dir := t.TempDir()
	open := func(name string, size int) *os.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), size), 0o666); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	var m inputMeter
	a := open("a", 1000)
	m.add(a)
	a.Read(make([]byte, 300))
	if done, of := m.read(); done != 300 || of != 1000 {
		t.Errorf("after reading 300 of a: %d of %d", done, of)
	}
	m.opened(open("early", 50))
	if _, of := m.read(); of != 1000 {
		t.Errorf("a file opened before the run counts: of %d", of)
	}
	m.start()
	b := open("b", 500)
	m.opened(b)
	a.Close()
	if done, of := m.read(); done != 1000 || of != 1500 {
		t.Errorf("a closed, b opened: %d of %d, want 1000 of 1500", done, of)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	m.add(pr)
	if _, of := m.read(); of != 1500 {
		t.Errorf("what is not a regular file counts: of %d", of)
	}
	var none *inputMeter
	none.start()
	if got := none.total(&sched.Snapshot{}); got != (progress.Total{}) {
		t.Errorf("a nil meter: %+v", got)
	}
}

// y4mClip writes a y4m file of n frames of 4x2 pixels, 4:2:0.
func y4mClip(t *testing.T, n int) string {
	var b bytes.Buffer
	b.WriteString("YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420jpeg\n")
	for i := range n {
		b.WriteString("FRAME\n")
		b.Write(bytes.Repeat([]byte{byte(i)}, 4*2+2*2*1))
	}
	p := filepath.Join(t.TempDir(), "clip.y4m")
	if err := os.WriteFile(p, b.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestY4MFrames(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		p := y4mClip(t, n)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		if got := y4mFrames(f, fi.Size()); got != int64(n) {
			t.Errorf("%d frames: counted %d", n, got)
		}
		if off, _ := f.Seek(0, 1); off != 0 {
			t.Errorf("counting moved the offset to %d", off)
		}
		f.Close()
	}
	f, err := os.Open("progress.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := y4mFrames(f, 4096); got != 0 {
		t.Errorf("a Go file has %d frames", got)
	}
}

// A video run's plain lines count frames: decode's records after the
// header, of the count the file's size gives.
func TestProgressVideoFrames(t *testing.T) {
	clip := y4mClip(t, 500)
	var stderr bytes.Buffer
	r := New(Config{Stderr: &stderr, Progress: ProgressOn, Dir: filepath.Dir(clip)})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if st := r.RunScript(ctx, `decode < clip.y4m | sh -c "sleep 2.5; cat" > out.y4m`); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if !regexp.MustCompile(`(?m)^tpipe: \d+s: decode .*; frame 500 of 500 \(100%\)  [\d.]+ frames/s$`).MatchString(stderr.String()) {
		t.Errorf("stderr:\n%s\nwant a line counting 500 frames", stderr.String())
	}
	out, err := os.ReadFile(filepath.Join(filepath.Dir(clip), "out.y4m"))
	in, _ := os.ReadFile(clip)
	if err != nil || !bytes.Equal(out, in) {
		t.Errorf("the clip did not come through whole: %v", err)
	}
}

// Rows are in the order records flow, whatever the order the graph added
// its tasks in ('<' files are added after the command that reads them).
func TestRunSourceRowOrder(t *testing.T) {
	live := &sched.Live{}
	src := &runSource{live: live, meter: sched.NewMeter(0.5)}
	if f := src.Sample(); len(f.Rows) != 0 {
		t.Fatalf("rows before the run: %+v", f.Rows)
	}
	var stderr bytes.Buffer
	r := New(Config{Stderr: &stderr, Progress: ProgressOff})
	defer r.Close()
	s, err := r.Parse("cat < progress.go | wc -l")
	if err != nil {
		t.Fatal(err)
	}
	job, err := r.Build(context.Background(), s.Pipelines[0])
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	job.Plan.Options.Live = live
	if _, err := job.Plan.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := src.Sample()
	var names []string
	for _, row := range f.Rows {
		names = append(names, row.Name)
	}
	if got := strings.Join(names, " "); got != "<progress.go cat wc >stdout" {
		t.Errorf("rows %s", got)
	}
	if r := f.Rows[1]; r.Cap != 4 || !r.Done {
		t.Errorf("cat's row %+v: want its input queue's capacity, and done", r)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr %q", stderr.String())
	}
}
