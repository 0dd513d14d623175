package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/y4m"
)

func init() {
	register(&Spec{
		Name:  "encode",
		Usage: "encode [-f FORMAT] [FILE]",
		Help: "Write y4m records (as decode makes them: the header line, then a record per frame) as a " +
			"video to FILE or the output, after checking them: the header first, every frame of the size " +
			"it gives. FILE's extension says the format: .y4m (or none) goes out byte for byte; .mp4, " +
			".mkv, .webm, .mov, ... and numbered pictures (frame%04d.png) are encoded by ffmpeg on PATH " +
			"with its usual codec for them. -f FORMAT (mp4, matroska, y4m) names it for the output or a " +
			"FILE of any name. An empty input writes nothing.",
		New: encodeNew,
	})
}

func encodeNew(env *Env, args []string) (*Cmd, error) {
	e := &encoder{env: env}
	names, err := getopt{cmd: "encode", shorts: "f:"}.parse(args, func(c byte, arg string) error {
		e.format = arg
		if arg == "" || strings.Trim(arg, "abcdefghijklmnopqrstuvwxyz0123456789_,") != "" {
			return usagef("encode", "-f %s: want a format name such as y4m, mp4, matroska", visible.Controls(arg))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch len(names) {
	case 0:
	case 1:
		e.name = names[0]
	default:
		return nil, usagef("encode", "extra operand '%s'", visible.Controls(names[1]))
	}
	switch {
	case e.format == "y4m" || e.format == "yuv4mpegpipe":
		e.format = ""
	case e.format != "":
		e.ffmpeg = true
	case e.name == "" || e.name == "-" || kindOf(e.name) == kindY4M || filepath.Ext(e.name) == "":
	case isImage(e.name) && !imagePattern.MatchString(e.name):
		return nil, usagef("encode", "%s: a %s file holds one picture: name a numbered sequence (%s) or a video (.mp4, .mkv)",
			visible.Controls(e.name), containerName(e.name), visible.Controls(sequenceName(e.name)))
	case kindOf(e.name) == kindOther:
		e.ffmpeg = true
	default:
		return nil, usagef("encode", "%s: no video format is known by the extension '%s': name the file .y4m, .mp4, .mkv, .webm or .mov, "+
			"or give -f FORMAT (as ffmpeg names it: matroska)", visible.Controls(e.name), visible.Controls(filepath.Ext(e.name)))
	}
	if e.ffmpeg && !haveFFmpeg() {
		what, target := e.format, e.name
		if what == "" {
			what = containerName(e.name)
		}
		if target == "" {
			target = "-"
		}
		return nil, &UsageError{Cmd: "encode", Msg: needFFmpeg("encode", target, what)[len("encode: "):]}
	}
	return &Cmd{ReadsInput: true, Fn: e.run, Blocking: e.ffmpeg, Effects: e.name != "" && e.name != "-"}, nil
}

// sequenceName is name numbered for a sequence of pictures: out.png is
// out%04d.png.
func sequenceName(name string) string {
	ext := filepath.Ext(name)
	return strings.TrimSuffix(name, ext) + "%04d" + ext
}

// encoder is one encode command.
type encoder struct {
	env    *Env
	format string // -f, "" for y4m
	name   string // FILE, "" for the output port
	ffmpeg bool   // ffmpeg writes the container
}

// sink is where encode writes the checked stream.
type sink interface {
	// header and frame write a record; frame may pass rec on without a copy
	// (Output.Forward), after which rec must not be used.
	header(rec []byte) error
	frame(rec []byte) error
	// finish ends the output; failed says the stream was bad, and
	// whatever ffmpeg made of it is to be dropped.
	finish(failed bool) error
}

func (e *encoder) run(ctx context.Context, p *buffer.Ports) error {
	in := p.In(0)
	var (
		out sink
		lay y4m.Layout
	)
	for n := 0; ; n++ {
		rec, err := in.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if out != nil {
				out.finish(true)
			}
			return err
		}
		if n == 0 {
			if lay, err = e.checkHeader(rec); err != nil {
				in.Stop()
				return e.fail(err)
			}
			if out, err = e.open(ctx, p); err != nil {
				in.Stop()
				return e.fail(err)
			}
			if err := out.header(rec); err != nil {
				return e.failSink(out, in, err)
			}
			continue
		}
		if _, _, err := y4m.SplitFrame(rec, lay); err != nil {
			e.failSink(out, in, nil)
			return e.fail(fmt.Errorf("frame %d: %s", n, y4mText(err)))
		}
		if err := out.frame(rec); err != nil {
			return e.failSink(out, in, err)
		}
	}
	if out == nil {
		return nil // an empty input: nothing to write
	}
	if err := out.finish(false); err != nil {
		return e.fail(err)
	}
	return nil
}

// checkHeader checks the first record: one y4m header line, '\n' ended.
func (e *encoder) checkHeader(rec []byte) (y4m.Layout, error) {
	h, err := y4m.ParseHeader(rec)
	if err == nil && rec[len(rec)-1] != '\n' {
		err = errors.New("the header line has no '\\n'")
	}
	if err != nil {
		return y4m.Layout{}, fmt.Errorf("record 1: want the y4m header: %s", y4mText(err))
	}
	return h.Layout()
}

// failSink stops reading and ends out after an error; err, if not nil, is
// what to report.
func (e *encoder) failSink(out sink, in *buffer.Input, err error) error {
	in.Stop()
	out.finish(true)
	if err == nil {
		return nil
	}
	return e.fail(err)
}

// fail reports err ("encode: FILE: what") and returns status 1; errors of
// the output port are returned as they are.
func (e *encoder) fail(err error) error {
	var pe *portError
	if errors.As(err, &pe) {
		return pe.err
	}
	var ee *task.ExitError
	if errors.As(err, &ee) {
		if ee.Err == nil {
			return ee
		}
		err = ee.Err
	}
	where := ""
	if e.name != "" {
		where = visible.Controls(e.name) + ": "
	}
	fmt.Fprintf(e.env.stderr(), "encode: %s%s\n", where, visible.Controls(y4mText(err)))
	return task.Exit(1)
}

// open opens the output: FILE or the port, as y4m or through ffmpeg.
func (e *encoder) open(ctx context.Context, p *buffer.Ports) (sink, error) {
	if !e.ffmpeg {
		if e.name == "" {
			return &portSink{out: p.Out(0), in: p.In(0)}, nil
		}
		wc, err := e.env.create(e.name, false)
		if err != nil {
			return nil, err
		}
		return &fileSink{wc: wc, w: bufio.NewWriterSize(wc, 64<<10)}, nil
	}
	s := &ffmpegSink{e: e, out: p.Out(0), size: p.RecordSize()}
	target := e.name
	if target == "" {
		// Containers such as mp4 seek back to write their index: ffmpeg
		// writes to a temp file, copied to the output at the end.
		tmp, err := os.CreateTemp(e.env.TempDir, "tpipe-encode-*")
		if err != nil {
			return nil, err
		}
		s.tmp = tmp
		target = tmp.Name()
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		s.drop()
		return nil, err
	}
	defer null.Close()
	args := []string{"-v", "error", "-y", "-f", "yuv4mpegpipe", "-i", "-"}
	if e.format != "" {
		args = append(args, "-f", e.format)
	}
	proc, log, err := startFFmpeg(ctx, e.env, append(args, ffmpegFile(target)), null)
	if err != nil {
		s.drop()
		return nil, err
	}
	s.proc, s.log = proc, log
	return s, nil
}

// portSink writes y4m to the output port, each record passed on as it came
// in, without a copy where the queue allows.
type portSink struct {
	out *buffer.Output
	in  *buffer.Input
}

func (s *portSink) header(rec []byte) error { return s.frame(rec) }
func (s *portSink) frame(rec []byte) error {
	if err := s.out.Forward(s.in); err != nil {
		return &portError{err}
	}
	return nil
}
func (s *portSink) finish(bool) error { return nil }

// fileSink writes y4m to a file.
type fileSink struct {
	wc io.WriteCloser
	w  *bufio.Writer
}

func (s *fileSink) header(rec []byte) error { return s.frame(rec) }
func (s *fileSink) frame(rec []byte) error {
	_, err := s.w.Write(rec)
	return err
}
func (s *fileSink) finish(bool) error {
	err := s.w.Flush()
	if cerr := s.wc.Close(); err == nil {
		err = cerr
	}
	return err
}

// ffmpegSink feeds the y4m stream to ffmpeg, which writes FILE, or a temp
// file that finish copies to the output port.
type ffmpegSink struct {
	e    *encoder
	proc *ext.Process
	log  *ffmpegLog // what ffmpeg says
	out  *buffer.Output
	size int      // the record size, for the chunks of the temp file
	tmp  *os.File // nil when ffmpeg writes FILE
}

func (s *ffmpegSink) header(rec []byte) error { return s.frame(rec) }
func (s *ffmpegSink) frame(rec []byte) error {
	if _, err := s.proc.Stdin.Write(rec); err != nil {
		// ffmpeg stopped reading: its status says why.
		werr := s.proc.Wait(false)
		s.proc = nil
		if werr != nil {
			return s.exited(werr)
		}
		return fmt.Errorf("%s stopped reading: %w", ffmpegName, err)
	}
	return nil
}

func (s *ffmpegSink) exited(err error) error {
	var ee *task.ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return errors.New(s.log.failure(ee.Code))
	}
	return err
}

func (s *ffmpegSink) finish(failed bool) error {
	if failed {
		if s.proc != nil {
			s.proc.Wait(true)
			s.proc = nil
		}
		s.drop()
		return nil
	}
	if s.proc != nil {
		err := s.proc.Wait(false)
		s.proc = nil
		if err != nil {
			s.drop()
			return s.exited(err)
		}
		s.log.flush(s.e.env.stderr())
	}
	if s.tmp == nil {
		return nil
	}
	defer s.drop()
	if _, err := s.tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, min(s.size, 1<<20))
	for {
		n, err := s.tmp.Read(buf)
		if n > 0 {
			if werr := s.out.Write(buf[:n]); werr != nil {
				return &portError{werr}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// drop removes the temp file, if any.
func (s *ffmpegSink) drop() {
	if s.tmp != nil {
		s.tmp.Close()
		os.Remove(s.tmp.Name())
		s.tmp = nil
	}
}
