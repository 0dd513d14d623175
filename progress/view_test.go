package progress

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/tpipe/tpipe/internal/vtscreen"
)

// fakeSource counts its samples; its rows speed up with each.
type fakeSource struct {
	mu sync.Mutex
	n  int
}

func (s *fakeSource) Sample() Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return Frame{Elapsed: time.Duration(s.n) * time.Second, Rows: []Row{
		{Name: "<big.log", Records: float64(1000 * s.n), Bytes: float64(s.n << 20), Busy: 0.1},
		{Name: "grep", Records: float64(1000 * s.n), Bytes: float64(s.n << 20), Busy: 0.99, Fill: 2, Cap: 4, Bottleneck: true},
		{Name: ">stdout", Records: 10, Bytes: 100, Busy: 0.01, Fill: 0, Cap: 4},
	}, Total: Total{Unit: "bytes", Done: int64(s.n) << 20, Of: 100 << 20, Rate: 1 << 20}}
}

func (s *fakeSource) samples() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// syncScreen is a terminal screen that the view and the test share.
type syncScreen struct {
	mu sync.Mutex
	s  vtscreen.Screen
}

func (s *syncScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Write(p)
}

func (s *syncScreen) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Lines()
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
	}
}

// On a terminal the view shows every row and the total while it runs,
// lines written through Writer stay above it, and Stop leaves only those.
func TestViewTerminal(t *testing.T) {
	var scr syncScreen
	src := &fakeSource{}
	v := Start(&scr, src, Options{Terminal: true, Interval: 5 * time.Millisecond})
	waitFor(t, "view with every row", func() bool {
		s := strings.Join(scr.lines(), "\n")
		return strings.Contains(s, "<big.log") && strings.Contains(s, "grep") && strings.Contains(s, ">stdout") &&
			strings.Contains(s, "<- bottleneck") && strings.Contains(s, "ETA")
	})
	fmt.Fprintf(v.Writer(), "grep: a message\nand a line in ")
	fmt.Fprintf(v.Writer(), "two writes\n")
	waitFor(t, "message above the view", func() bool {
		l := scr.lines()
		return len(l) > 2 && l[0] == "grep: a message" && l[1] == "and a line in two writes"
	})
	mid := scr.lines()
	t.Logf("the view:\n%s", strings.Join(mid, "\n"))
	if len(mid) != 2+4 {
		t.Errorf("screen while the view is up:\n%s\nwant the 2 messages, then 3 rows and the total", strings.Join(mid, "\n"))
	}
	for _, l := range mid[2:] {
		if !strings.Contains(l, "rec/s") && !strings.Contains(l, "elapsed") {
			t.Errorf("view line %q has no rate", l)
		}
	}
	fmt.Fprintf(v.Writer(), "an unended line")
	v.Stop()
	if got, want := scr.lines(), []string{"grep: a message", "and a line in two writes", "an unended line"}; !slices.Equal(got, want) {
		t.Errorf("screen after Stop:\n%s\nwant only the messages:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fmt.Fprintf(v.Writer(), "\nafter\n")
	if got := scr.lines(); got[len(got)-1] != "after" {
		t.Errorf("a write after Stop: screen ends %q", got[len(got)-1])
	}
}

// Without a terminal the view writes one plain line per sample.
func TestViewPlain(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	src := &fakeSource{}
	v := Start(w, src, Options{Interval: 5 * time.Millisecond})
	waitFor(t, "three samples", func() bool { return src.samples() >= 3 })
	v.Writer().Write([]byte("a message\n"))
	v.Stop()
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) < 4 || !slices.Contains(lines, "a message") {
		t.Fatalf("output:\n%s\nwant 3 lines or more and the message", buf.String())
	}
	for _, l := range lines {
		if l == "a message" {
			continue
		}
		if !strings.HasPrefix(l, "tpipe: ") || !strings.Contains(l, "; grep ") || !strings.Contains(l, "rec/s") || !strings.Contains(l, "bottleneck grep") || strings.Contains(l, "\x1b") {
			t.Errorf("plain line %q", l)
		}
	}
}

// A run that ends within the delay shows nothing, and its source is never
// sampled.
func TestViewDelay(t *testing.T) {
	var buf bytes.Buffer
	src := &fakeSource{}
	v := Start(&buf, src, Options{Terminal: true, Delay: time.Hour})
	v.Writer().Write([]byte("message\n"))
	v.Stop()
	if buf.String() != "message\n" || src.samples() != 0 {
		t.Errorf("wrote %q after %d samples, want only the message", buf.String(), src.samples())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// BenchmarkTerminalRedraw is what one redraw of the terminal view costs:
// a frame of 12 rows drawn by mpb into io.Discard, the process's CPU time
// per redraw (mpb draws on goroutines of its own).
func BenchmarkTerminalRedraw(b *testing.B) {
	f := Frame{Elapsed: time.Minute, Total: Total{Unit: "bytes", Done: 1 << 30, Of: 4 << 30, Rate: 1 << 20}}
	for i := range 12 {
		f.Rows = append(f.Rows, Row{Name: fmt.Sprint("task", i), Records: 1e6, Bytes: 1 << 26, Busy: 0.5, Fill: i % 5, Cap: 4})
	}
	v := stillView(io.Discard)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		v.draw(f)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/redraw")
	v.Stop()
}

// stillView is a terminal view on w that draws only when told (View.draw):
// it has no sampling loop.
func stillView(w io.Writer) *View {
	v := &View{w: w, o: Options{Terminal: true}, stop: make(chan struct{}), done: make(chan struct{}), refresh: make(chan any)}
	close(v.done)
	return v
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Lines written fast through Writer reach the terminal without waiting
// for the next sample: mpb holds about heldMax of them at most.
func TestViewWriterFlushes(t *testing.T) {
	var scr syncScreen
	v := stillView(&scr)
	v.draw((&fakeSource{}).Sample())
	waitFor(t, "the view", func() bool { return strings.Contains(strings.Join(scr.lines(), "\n"), "grep") })
	line := strings.Repeat("x", 1023) + "\n"
	for range 2 * heldMax / len(line) {
		v.Writer().Write([]byte(line))
	}
	// This view samples never: without the redraws the writes ask for,
	// nothing would show before Stop.
	waitFor(t, "the lines, before Stop", func() bool { return len(scr.lines()) >= heldMax/len(line) })
	v.Stop()
	if got := len(scr.lines()); got != 2*heldMax/len(line) {
		t.Errorf("%d lines on the screen after Stop, want %d", got, 2*heldMax/len(line))
	}
}

// The view follows a resize of its terminal: once the terminal is
// narrower, no line of the view is wider than it (none wraps, which
// would tear the next redraw).
func TestViewFollowsResize(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	var scr syncScreen
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(&scr, ptmx)
	}()
	v := Start(tty, &fakeSource{}, Options{Terminal: true, Interval: 5 * time.Millisecond})
	widest := func() int {
		w := 0
		for _, l := range scr.lines() {
			w = max(w, utf8.RuneCountInString(l))
		}
		return w
	}
	waitFor(t, "the view, wide", func() bool {
		return strings.Contains(strings.Join(scr.lines(), "\n"), "<- bottleneck") && widest() > 60
	})
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 60}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the view within 60 columns", func() bool {
		l := scr.lines()
		return len(l) == 4 && strings.HasPrefix(l[1], "grep") && widest() <= 60
	})
	v.Stop()
	tty.Close()
	<-copied
	if l := scr.lines(); len(l) != 0 {
		t.Errorf("screen after Stop:\n%s", strings.Join(l, "\n"))
	}
}
