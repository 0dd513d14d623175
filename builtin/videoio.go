package builtin

// What decode and encode share: which files are y4m and which go through
// ffmpeg, running ffmpeg, and reading an input port as one byte stream.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/video/y4m"
)

// ffmpegName is the program that reads and writes containers other than
// y4m.
const ffmpegName = "ffmpeg"

// videoKind is how a file name says a video is stored.
type videoKind int

const (
	kindUnknown videoKind = iota // no telling: look at the bytes
	kindY4M                      // .y4m: read and written here
	kindOther                    // .mp4, .mkv, ...: through ffmpeg
)

// otherContainers are extensions of video files ffmpeg reads and writes;
// a name with one of them goes through ffmpeg without a look at its bytes.
var otherContainers = map[string]bool{
	".mp4": true, ".m4v": true, ".mov": true, ".mkv": true, ".webm": true, ".avi": true,
	".ts": true, ".mts": true, ".m2ts": true, ".mpg": true, ".mpeg": true, ".flv": true,
	".ogv": true, ".ogg": true, ".gif": true, ".wmv": true, ".3gp": true, ".nut": true,
	".ivf": true, ".h264": true, ".264": true, ".hevc": true, ".h265": true, ".265": true, ".mxf": true,
	".m2v": true, ".vob": true, ".dv": true, ".mjpeg": true, ".apng": true, ".webp": true,
}

// imageFiles are extensions of still pictures: ffmpeg reads one as a
// video of one frame, and a numbered sequence (frame%03d.png) as a video
// of many; it writes only a sequence (see imagePattern).
var imageFiles = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".bmp": true, ".tif": true, ".tiff": true,
	".tga": true, ".ppm": true, ".pgm": true, ".pnm": true, ".pam": true, ".dpx": true, ".exr": true,
}

// kindOf judges a file name by its extension.
func kindOf(name string) videoKind {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case ext == ".y4m" || ext == ".yuv4mpeg":
		return kindY4M
	case otherContainers[ext] || imageFiles[ext]:
		return kindOther
	}
	return kindUnknown
}

// isImage reports whether name is a still picture's by its extension.
func isImage(name string) bool { return imageFiles[strings.ToLower(filepath.Ext(name))] }

// imagePattern matches a name that numbers a sequence of pictures as
// ffmpeg's image2 format does: frame%d.png, frame%03d.png.
var imagePattern = regexp.MustCompile(`%[0-9]*d`)

// containerName is what a message calls the container of name: "mp4".
func containerName(name string) string {
	if ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), "."); ext != "" {
		return ext
	}
	return "this container"
}

// needFFmpeg is the message for a video that needs ffmpeg where there is
// none.
func needFFmpeg(cmd, name, what string) string {
	return fmt.Sprintf("%s: %s: needs %s on PATH for %s; install %s or give a .y4m file", cmd, visible.Controls(name), ffmpegName, what, ffmpegName)
}

// haveFFmpeg reports whether ffmpeg is on PATH.
func haveFFmpeg() bool {
	_, err := ext.LookPath(ffmpegName)
	return err == nil
}

// startFFmpeg starts ffmpeg with args (after its name) in env.Dir, its
// messages kept in the log it returns (see ffmpegLog). Its stdin is a pipe
// (Process.Stdin), and so is its stdout unless stdout is set.
func startFFmpeg(ctx context.Context, env *Env, args []string, stdout *os.File) (*ext.Process, *ffmpegLog, error) {
	path, err := ext.LookPath(ffmpegName)
	if err != nil {
		return nil, nil, err
	}
	log := &ffmpegLog{}
	proc, err := ext.Start(ctx, ext.Options{
		Args: append([]string{ffmpegName}, args...), Path: path, Dir: env.Dir,
		Stderr: log, Stdout: stdout,
	})
	return proc, log, err
}

// ffmpegLog keeps what ffmpeg writes on its standard error (at -v error,
// why it failed), its last few kilobytes, so that a failure is one line of
// ours with ffmpeg's reason in it rather than ffmpeg's lines and then
// ours; what ffmpeg says in a run that succeeds is passed on as it is
// (flush). The process's stderr copier writes it; Process.Wait waits for
// that copy, so a log is read after Wait.
type ffmpegLog struct {
	mu  sync.Mutex
	buf []byte
}

// ffmpegLogMax is how much of ffmpeg's messages a log keeps: their end.
const ffmpegLogMax = 4 << 10

func (l *ffmpegLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - ffmpegLogMax; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

// failure says why ffmpeg exited with status code, in one line: its first
// message (the cause; what follows are its consequences), without the file
// name or "[muxer @ 0x...]" it puts first.
func (l *ffmpegLog) failure(code int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("%s exited with status %d", ffmpegName, code)
	last, _, _ := strings.Cut(strings.TrimSpace(string(l.buf)), "\n")
	last = strings.TrimSpace(last)
	if strings.HasPrefix(last, "[") {
		if i := strings.Index(last, "] "); i > 0 {
			last = last[i+2:]
		}
	}
	if strings.HasPrefix(last, "file:") {
		if i := strings.LastIndex(last, ": "); i > 0 {
			last = last[i+2:]
		}
	}
	if last == "" {
		return msg
	}
	return msg + ": " + last
}

// inputFailure is failure for ffmpeg reading a file: the line it ends
// with for the file it could not open ("file:./in.mkv: Invalid data
// found when processing input") says it better than a warning that came
// first, and a file without video is said in our words.
func (l *ffmpegLog) inputFailure(code int) string {
	l.mu.Lock()
	text := string(l.buf)
	l.mu.Unlock()
	if strings.Contains(text, "matches no streams") {
		return "no video stream"
	}
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "file:") {
			if i := strings.LastIndex(line, ": "); i > 0 {
				return fmt.Sprintf("%s exited with status %d: %s", ffmpegName, code, strings.TrimSpace(line[i+2:]))
			}
		}
	}
	return l.failure(code)
}

// flush passes on what ffmpeg said to w and forgets it.
func (l *ffmpegLog) flush(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.Write(l.buf)
	l.buf = nil
}

// ffmpegFile names a file for ffmpeg so that it is always a file: without
// the prefix, "pipe:1" or "http://x" would be another protocol.
func ffmpegFile(name string) string {
	if filepath.IsAbs(name) {
		return "file:" + name
	}
	return "file:./" + name
}

// y4mText is a y4m error without its package prefix, for a message that
// already names the command and file.
func y4mText(err error) string {
	return strings.TrimPrefix(errText(err), "y4m: ")
}

// portReader reads an input port's records back to back as one byte
// stream: how decode reads y4m that another command wrote (its records
// are the stream's pieces). It is not safe for concurrent use.
type portReader struct {
	in   *buffer.Input
	rest []byte
}

func (r *portReader) Read(b []byte) (int, error) {
	for len(r.rest) == 0 {
		data, _, err := r.in.ReadBatch()
		if err == io.EOF {
			return 0, err
		}
		if err != nil {
			return 0, &portError{err}
		}
		r.rest = data
	}
	n := copy(b, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// frameNeed is the record size a y4m stream with this header line needs,
// and why, for --explain; 0 for a header that does not parse.
func frameNeed(line []byte, from string) (int, string) {
	h, err := y4m.ParseHeader(line)
	if err != nil {
		return 0, ""
	}
	l, err := h.Layout()
	if err != nil {
		return 0, ""
	}
	return max(len(line), l.RecordSize()), fmt.Sprintf("one %s frame (from %s)", l, from)
}

var _ io.Reader = (*portReader)(nil)

// Pixel formats. ffmpeg decodes to whatever the source holds: RGB from
// PNG and screen captures, 10 bits from phones' HDR video, which y4m
// cannot carry (RGB) or the video builtins cannot take (10 bits). So
// decode asks ffmpeg for the nearest format they take, and says so when
// that was a conversion.

// videoPixFmts are the formats of the y4m the video builtins take, as
// ffmpeg names them: 8 bits a sample, planar YUV or grey. ffmpeg's format
// filter keeps a source already in one and converts any other to the
// nearest (RGB to 4:4:4, 10-bit 4:2:0 to 4:2:0, RGBA to 4:4:4 with alpha).
var videoPixFmts = []string{"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "yuva444p", "yuv411p", "gray"}

// deepPixFmt matches the formats of more than 8 bits a sample that y4m
// carries (with -strict -1): --pix-fmt keeps them.
var deepPixFmt = regexp.MustCompile(`^(yuv4(20|22|44)p(9|10|12|14|16)|gray(9|10|12|16))le$`)

// pixFmtOK reports whether a pixel format name is one to pass to ffmpeg:
// lowercase letters, digits and '_'.
func pixFmtOK(f string) bool {
	return f != "" && strings.Trim(f, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// decodeArgs are ffmpeg's arguments to decode file name to y4m on its
// stdout: its first video stream in pixel format pixFmt, or when that is
// "" in one of videoPixFmts (-strict -1 lets through yuva444p and the 9-
// to 16-bit formats --pix-fmt may ask for).
func decodeArgs(name, pixFmt string) []string {
	args := []string{"-nostdin", "-v", "error", "-i", ffmpegFile(name), "-map", "0:v:0"}
	if pixFmt != "" {
		args = append(args, "-pix_fmt", pixFmt)
	} else {
		args = append(args, "-vf", "format=pix_fmts="+strings.Join(videoPixFmts, "|"))
	}
	return append(args, "-f", "yuv4mpegpipe", "-strict", "-1", "-")
}

// ffprobeName tells decode the pixel format of a source, for its note.
const ffprobeName = "ffprobe"

// probePixFmt asks ffprobe for the pixel format of name's first video
// stream; "" when there is no ffprobe or it cannot tell. The answer only
// decides whether decode says it converted: the conversion is ffmpeg's.
func probePixFmt(ctx context.Context, env *Env, name string) string {
	path, err := ext.LookPath(ffprobeName)
	if err != nil {
		return ""
	}
	proc, err := ext.Start(ctx, ext.Options{
		Args: []string{ffprobeName, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=pix_fmt",
			"-of", "csv=p=0", ffmpegFile(name)},
		Path: path, Dir: env.Dir,
	})
	if err != nil {
		return ""
	}
	proc.Stdin.Close()
	out, _ := io.ReadAll(io.LimitReader(proc.Stdout, 256))
	if proc.Wait(false) != nil {
		return ""
	}
	f, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !pixFmtOK(f) {
		return ""
	}
	return f
}

// convertNote is decode's one line for a source in pixel format src that
// ffmpeg converted to the y4m of header h; "" when src is already a format
// the video builtins take, or unknown.
func convertNote(src string, h y4m.Header) string {
	if src == "" || slices.Contains(videoPixFmts, src) {
		return ""
	}
	l, err := h.Layout()
	if err != nil || l.Depth != 8 {
		return ""
	}
	to := map[string]string{"4:2:0": "yuv420p", "4:2:2": "yuv422p", "4:4:4": "yuv444p", "4:1:1": "yuv411p", "mono": "gray"}[l.Chroma]
	what := "8-bit " + l.Chroma
	switch {
	case l.Planes == 4:
		to, what = "yuva444p", what+" with alpha"
	case slices.Contains(h.Extra, "XCOLORRANGE=FULL") && strings.HasPrefix(to, "yuv"):
		to = "yuvj" + to[3:]
	}
	how := "--pix-fmt FMT asks for another"
	if deepPixFmt.MatchString(src) {
		how = "--pix-fmt " + src + " keeps it, for other programs"
	}
	return fmt.Sprintf("%s converted to %s (%s) for the video builtins; %s", src, what, to, how)
}
