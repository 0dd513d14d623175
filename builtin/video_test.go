package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/internal/synth"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/stab"
)

// videoResult is what a video builtin did: its output records, stderr and
// exit status.
type videoResult struct {
	out  [][]byte
	err  string
	code int
	// The run's B, and the most buffers that were out of FREE at once.
	buffers, highWater int
}

// runVideo runs argv on the records recs (a y4m stream, or anything) with
// a record size that fits the largest, through the real scheduler.
func runVideo(t testing.TB, env *builtin.Env, argv []string, recs [][]byte) videoResult {
	t.Helper()
	var stderr bytes.Buffer
	if env == nil {
		env = &builtin.Env{}
	}
	env.Stderr = &stderr
	c, err := builtin.New(env, argv)
	var ue *builtin.UsageError
	if errors.As(err, &ue) {
		return videoResult{err: ue.Error() + "\n", code: 2}
	}
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	size := 1 << 16
	for _, r := range recs {
		size = max(size, len(r)+256)
	}
	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records(recs...))
	me := g.Add(c.Name, 1, 1, c.Fn)
	g.Tasks[me].Holds = c.Holds
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, me, 0, 2)
	g.Connect(me, 0, sink, 0, 2)
	st, err := sched.Run(context.Background(), g, sched.Options{RecordSize: size})
	res := videoResult{out: out, err: stderr.String()}
	if st != nil {
		res.highWater, res.buffers = st.BuffersHighWater, st.Buffers
	}
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

// frames checks that recs is a y4m stream of layout l and returns its
// frames' planes.
func frames(t *testing.T, l stab.Layout, header []byte, recs [][]byte) [][]byte {
	t.Helper()
	if len(recs) == 0 || !bytes.Equal(recs[0], header) {
		t.Fatalf("output does not start with the header %q", header)
	}
	var fs [][]byte
	for i, r := range recs[1:] {
		data, ok := bytes.CutPrefix(r, []byte("FRAME\n"))
		if !ok || len(data) != l.FrameSize() {
			t.Fatalf("frame %d: %d bytes, want FRAME and %d", i+1, len(r), l.FrameSize())
		}
		fs = append(fs, data)
	}
	return fs
}

func meterOf(l stab.Layout, fs [][]byte) shake.Result {
	m := shake.NewMeter(l.W, l.H)
	for _, f := range fs {
		m.Add(l.Plane(f, 0))
	}
	return m.Result()
}

func TestStabilizeStream(t *testing.T) {
	l := stab.Layout{W: 192, H: 144, Chroma: stab.C420}
	clip := synth.NewShaky(l, 40, 1, 2, 0.2, 1, 8)
	for _, argv := range [][]string{
		{"stabilize"},
		{"stabilize", "-w", "8", "-s", "3"},
		{"stabilize", "--window=10", "--max-shift", "6", "--max-angle", "2", "--zoom", "5"},
		{"stabilize", "-w", "5", "--borders", "black"},
		{"stabilize", "-w", "60"}, // a window longer than the clip
	} {
		res := runVideo(t, nil, argv, clip.Records())
		if res.code != 0 || res.err != "" {
			t.Fatalf("%q: status %d, %q", argv, res.code, res.err)
		}
		fs := frames(t, l, synth.Header(l), res.out)
		if len(fs) != len(clip.Frames) {
			t.Errorf("%q: %d frames out of %d", argv, len(fs), len(clip.Frames))
		}
		before, after := meterOf(l, clip.Frames), meterOf(l, fs)
		if after.Mean > before.Mean/4 {
			t.Errorf("%q: jitter %.3f px before, %.3f after", argv, before.Mean, after.Mean)
		}
	}
}

// stabilize keeps its lookahead in the pool: the frames of its window
// are pool buffers (the run's high-water mark covers them), within the B
// that counts them.
func TestStabilizeKeepsItsWindowInThePool(t *testing.T) {
	// Frames of over 64 KiB: one to a buffer.
	l := stab.Layout{W: 256, H: 192, Chroma: stab.C420}
	clip := synth.NewShaky(l, 30, 1, 2, 0.2, 1, 4)
	res := runVideo(t, nil, []string{"stabilize", "-w", "12"}, clip.Records())
	if res.code != 0 || res.err != "" {
		t.Fatalf("status %d, %q", res.code, res.err)
	}
	// Two queues of capacity 2, and the 12 frames stabilize keeps.
	if res.buffers != 2+12+2 {
		t.Errorf("B = %d, want 16: the queues' 4 and the 12 kept frames", res.buffers)
	}
	if res.highWater < 13 || res.highWater > res.buffers {
		t.Errorf("%d buffers out of FREE at most, want 13 (the window and the frame read) to B = %d", res.highWater, res.buffers)
	}
}

// The FRAME line of each frame goes out with that frame, parameters and
// all, though the frame comes out a window later.
func TestStabilizeKeepsFrameLines(t *testing.T) {
	l := stab.Layout{W: 64, H: 48, Chroma: stab.Mono}
	clip := synth.NewShaky(l, 7, 0, 0, 0, 0, 1)
	recs := [][]byte{synth.Header(l)}
	for i, f := range clip.Frames {
		recs = append(recs, append([]byte("FRAME Xn="+string(rune('0'+i))+"\n"), f...))
	}
	res := runVideo(t, nil, []string{"stabilize", "-w", "3", "-s", "1"}, recs)
	if res.code != 0 || len(res.out) != len(recs) {
		t.Fatalf("status %d, %d records out of %d; %s", res.code, len(res.out), len(recs), res.err)
	}
	for i := 1; i < len(recs); i++ {
		want := string(recs[i][:bytes.IndexByte(recs[i], '\n')])
		if got := string(res.out[i][:bytes.IndexByte(res.out[i], '\n')]); got != want {
			t.Errorf("record %d: %q, want %q", i, got, want)
		}
	}
}

func TestVideoErrorsAreOneLine(t *testing.T) {
	l := stab.Layout{W: 32, H: 16, Chroma: stab.C420}
	frame := make([]byte, l.FrameSize())
	hdr := synth.Header(l)
	cases := []struct {
		argv []string
		recs [][]byte
		code int
		err  string
	}{
		{[]string{"stabilize"}, [][]byte{[]byte("hello\n")}, 1, `stabilize: input is not a y4m stream (it starts "hello\n")`},
		{[]string{"stabilize"}, nil, 1, "stabilize: empty input: want a y4m stream"},
		{[]string{"stabilize"}, [][]byte{hdr, []byte("FRAME\nabc")}, 1, "stabilize: frame 1: 3 bytes of picture, want 768 for 32x16 420"},
		{[]string{"stabilize"}, [][]byte{hdr, append([]byte("FRAMES\n"), frame...)}, 1, "stabilize: frame 1: no FRAME line"},
		{[]string{"stabilize"}, [][]byte{[]byte("YUV4MPEG2 W32 H16 C420p10\n")}, 1, "stabilize: 32x16 4:2:0 10-bit: only 8-bit video is supported; decode --pix-fmt yuv420p FILE converts it (with ffmpeg)"},
		{[]string{"stabilize"}, [][]byte{[]byte("YUV4MPEG2 W32 H16 C444p12\n")}, 1, "stabilize: 32x16 4:4:4 12-bit: only 8-bit video is supported; decode --pix-fmt yuv444p FILE converts it (with ffmpeg)"},
		{[]string{"stabilize", "-w", "0"}, nil, 2, "stabilize: invalid window '0': want 1 to 300 frames"},
		{[]string{"stabilize", "-w", "x"}, nil, 2, "stabilize: invalid window 'x': want 1 to 300 frames"},
		{[]string{"stabilize", "-w", "10", "-s", "20"}, nil, 2, "stabilize: strength 20 is more than the window (10 frames)"},
		{[]string{"stabilize", "--max-shift", "60"}, nil, 2, "stabilize: invalid largest shift '60': want a number from 0 to 49"},
		{[]string{"stabilize", "--max-angle", "-1"}, nil, 2, "stabilize: invalid largest angle '-1': want a number from 0 to 45"},
		{[]string{"stabilize", "--borders", "red"}, nil, 2, "stabilize: invalid borders 'red': want zoom, black or fill"},
		{[]string{"stabilize", "--zoom", "big"}, nil, 2, "stabilize: invalid zoom 'big': want a number from 0 to 300"},
		{[]string{"stabilize", "f"}, nil, 2, "stabilize: extra operand 'f': stabilize reads its input"},
	}
	for _, c := range cases {
		res := runVideo(t, nil, c.argv, c.recs)
		if res.code != c.code || res.err != c.err+"\n" {
			t.Errorf("%q on %q: status %d, %q; want %d, %q", c.argv, c.recs, res.code, res.err, c.code, c.err)
		}
		if strings.Count(res.err, "\n") != 1 {
			t.Errorf("%q: %d lines of error", c.argv, strings.Count(res.err, "\n"))
		}
	}
}

func TestShakeOnKnownJitter(t *testing.T) {
	l := stab.Layout{W: 160, H: 120, Chroma: stab.C420}
	still := synth.NewShaky(l, 30, 1, 0, 0, 1, 4)
	shaky := synth.NewShaky(l, 30, 1, 2, 0, 1, 4)
	path := func(c *synth.Shaky) shake.Result {
		p := make([]complex128, len(c.Path))
		for i, s := range c.Path {
			p[i] = complex(s.Dx, s.Dy)
		}
		return shake.Measure(p)
	}
	want := path(shaky)
	res := runVideo(t, nil, []string{"shake"}, shaky.Records())
	var frames int
	var mean, p95 float64
	if _, err := fmt.Sscanf(string(bytes.Join(res.out, nil)), "%d frames, jitter mean %g px, p95 %g px\n", &frames, &mean, &p95); err != nil || res.code != 0 {
		t.Fatalf("shake: %q, status %d, %q: %v", res.out, res.code, res.err, err)
	}
	if frames != 30 || math.Abs(mean-want.Mean) > 0.05+0.05*want.Mean || math.Abs(p95-want.P95) > 0.1+0.05*want.P95 {
		t.Errorf("shake: %d frames, mean %.3f, p95 %.3f; the path has 30, %.3f, %.3f", frames, mean, p95, want.Mean, want.P95)
	}
	for _, c := range []struct {
		clip *synth.Shaky
		argv []string
		code int
	}{
		{shaky, []string{"shake", "-q", "-t", "1"}, 0},
		{shaky, []string{"shake", "-q", "-t", "10"}, 1},
		{still, []string{"shake", "-q", "-t", "0.5"}, 1},
		{still, []string{"shake", "-qt0.5"}, 1},
	} {
		res := runVideo(t, nil, c.argv, c.clip.Records())
		if res.code != c.code || len(res.out) != 0 || res.err != "" {
			t.Errorf("%q: status %d, %q, %q; want status %d and nothing said", c.argv, res.code, res.out, res.err, c.code)
		}
	}
}

func TestShakeFile(t *testing.T) {
	dir := t.TempDir()
	l := stab.Layout{W: 64, H: 48, Chroma: stab.C422}
	clip := synth.NewShaky(l, 5, 0, 0, 0, 0, 2)
	if err := os.WriteFile(filepath.Join(dir, "a.y4m"), bytes.Join(clip.Records(), nil), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("hello\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	env := &builtin.Env{Open: func(n string) (io.ReadCloser, error) { return os.Open(filepath.Join(dir, n)) }}
	res := runVideo(t, env, []string{"shake", "a.y4m"}, nil)
	if got := string(bytes.Join(res.out, nil)); res.code != 0 || got != "a.y4m: 5 frames, jitter mean 0.000 px, p95 0.000 px\n" {
		t.Errorf("shake a.y4m: status %d, %q, %q", res.code, got, res.err)
	}
	for _, c := range []struct{ argv, err string }{
		{"shake b.txt", "shake: b.txt: not a y4m stream\n"},
		{"shake nope", "shake: nope: No such file or directory\n"},
		{"shake a b", "shake: extra operand 'b': shake measures one stream\n"},
		{"shake -t x", "shake: invalid threshold 'x': want pixels, 0 or more\n"},
	} {
		res := runVideo(t, env, strings.Fields(c.argv), nil)
		if res.err != c.err || res.code == 0 {
			t.Errorf("%s: status %d, %q; want %q", c.argv, res.code, res.err, c.err)
		}
	}
}

func TestWatermarkBlendsAtKnownPixels(t *testing.T) {
	dir := t.TempDir()
	img := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	for _, p := range []struct {
		x, y int
		c    color.NRGBA
	}{
		{0, 0, color.NRGBA{255, 255, 255, 255}},
		{1, 0, color.NRGBA{255, 0, 0, 255}},
		{2, 0, color.NRGBA{0, 0, 0, 0}},
		{3, 0, color.NRGBA{0, 0, 0, 128}},
		{0, 1, color.NRGBA{0, 0, 255, 255}},
		{1, 1, color.NRGBA{0, 255, 0, 255}},
		{2, 1, color.NRGBA{128, 128, 128, 255}},
		{3, 1, color.NRGBA{255, 255, 255, 0}},
	} {
		img.SetNRGBA(p.x, p.y, p.c)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "logo.png"), buf.Bytes(), 0o666)
	os.WriteFile(filepath.Join(dir, "not.png"), []byte("GIF89a, not a PNG"), 0o666)
	os.WriteFile(filepath.Join(dir, "cut.png"), buf.Bytes()[:40], 0o666)
	env := func() *builtin.Env {
		return &builtin.Env{Open: func(n string) (io.ReadCloser, error) { return os.Open(filepath.Join(dir, n)) }}
	}
	gray := func(l stab.Layout) [][]byte {
		f := make([]byte, l.FrameSize())
		for i := range f {
			f[i] = 128
		}
		copy(f, bytes.Repeat([]byte{100}, l.W*l.H))
		return [][]byte{synth.Header(l), synth.Record(f), synth.Record(f)}
	}
	type px struct {
		plane, x, y int
		want        byte
	}
	for _, c := range []struct {
		l    stab.Layout
		argv []string
		px   []px
	}{
		{stab.Layout{W: 8, H: 4, Chroma: stab.C444}, []string{"watermark", "logo.png", "-x", "2", "-y", "1"}, []px{
			{0, 2, 1, 235}, {1, 2, 1, 128}, {2, 2, 1, 128}, // white
			{0, 3, 1, 81}, {1, 3, 1, 90}, {2, 3, 1, 240}, // red
			{0, 4, 1, 100}, {1, 4, 1, 128}, // transparent
			{0, 5, 1, 58},                                 // black at half alpha: (100*127 + 16*128)/255
			{0, 2, 2, 41}, {1, 2, 2, 240}, {2, 2, 2, 110}, // blue
			{0, 3, 2, 145}, {1, 3, 2, 54}, {2, 3, 2, 34}, // green
			{0, 4, 2, 126},                                 // mid grey: 16 + 219*128/255
			{0, 5, 2, 100}, {0, 1, 1, 100}, {0, 2, 0, 100}, // outside or transparent
		}},
		{stab.Layout{W: 8, H: 4, Chroma: stab.C444}, []string{"watermark", "--opacity", "0.5", "logo.png", "-x2", "-y1"}, []px{
			{0, 2, 1, 168}, // white at half: (100*127 + 235*128)/255
		}},
		{stab.Layout{W: 8, H: 4, Chroma: stab.C444}, []string{"watermark", "logo.png", "-x", "-1", "-y", "-1"}, []px{
			{0, 3, 1, 235}, {0, 3, 2, 41},
		}},
		// 4:2:0: chroma sample (1, 0) covers luma (2..3, 0..1), where
		// only white and red are: half alpha, Cb the mean of 128 and 90.
		{stab.Layout{W: 8, H: 4, Chroma: stab.C420}, []string{"watermark", "logo.png", "-x", "2", "-y", "1"}, []px{
			{0, 3, 1, 81}, {1, 1, 0, 118}, {1, 0, 0, 128}, {1, 3, 0, 128},
		}},
		// 4:1:1: chroma sample (0, 1) covers luma (0..3, 1), where white
		// and red are: half alpha, Cb the mean of 128 and 90, as above.
		{stab.Layout{W: 8, H: 4, Chroma: stab.C411}, []string{"watermark", "logo.png", "-x", "2", "-y", "1"}, []px{
			{0, 3, 1, 81}, {1, 0, 1, 118}, {1, 1, 1, 128},
		}},
		// An alpha plane gets the image over it: opaque where it is.
		{stab.Layout{W: 8, H: 4, Chroma: stab.C444Alpha}, []string{"watermark", "logo.png", "-x", "2", "-y", "1"}, []px{
			{0, 2, 1, 235}, {3, 2, 1, 255}, {3, 4, 1, 128}, {3, 5, 1, 192}, {3, 0, 0, 128},
		}},
	} {
		res := runVideo(t, env(), c.argv, gray(c.l))
		if res.code != 0 || res.err != "" {
			t.Fatalf("%q: status %d, %q", c.argv, res.code, res.err)
		}
		fs := frames(t, c.l, synth.Header(c.l), res.out)
		if len(fs) != 2 {
			t.Fatalf("%q: %d frames", c.argv, len(fs))
		}
		for _, p := range c.px {
			if got := c.l.Plane(fs[1], p.plane).At(p.x, p.y); got != p.want {
				t.Errorf("%q %v: plane %d (%d, %d) = %d, want %d", c.argv, c.l.Chroma, p.plane, p.x, p.y, got, p.want)
			}
		}
	}
	l := stab.Layout{W: 8, H: 4, Chroma: stab.Mono}
	if res := runVideo(t, env(), []string{"watermark", "logo.png", "-x", "100"}, gray(l)); !bytes.Equal(bytes.Join(res.out, nil), bytes.Join(gray(l), nil)) {
		t.Errorf("an image off the frame changed it")
	}
	for _, c := range []struct{ argv, err string }{
		{"watermark", "watermark: missing IMAGE.png operand"},
		{"watermark a.png b.png", "watermark: extra operand 'b.png': watermark takes one image"},
		{"watermark logo.png --opacity 2", "watermark: invalid opacity '2': want a number from 0 to 1"},
		{"watermark logo.png -x 1.5", "watermark: invalid position -x '1.5': want whole pixels"},
		{"watermark nope.png", "watermark: nope.png: No such file or directory"},
		{"watermark not.png", "watermark: not.png: not a PNG image"},
		{"watermark cut.png", "watermark: cut.png: bad PNG image: unexpected EOF"},
	} {
		res := runVideo(t, env(), strings.Fields(c.argv), gray(l))
		if res.err != c.err+"\n" || res.code == 0 {
			t.Errorf("%s: status %d, %q; want %q", c.argv, res.code, res.err, c.err)
		}
	}
}
