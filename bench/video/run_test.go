package video

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/video/shake"
)

func TestCheckRefusesOtherStreams(t *testing.T) {
	c := ClipSpec{W: 96, H: 64, Frames: 3, Seed: 1}
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	clip := buf.Bytes()
	frame := len("FRAME\n") + c.Layout().FrameSize()
	for _, tt := range []struct {
		name string
		spec ClipSpec
		data []byte
		want string
	}{
		{"another size", ClipSpec{W: 98, H: 64, Frames: 3}, clip, "want 98x64 4:2:0 8-bit"},
		{"a frame short", c, clip[:len(clip)-frame], "2 frames, want 3"},
		{"a frame more", ClipSpec{W: 96, H: 64, Frames: 4}, clip, "3 frames, want 4"},
		{"4:4:4", c, []byte("YUV4MPEG2 W96 H64 C444\n"), "want 96x64 4:2:0"},
		{"not y4m", c, []byte("hello\n"), "y4m"},
	} {
		err := tt.spec.Check(bytes.NewReader(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// fake builds a result of n runs of wall seconds and rss MiB each.
func fake(tool string, c *clip, wall float64, rssMiB int64, mean float64) result {
	r := result{cell: cell{tool, c}, shake: shake.Result{Frames: c.spec.Frames, Mean: mean, P95: 2 * mean}}
	for range 3 {
		r.samples = append(r.samples, sample{wall: time.Duration(wall * float64(time.Second)), cpu: time.Second, rss: rssMiB << 20})
	}
	return r
}

// The goal lines, from made-up runs: each goal met or not by the medians.
func TestGoals(t *testing.T) {
	short := &clip{size: P720, spec: ClipSpec{W: 1280, H: 720, Frames: 100}, in: shake.Result{Mean: 5}}
	sine := &clip{size: P720, spec: ClipSpec{W: 1280, H: 720, Frames: 100, Shake: Sine}, in: shake.Result{Mean: 1}}
	long := &clip{size: P720, long: true, spec: ClipSpec{W: 1280, H: 720, Frames: 300}}
	rep := report{
		cfg:   Config{Sizes: []Size{P720}, Frames: 100, Long: P720, LongFactor: 3, Shakes: []Shake{Sine}, Runs: 3},
		clips: []*clip{short, sine, long},
		results: []result{
			fake(ToolTpipe, sine, 2, 60, 0.05), // not the clip of the speed goals
			fake(ToolVidstab, sine, 2, 60, 0.3),
			fake(ToolTpipe, short, 1, 60, 0.2),   // 100 frames/s
			fake(ToolDeshake, short, 2.5, 60, 3), // 40: tpipe is 2.5x
			fake(ToolVidstab, short, 0.8, 60, 0.1),
			fake(ToolTpipe, long, 3, 61, 0),
		},
	}
	want := []string{
		"720p frames/s at least 2x deshake's: tpipe 100.0, deshake 40.0, 2.50x: **met**",
		"720p frames/s at least vid.stab's two passes together: tpipe 100.0, vidstab 125.0, 0.80x: **not met**",
		"720p residual jitter no worse than vid.stab's: tpipe 0.20 px (p95 0.40), vidstab 0.10 px (p95 0.20): **not met**",
		"720p sine residual jitter no worse than vid.stab's: tpipe 0.05 px (p95 0.10), vidstab 0.30 px (p95 0.60): **met**",
		"peak RSS flat with clip length (720p, 300 against 100 frames, within 10%): 61.0 against 60.0 MiB, 1.02x: **met**",
		"peak RSS under 256 MiB at 720p: at most 60.0 MiB over the runs: **met**",
	}
	got := rep.goals()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("goals:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var buf bytes.Buffer
	rep.write(&buf)
	for _, s := range []string{"| 720p | tpipe `decode | stabilize | encode` | 100.0 [100.0–100.0] | 1.00 | 60.0 [60.0–60.0] | 0.20 | 0.40 | 4% |",
		"| 720p sine | tpipe `decode | stabilize | encode` | 50.0 [50.0–50.0] | 0.50 | 60.0 [60.0–60.0] | 0.05 | 0.10 | 5% |",
		"| 300 | 396 | 100.0 [100.0–100.0] | 61.0 [61.0–61.0] |"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, buf.String())
		}
	}
}

func TestRunWithoutFFmpeg(t *testing.T) {
	cfg := QuickConfig()
	cfg.FFmpeg = ""
	t.Setenv("PATH", t.TempDir())
	if err := Run(context.Background(), cfg, t.TempDir(), new(bytes.Buffer)); !errors.Is(err, ErrNoFFmpeg) {
		t.Errorf("no ffmpeg on PATH: %v, want ErrNoFFmpeg", err)
	}
}

// The whole benchmark on tiny clips: tpipe built from this checkout and
// ffmpeg's two stabilizers run, their outputs checked and measured, the
// report written. Nothing is timed against a goal.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tpipe and runs ffmpeg")
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("no ffmpeg on PATH: the benchmark compares with its filters")
	}
	tiny := Size{"tiny", 256, 144}
	cfg := Config{Sizes: []Size{tiny}, Frames: 40, Long: tiny, LongFactor: 2, Runs: MinRuns, TmpDir: t.TempDir()}
	dir := t.TempDir()
	var out, progress bytes.Buffer
	cfg.Progress = &progress
	if err := Run(context.Background(), cfg, dir, &out); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	rep := out.String()
	if strings.Contains(rep, "failed:") {
		t.Errorf("a cell failed:\n%s", rep)
	}
	for _, s := range []string{"| tiny | tpipe", "| tiny | ffmpeg `-vf deshake`", "| 40 | ", "| 80 | ", dir + "/video.md"} {
		if !strings.Contains(rep, s) {
			t.Errorf("report lacks %q:\n%s", s, rep)
		}
	}
	t.Log(rep)
}
