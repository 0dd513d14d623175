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
	// Key is what the stage's Key made of the job's tokens (their name
	// when it has none). Outputs are named after it unless the stage
	// says otherwise.
	Key string
	// Names are the names of the job's tokens, one per input place, in
	// the stage's order.
	Names []string
	// In are the paths of the tokens while the job holds them, one per
	// input place: in the worker's claim folder, or where they are for a
	// stage that locks (Stage.Lock). They are the engine's until the job
	// ends.
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

	discard []bool  // ports whose token the Func said not to commit
	from    []Token // the tokens the job holds (Lineage)
}

// Discard says that output port port gets no token from this job: its
// pending file is removed instead of committed. pmjq 1.0's command that
// wrote its output file itself, by its path, and nothing on stdout, keeps
// what it wrote that way.
func (j *Job) Discard(port int) { j.discard[port] = true }

// name is how messages and observers name the job: its key, or its first
// token when the key is empty (pmjq 1.0 without --invariant).
func (j *Job) name() string {
	if j.Key != "" || len(j.Names) == 0 {
		return j.Key
	}
	return j.Names[0]
}

// Stage is a transition of the net (pmjq's daemon): it takes a job, one
// token from each of its input places with the same key, runs Run on it,
// and puts one token in each place of each output port. With several
// input places it is an and-merge: a token waits in its place until every
// other place holds one with its key.
type Stage struct {
	// Name names the stage in messages, statistics and --only.
	Name string
	// In are the input places (directories); at least one.
	In []string
	// Key returns the key of token name in input place in, and false for a
	// token that is no input of this stage (it is left where it is). nil
	// means the name itself. PatternKey makes one from regexps.
	Key func(in int, name string) (key string, ok bool)
	// Lock leaves a job's tokens where they are while it runs, each
	// locked (place.Lock) instead of claimed: for commands that name
	// their inputs by their own paths, as pmjq 1.0's templates do.
	Lock bool
	// Out are the output ports: for each, the places its token goes to,
	// the same bytes in each (a branch). A port with no place is an error.
	Out [][]string
	// OutName names the token of output port port for job j (whose Key
	// and Names are set); nil means the key. An error fails the job.
	OutName func(j *Job, port int) (string, error)
	// Run runs the job.
	Run Func
	// Retries is how many more times a failing job is run, under the same
	// claim, before it fails for good.
	Retries int
	// What becomes of a job that failed for good is one of three things.
	// By default its tokens go to the failed places (see Failure), the
	// first with NAME.stderr and NAME.status beside it. With FailedName
	// they go where it says, nothing beside them; with KeepFailed they
	// stay in their input places.
	//
	// Failed are, per input place, its failed place; nil means the input
	// place's directory with ".failed" added.
	Failed []string
	// FailedName, if set, names the token of input place in in its failed
	// place, for job j (pmjq 1.0's --error templates). An error leaves
	// the job in its input places, as KeepFailed.
	FailedName func(j *Job, in int) (string, error)
	// KeepFailed leaves a job that failed for good where it is, and this
	// Run does not try it again (pmjq 1.0 without --error).
	KeepFailed bool
}

// FailedDirs are the failed places of the stage, one per input place, or
// none for a stage that keeps its failed jobs.
func (s *Stage) FailedDirs() []string {
	if s.KeepFailed {
		return nil
	}
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

func (s *Stage) outName(j *Job, port int) (string, error) {
	if s.OutName == nil {
		return j.Key, nil
	}
	return s.OutName(j, port)
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
	case s.KeepFailed && (s.Failed != nil || s.FailedName != nil):
		return fmt.Errorf("stage %s: keeps its failed jobs and also has failed places", s.Name)
	case s.FailedName != nil && s.Failed == nil:
		return fmt.Errorf("stage %s: failed names without failed places", s.Name)
	}
	for i, ps := range s.Out {
		if len(ps) == 0 {
			return fmt.Errorf("stage %s: output %d goes to no place", s.Name, i)
		}
	}
	return nil
}
