package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/y4m"
)

func init() {
	register(&Spec{
		Name:  "decode",
		Usage: "decode [--pix-fmt FMT] [FILE]",
		Help: "Read a video as y4m records: the header line first, then one record per frame (its FRAME " +
			"line and planes), so that the records back to back are the y4m stream byte for byte. FILE " +
			"(default the input) is y4m, or any container or picture ffmpeg reads (.mp4, .mkv, .png, a " +
			"sequence frame%03d.png, ...), decoded by ffmpeg on PATH to 8-bit YUV or grey, which the video " +
			"builtins take: a source in another format (RGB, 10 bits) is converted to the nearest, and a " +
			"line on stderr says so. --pix-fmt FMT asks ffmpeg for FMT instead (yuv420p10le keeps 10 " +
			"bits), for a y4m FILE too. A cut stream keeps its whole frames and fails naming the frame " +
			"(status 1).",
		New:          decodeNew,
		DecodesVideo: true,
	})
}

var decodeLongs = []longOpt{{"pix-fmt", 'p', true}}

func decodeNew(env *Env, args []string) (*Cmd, error) {
	d := &decoder{env: env, name: "-"}
	names, err := getopt{cmd: "decode", longs: decodeLongs}.parse(args, func(c byte, arg string) error {
		if !slices.Contains(videoPixFmts, arg) && !deepPixFmt.MatchString(arg) {
			return usagef("decode", "--pix-fmt '%s': y4m does not hold it; want one of %s, or a 9- to 16-bit "+
				"yuv420p, yuv422p, yuv444p or gray (yuv420p10le)", visible.Controls(arg), strings.Join(videoPixFmts, ", "))
		}
		d.pixFmt = arg
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(names) > 1 {
		return nil, usagef("decode", "extra operand '%s'", visible.Controls(names[1]))
	}
	c := &Cmd{Fn: d.run, NeedSize: d.needSize, ReadsBytes: true}
	if len(names) == 1 {
		d.name = names[0]
	}
	switch {
	case d.pixFmt != "" && (d.name == "-" || env.isEdge(d.name)):
		return nil, usagef("decode", "--pix-fmt needs a FILE operand: ffmpeg converts files, not the input")
	case d.name == "-":
		c.ReadsInput = true
	case env.isEdge(d.name):
		c.Reads = []string{d.name}
		d.edge = true
	case kindOf(d.name) == kindOther || d.pixFmt != "":
		if !haveFFmpeg() {
			what := containerName(d.name)
			if d.pixFmt != "" {
				what = "--pix-fmt"
			}
			return nil, &UsageError{Cmd: "decode", Msg: needFFmpeg("decode", d.name, what)[len("decode: "):]}
		}
		c.Blocking = true
	case kindOf(d.name) == kindY4M:
		// A .y4m file is read here, a frame when asked: the per-record
		// form, which ros calls with no switch per frame.
		c.Fn, c.Source = nil, d.fileSource()
	}
	return c, nil
}

// decoder is one decode command.
type decoder struct {
	env    *Env
	name   string // the FILE operand; "-" for the input
	edge   bool   // name is a named edge
	pixFmt string // --pix-fmt: ffmpeg decodes FILE to this format
}

// source is what decode reads: y4m bytes, from a file, a port, stdin, or
// ffmpeg's output.
type source struct {
	r     io.Reader
	pipe  bool         // reads may wait on another process: flush between frames
	close func() error // nil for a port
	proc  *ext.Process // ffmpeg, when it decodes
	log   *ffmpegLog   // what ffmpeg says
	eof   *eofReader   // ffmpeg's output, to tell whether it ended
	from  string       // the pixel format ffmpeg decodes from, if known
}

func (d *decoder) run(ctx context.Context, p *buffer.Ports) error {
	src, err := d.open(ctx, p)
	if err != nil {
		return d.fail(ctx, p, err)
	}
	err = d.copy(p, src)
	if src.close != nil {
		src.close()
	}
	if src.proc != nil {
		// Once ffmpeg has closed its output, its status says whether it
		// decoded the file, and a failure of its says more than the cut
		// stream it left. Before that, we gave up on it.
		werr := src.proc.Wait(err != nil && !src.eof.seen)
		var ee *task.ExitError
		switch {
		case errors.As(werr, &ee):
			fmt.Fprintf(d.env.stderr(), "decode: %s: %s\n", visible.Controls(d.name), visible.Controls(src.log.inputFailure(ee.Code)))
			return task.Exit(1)
		case werr != nil && err == nil:
			return werr
		}
		src.log.flush(d.env.stderr())
	}
	if err != nil {
		return d.fail(ctx, p, err)
	}
	return nil
}

// fileSource is decode of a .y4m file in per-record form: Start opens it
// (a failure is reported as run reports it), Next returns the header line
// and then a frame a call, and Stop closes it and reports a bad stream,
// as copy and fail do for run.
func (d *decoder) fileSource() *task.Source {
	var (
		ctx    context.Context
		p      *buffer.Ports
		src    *source
		rd     *y4m.Reader
		header bool
	)
	return &task.Source{
		Start: func(c context.Context, ps *buffer.Ports) error {
			ctx, p = c, ps
			s, err := d.open(ctx, p)
			if err == nil {
				if rd, err = y4m.NewReader(s.r); err != nil {
					s.close()
				}
			}
			if err != nil {
				return d.fail(ctx, p, err)
			}
			src, header = s, true
			return nil
		},
		Next: func() ([]byte, error) {
			if header {
				header = false
				return rd.HeaderLine(), nil
			}
			if src.pipe {
				// The next frame may be slow to come: hand over what is
				// ready.
				p.Flush()
			}
			f, err := rd.Next()
			if err != nil {
				if err != io.EOF {
					err = &streamError{err}
				}
				return nil, err
			}
			return f.Record, nil
		},
		Stop: func(err error) error {
			src.close()
			var se *streamError
			if errors.As(err, &se) {
				return d.fail(ctx, p, se.err)
			}
			return err // nil, or the port's error as it is
		},
	}
}

// streamError is an error of the y4m stream decode reads (not of its
// ports), for fail to report.
type streamError struct{ err error }

func (e *streamError) Error() string { return e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// eofReader notes that its reader reached the end.
type eofReader struct {
	r    io.Reader
	seen bool
}

func (e *eofReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err == io.EOF {
		e.seen = true
	}
	return n, err
}

// portError is an error of a port: the run's business (a reader gone, an
// abort, a record over the record size), returned as it is.
type portError struct{ err error }

func (e *portError) Error() string { return e.err.Error() }
func (e *portError) Unwrap() error { return e.err }

// fail reports err as a GNU tool does, "decode: FILE: what", and returns
// status 1; an error of the ports is returned as it is, and nothing is
// said once nobody reads decode's output (the run was aborted, or the
// reader stopped, which ends a read of stdin too).
func (d *decoder) fail(ctx context.Context, p *buffer.Ports, err error) error {
	var pe *portError
	if errors.As(err, &pe) {
		return pe.err
	}
	select {
	case <-p.Out(0).Done():
		return nil
	default:
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ee *task.ExitError
	if errors.As(err, &ee) && ee.Err != nil {
		// ffmpeg could not start: the message names it.
		err = ee.Err
	}
	fmt.Fprintf(d.env.stderr(), "decode: %s: %s\n", visible.Controls(d.name), visible.Controls(y4mText(err)))
	return task.Exit(1)
}

// open opens what decode reads.
func (d *decoder) open(ctx context.Context, p *buffer.Ports) (*source, error) {
	switch {
	case d.name == "-" && d.env != nil && d.env.Input != nil:
		return &source{r: d.env.Input(ctx, p.Out(0).Done()), pipe: true}, nil
	case d.name == "-":
		return &source{r: &portReader{in: p.In(0)}}, nil
	case d.edge:
		if in := edgeIn(p, d.name); in != nil {
			return &source{r: &portReader{in: in}}, nil
		}
	}
	kind := kindOf(d.name)
	if kind != kindOther && d.pixFmt == "" {
		rc, err := d.env.open(d.name)
		if err != nil {
			return nil, err
		}
		br := bufio.NewReaderSize(rc, 64<<10)
		magic, _ := br.Peek(len(y4m.Magic))
		if string(magic) == y4m.Magic || kind == kindY4M {
			_, regular := regularFile(rc)
			return &source{r: br, close: rc.Close, pipe: !regular}, nil
		}
		rc.Close()
		if !haveFFmpeg() {
			_, err := y4m.ParseHeader(magic)
			return nil, fmt.Errorf("%w; other containers need %s on PATH", err, ffmpegName)
		}
	}
	if !imagePattern.MatchString(d.name) {
		// A file that is not there is said as for y4m, not by ffmpeg.
		rc, err := d.env.open(d.name)
		if err != nil {
			return nil, err
		}
		rc.Close()
	}
	proc, log, err := startFFmpeg(ctx, d.env, d.ffmpegArgs(), nil)
	if err != nil {
		return nil, err
	}
	proc.Stdin.Close()
	eof := &eofReader{r: proc.Stdout}
	src := &source{r: eof, pipe: true, proc: proc, log: log, eof: eof}
	if d.pixFmt == "" {
		// While ffmpeg starts: what it converts from, for the note.
		src.from = probePixFmt(ctx, d.env, d.name)
	}
	return src, nil
}

// ffmpegArgs are ffmpeg's arguments to decode FILE to y4m on its stdout.
func (d *decoder) ffmpegArgs() []string { return decodeArgs(d.name, d.pixFmt) }

// copy writes the stream of src as records: the header line, then a
// record per frame.
func (d *decoder) copy(p *buffer.Ports, src *source) error {
	rd, err := y4m.NewReader(src.r)
	if err != nil {
		return err
	}
	if note := convertNote(src.from, rd.Header()); note != "" {
		fmt.Fprintf(d.env.stderr(), "decode: %s: %s\n", visible.Controls(d.name), note)
	}
	out := p.Out(0)
	if err := out.Write(rd.HeaderLine()); err != nil {
		return &portError{err}
	}
	for {
		if src.pipe {
			// The next frame may be slow to come: hand over what is ready.
			p.Flush()
		}
		f, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := out.Write(f.Record); err != nil {
			return &portError{err}
		}
	}
}

// needSize peeks at the header: of r (the '<' file or stdin) when the
// runner gives one, else of the FILE operand, through ffmpeg for other
// containers.
func (d *decoder) needSize(ctx context.Context, r io.Reader, from string) (int, string) {
	if r != nil {
		line, err := y4m.ReadHeaderLine(bufio.NewReader(r))
		if err != nil {
			return 0, ""
		}
		return frameNeed(line, from+"'s header")
	}
	if d.name == "-" || d.edge {
		return 0, ""
	}
	if kindOf(d.name) != kindOther && d.pixFmt == "" {
		rc, err := d.env.open(d.name)
		if err != nil {
			return 0, ""
		}
		defer rc.Close()
		if _, regular := regularFile(rc); !regular {
			return 0, "" // a FIFO: reading it here would take what the run needs
		}
		br := bufio.NewReader(rc)
		if line, err := y4m.ReadHeaderLine(br); err == nil {
			return frameNeed(line, d.name+"'s header")
		}
		if kindOf(d.name) == kindY4M || !haveFFmpeg() {
			return 0, ""
		}
	}
	// ffmpeg says what it would decode to: start it, read its header,
	// and stop it.
	proc, _, err := startFFmpeg(ctx, d.env.quiet(), d.ffmpegArgs(), nil)
	if err != nil {
		return 0, ""
	}
	proc.Stdin.Close()
	line, err := y4m.ReadHeaderLine(bufio.NewReader(proc.Stdout))
	proc.Wait(true)
	if err != nil {
		return 0, ""
	}
	return frameNeed(line, ffmpegName+"'s decoding of "+d.name)
}

// quiet is env with messages discarded: a look ahead that fails says
// nothing, the run will.
func (e *Env) quiet() *Env {
	q := Env{}
	if e != nil {
		q = *e
	}
	q.Stderr = nil
	return &q
}

// regularFile reports the size of rc when it is a regular file.
func regularFile(rc io.Reader) (int64, bool) {
	st, ok := rc.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return 0, false
	}
	fi, err := st.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}
