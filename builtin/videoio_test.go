package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/y4m"
)

// video makes a y4m stream of n frames of a w x h picture in colour space
// c, every other frame with FRAME parameters.
func video(t testing.TB, w, h int, c string, n int) []byte {
	t.Helper()
	hd := y4m.Header{Width: w, Height: h, Rate: y4m.Ratio{Num: 25, Den: 1}, Interlace: 'p', Color: c}
	var b bytes.Buffer
	wr, err := y4m.NewWriter(&b, hd)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, wr.Layout().FrameSize())
	for i := range n {
		for k := range data {
			data[k] = byte(k + 3*i)
		}
		var params []byte
		if i%2 == 1 {
			params = []byte(" Ip")
		}
		if err := wr.WriteFrame(params, data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// videoRun runs the builtins of cmds as a chain, the first fed from
// stdin as lines (as the runner feeds a pipe), and returns the records
// that came out of the last, its stdout, stderr and status.
func videoRun(t *testing.T, dir string, stdin []byte, size int, cmds ...[]string) ([][]byte, result) {
	t.Helper()
	var stderr bytes.Buffer
	g := &graph.Graph{}
	prev := -1
	for _, argv := range cmds {
		env := &builtin.Env{Stderr: &stderr, TempDir: t.TempDir(), Dir: dir,
			Open: func(n string) (io.ReadCloser, error) { return os.Open(join(dir, n)) },
			Create: func(n string, _ bool) (io.WriteCloser, error) {
				return os.Create(join(dir, n))
			}}
		c, err := builtin.New(env, argv)
		var ue *builtin.UsageError
		if errors.As(err, &ue) {
			return nil, result{err: ue.Error() + "\n", code: 2}
		}
		if err != nil {
			t.Fatal(err)
		}
		in := 0
		if c.ReadsInput {
			in = 1
		}
		me := g.Add(c.Name, in, 1, c.Fn)
		g.Tasks[me].Holds = c.Holds // stabilize's lookahead
		switch {
		case !c.ReadsInput:
		case prev >= 0:
			g.Connect(prev, 0, me, 0, 2)
		default:
			src := g.Add("stdin", 0, 1, task.ReadFrom(bytes.NewReader(stdin), record.Lines))
			g.Connect(src, 0, me, 0, 2)
		}
		prev = me
	}
	var recs [][]byte
	var out bytes.Buffer
	sink := g.Add("collect", 1, 0, func(ctx context.Context, p *buffer.Ports) error {
		for {
			rec, err := p.In(0).Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			recs = append(recs, append([]byte(nil), rec...))
			out.Write(rec)
		}
	})
	g.Connect(prev, 0, sink, 0, 2)
	_, err := sched.Run(context.Background(), g, sched.Options{RecordSize: size})
	res := result{out: out.String(), err: stderr.String()}
	var ee *task.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.Code
	default:
		res.code = -1
		res.err += err.Error()
	}
	return recs, res
}

func TestDecodeRecords(t *testing.T) {
	dir := t.TempDir()
	src := video(t, 33, 17, "", 4)
	if err := os.WriteFile(filepath.Join(dir, "a.y4m"), src, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		argv  []string
		stdin []byte
	}{
		{"file", []string{"decode", "a.y4m"}, nil},
		{"input", []string{"decode"}, src},
		{"dash", []string{"decode", "-"}, src},
	} {
		recs, res := videoRun(t, dir, tc.stdin, 64<<10, tc.argv)
		if res.code != 0 || res.err != "" {
			t.Fatalf("%s: status %d: %s", tc.name, res.code, res.err)
		}
		if res.out != string(src) {
			t.Errorf("%s: the records are not the stream", tc.name)
		}
		frame := 33*17 + 2*17*9
		if len(recs) != 5 || string(recs[0]) != "YUV4MPEG2 W33 H17 F25:1 Ip\n" || len(recs[1]) != 6+frame || len(recs[2]) != 9+frame {
			t.Errorf("%s: %d records, first %q", tc.name, len(recs), recs[0])
		}
	}
}

func TestDecodeEncodeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"", "420mpeg2", "411", "422", "444", "444alpha", "mono", "420p10", "444p16", "mono12"} {
		for _, size := range [][2]int{{33, 17}, {1, 1}, {64, 36}} {
			src := video(t, size[0], size[1], c, 3)
			_, res := videoRun(t, dir, src, 64<<10, []string{"decode"}, []string{"encode"})
			if res.code != 0 || res.out != string(src) {
				t.Errorf("C%s %v: decode | encode: status %d, %s; same bytes: %v", c, size, res.code, res.err, res.out == string(src))
			}
		}
	}
	// encode FILE writes the stream to the file.
	src := video(t, 20, 10, "422", 2)
	_, res := videoRun(t, dir, src, 64<<10, []string{"decode"}, []string{"encode", "b.y4m"})
	got, _ := os.ReadFile(filepath.Join(dir, "b.y4m"))
	if res.code != 0 || res.out != "" || !bytes.Equal(got, src) {
		t.Errorf("encode b.y4m: status %d, %s; same bytes: %v", res.code, res.err, bytes.Equal(got, src))
	}
}

func TestDecodeErrors(t *testing.T) {
	dir := t.TempDir()
	src := video(t, 4, 2, "444", 3) // frames of 24 bytes
	hdr := len("YUV4MPEG2 W4 H2 F25:1 Ip C444\n")
	cut := src[:hdr+30+9+10]
	os.WriteFile(filepath.Join(dir, "cut.y4m"), cut, 0o666)
	os.WriteFile(filepath.Join(dir, "text.y4m"), []byte("hello\n"), 0o666)
	os.WriteFile(filepath.Join(dir, "bad.y4m"), []byte("YUV4MPEG2 W4 H2 Cfoo\n"), 0o666)
	for _, tc := range []struct {
		argv  []string
		stdin string
		out   string
		err   string
	}{
		{[]string{"decode", "cut.y4m"}, "", string(src[:hdr+30]), "decode: cut.y4m: frame 2: truncated: 10 of 24 bytes\n"},
		{[]string{"decode"}, string(cut), string(src[:hdr+30]), "decode: -: frame 2: truncated: 10 of 24 bytes\n"},
		{[]string{"decode", "text.y4m"}, "", "", `decode: text.y4m: not a y4m stream (it starts with "hello\n", not "YUV4MPEG2")` + "\n"},
		{[]string{"decode"}, "\x00\x00\x00 ftypisom", "", `decode: -: not a y4m stream (it starts with "\x00\x00\x00 ftypi", not "YUV4MPEG2")` + "\n"},
		{[]string{"decode"}, "", "", "decode: -: not a y4m stream (the input is empty)\n"},
		{[]string{"decode", "bad.y4m"}, "", "", "decode: bad.y4m: colour space Cfoo: not supported"},
		{[]string{"decode", "none.y4m"}, "", "", "decode: none.y4m: No such file or directory\n"},
	} {
		_, res := videoRun(t, dir, []byte(tc.stdin), 64<<10, tc.argv)
		if res.code != 1 || res.out != tc.out || !strings.HasPrefix(res.err, tc.err) || strings.Count(res.err, "\n") != 1 {
			t.Errorf("%q: status %d, %d bytes out, stderr %q; want 1, %d bytes, %q", tc.argv, res.code, len(res.out), res.err, len(tc.out), tc.err)
		}
	}
	_, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "a", "b"})
	if res.code != 2 || res.err != "decode: extra operand 'b'\n" {
		t.Errorf("two operands: %d %q", res.code, res.err)
	}
}

func TestEncodeChecks(t *testing.T) {
	dir := t.TempDir()
	frame := func(n int) string { return "FRAME\n" + strings.Repeat("x", n) }
	for _, tc := range []struct {
		recs []string
		out  string
		err  string
	}{
		{nil, "", ""}, // nothing in, nothing out
		{[]string{"FRAME\n"}, "", "encode: record 1: want the y4m header: not a y4m stream"},
		{[]string{"YUV4MPEG2 W2\n"}, "", "encode: record 1: want the y4m header: header: byte 12: no height (H)\n"},
		{[]string{"YUV4MPEG2 W2 H2 Cx\n"}, "", "encode: colour space Cx: not supported"},
		{[]string{"YUV4MPEG2 W2 H2\n", frame(6), frame(5)}, "YUV4MPEG2 W2 H2\n" + frame(6),
			"encode: frame 2: not a frame record: 5 bytes after its FRAME line, want 6 for 2x2 4:2:0\n"},
		{[]string{"YUV4MPEG2 W2 H2\n", "FRAMEx\n123456"}, "YUV4MPEG2 W2 H2\n", `encode: frame 1: not a frame record: it starts with "FRAMEx\n12345", want a FRAME line` + "\n"},
	} {
		g := &graph.Graph{}
		src := g.Add("src", 0, 1, func(ctx context.Context, p *buffer.Ports) error {
			for _, r := range tc.recs {
				if err := p.Out(0).Write([]byte(r)); err != nil {
					return err
				}
			}
			return nil
		})
		var stderr, stdout bytes.Buffer
		c, err := builtin.New(&builtin.Env{Stderr: &stderr, Dir: dir}, []string{"encode"})
		if err != nil {
			t.Fatal(err)
		}
		enc := g.Add("encode", 1, 1, c.Fn)
		sink := g.Add("out", 1, 0, task.WriteTo(&stdout, record.Lines))
		g.Connect(src, 0, enc, 0, 2)
		g.Connect(enc, 0, sink, 0, 2)
		_, err = sched.Run(context.Background(), g, sched.Options{RecordSize: 4096})
		code := 0
		var ee *task.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		} else if err != nil {
			t.Fatal(err)
		}
		wantCode := 0
		if tc.err != "" {
			wantCode = 1
		}
		if code != wantCode || stdout.String() != tc.out || !strings.HasPrefix(stderr.String(), tc.err) {
			t.Errorf("%q: status %d, out %q, stderr %q; want %d, %q, %q", tc.recs, code, stdout.String(), stderr.String(), wantCode, tc.out, tc.err)
		}
	}
	for _, argv := range [][]string{{"encode", "-f", "MP4"}, {"encode", "-f", "x;y"}, {"encode", "a", "b"}, {"encode", "-x"}} {
		_, res := videoRun(t, dir, nil, 4096, argv)
		if res.code != 2 {
			t.Errorf("%q: status %d, %q", argv, res.code, res.err)
		}
	}
}

func TestNeedSize(t *testing.T) {
	dir := t.TempDir()
	src := video(t, 1280, 720, "", 1)
	os.WriteFile(filepath.Join(dir, "hd.y4m"), src, 0o666)
	env := &builtin.Env{Open: func(n string) (io.ReadCloser, error) { return os.Open(join(dir, n)) }}
	c, _ := builtin.New(env, []string{"decode", "hd.y4m"})
	need, why := c.NeedSize(context.Background(), nil, "")
	if need != 1280*720*3/2+256 || why != "one 1280x720 4:2:0 frame (from hd.y4m's header)" {
		t.Errorf("file: %d, %q", need, why)
	}
	c, _ = builtin.New(env, []string{"decode"})
	need, why = c.NeedSize(context.Background(), bytes.NewReader(src), "stdin")
	if need != 1280*720*3/2+256 || why != "one 1280x720 4:2:0 frame (from stdin's header)" {
		t.Errorf("input: %d, %q", need, why)
	}
	if need, _ := c.NeedSize(context.Background(), strings.NewReader("text"), "stdin"); need != 0 {
		t.Errorf("text input: %d", need)
	}
}

// ffmpegVideo makes name in dir with ffmpeg: n frames of a w x h test
// picture.
func ffmpegVideo(t *testing.T, dir, name string, w, h, n int) {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=%dx%d:rate=5", w, h),
		"-frames", fmt.Sprint(n), "-pix_fmt", "yuv420p", filepath.Join(dir, name))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
}

func TestDecodeFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not on PATH")
	}
	dir := t.TempDir()
	ffmpegVideo(t, dir, "in.mp4", 64, 48, 5)
	recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "in.mp4"})
	if res.code != 0 || len(recs) != 6 || !strings.HasPrefix(string(recs[0]), "YUV4MPEG2 W64 H48 F5:1") || len(recs[1]) != 6+64*48*3/2 {
		t.Fatalf("decode in.mp4: status %d, %s, %d records", res.code, res.err, len(recs))
	}
	// A file without a telling extension is found out by its bytes.
	os.Rename(filepath.Join(dir, "in.mp4"), filepath.Join(dir, "in.bin"))
	if recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "in.bin"}); res.code != 0 || len(recs) != 6 {
		t.Errorf("decode in.bin: status %d, %s, %d records", res.code, res.err, len(recs))
	}
	env := &builtin.Env{Dir: dir, Open: func(n string) (io.ReadCloser, error) { return os.Open(join(dir, n)) }}
	c, _ := builtin.New(env, []string{"decode", "in.bin"})
	if need, why := c.NeedSize(context.Background(), nil, ""); need != 256+64*48*3/2 || why != "one 64x48 4:2:0 frame (from ffmpeg's decoding of in.bin)" {
		t.Errorf("NeedSize through ffmpeg: %d, %q", need, why)
	}
	// Garbage is ffmpeg's to refuse; its reason comes in one line of
	// decode's (fixed bug: ffmpeg's own line came first, then decode's).
	os.WriteFile(filepath.Join(dir, "junk.mp4"), []byte("junk"), 0o666)
	if _, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "junk.mp4"}); res.code != 1 || !strings.HasPrefix(res.err, "decode: junk.mp4: ffmpeg exited with status 1: ") || strings.Count(res.err, "\n") != 1 {
		t.Errorf("decode junk.mp4: status %d, %q", res.code, res.err)
	}
}

func TestEncodeFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not on PATH")
	}
	dir := t.TempDir()
	src := video(t, 64, 48, "", 4)
	for _, argv := range [][]string{{"encode", "out.mp4"}, {"encode", "-f", "matroska", "out.video"}} {
		_, res := videoRun(t, dir, src, 64<<10, []string{"decode"}, argv)
		if res.code != 0 || res.err != "" {
			t.Fatalf("%q: status %d, %s", argv, res.code, res.err)
		}
		recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", argv[len(argv)-1]})
		if res.code != 0 || len(recs) != 5 || !strings.HasPrefix(string(recs[0]), "YUV4MPEG2 W64 H48 F25:1") {
			t.Errorf("decode %s: status %d, %s, %d records, %q", argv[len(argv)-1], res.code, res.err, len(recs), recs[0])
		}
	}
	// To the output, through a temp file: the bytes are a matroska file.
	_, res := videoRun(t, dir, src, 64<<10, []string{"decode"}, []string{"encode", "-f", "matroska"})
	if res.code != 0 || !strings.HasPrefix(res.out, "\x1a\x45\xdf\xa3") {
		t.Errorf("encode -f matroska: status %d, %s, starts %q", res.code, res.err, res.out[:min(len(res.out), 8)])
	}
	// ffmpeg refuses: its status is reported.
	_, res = videoRun(t, dir, src, 64<<10, []string{"decode"}, []string{"encode", "-f", "nosuchformat", "x"})
	if res.code != 1 || res.err != "encode: x: ffmpeg exited with status 1: Requested output format 'nosuchformat' is not a suitable output format\n" {
		t.Errorf("encode -f nosuchformat: status %d, %q", res.code, res.err)
	}
}

func TestVideoWithoutFFmpeg(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	for _, tc := range []struct {
		argv []string
		err  string
	}{
		{[]string{"decode", "in.mp4"}, "decode: in.mp4: needs ffmpeg on PATH for mp4; install ffmpeg or give a .y4m file\n"},
		{[]string{"encode", "out.mkv"}, "encode: out.mkv: needs ffmpeg on PATH for mkv; install ffmpeg or give a .y4m file\n"},
		{[]string{"encode", "-f", "mp4"}, "encode: -: needs ffmpeg on PATH for mp4; install ffmpeg or give a .y4m file\n"},
	} {
		_, res := videoRun(t, dir, nil, 4096, tc.argv)
		if res.code != 2 || res.err != tc.err {
			t.Errorf("%q: status %d, %q; want 2, %q", tc.argv, res.code, res.err, tc.err)
		}
	}
	os.WriteFile(filepath.Join(dir, "in.bin"), []byte("\x00\x00\x00 ftypisom"), 0o666)
	_, res := videoRun(t, dir, nil, 4096, []string{"decode", "in.bin"})
	if want := `decode: in.bin: not a y4m stream (it starts with "\x00\x00\x00 ftypi", not "YUV4MPEG2"); other containers need ffmpeg on PATH` + "\n"; res.code != 1 || res.err != want {
		t.Errorf("in.bin: status %d, %q; want %q", res.code, res.err, want)
	}
}
