package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/shake"
	"github.com/tpipe/tpipe/video/y4m"
)

func init() {
	register(&Spec{
		Name:  "shake",
		Usage: "shake [-q] [-t PX] [FILE]",
		Help: "Measure how much a y4m stream (the FILE, default the input) shakes: the " +
			"number of frames, and the mean and 95th percentile of the frame-to-frame " +
			"jitter in pixels, what the picture's motion does beyond a smooth path " +
			"(a Gaussian of " + strconv.Itoa(shake.Smoothing) + " frames), measured by phase " +
			"correlation. With -t PX the status is 0 when the mean jitter is more than PX " +
			"pixels (the clip is shaky) and 1 otherwise; -q prints nothing.",
		New: shakeNew,
	})
}

func shakeNew(env *Env, args []string) (*Cmd, error) {
	const cmd = "shake"
	quiet, threshold := false, math.NaN()
	names, err := getopt{cmd: cmd, shorts: "qt:"}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'q':
			quiet = true
		case 't':
			v, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(v >= 0 && v <= 1e6) {
				return usagef(cmd, "invalid threshold '%s': want pixels, 0 or more", arg)
			}
			threshold = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(names) > 1 {
		return nil, usagef(cmd, "extra operand '%s': shake measures one stream", names[1])
	}
	reads, err := env.edgeOperands(cmd, names)
	if err != nil {
		return nil, err
	}
	name := "-"
	if len(names) == 1 {
		name = names[0]
	}
	run := func(ctx context.Context, p *buffer.Ports) error {
		r, err := shakeMeasure(ctx, env, p, name)
		if err != nil {
			return videoExit(err)
		}
		if !quiet {
			prefix := ""
			if name != "-" {
				prefix = name + ": "
			}
			line := fmt.Sprintf("%s%d frames, jitter mean %.3f px, p95 %.3f px\n", prefix, r.Frames, r.Mean, r.P95)
			if err := p.Out(0).Write([]byte(line)); err != nil {
				return err
			}
		}
		if !math.IsNaN(threshold) && !(r.Mean > threshold) {
			return task.Exit(1)
		}
		return nil
	}
	// ReadsBytes: a '<' file or stdin is read as the y4m file it is
	// (Env.Input); a pipe from decode brings its records.
	return &Cmd{ReadsInput: readsInput(names), ReadsBytes: true, Reads: reads, Fn: run}, nil
}

// shakeMeasure measures the stream of operand name: for "-", the '<' file
// or stdin read as bytes (Env.Input) or else decode's records on the input
// port; a named edge's records; or a file read as y4m.
func shakeMeasure(ctx context.Context, env *Env, p *buffer.Ports, name string) (shake.Result, error) {
	const cmd = "shake"
	var in *buffer.Input
	switch {
	case name == "-" && env != nil && env.Input != nil:
		return shakeFile(env, env.Input(ctx, p.Out(0).Done()), "standard input")
	case name == "-":
		in = p.In(0)
	case env.isEdge(name):
		in = edgeIn(p, name)
	}
	if in != nil {
		_, l, err := videoIn(env, cmd, in)
		if err != nil {
			return shake.Result{}, err
		}
		m := shake.NewMeter(l.W, l.H)
		for n := 1; ; n++ {
			rec, err := in.Read()
			if err == io.EOF {
				return m.Result(), nil
			}
			if err != nil {
				return shake.Result{}, err
			}
			_, data, msg := videoFrame(rec, l, n)
			if msg != "" {
				fmt.Fprintf(env.stderr(), "%s: %s\n", cmd, msg)
				return shake.Result{}, errVideo
			}
			m.Add(l.Plane(data, 0))
		}
	}
	f, err := env.open(name)
	if err != nil {
		warnFile(env, cmd, name, err)
		return shake.Result{}, errVideo
	}
	defer f.Close()
	return shakeFile(env, f, name)
}

// shakeFile measures the y4m file that r reads, named name in messages.
func shakeFile(env *Env, r io.Reader, name string) (shake.Result, error) {
	const cmd = "shake"
	yr, err := y4m.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		fmt.Fprintf(env.stderr(), "%s: %s: %s\n", cmd, name, shakeFileError(err))
		return shake.Result{}, errVideo
	}
	l, msg := videoLayout(yr.HeaderLine())
	if msg != "" {
		fmt.Fprintf(env.stderr(), "%s: %s: %s\n", cmd, name, msg)
		return shake.Result{}, errVideo
	}
	m := shake.NewMeter(l.W, l.H)
	for {
		fr, err := yr.Next()
		if err == io.EOF {
			return m.Result(), nil
		}
		if err != nil {
			fmt.Fprintf(env.stderr(), "%s: %s: %s\n", cmd, name, shakeFileError(err))
			return shake.Result{}, errVideo
		}
		m.Add(l.Plane(fr.Data, 0))
	}
}

func shakeFileError(err error) string {
	if errors.Is(err, y4m.ErrNotY4M) {
		return "not a y4m stream"
	}
	return errText(err)
}
