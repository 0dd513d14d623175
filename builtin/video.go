package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/video/stab"
	"github.com/tpipe/tpipe/video/y4m"
)

// The video builtins (stabilize, shake, watermark) read a y4m stream as
// records: the header line, then one record per frame, its FRAME line and
// its planes. They take 8-bit frames in 4:2:0, 4:2:2, 4:4:4 or mono.

// errVideo is a problem with the stream, already reported on stderr; the
// command exits with status 1.
var errVideo = errors.New("bad video stream")

// videoIn reads a y4m stream's header record from in and returns it (valid
// until the next Read) and its frames' layout. A problem is reported on
// env's stderr, as one line, and returned as errVideo.
func videoIn(env *Env, cmd string, in *buffer.Input) ([]byte, stab.Layout, error) {
	rec, err := in.Read()
	if err == io.EOF {
		fmt.Fprintf(env.stderr(), "%s: empty input: want a y4m stream\n", cmd)
		return nil, stab.Layout{}, errVideo
	}
	if err != nil {
		return nil, stab.Layout{}, err
	}
	l, msg := videoLayout(rec)
	if msg != "" {
		fmt.Fprintf(env.stderr(), "%s: %s\n", cmd, msg)
		return nil, stab.Layout{}, errVideo
	}
	return rec, l, nil
}

// videoLayout parses a header record; msg says what is wrong with it.
func videoLayout(rec []byte) (stab.Layout, string) {
	h, err := y4m.ParseHeader(rec)
	if errors.Is(err, y4m.ErrNotY4M) {
		return stab.Layout{}, fmt.Sprintf("input is not a y4m stream (it starts %q)", rec[:min(len(rec), 16)])
	}
	if err != nil {
		return stab.Layout{}, err.Error()
	}
	yl, err := h.Layout()
	if err != nil {
		return stab.Layout{}, err.Error()
	}
	l := stab.Layout{W: yl.Width, H: yl.Height}
	switch {
	case yl.Depth != 8:
		to := map[string]string{"4:2:0": "yuv420p", "4:2:2": "yuv422p", "4:4:4": "yuv444p", "mono": "gray"}[yl.Chroma]
		return l, fmt.Sprintf("%s: only 8-bit video is supported; decode --pix-fmt %s FILE converts it (with ffmpeg)", yl, to)
	case yl.Planes == 1:
		l.Chroma = stab.Mono
	case yl.Planes == 3 && yl.Chroma == "4:2:0":
		l.Chroma = stab.C420
	case yl.Planes == 3 && yl.Chroma == "4:2:2":
		l.Chroma = stab.C422
	case yl.Planes == 3 && yl.Chroma == "4:4:4":
		l.Chroma = stab.C444
	case yl.Planes == 3 && yl.Chroma == "4:1:1":
		l.Chroma = stab.C411
	case yl.Planes == 4 && yl.Chroma == "4:4:4":
		l.Chroma = stab.C444Alpha
	default:
		return l, fmt.Sprintf("%s: only 4:2:0, 4:1:1, 4:2:2, 4:4:4 (with or without alpha) and mono are supported", yl)
	}
	return l, ""
}

// videoFrame splits frame record rec (frame n, from 1) into its FRAME
// line, '\n' included, and its planes; msg says what is wrong with it.
func videoFrame(rec []byte, l stab.Layout, n int) (line, data []byte, msg string) {
	i := bytes.IndexByte(rec[:min(len(rec), y4m.MaxFrameLine)], '\n')
	if i < 0 || !bytes.HasPrefix(rec, []byte("FRAME")) || (i > 5 && rec[5] != ' ') {
		return nil, nil, fmt.Sprintf("frame %d: no FRAME line", n)
	}
	line, data = rec[:i+1], rec[i+1:]
	if len(data) != l.FrameSize() {
		return nil, nil, fmt.Sprintf("frame %d: %d bytes of picture, want %d for %dx%d %v", n, len(data), l.FrameSize(), l.W, l.H, l.Chroma)
	}
	return line, data, ""
}
