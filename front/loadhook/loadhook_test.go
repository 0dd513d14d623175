package loadhook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExtract(t *testing.T) {
	hooks, rest, err := Extract([]string{"--workers", "2", "--max-load", "3.5", "ssh host 'tpipe pmjq a b c'", "--min-load=0.5", "pkill -u me", "in", "--", "--max-load"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 2 || !hooks[0].Above || hooks[0].Limit != 3.5 || strings.Join(hooks[0].Argv, "|") != "ssh|host|tpipe pmjq a b c" ||
		hooks[1].Above || hooks[1].Limit != 0.5 || strings.Join(hooks[1].Argv, "|") != "pkill|-u|me" {
		t.Errorf("hooks = %+v", hooks)
	}
	if strings.Join(rest, " ") != "--workers 2 in -- --max-load" {
		t.Errorf("rest = %q", rest)
	}
	for _, bad := range [][]string{{"--max-load", "2"}, {"--max-load", "x", "cmd"}, {"--min-load", "-1", "cmd"}, {"--max-load", "1", "a | b"}, {"--max-load", "1", ""}} {
		if _, _, err := Extract(bad); err == nil {
			t.Errorf("Extract(%q) accepted", bad)
		}
	}
}

// TestStep: a hook runs while its condition holds, at most once per
// interval, with a load source and a clock of the test's own.
func TestStep(t *testing.T) {
	load := 0.0
	var ran []string
	w := &Watcher{
		Hooks:    []Hook{{Above: true, Limit: 4, Argv: []string{"up"}}, {Above: false, Limit: 1, Argv: []string{"down"}}},
		Load:     func() (float64, error) { return load, nil },
		Interval: time.Minute,
		Run: func(ctx context.Context, argv []string) error {
			ran = append(ran, argv[0])
			return nil
		},
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	steps := []struct {
		at   time.Duration
		load float64
		want string
	}{
		{0, 2, ""},                  // between the limits
		{5 * time.Second, 5, "up"},  // above 4
		{10 * time.Second, 6, "up"}, // still above, within the interval: not again
		{65 * time.Second, 6, "up up"},
		{70 * time.Second, 0.5, "up up down"},
		{75 * time.Second, 4, "up up down"}, // at the limit is not above
		{80 * time.Second, 0.2, "up up down"},
		{131 * time.Second, 0.2, "up up down down"},
	}
	for _, s := range steps {
		load = s.load
		w.Check(ctx, t0.Add(s.at))
		if got := strings.Join(ran, " "); got != s.want {
			t.Fatalf("at %v, load %v: ran %q, want %q", s.at, s.load, got, s.want)
		}
	}
}

// TestLoopRunsProgram: Loop runs a real program, found on PATH, as argv.
func TestLoopRunsProgram(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "it ran")
	w := &Watcher{
		Hooks: []Hook{{Above: true, Limit: 1, Argv: []string{"touch", mark}}},
		Load:  func() (float64, error) { return 2, nil },
		Every: 10 * time.Millisecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); w.Loop(ctx) }()
	for ctx.Err() == nil {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the hook's program did not run: %v", err)
	}
}

func TestProcLoadavg(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg on this system")
	}
	if l, err := ProcLoadavg(); err != nil || l < 0 {
		t.Errorf("ProcLoadavg = %v, %v", l, err)
	}
}
