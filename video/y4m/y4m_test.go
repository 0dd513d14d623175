package y4m_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/video/y4m"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, line := range []string{
		"YUV4MPEG2 W33 H17 F5:1 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n",
		"YUV4MPEG2 W1 H1\n",
		"YUV4MPEG2 H720 W1280 C422p10 F30000:1001\n", // any order is kept
		"YUV4MPEG2 W2 H2 A0:0 F0:0 I?\n",
		"YUV4MPEG2 W2 Qfoo H2 Xa=1 Xa=1 Z\n", // unknown letters and repeated X tokens
	} {
		h, err := y4m.ParseHeader([]byte(line))
		if err != nil {
			t.Errorf("ParseHeader(%q): %v", line, err)
			continue
		}
		if got := h.String(); got != line {
			t.Errorf("round trip:\n got %q\nwant %q", got, line)
		}
		// Without its '\n' the line parses the same.
		h2, err := y4m.ParseHeader([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil || h2.String() != line {
			t.Errorf("ParseHeader without newline(%q) = %q, %v", line, h2.String(), err)
		}
	}
}

func TestHeaderFields(t *testing.T) {
	h, err := y4m.ParseHeader([]byte("YUV4MPEG2 W33 H17 F30000:1001 It A16:15 C444 XA=1 Kz"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Width != 33 || h.Height != 17 || h.Rate != (y4m.Ratio{Num: 30000, Den: 1001}) || h.Interlace != 't' ||
		h.Aspect != (y4m.Ratio{Num: 16, Den: 15}) || h.Color != "444" || fmt.Sprint(h.Extra) != "[XA=1 Kz]" {
		t.Errorf("fields: %+v", h)
	}
}

func TestHeaderByHand(t *testing.T) {
	h := y4m.Header{Width: 64, Height: 48, Rate: y4m.Ratio{Num: 25, Den: 1}, Interlace: 'p', Color: "mono", Extra: []string{"XFOO=1"}}
	want := "YUV4MPEG2 W64 H48 F25:1 Ip Cmono XFOO=1\n"
	if got := h.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A field set after parsing goes after the parsed tokens.
	p, _ := y4m.ParseHeader([]byte("YUV4MPEG2 W2 H2 Xz"))
	p.Color = "444"
	if got, want := p.String(), "YUV4MPEG2 W2 H2 Xz C444\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"", "y4m: not a y4m stream (the input is empty)"},
		{"\x00\x00\x00\x18ftypisom", `y4m: not a y4m stream (it starts with "\x00\x00\x00\x18ftypisom", not "YUV4MPEG2")`},
		{"YUV4MPEG W2 H2", "not a y4m stream"},
		{"YUV4MPEG2W2 H2", "byte 9: want a space before a parameter"},
		{"YUV4MPEG2 W2  H2", "byte 13: empty parameter"},
		{"YUV4MPEG2 W2 H2 ", "byte 16: empty parameter"},
		{"YUV4MPEG2 W0 H2", `byte 10: W: "0": want a number from 1 to 65536`},
		{"YUV4MPEG2 W-1 H2", "byte 10: W"},
		{"YUV4MPEG2 W02 H2", "byte 10: W"},
		{"YUV4MPEG2 W65537 H2", "byte 10: W"},
		{"YUV4MPEG2 W99999999999999999999 H2", "byte 10: W"},
		{"YUV4MPEG2 W2", "byte 12: no height (H)"},
		{"YUV4MPEG2 H2", "byte 12: no width (W)"},
		{"YUV4MPEG2 W2 H2 W3", "byte 16: parameter W given twice"},
		{"YUV4MPEG2 W2 H2 F25", `byte 16: F: "25": want N:D`},
		{"YUV4MPEG2 W2 H2 F25:0", "zero denominator"},
		{"YUV4MPEG2 W2 H2 Ix", "byte 16: I"},
		{"YUV4MPEG2 W2 H2 C", "byte 16: C: empty colour space"},
		{"YUV4MPEG2 W2 H2 X\x01", "byte 17: control byte"},
		{"YUV4MPEG2 W2 H2\n\n", "byte 15: control byte"},
		{"YUV4MPEG2 W2 H2 X" + strings.Repeat("a", 5000), "line longer than 4096 bytes"},
	} {
		_, err := y4m.ParseHeader([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseHeader(%.30q) = %v, want %q", tc.line, err, tc.want)
		}
	}
	_, err := y4m.ParseHeader([]byte("RIFF"))
	if !errors.Is(err, y4m.ErrNotY4M) {
		t.Errorf("not y4m: %v does not match ErrNotY4M", err)
	}
}

// layouts are every colour space with its 33x17 plane sizes (luma,
// chroma, alpha) and bytes per sample.
var layouts = []struct {
	c       string
	planes  int
	cw, ch  int
	bps     int
	pixfmt  string // ffmpeg's pix_fmt that writes it, "" if none
	chroma  string
	summary string
}{
	{"", 3, 17, 9, 1, "", "4:2:0", "33x17 4:2:0"},
	{"420jpeg", 3, 17, 9, 1, "yuv420p", "4:2:0", "33x17 4:2:0"},
	{"420paldv", 3, 17, 9, 1, "", "4:2:0", "33x17 4:2:0"},
	{"420mpeg2", 3, 17, 9, 1, "", "4:2:0", "33x17 4:2:0"},
	{"420", 3, 17, 9, 1, "", "4:2:0", "33x17 4:2:0"},
	{"411", 3, 9, 17, 1, "yuv411p", "4:1:1", "33x17 4:1:1"},
	{"422", 3, 17, 17, 1, "yuv422p", "4:2:2", "33x17 4:2:2"},
	{"444", 3, 33, 17, 1, "yuv444p", "4:4:4", "33x17 4:4:4"},
	{"444alpha", 4, 33, 17, 1, "yuva444p", "4:4:4", "33x17 4:4:4 with alpha"},
	{"mono", 1, 0, 0, 1, "gray", "mono", "33x17 mono"},
	{"mono9", 1, 0, 0, 2, "gray9le", "mono", "33x17 mono 9-bit"},
	{"mono10", 1, 0, 0, 2, "gray10le", "mono", "33x17 mono 10-bit"},
	{"mono12", 1, 0, 0, 2, "gray12le", "mono", "33x17 mono 12-bit"},
	{"mono16", 1, 0, 0, 2, "gray16le", "mono", "33x17 mono 16-bit"},
	{"420p9", 3, 17, 9, 2, "yuv420p9le", "4:2:0", "33x17 4:2:0 9-bit"},
	{"420p10", 3, 17, 9, 2, "yuv420p10le", "4:2:0", "33x17 4:2:0 10-bit"},
	{"420p12", 3, 17, 9, 2, "yuv420p12le", "4:2:0", "33x17 4:2:0 12-bit"},
	{"420p14", 3, 17, 9, 2, "yuv420p14le", "4:2:0", "33x17 4:2:0 14-bit"},
	{"420p16", 3, 17, 9, 2, "yuv420p16le", "4:2:0", "33x17 4:2:0 16-bit"},
	{"422p9", 3, 17, 17, 2, "yuv422p9le", "4:2:2", "33x17 4:2:2 9-bit"},
	{"422p10", 3, 17, 17, 2, "yuv422p10le", "4:2:2", "33x17 4:2:2 10-bit"},
	{"422p12", 3, 17, 17, 2, "yuv422p12le", "4:2:2", "33x17 4:2:2 12-bit"},
	{"422p14", 3, 17, 17, 2, "yuv422p14le", "4:2:2", "33x17 4:2:2 14-bit"},
	{"422p16", 3, 17, 17, 2, "yuv422p16le", "4:2:2", "33x17 4:2:2 16-bit"},
	{"444p9", 3, 33, 17, 2, "yuv444p9le", "4:4:4", "33x17 4:4:4 9-bit"},
	{"444p10", 3, 33, 17, 2, "yuv444p10le", "4:4:4", "33x17 4:4:4 10-bit"},
	{"444p12", 3, 33, 17, 2, "yuv444p12le", "4:4:4", "33x17 4:4:4 12-bit"},
	{"444p14", 3, 33, 17, 2, "yuv444p14le", "4:4:4", "33x17 4:4:4 14-bit"},
	{"444p16", 3, 33, 17, 2, "yuv444p16le", "4:4:4", "33x17 4:4:4 16-bit"},
}

func TestLayout(t *testing.T) {
	for _, tc := range layouts {
		h := y4m.Header{Width: 33, Height: 17, Color: tc.c}
		l, err := h.Layout()
		if err != nil {
			t.Errorf("C%s: %v", tc.c, err)
			continue
		}
		want := 33 * 17 * tc.bps
		if tc.planes >= 3 {
			want += 2 * tc.cw * tc.ch * tc.bps
			if w, h := l.PlaneSize(1); w != tc.cw || h != tc.ch {
				t.Errorf("C%s: chroma %dx%d, want %dx%d", tc.c, w, h, tc.cw, tc.ch)
			}
		}
		if tc.planes == 4 {
			want += 33 * 17
		}
		if l.Planes != tc.planes || l.BytesPerSample() != tc.bps || l.FrameSize() != want || l.Chroma != tc.chroma || l.String() != tc.summary {
			t.Errorf("C%s: %d planes, %d bytes a sample, frame %d, %q (%s); want %d, %d, %d, %q (%s)",
				tc.c, l.Planes, l.BytesPerSample(), l.FrameSize(), l.Chroma, l, tc.planes, tc.bps, want, tc.chroma, tc.summary)
		}
	}
	for _, c := range []string{"420p8", "420p17", "420p010", "411p10", "444alphap10", "monop10", "mono8", "yuv", "420p", "p10", "10"} {
		h := y4m.Header{Width: 2, Height: 2, Color: c}
		if _, err := h.Layout(); err == nil || !strings.Contains(err.Error(), "C"+c+": not supported") {
			t.Errorf("C%s: %v, want not supported", c, err)
		}
	}
	h := y4m.Header{Width: 65536, Height: 65536, Color: "444p16"}
	if _, err := h.Layout(); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge frame: %v", err)
	}
}

// stream makes a y4m stream of n frames with a byte pattern, and the
// frame params of every other frame set.
func stream(t testing.TB, header string, n int) []byte {
	t.Helper()
	h, err := y4m.ParseHeader([]byte(header))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := y4m.NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, w.Layout().FrameSize())
	for i := range n {
		for k := range data {
			data[k] = byte(k*7 + i)
		}
		var params []byte
		if i%2 == 1 {
			params = []byte(" Ib XFRAME=1")
		}
		if err := w.WriteFrame(params, data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// copyStream reads src with a Reader and writes it back with a Writer.
func copyStream(src []byte) ([]byte, error) {
	r, err := y4m.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w, err := y4m.NewWriter(&out, r.Header())
	if err != nil {
		return nil, err
	}
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
		if err := w.WriteFrame(f.Params, f.Data); err != nil {
			return nil, err
		}
	}
}

func TestRoundTripEveryLayout(t *testing.T) {
	for _, tc := range layouts {
		for _, size := range [][2]int{{33, 17}, {1, 1}, {2, 3}, {16, 8}} {
			hdr := fmt.Sprintf("YUV4MPEG2 W%d H%d F25:1 Ip A1:1", size[0], size[1])
			if tc.c != "" {
				hdr += " C" + tc.c
			}
			src := stream(t, hdr+" XCOLORRANGE=LIMITED\n", 3)
			got, err := copyStream(src)
			if err != nil || !bytes.Equal(got, src) {
				t.Errorf("%s: round trip differs (%d of %d bytes), %v", hdr, len(got), len(src), err)
			}
		}
	}
}

func TestReaderFrames(t *testing.T) {
	src := stream(t, "YUV4MPEG2 W5 H3 C422\n", 4)
	r, err := y4m.NewReader(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.HeaderLine()); got != "YUV4MPEG2 W5 H3 C422\n" {
		t.Errorf("header line %q", got)
	}
	l := r.Layout()
	var cat []byte
	cat = append(cat, r.HeaderLine()...)
	for i := 0; ; i++ {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		wantParams := ""
		if i%2 == 1 {
			wantParams = " Ib XFRAME=1"
		}
		if string(f.Params) != wantParams || len(f.Data) != l.FrameSize() {
			t.Errorf("frame %d: params %q, %d bytes", i+1, f.Params, len(f.Data))
		}
		// Planes: Y 5x3, Cb and Cr 3x3.
		if y, cb, cr := l.Plane(f.Data, 0), l.Plane(f.Data, 1), l.Plane(f.Data, 2); len(y) != 15 || len(cb) != 9 || len(cr) != 9 || cr[8] != f.Data[32] {
			t.Errorf("planes %d %d %d", len(y), len(cb), len(cr))
		}
		p, d, err := y4m.SplitFrame(f.Record, l)
		if err != nil || !bytes.Equal(p, f.Params) || !bytes.Equal(d, f.Data) {
			t.Errorf("SplitFrame: %q, %v", p, err)
		}
		cat = append(cat, f.Record...)
	}
	if r.Frames() != 4 || !bytes.Equal(cat, src) {
		t.Errorf("%d frames; records concatenated equal the stream: %v", r.Frames(), bytes.Equal(cat, src))
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the end: %v", err)
	}
}

func TestNextAllocatesNothing(t *testing.T) {
	src := stream(t, "YUV4MPEG2 W64 H48 F25:1\n", 1)
	one := src[len("YUV4MPEG2 W64 H48 F25:1\n"):]
	big := append([]byte(nil), src...)
	for range 200 {
		big = append(big, one...)
	}
	r, err := y4m.NewReader(bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %v times a frame", allocs)
	}
}

func TestTruncated(t *testing.T) {
	const hdr = "YUV4MPEG2 W4 H2 C444\n" // 24-byte frames
	src := stream(t, hdr, 3)
	frame := len("FRAME\n") + 24
	for _, tc := range []struct {
		cut    int // bytes of the stream kept
		frames int
		want   string
	}{
		{len(hdr), 0, ""},
		{len(hdr) + 3, 0, "frame 1: truncated: 3 bytes of its FRAME line"},
		{len(hdr) + 5, 0, `frame 1: truncated: no '\n' after FRAME`},
		{len(hdr) + 6, 0, "frame 1: truncated: 0 of 24 bytes"},
		{len(hdr) + frame + len("FRAME Ib XFRAME=1\n") + 10, 1, "frame 2: truncated: 10 of 24 bytes"},
		{len(hdr) + frame, 1, ""},
		{len(src) - 1, 2, "frame 3: truncated: 23 of 24 bytes"},
	} {
		r, err := y4m.NewReader(bytes.NewReader(src[:tc.cut]))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err = r.Next()
			if err != nil {
				break
			}
			n++
		}
		if n != tc.frames {
			t.Errorf("cut at %d: %d frames, want %d", tc.cut, n, tc.frames)
		}
		switch {
		case tc.want == "" && err != io.EOF:
			t.Errorf("cut at %d: %v, want io.EOF", tc.cut, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, io.ErrUnexpectedEOF)):
			t.Errorf("cut at %d: %v, want %q wrapping io.ErrUnexpectedEOF", tc.cut, err, tc.want)
		}
	}
}

func TestReaderBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "y4m: not a y4m stream (the input is empty)"},
		{"\x1aE\xdf\xa3 matroska", `not a y4m stream (it starts with "\x1aE\xdf\xa3 matr`},
		{"YUV4MPEG2 W2 H2", "the stream ends inside the header line"},
		{"YUV4MPEG2 W2 H2 Cfoo\n", "colour space Cfoo: not supported"},
		{"YUV4MPEG2 W2 H2 X" + strings.Repeat("a", 70000) + "\n", "longer than 4096"},
	} {
		_, err := y4m.NewReader(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewReader(%.20q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct{ frames, want string }{
		{"FRAMX\n", `frame 1: want a FRAME line, found "FRAMX\n"`},
		{"FRAMES\n", "frame 1: want a FRAME line"},
		{"FRAME " + strings.Repeat("x", 300) + "\n", "frame 1: FRAME line longer than 256 bytes"},
		{"FRAME\n\x00\x00\x00\x00\x00\x00FRAME", "frame 2: truncated"},
		{"FRAME\n\x00\x00\x00\x00\x00\x00garbage\n", `frame 2: want a FRAME line, found "garbage\n"`},
	} {
		r, err := y4m.NewReader(strings.NewReader("YUV4MPEG2 W2 H2\n" + tc.frames))
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = r.Next()
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("frames %.20q: %v, want %q", tc.frames, err, tc.want)
		}
	}
}

func TestWriterChecks(t *testing.T) {
	h := y4m.Header{Width: 2, Height: 2}
	w, err := y4m.NewWriter(io.Discard, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(nil, make([]byte, 5)); err == nil || !strings.Contains(err.Error(), "frame of 5 bytes, want 6 for 2x2 4:2:0") {
		t.Errorf("short frame: %v", err)
	}
	if err := w.WriteFrame([]byte("Ip"), make([]byte, 6)); err == nil {
		t.Errorf("params without a space accepted")
	}
	if err := w.WriteRecord([]byte("FRAME\n12345")); !errors.Is(err, y4m.ErrNotFrame) {
		t.Errorf("short record: %v", err)
	}
	if err := w.WriteRecord([]byte("FRAME Ip\n123456")); err != nil {
		t.Errorf("good record: %v", err)
	}
	if err := w.WriteRecord([]byte("YUV4MPEG2 W2 H2\n")); !errors.Is(err, y4m.ErrNotFrame) {
		t.Errorf("header as a frame: %v", err)
	}
	if _, err := y4m.NewWriter(io.Discard, y4m.Header{Width: 2, Height: 2, Color: "bad"}); err == nil {
		t.Errorf("bad colour space accepted")
	}
}

// TestFFmpeg reads what ffmpeg writes for every pixel format its y4m
// muxer takes, and writes it back byte for byte. Pictures are 33x17,
// except that samples of two bytes get an even width: for an odd width
// ffmpeg's muxer (5.1) halves the chroma row's bytes rather than its
// samples and writes half a sample short, which ffmpeg's own demuxer
// (like this package) then misreads.
func TestFFmpeg(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not on PATH")
	}
	for _, tc := range layouts {
		if tc.pixfmt == "" {
			continue
		}
		size := "33x17"
		if tc.bps == 2 {
			size = "34x17"
		}
		t.Run(tc.pixfmt, func(t *testing.T) {
			out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size="+size+":rate=5",
				"-frames", "3", "-pix_fmt", tc.pixfmt, "-strict", "-1", "-f", "yuv4mpegpipe", "-").Output()
			if err != nil {
				t.Fatalf("ffmpeg: %v", err)
			}
			r, err := y4m.NewReader(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Header().Color; got != tc.c {
				t.Errorf("C%s, want C%s", got, tc.c)
			}
			got, err := copyStream(out)
			if err != nil || !bytes.Equal(got, out) {
				t.Errorf("round trip of %d bytes gave %d, %v", len(out), len(got), err)
			}
			if want := len(r.HeaderLine()) + 3*(6+r.Layout().FrameSize()); len(out) != want {
				t.Errorf("ffmpeg wrote %d bytes, the layout says %d", len(out), want)
			}
		})
	}
}

func FuzzHeader(f *testing.F) {
	for _, s := range []string{
		"YUV4MPEG2 W33 H17 F5:1 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n",
		"YUV4MPEG2 W1 H1",
		"YUV4MPEG2 H2 W2 A0:0 Qx",
		"YUV4MPEG2 W2 H2 C444p16",
		"YUV4MPEG2 W2 H2 F1:0",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		h, err := y4m.ParseHeader(line)
		if err != nil {
			return
		}
		// What parses writes back as it was, and parses the same again.
		s := h.String()
		want := strings.TrimSuffix(string(line), "\n") + "\n"
		if s != want {
			t.Fatalf("round trip: %q gave %q", line, s)
		}
		h2, err := y4m.ParseHeader([]byte(s))
		if err != nil || h2.String() != s {
			t.Fatalf("second parse of %q: %v", s, err)
		}
		if l, err := h.Layout(); err == nil && l.FrameSize() <= 0 {
			t.Fatalf("%q: frame size %d", line, l.FrameSize())
		}
	})
}
