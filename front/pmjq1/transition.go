package pmjq1

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/tpipe/tpipe/front/stages"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
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

// Stage returns the transition as a stage of the job engine, opening the
// log's folder as a place with w (the engine's worker, so that one lease
// covers all). cfg configures the runner that runs the command. The
// first output is the stage's output port, in its folder, named by its
// template; the others the command writes itself.
func (s *Spec) Stage(w *place.Worker, cfg runner.Config) (jobs.Stage, error) {
	for _, o := range s.Outputs[1:] {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return jobs.Stage{}, fmt.Errorf("--output: %w", err)
		}
	}
	var log *place.Place
	if s.Log != nil {
		var err error
		if log, err = w.Open(s.Log.Dir); err != nil {
			return jobs.Stage{}, fmt.Errorf("--stderr: %w", err)
		}
	}
	st := jobs.Stage{
		Name: s.Name(),
		Key:  jobs.PatternKey(s.patterns(), s.Invariant),
		Lock: true, // the command names its inputs by their paths
		Out:  [][]string{{s.Outputs[0].Dir}},
		OutName: func(j *jobs.Job, _ int) (string, error) {
			p, err := s.Outputs[0].path(s.NewData(j.Key, j.Names))
			return filepath.Base(p), err
		},
		Run: func(ctx context.Context, j *jobs.Job) (int, error) { return s.run(ctx, j, log, cfg) },
	}
	for _, in := range s.Inputs {
		st.In = append(st.In, in.Dir)
	}
	if len(s.Errors) == 0 {
		st.KeepFailed = true
	} else {
		for _, e := range s.Errors {
			st.Failed = append(st.Failed, e.Dir)
		}
		st.FailedName = func(j *jobs.Job, in int) (string, error) {
			p, err := s.Errors[in].path(s.NewData(j.Key, j.Names))
			return filepath.Base(p), err
		}
	}
	return st, nil
}

// Name is the transition's name for status and metrics: the command's
// program.
func (s *Spec) Name() string { return filepath.Base(s.Words[0]) }

// patterns are the inputs' regexps.
func (s *Spec) patterns() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(s.Inputs))
	for i, in := range s.Inputs {
		res[i] = in.Pattern
	}
	return res
}

// run runs the command for a job whose inputs are locked where they are:
// the first on its stdin, its stdout the job's output, its stderr the
// --stderr log (committed whatever the status) or the job's stderr.
func (s *Spec) run(ctx context.Context, j *jobs.Job, log *place.Place, cfg runner.Config) (int, error) {
	d := s.NewData(j.Key, j.Names)
	argv := make([]string, len(s.Command))
	for i, t := range s.Command {
		w, err := expand(t, d)
		if err != nil {
			return -1, err
		}
		argv[i] = w
	}
	outs := make([]string, len(s.Outputs))
	for i := range s.Outputs {
		p, err := s.Outputs[i].path(d)
		if err != nil {
			return -1, err
		}
		outs[i] = p
	}
	stderr := j.Stderr
	var logTok *place.Pending
	if log != nil {
		p, err := s.Log.path(d)
		if err == nil {
			logTok, err = log.Create(filepath.Base(p))
		}
		if err != nil {
			return -1, err
		}
		stderr = logTok.File()
	}
	// Times are compared at the file system's coarsest grain, a second.
	start := time.Now().Truncate(time.Second)
	c := stages.Command{Argv: argv, Stdin: j.In[0], Stdout: j.Out[0], Stderr: stderr, Config: cfg}
	status := c.Run(ctx)
	if logTok != nil {
		if ctx.Err() != nil {
			logTok.Abort()
		} else if err := logTok.Commit(); err != nil {
			fmt.Fprintf(j.Stderr, "--stderr: %v\n", err)
		}
	}
	if status != 0 || ctx.Err() != nil {
		// What the command wrote to the outputs is partial: remove it.
		for _, p := range outs {
			if writtenSince(p, start) {
				os.Remove(p)
			}
		}
		return status, nil
	}
	// A command that wrote its first output itself, by its path, and
	// nothing on stdout, keeps what it wrote (as pmjq 1.0 did).
	if fi, err := j.Out[0].Stat(); err == nil && fi.Size() == 0 && writtenSince(outs[0], start) {
		j.Discard(0)
	}
	return 0, nil
}

// writtenSince reports whether the regular file at path was modified at
// or after start.
func writtenSince(path string, start time.Time) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(start)
}
