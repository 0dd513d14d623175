package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// A Func runs one job: it reads the files of j.In and writes those of
// j.Out, and returns the job's exit status (0: done, to be delivered), or
// an error that kept it from running, when its status means nothing. It
// must return soon after ctx is done. A Func is called from several
// goroutines at once, each with a job of its own.
type Func func(ctx context.Context, j *Job) (status int, err error)

// Job is one firing of a stage. The engine owns its files: a Func reads
// and writes them but never closes, renames or removes them.
type Job struct {
	// Stage is the stage's name.
	Stage string
	// Key names the job: the name of its tokens, or what the stage's Key
	// made of them. Outputs are named after it.
	Key string
	// In are the paths of the claimed tokens, one per input place, in the
	// stage's order. They are the engine's until the job ends.
	In []string
	// Out are the files of the stage's output ports, in order, empty and
	// open for writing (each also has a path, f.Name()). The engine commits
	// them when the Func returns status 0 and aborts them otherwise.
	Out []*os.File
	// Stderr receives the job's messages. They are printed, grouped by job,
	// on the engine's Stderr, and kept beside the job in the failed place
	// if it fails for good.
	Stderr io.Writer
	// Try counts the runs of this job under one claim, from 1.
	Try int
}

// Stage is a transition of the net (pmjq's daemon): it takes a job, one
// token from each of its input places with the same key, runs Run on it,
// and puts one token named after the key in each place of each output
// port. With several input places it is an and-merge: a token waits in
// its place until every other place holds one with its key.
type Stage struct {
	// Name names the stage in messages, statistics and --only.
	Name string
	// In are the input places (directories); at least one.
	In []string
	// Key returns the key of token name in input place in, and false for a
	// token that is no input of this stage (it is left where it is). nil
	// means the name itself.
	Key func(in int, name string) (key string, ok bool)
	// Out are the output ports: for each, the places its token goes to,
	// the same bytes in each (a branch). A port with no place is an error.
	Out [][]string
	// OutName names the token of output port port; nil means the key.
	OutName func(key string, port int) string
	// Run runs the job.
	Run Func
	// Retries is how many more times a failing job is run before it goes
	// to the failed places.
	Retries int
	// Failed are, per input place, where its token goes after the job's
	// last failure; nil means the input place's directory with ".failed"
	// added. The first also gets NAME.stderr and NAME.status (see
	// Failure).
	Failed []string
}

// FailedDirs are the failed places of the stage, one per input place.
func (s *Stage) FailedDirs() []string {
	var dirs []string
	for i := range s.In {
		dirs = append(dirs, s.failedDir(i))
	}
	return dirs
}

// failedDir is where a failing job's token of input place in goes.
func (s *Stage) failedDir(in int) string {
	if s.Failed != nil {
		return s.Failed[in]
	}
	return strings.TrimRight(s.In[in], "/") + ".failed"
}

func (s *Stage) key(in int, name string) (string, bool) {
	if s.Key == nil {
		return name, true
	}
	return s.Key(in, name)
}

func (s *Stage) outName(key string, port int) string {
	if s.OutName == nil {
		return key
	}
	return s.OutName(key, port)
}

// check says what is wrong with the stage, if anything.
func (s *Stage) check() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("a stage has no name")
	case len(s.In) == 0:
		return fmt.Errorf("stage %s: no input place", s.Name)
	case s.Run == nil:
		return fmt.Errorf("stage %s: nothing to run", s.Name)
	case s.Retries < 0:
		return fmt.Errorf("stage %s: %d retries: want 0 or more", s.Name, s.Retries)
	case s.Failed != nil && len(s.Failed) != len(s.In):
		return fmt.Errorf("stage %s: %d failed places for %d input places", s.Name, len(s.Failed), len(s.In))
	}
	for i, ps := range s.Out {
		if len(ps) == 0 {
			return fmt.Errorf("stage %s: output %d goes to no place", s.Name, i)
		}
	}
	return nil
}
