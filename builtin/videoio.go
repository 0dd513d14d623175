package builtin

// What decode and encode share: which files are y4m and which go through
// ffmpeg, running ffmpeg, and reading an input port as one byte stream.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
}

// kindOf judges a file name by its extension.
func kindOf(name string) videoKind {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case ext == ".y4m" || ext == ".yuv4mpeg":
		return kindY4M
	case otherContainers[ext]:
		return kindOther
	}
	return kindUnknown
}

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
