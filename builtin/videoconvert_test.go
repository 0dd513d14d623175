package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/video/y4m"
)

// Decoding what the video builtins cannot take (issue 31): RGB from PNG
// and screen captures, 10 bits from phones. These run the real ffmpeg.

// needFFmpeg skips t without ffmpeg and ffprobe: the conversion is
// theirs, there is nothing to check without them.
func needFFmpeg(t *testing.T) {
	t.Helper()
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not on PATH: decode's conversion is ffmpeg's", p)
		}
	}
}

// ffmpegMake runs ffmpeg in dir to make name from a 64x48 test picture,
// 5 frames at 5 a second, with the encoding arguments enc; false when
// this ffmpeg cannot (an encoder left out of its build).
func ffmpegMake(t *testing.T, dir, name string, enc ...string) bool {
	t.Helper()
	args := append([]string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-frames", "5"}, enc...)
	cmd := exec.Command("ffmpeg", append(args, name)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("ffmpeg %s: %v: %s", strings.Join(enc, " "), err, out)
		return false
	}
	return true
}

// checkY4M checks that recs are a y4m stream of n 64x48 8-bit frames in
// chroma ("4:2:0", "4:4:4", ...), alpha if planes is 4.
func checkY4M(t *testing.T, what string, recs [][]byte, n int, chroma string, planes int) {
	t.Helper()
	if len(recs) != n+1 {
		t.Fatalf("%s: %d records, want %d", what, len(recs), n+1)
	}
	h, err := y4m.ParseHeader(recs[0])
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	l, err := h.Layout()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if l.Width != 64 || l.Height != 48 || l.Depth != 8 || l.Chroma != chroma || l.Planes != planes {
		t.Errorf("%s: %s, %d planes; want 64x48 %s 8-bit, %d planes", what, l, l.Planes, chroma, planes)
	}
	for i, rec := range recs[1:] {
		if _, _, err := y4m.SplitFrame(rec, l); err != nil {
			t.Errorf("%s: frame %d: %v", what, i+1, err)
		}
	}
}

func TestDecodeConverts(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		enc    []string
		note   string // "" for none: the source is taken as it is
		chroma string
		planes int
	}{
		{"rgb.mkv", []string{"-pix_fmt", "rgb24", "-c:v", "ffv1"},
			"decode: rgb.mkv: bgr0 converted to 8-bit 4:4:4 (yuv444p) for the video builtins; --pix-fmt FMT asks for another\n", "4:4:4", 3},
		{"png.mkv", []string{"-pix_fmt", "rgb24", "-c:v", "png"},
			"decode: png.mkv: rgb24 converted to 8-bit 4:4:4 (yuv444p) for the video builtins; --pix-fmt FMT asks for another\n", "4:4:4", 3},
		{"gbrp.mkv", []string{"-pix_fmt", "gbrp", "-c:v", "ffv1"}, "converted to 8-bit 4:4:4 (yuv444p)", "4:4:4", 3},
		{"ten.mkv", []string{"-pix_fmt", "yuv420p10le", "-c:v", "ffv1"},
			"decode: ten.mkv: yuv420p10le converted to 8-bit 4:2:0 (yuv420p) for the video builtins; --pix-fmt yuv420p10le keeps it, for other programs\n", "4:2:0", 1 + 2},
		{"ten422.mkv", []string{"-pix_fmt", "yuv422p10le", "-c:v", "ffv1"}, "yuv422p10le converted to 8-bit 4:2:2 (yuv422p)", "4:2:2", 3},
		{"ten265.mp4", []string{"-pix_fmt", "yuv420p10le", "-c:v", "libx265", "-x265-params", "log-level=error"},
			"yuv420p10le converted to 8-bit 4:2:0 (yuv420p)", "4:2:0", 3},
		{"rgba.mov", []string{"-pix_fmt", "rgba", "-c:v", "png"}, "rgba converted to 8-bit 4:4:4 with alpha (yuva444p)", "4:4:4", 4},
		{"y422.mkv", []string{"-pix_fmt", "yuv422p", "-c:v", "ffv1"}, "", "4:2:2", 3},
		{"y444.mkv", []string{"-pix_fmt", "yuv444p", "-c:v", "ffv1"}, "", "4:4:4", 3},
		{"y420.mp4", []string{"-pix_fmt", "yuv420p"}, "", "4:2:0", 3},
	} {
		if testing.Short() && strings.Contains(strings.Join(tc.enc, " "), "libx265") {
			continue // seconds of x265's start
		}
		if !ffmpegMake(t, dir, tc.name, tc.enc...) {
			if strings.Contains(strings.Join(tc.enc, " "), "libx265") {
				continue // not every ffmpeg has it
			}
			t.Fatalf("%s: ffmpeg cannot make it", tc.name)
		}
		recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", tc.name})
		if res.code != 0 {
			t.Errorf("decode %s: status %d, %q", tc.name, res.code, res.err)
			continue
		}
		checkY4M(t, "decode "+tc.name, recs, 5, tc.chroma, tc.planes)
		switch {
		case tc.note == "" && res.err != "":
			t.Errorf("decode %s: stderr %q, want nothing", tc.name, res.err)
		case tc.note != "" && (strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, tc.note) || !strings.HasPrefix(res.err, "decode: "+tc.name+": ")):
			t.Errorf("decode %s: stderr %q, want one line with %q", tc.name, res.err, tc.note)
		}
	}
}

func TestDecodePictures(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	ffmpegMake(t, dir, "frame%03d.png", "-pix_fmt", "rgba")
	ffmpegMake(t, dir, "one.jpg", "-frames", "1")
	for _, tc := range []struct {
		name   string
		n      int
		note   string
		chroma string
		planes int
	}{
		{"frame%03d.png", 5, "decode: frame%03d.png: rgba converted to 8-bit 4:4:4 with alpha (yuva444p)", "4:4:4", 4},
		{"frame002.png", 1, "decode: frame002.png: rgba converted", "4:4:4", 4},
		{"one.jpg", 1, "", "4:4:4", 3}, // yuvj444p, taken as it is
	} {
		recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", tc.name})
		if res.code != 0 {
			t.Errorf("decode %s: status %d, %q", tc.name, res.code, res.err)
			continue
		}
		checkY4M(t, "decode "+tc.name, recs, tc.n, tc.chroma, tc.planes)
		if (tc.note == "") != (res.err == "") || !strings.HasPrefix(res.err, tc.note) || strings.Count(res.err, "\n") > 1 {
			t.Errorf("decode %s: stderr %q, want %q", tc.name, res.err, tc.note)
		}
	}
	_, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "none%03d.png"})
	if res.code != 1 || res.err != "decode: none%03d.png: ffmpeg exited with status 1: No such file or directory\n" {
		t.Errorf("decode of no pictures: status %d, %q", res.code, res.err)
	}
}

// TestDecodeStabilizeEncode is the pipeline: an RGB or 10-bit clip
// through stabilize to each kind of output.
func TestDecodeStabilizeEncode(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	ffmpegMake(t, dir, "rgb.mkv", "-pix_fmt", "rgb24", "-c:v", "ffv1")
	ffmpegMake(t, dir, "ten.mkv", "-pix_fmt", "yuv420p10le", "-c:v", "ffv1")
	for in, outs := range map[string][]string{
		"rgb.mkv": {"out.y4m", "out.mp4", "out.webm", "seq%02d.png"},
		"ten.mkv": {"out.y4m", "out.mkv"},
	} {
		for _, out := range outs {
			os.Remove(filepath.Join(dir, out))
			_, res := videoRun(t, dir, nil, 64<<10, []string{"decode", in}, []string{"stabilize", "-w", "3"}, []string{"encode", out})
			if res.code != 0 || strings.Count(res.err, "\n") != 1 || !strings.HasPrefix(res.err, "decode: "+in+": ") {
				t.Errorf("decode %s | stabilize | encode %s: status %d, stderr %q; want 0 and decode's note", in, out, res.code, res.err)
				continue
			}
			recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "--pix-fmt", "yuv444p", out})
			if res.code != 0 {
				t.Errorf("decode %s: status %d, %q", out, res.code, res.err)
				continue
			}
			checkY4M(t, in+" to "+out, recs, 5, "4:4:4", 3)
		}
	}
}

func TestDecodePixFmt(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	ffmpegMake(t, dir, "ten.mkv", "-pix_fmt", "yuv420p10le", "-c:v", "ffv1")
	ffmpegMake(t, dir, "ten.y4m", "-pix_fmt", "yuv420p10le", "-strict", "-1")

	// --pix-fmt keeps the 10 bits, and says nothing: it was asked for.
	recs, res := videoRun(t, dir, nil, 64<<10, []string{"decode", "--pix-fmt", "yuv420p10le", "ten.mkv"})
	if res.code != 0 || res.err != "" || len(recs) != 6 || !strings.Contains(string(recs[0]), " C420p10 ") {
		t.Errorf("--pix-fmt yuv420p10le: status %d, %q, %d records", res.code, res.err, len(recs))
	}
	// A 10-bit y4m is read as it is, and stabilize says what to do ...
	_, res = videoRun(t, dir, nil, 64<<10, []string{"decode", "ten.y4m"}, []string{"stabilize"})
	want := "stabilize: 64x48 4:2:0 10-bit: only 8-bit video is supported; decode --pix-fmt yuv420p FILE converts it (with ffmpeg)\n"
	if res.code != 1 || res.err != want {
		t.Errorf("10-bit y4m to stabilize: status %d, %q; want 1, %q", res.code, res.err, want)
	}
	// ... which works.
	recs, res = videoRun(t, dir, nil, 64<<10, []string{"decode", "--pix-fmt", "yuv420p", "ten.y4m"}, []string{"stabilize", "-w", "3"})
	if res.code != 0 || res.err != "" {
		t.Fatalf("decode --pix-fmt yuv420p ten.y4m | stabilize: status %d, %q", res.code, res.err)
	}
	checkY4M(t, "ten.y4m converted", recs, 5, "4:2:0", 3)

	for _, tc := range []struct {
		argv []string
		err  string
	}{
		{[]string{"decode", "--pix-fmt", "rgb24", "ten.mkv"}, "decode: --pix-fmt 'rgb24': y4m does not hold it; want one of yuv420p, "},
		{[]string{"decode", "--pix-fmt", "yuv420p"}, "decode: --pix-fmt needs a FILE operand: ffmpeg converts files, not the input\n"},
	} {
		_, res := videoRun(t, dir, nil, 64<<10, tc.argv)
		if res.code != 2 || !strings.HasPrefix(res.err, tc.err) || strings.Count(res.err, "\n") != 1 {
			t.Errorf("%q: status %d, %q; want 2, %q", tc.argv, res.code, res.err, tc.err)
		}
	}
}

// TestVideoFFmpegErrors: what ffmpeg fails on comes out as one line of
// decode's or encode's, in words that say what to do where they can.
func TestVideoFFmpegErrors(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	ffmpegMake(t, dir, "in.y4m", "-pix_fmt", "yuv420p")
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine", "-t", "0.2", "sound.mka")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "junk.mkv"), []byte("junk\n"), 0o666)
	for _, tc := range []struct {
		argv []string
		code int
		err  string // a regexp of the whole of stderr
	}{
		{[]string{"decode", "missing.mkv"}, 1, `decode: missing.mkv: No such file or directory`},
		{[]string{"decode", "sound.mka"}, 1, `decode: sound.mka: no video stream`},
		// Fixed bug: ffmpeg's first line was a warning ("Truncating packet of size ...").
		{[]string{"decode", "junk.mkv"}, 1, `decode: junk.mkv: ffmpeg exited with status 1: Invalid data found when processing input`},
		// Fixed bugs: both wrote y4m under a name that said otherwise.
		{[]string{"encode", "out.png"}, 2, `encode: out.png: a png file holds one picture: name a numbered sequence \(out%04d.png\) or a video \(.mp4, .mkv\)`},
		{[]string{"encode", "out.xyz"}, 2, `encode: out.xyz: no video format is known by the extension '.xyz': .*-f FORMAT.*`},
	} {
		_, res := videoRun(t, dir, nil, 64<<10, tc.argv)
		if res.code != tc.code || !regexp.MustCompile(`^`+tc.err+"\n$").MatchString(res.err) {
			t.Errorf("%q: status %d, %q; want %d, %q", tc.argv, res.code, res.err, tc.code, tc.err)
		}
	}
	// Without an extension, and with -f, any name is written.
	src, _ := os.ReadFile(filepath.Join(dir, "in.y4m"))
	for _, argv := range [][]string{{"encode", "plain"}, {"encode", "-f", "y4m", "out.part"}} {
		_, res := videoRun(t, dir, src, 64<<10, []string{"decode"}, argv)
		got, _ := os.ReadFile(filepath.Join(dir, argv[len(argv)-1]))
		if res.code != 0 || string(got) != string(src) {
			t.Errorf("%q: status %d, %q; same bytes: %v", argv, res.code, res.err, string(got) == string(src))
		}
	}
}
