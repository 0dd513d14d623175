package pmjq1

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/merge"
	"github.com/tpipe/tpipe/spool/place"
)

// Data is what the templates see for one set of inputs.
type Data struct {
	names []string
	// Invariant is --invariant expanded for the set ("" without it).
	Invariant string
	// NamedMatches maps each named group of the inputs' regexps to its
	// value; where two inputs have a group of one name, the later wins.
	NamedMatches map[string]string
}

// Input returns the file name of the i-th input (0 for the first).
func (d *Data) Input(i int) (string, error) {
	if i < 0 || i >= len(d.names) {
		return "", fmt.Errorf("{{.Input %d}}: there are %d inputs, numbered from 0", i, len(d.names))
	}
	return d.names[i], nil
}

// NewData returns the templates' data for the names of a set.
func (s *Spec) NewData(key string, names []string) *Data {
	d := &Data{names: names, Invariant: key, NamedMatches: map[string]string{}}
	for i, name := range names {
		re := s.Inputs[i].Pattern
		m := re.FindStringSubmatch(name)
		for j, g := range re.SubexpNames() {
			if j > 0 && j < len(m) && g != "" {
				d.NamedMatches[g] = m[j]
			}
		}
	}
	return d
}

func expand(t *template.Template, d *Data) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("%s: %v", t.Name(), strings.TrimPrefix(err.Error(), "template: "))
	}
	return b.String(), nil
}

// path expands a target for d: its folder and a checked file name.
func (tg *Target) path(d *Data) (string, error) {
	name, err := expand(tg.Name, d)
	if err != nil {
		return "", err
	}
	if err := place.ValidName(name); err != nil {
		return "", fmt.Errorf("%s expands to a %v", tg.Text, err)
	}
	return filepath.Join(tg.Dir, name), nil
}

// Stage is the transition's name for status and metrics: the command's
// program.
func (s *Spec) Stage() string { return filepath.Base(s.Words[0]) }

// MergeInputs returns the engine's inputs: each folder's regexp, keyed by the
// invariant.
func (s *Spec) MergeInputs() []merge.Input {
	ins := make([]merge.Input, len(s.Inputs))
	for i, in := range s.Inputs {
		ins[i] = merge.Input{Dir: in.Dir, Pattern: in.Pattern, Key: merge.ExpandKey(in.Pattern, s.Invariant)}
	}
	return ins
}

// Configure fills c's Inputs, Take, Once, Stage, Run and OnFailure for s,
// opening the first output's and the log's folders as places with w.
// cfg configures the runner that runs the command.
func (s *Spec) Configure(c *merge.Config, w *place.Worker, cfg runner.Config) error {
	out, err := w.Open(s.Outputs[0].Dir)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	for _, o := range s.Outputs[1:] {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
	}
	var log *place.Place
	if s.Log != nil {
		if log, err = w.Open(s.Log.Dir); err != nil {
			return fmt.Errorf("--stderr: %w", err)
		}
	}
	c.Worker = w
	c.Stage = s.Stage()
	c.Inputs = s.MergeInputs()
	c.Take = merge.TakeLock // the command names its inputs by their paths
	c.Once = s.Quit
	c.Run = func(ctx context.Context, h *merge.Held) (func() error, error) {
		return s.run(ctx, h, out, log, cfg)
	}
	c.OnFailure = s.onFailure
	return nil
}

// run runs the command for a held set.
func (s *Spec) run(ctx context.Context, h *merge.Held, out, log *place.Place, cfg runner.Config) (func() error, error) {
	d := s.NewData(h.Key, h.Names)
	argv := make([]string, len(s.Command))
	for i, t := range s.Command {
		w, err := expand(t, d)
		if err != nil {
			return nil, err
		}
		argv[i] = w
	}
	outs := make([]string, len(s.Outputs))
	for i := range s.Outputs {
		p, err := s.Outputs[i].path(d)
		if err != nil {
			return nil, err
		}
		outs[i] = p
	}
	stdout, err := out.Create(filepath.Base(outs[0]))
	if err != nil {
		return nil, err
	}
	errs := &merge.Tail{Max: 64 << 10}
	var stderr io.Writer = errs
	var logTok *place.Pending
	if log != nil {
		p, err := s.Log.path(d)
		if err == nil {
			logTok, err = log.Create(filepath.Base(p))
		}
		if err != nil {
			stdout.Abort()
			return nil, err
		}
		stderr = io.MultiWriter(logTok.File(), errs)
	}
	// Times are compared at the file system's coarsest grain, a second.
	start := time.Now().Truncate(time.Second)
	c := merge.Command{Argv: argv, Stdin: h.Paths[0], Stdout: stdout.File().Name(), Stderr: stderr, Config: cfg}
	status := c.Run(ctx)
	if logTok != nil {
		if ctx.Err() != nil {
			logTok.Abort()
		} else if err := logTok.Commit(); err != nil {
			fmt.Fprintf(errs, "--stderr: %v\n", err)
		}
	}
	if status != 0 || ctx.Err() != nil {
		stdout.Abort()
		// What the command wrote to the outputs is partial: remove it.
		for _, p := range outs {
			if writtenSince(p, start) {
				os.Remove(p)
			}
		}
		return nil, &merge.Failure{Status: status, Stderr: errs.Bytes()}
	}
	return func() error {
		// A command that wrote its first output itself, by its path, and
		// nothing on stdout, keeps what it wrote (as pmjq 1.0 did).
		if fi, err := stdout.File().Stat(); err == nil && fi.Size() == 0 && writtenSince(outs[0], start) {
			return stdout.Abort()
		}
		return stdout.Commit()
	}, nil
}

// writtenSince reports whether the regular file at path was modified at
// or after start.
func writtenSince(path string, start time.Time) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(start)
}

// onFailure moves a failed set's inputs to the --error names, or leaves
// them in place without --error.
func (s *Spec) onFailure(h *merge.Held, f *merge.Failure, attempt int) merge.Verdict {
	if len(s.Errors) == 0 {
		return merge.Verdict{}
	}
	d := s.NewData(h.Key, h.Names)
	dests := make([]string, len(s.Errors))
	for i := range s.Errors {
		p, err := s.Errors[i].path(d)
		if err != nil {
			return merge.Verdict{} // left in place; the log says why it failed
		}
		dests[i] = p
	}
	return merge.Verdict{MoveTo: dests}
}
