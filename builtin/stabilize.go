package builtin

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
	"github.com/tpipe/tpipe/video/stab"
)

func init() {
	register(&Spec{
		Name: "stabilize",
		Usage: "stabilize [-w N] [-s SIGMA] [--max-shift PCT] [--max-angle DEG] " +
			"[--zoom PCT|auto] [--borders zoom|black|fill]",
		Help: "Remove camera shake from a y4m stream (8-bit 4:2:0, 4:2:2, 4:4:4 or mono): " +
			"the motion between frames is measured, the camera's path smoothed over a " +
			"lookahead of N frames (-w, default 40) by a Gaussian of SIGMA frames (-s, " +
			"default N/2), and each frame moved onto the smooth path, by at most " +
			"--max-shift percent of the frame (default 4) and --max-angle degrees " +
			"(default 1). The picture is zoomed just enough to hide the borders of such " +
			"moves (--zoom auto), or by --zoom PCT percent; --borders black or fill " +
			"shows them instead. Same size and number of frames out as in. The task " +
			"keeps the N frames of its lookahead in the pool's buffers, which B counts.",
		New: stabilizeNew,
	})
}

var stabilizeLongs = []longOpt{
	{"window", 'w', true}, {"strength", 's', true},
	{"max-shift", 'S', true}, {"max-angle", 'A', true},
	{"zoom", 'z', true}, {"borders", 'b', true},
}

// stabilizeMaxWindow keeps the frames a task holds within reason: at
// 1080p, 300 frames are 900 MiB.
const stabilizeMaxWindow = 300

func stabilizeNew(env *Env, args []string) (*Cmd, error) {
	const cmd = "stabilize"
	o := stab.DefaultOptions
	sigma := 0.0
	num := func(arg, what string, lo, hi float64) (float64, error) {
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || math.IsNaN(v) || v < lo || v > hi {
			return 0, usagef(cmd, "invalid %s '%s': want a number from %g to %g", what, arg, lo, hi)
		}
		return v, nil
	}
	operands, err := getopt{cmd: cmd, shorts: "w:s:", longs: stabilizeLongs}.parse(args, func(c byte, arg string) error {
		var err error
		var v float64
		switch c {
		case 'w':
			n, e := strconv.Atoi(arg)
			if e != nil || n < 1 || n > stabilizeMaxWindow {
				return usagef(cmd, "invalid window '%s': want 1 to %d frames", arg, stabilizeMaxWindow)
			}
			o.Window = n
		case 's':
			if v, err = num(arg, "strength", 0.1, stabilizeMaxWindow); err == nil {
				sigma = v
			}
		case 'S':
			if v, err = num(arg, "largest shift", 0, 49); err == nil {
				o.MaxShift = v / 100
			}
		case 'A':
			if v, err = num(arg, "largest angle", 0, 45); err == nil {
				o.MaxAngle = v * math.Pi / 180
			}
		case 'z':
			if arg == "auto" {
				o.Zoom = 0
			} else if v, err = num(arg, "zoom", 0, 300); err == nil {
				o.Zoom = 1 + v/100
			}
		case 'b':
			switch arg {
			case "zoom":
				o.Borders = stab.Zoom
			case "black":
				o.Borders = stab.Black
			case "fill":
				o.Borders = stab.Fill
			default:
				return usagef(cmd, "invalid borders '%s': want zoom, black or fill", arg)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 {
		return nil, usagef(cmd, "extra operand '%s': stabilize reads its input", operands[0])
	}
	o.Sigma = float64(o.Window) / 2 // as in stab.DefaultOptions
	if sigma != 0 {
		if sigma > float64(o.Window) {
			return nil, usagef(cmd, "strength %g is more than the window (%d frames)", sigma, o.Window)
		}
		o.Sigma = sigma
	}
	if err := o.Check(); err != nil {
		return nil, usagef(cmd, "%v", err)
	}
	return &Cmd{ReadsInput: true, Holds: o.Window, Fn: stabilizeRun(env, o)}, nil
}

// stabilizeRun forwards the header as is, then gives each frame to a
// stab.Stabilizer and keeps it where it was read, in its pool buffer
// (buffer.Input.Hold): the Stabilizer needs a frame again Window frames
// later, to warp it. It then warps it straight into a record of the
// output (buffer.Output.Alloc), after the FRAME line it came with, and
// lets its buffer go. So the task keeps Window buffers besides the one it
// reads, which the plan counts in B (Cmd.Holds), and no frame of its own.
func stabilizeRun(env *Env, o stab.Options) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		const cmd = "stabilize"
		in, out := p.In(0), p.Out(0)
		_, l, err := videoIn(env, cmd, in)
		if err != nil {
			return videoExit(err)
		}
		if err := out.Forward(in); err != nil {
			return err
		}
		s, err := stab.New(l, o)
		if err != nil {
			fmt.Fprintf(env.stderr(), "%s: %v\n", cmd, err)
			return task.Exit(1)
		}
		defer s.Close()
		kept := make([]buffer.Held, o.Window+1) // frame k in kept[k % len]
		done := 0                               // frames written
		// emit writes the frame due, corrected, and lets its buffer go.
		emit := func() error {
			h := kept[done%len(kept)]
			line, data, _ := videoFrame(h.Bytes(), l, done+1) // checked when read
			rec, err := out.Alloc(len(line) + len(data))
			if err != nil {
				return err
			}
			copy(rec, line)
			s.Correct(rec[len(line):], data)
			in.Release(h)
			kept[done%len(kept)] = buffer.Held{}
			done++
			return nil
		}
		for n := 0; ; n++ {
			r, err := in.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			_, data, msg := videoFrame(r, l, n+1)
			if msg != "" {
				fmt.Fprintf(env.stderr(), "%s: %s\n", cmd, msg)
				return task.Exit(1)
			}
			if kept[n%len(kept)], err = in.Hold(); err != nil {
				return err
			}
			if s.Track(data) {
				if err := emit(); err != nil {
					return err
				}
			}
		}
		for s.Pending() > 0 {
			if err := emit(); err != nil {
				return err
			}
		}
		return nil
	}
}

// videoExit turns errVideo (already reported) into exit status 1.
func videoExit(err error) error {
	if err == errVideo {
		return task.Exit(1)
	}
	return err
}
