// Package loadhook runs pmjq's scale hooks ("How to scale a one liner
// pipeline", section 3): a command when the host's 1-minute load average
// goes above a limit (to start a worker elsewhere, typically over ssh),
// another when it goes below one (to stop this worker).
//
// A hook's command is argv words (split with go-shellwords' rules when
// read from a flag), run directly, never through a shell. While its
// condition holds a hook runs at most once per Interval; the checks are
// made by Check, a function of the load and the time, driven by Loop on
// one goroutine that Loop's caller owns.
package loadhook

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tpipe/tpipe/internal/argv"
)

// Hook is one scale hook.
type Hook struct {
	// Above: run when the load is above Limit; else when it is below.
	Above bool
	Limit float64
	Argv  []string
}

// Parse reads a hook from its flag: name is --max-load or --min-load,
// limit a load average, cmd the command's text.
func Parse(name, limit, cmd string) (Hook, error) {
	h := Hook{Above: name == "--max-load"}
	if name != "--max-load" && name != "--min-load" {
		return h, fmt.Errorf("%s: not a load hook", name)
	}
	l, err := strconv.ParseFloat(limit, 64)
	if err != nil || l < 0 {
		return h, fmt.Errorf("%s %s: want a load average, such as 4 or 0.5", name, limit)
	}
	h.Limit = l
	if h.Argv, err = argv.Words(cmd); err != nil {
		return h, fmt.Errorf("%s %s: %v", name, limit, err)
	}
	return h, nil
}

// Extract takes the load hooks (--max-load L CMD, --min-load L CMD, and
// the --max-load=L CMD spelling) out of args and returns the rest, for
// commands whose other flags the flag package reads.
func Extract(args []string) ([]Hook, []string, error) {
	var hooks []Hook
	var rest []string
	for i := 0; i < len(args); i++ {
		name, limit, eq := strings.Cut(args[i], "=")
		if args[i] == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if name != "--max-load" && name != "--min-load" {
			rest = append(rest, args[i])
			continue
		}
		need := 2
		if eq {
			need = 1
		}
		if i+need >= len(args) {
			return nil, nil, fmt.Errorf("%s needs a load and a command: %s L 'CMD'", name, name)
		}
		if !eq {
			limit = args[i+1]
		}
		h, err := Parse(name, limit, args[i+need])
		if err != nil {
			return nil, nil, err
		}
		hooks = append(hooks, h)
		i += need
	}
	return hooks, rest, nil
}

// Source returns the 1-minute load average.
type Source func() (float64, error)

// ProcLoadavg reads the 1-minute load average from /proc/loadavg.
func ProcLoadavg() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg: empty")
	}
	return strconv.ParseFloat(f[0], 64)
}

// Watcher runs hooks as the load goes. It is not safe for concurrent
// use: one goroutine calls Check or Loop.
type Watcher struct {
	Hooks []Hook
	// Load is where the load comes from; nil: ProcLoadavg.
	Load Source
	// Every is how often Loop looks at the load; 0: 5s.
	Every time.Duration
	// Interval is the least time between two runs of one hook; 0: one
	// minute, the window of the load average it reads.
	Interval time.Duration
	// Run runs a hook's command; nil: the program, its output to Log,
	// waited for.
	Run func(ctx context.Context, argv []string) error
	// Log receives a line per hook run and per error; nil: discarded.
	Log io.Writer

	last []time.Time // when each hook last ran
}

// Check looks at the load once, at time now, and runs the hooks whose
// condition holds and which have not run within Interval. It returns
// how many ran.
func (w *Watcher) Check(ctx context.Context, now time.Time) int {
	if w.last == nil {
		w.last = make([]time.Time, len(w.Hooks))
	}
	log := w.Log
	if log == nil {
		log = io.Discard
	}
	load := w.Load
	if load == nil {
		load = ProcLoadavg
	}
	interval := w.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	l, err := load()
	if err != nil {
		fmt.Fprintf(log, "load hooks: %v\n", err)
		return 0
	}
	ran := 0
	for i, h := range w.Hooks {
		if h.Above && l <= h.Limit || !h.Above && l >= h.Limit {
			continue
		}
		if !w.last[i].IsZero() && now.Sub(w.last[i]) < interval {
			continue
		}
		w.last[i] = now
		ran++
		word := "below"
		if h.Above {
			word = "above"
		}
		fmt.Fprintf(log, "load %.2f %s %g: running %s\n", l, word, h.Limit, strings.Join(h.Argv, " "))
		run := w.Run
		if run == nil {
			run = func(ctx context.Context, argv []string) error {
				c := exec.CommandContext(ctx, argv[0], argv[1:]...)
				c.Stdout, c.Stderr = log, log
				return c.Run()
			}
		}
		if err := run(ctx, h.Argv); err != nil {
			fmt.Fprintf(log, "load hook %s: %v\n", h.Argv[0], err)
		}
	}
	return ran
}

// Loop calls Check every Every until ctx is done.
func (w *Watcher) Loop(ctx context.Context) {
	every := w.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		w.Check(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
