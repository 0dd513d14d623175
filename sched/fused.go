package sched

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// This file is the fused policy: the loop jamming of section 5 of
// "Thrifty Execution of Task Pipelines". A run of per-record stages
// becomes one task whose loop calls the stages one after the other on each
// record, with no queue and no buffer between them. Theorem 2.2 (every
// schedule of a pipeline is equivalent to the serial one) is what makes
// this legal: ComposeRecord is the serial schedule taken one record at a
// time.

// FusionNote says what Fuse did with one task of its result.
type FusionNote struct {
	// Task is the name of a task of the fused graph.
	Task string
	// Fused names the original tasks it runs, in pipeline order: more than
	// one when Fuse jammed a run of stages, else just the task itself.
	Fused []string
	// Reason says why the task was not fused; it is empty when it was.
	Reason string
}

func (n FusionNote) String() string {
	if n.Reason != "" {
		return n.Task + ": " + n.Reason
	}
	return n.Task + ": fused " + strings.Join(n.Fused, ", ")
}

// Fuse returns a graph in which every maximal run of adjacent per-record
// tasks (Rec set, one input and one output, linked by an edge) is one task
// running the composition of their Recs (ComposeRecord), with a note per
// task of the result. A fused task is named after its stages joined by "+"
// and runs their Rec even where a stage also has an Fn. Edges keep their
// names and capacities; the edges inside a run are gone.
//
// g must be validated; it is not modified, but the fused graph shares the
// stages' PerRecord values (and so their state) with it: run one or the
// other, once. The result is validated.
func Fuse(g *graph.Graph) (*graph.Graph, []FusionNote, error) {
	fg, notes, _, err := fuse(g)
	return fg, notes, err
}

// fuse is Fuse; it also returns, for each task position of the fused graph,
// the positions in g of the tasks that task runs, in pipeline order.
func fuse(g *graph.Graph) (*graph.Graph, []FusionNote, [][]int, error) {
	n := len(g.Tasks)
	if len(g.Order()) != n {
		return nil, nil, nil, errors.New("sched: fuse: the graph is not validated")
	}
	perRecord := func(t *graph.Task) bool { return t.Rec != nil && t.In == 1 && t.Out == 1 }
	// next[i] is the per-record task that reads per-record task i; prev is
	// the converse; -1 where there is none.
	next, prev := make([]int, n), make([]int, n)
	for i := range next {
		next[i], prev[i] = -1, -1
	}
	for _, e := range g.Edges {
		if a, b := e.From.Task, e.To.Task; perRecord(g.Tasks[a]) && perRecord(g.Tasks[b]) {
			next[a], prev[b] = b, a
		}
	}
	fg := &graph.Graph{}
	var notes []FusionNote
	var groups [][]int
	at := make([]int, n) // position in fg of the task that runs g's task i
	for i, t := range g.Tasks {
		if prev[i] >= 0 {
			continue // placed with the head of its run
		}
		run := []int{i}
		for j := next[i]; j >= 0; j = next[j] {
			run = append(run, j)
		}
		names := make([]string, len(run))
		for k, j := range run {
			names[k] = g.Tasks[j].Name
			at[j] = len(fg.Tasks)
		}
		note := FusionNote{Task: t.Name, Fused: names}
		if len(run) > 1 {
			stages := make([]*task.PerRecord, len(run))
			for k, j := range run {
				stages[k] = g.Tasks[j].Rec
			}
			rec := ComposeRecord(stages)
			note.Task = strings.Join(names, "+")
			fg.Tasks = append(fg.Tasks, &graph.Task{Name: note.Task, In: 1, Out: 1, Rec: &rec})
		} else {
			c := *t // Validate sets Index: g's task must not be touched
			fg.Tasks = append(fg.Tasks, &c)
			note.Reason = whyNotFused(t)
		}
		notes = append(notes, note)
		groups = append(groups, run)
	}
	for _, e := range g.Edges {
		if next[e.From.Task] == e.To.Task {
			continue // inside a run
		}
		fg.Edges = append(fg.Edges, &graph.Edge{
			Name: e.Name,
			From: graph.End{Task: at[e.From.Task], Port: e.From.Port},
			To:   graph.End{Task: at[e.To.Task], Port: e.To.Port},
			Cap:  e.Cap,
		})
	}
	if err := fg.Validate(); err != nil {
		return nil, nil, nil, fmt.Errorf("sched: fuse: internal error: %w", err)
	}
	return fg, notes, groups, nil
}

func whyNotFused(t *graph.Task) string {
	switch {
	case t.Rec != nil:
		return "a run of one stage: nothing to fuse"
	case t.In == 0 && t.Out == 1:
		return "a source: not per-record"
	case t.In == 1 && t.Out == 0:
		return "a sink: not per-record"
	case t.In == 1 && t.Out == 1:
		return "general form: not per-record"
	}
	return fmt.Sprintf("%d inputs and %d outputs: not per-record", t.In, t.Out)
}

// runFused is the fused policy: Fuse, then run the fused graph
// concurrently, with the caller's B or else the fused graph's bound (which
// is smaller: the queues inside a run are gone). Stats describe the fused
// graph, and so does o.Hook; a *TaskError names the original stage that
// failed or set the status, with its index in g.
func runFused(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, error) {
	fg, _, groups, err := fuse(g)
	if err != nil {
		return nil, err
	}
	fpl := pl
	fpl.Bound, fpl.Warning = fg.Bound(), ""
	if o.Buffers == 0 {
		fpl.Buffers = fpl.Bound
	}
	st, err := runConcurrent(ctx, fg, fpl, o)
	return st, blameStage(err, g, fg, groups)
}

// blameStage turns a *TaskError of the fused graph into one of g: the
// stage a stageError points to, or else the first task of the run (a
// panic cannot be traced to a stage without a recover per stage and
// record).
func blameStage(err error, g, fg *graph.Graph, groups [][]int) error {
	te, ok := err.(*TaskError)
	if !ok {
		return err
	}
	for p, t := range fg.Tasks {
		if t.Index != te.Index {
			continue
		}
		run := groups[p]
		var se *stageError
		if errors.As(te.Err, &se) && se.stage < len(run) {
			orig := g.Tasks[run[se.stage]]
			return &TaskError{Task: orig.Name, Index: orig.Index, Err: se.err}
		}
		return &TaskError{Task: te.Task, Index: g.Tasks[run[0]].Index, Err: te.Err}
	}
	return err
}

// ComposeRecord returns the per-record task that runs stages as the chain
// stages[0] | stages[1] | ... would, with the same output and the same
// exit status (Theorem 2.2), in one loop:
//
//   - Start runs the stages' Starts from the last to the first: stage m's
//     Start writes before anything stage m-1 writes reaches stage m's
//     output, since as a task of its own it runs before its first read.
//     What a Start emits goes through the stages after it.
//   - Each record goes through stage 0's Keep or Each, what that emits
//     through stage 1, and so on.
//   - End runs the stages' Ends from the first to the last, each one's
//     output going through the stages after it, as eof travels down the
//     chain.
//
// When every stage is a Keep, the composition is a Keep whose predicate is
// their conjunction (with the Starts and Ends composed as above, if any),
// so the runtime still passes kept records on with no copy.
//
// A stage that stops early (a *task.ExitError, or its output gone) stops
// the stages before it, as their next write would, and ends the stages
// after it, as eof would; the composition then returns the status of the
// rightmost stage with a non-zero one (pipefail). Errors are wrapped so
// that the fused policy can name the stage; the wrapping prints as the
// error itself and unwraps to it.
//
// The stages are composed, not copied: their state (a counter in a
// closure) is the composition's. The emit chain is built once per run, by
// Start, so a record costs no allocation. A record passed between stages
// never enters a buffer, so it is not held to the record size. The result
// is not safe for concurrent use.
func ComposeRecord(stages []*task.PerRecord) task.PerRecord {
	switch len(stages) {
	case 0:
		return task.Copy()
	case 1:
		return *stages[0]
	}
	j := &jam{st: stages}
	keeps := make([]func([]byte) bool, len(stages))
	hasStart, hasEnd := false, false
	for m, s := range stages {
		keeps[m] = s.Keep
		if s.Keep == nil || s.Each != nil {
			keeps = nil
			break
		}
		hasStart = hasStart || s.Start != nil
		hasEnd = hasEnd || s.End != nil
	}
	if keeps == nil {
		return task.PerRecord{Start: j.start, Each: j.each, End: j.end}
	}
	verbatim := true
	for _, s := range stages {
		verbatim = verbatim && s.Verbatim
	}
	r := task.PerRecord{Keep: func(rec []byte) bool {
		for _, keep := range keeps {
			if !keep(rec) {
				return false
			}
		}
		return true
	}, Verbatim: verbatim}
	if hasStart || hasEnd {
		r.Start = j.start // builds the chain that the Ends' output takes
	}
	if hasEnd {
		r.End = j.end
	}
	return r
}

// jam is a composition of per-record stages at run time.
type jam struct {
	st []*task.PerRecord
	// feed[m] hands a record to stage m; feed[len(st)] is the task's
	// output. Built once per run.
	feed []task.Emit
	// Stages before lo have stopped or ended: a record for one of them is
	// a write to a gone reader.
	lo int
	// status keeps the rightmost stage that stopped with a non-zero
	// status (a *stageError); a hard failure is returned at once.
	status pipefail
}

// stageError is an error of the stage at position stage of a composition.
type stageError struct {
	stage int
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func (j *jam) build(out task.Emit) {
	k := len(j.st)
	j.feed = make([]task.Emit, k+1)
	j.feed[k] = out
	for m := k - 1; m >= 0; m-- {
		next := j.feed[m+1]
		if keep := j.st[m].Keep; keep != nil && j.st[m].Each == nil {
			j.feed[m] = func(rec []byte) error {
				if m < j.lo {
					return buffer.ErrReaderGone
				}
				if !keep(rec) {
					return nil
				}
				if err := next(rec); err != nil {
					return j.settle(m, err)
				}
				return nil
			}
			continue
		}
		each := j.st[m].Each
		j.feed[m] = func(rec []byte) error {
			if m < j.lo {
				return buffer.ErrReaderGone
			}
			if err := each(rec, next); err != nil {
				return j.settle(m, err)
			}
			return nil
		}
	}
	j.lo, j.status = 0, pipefail{}
}

func (j *jam) start(out task.Emit) error {
	j.build(out)
	for m, s := range j.st {
		if (s.Keep == nil) == (s.Each == nil) {
			return &stageError{m, task.ErrNoBody}
		}
	}
	for m := len(j.st) - 1; m >= 0; m-- {
		if s := j.st[m]; s.Start != nil {
			if err := s.Start(j.feed[m+1]); err != nil {
				return j.result(j.settle(m, err))
			}
		}
	}
	return nil
}

func (j *jam) each(rec []byte, out task.Emit) error {
	if j.feed == nil {
		j.build(out) // a runtime that skipped Start
	}
	if err := j.feed[0](rec); err != nil {
		return j.result(err)
	}
	return nil
}

func (j *jam) end(out task.Emit) error {
	if j.feed == nil {
		j.build(out)
	}
	if err := j.drain(j.lo); err != nil {
		return err
	}
	return j.status.err()
}

// settle handles err, returned by a function of stage m. An error raised
// by a stage downstream was settled there and goes up as it is. A hard
// failure fails the whole task. A stop (an exit status, or the output
// gone) stops stage m and the stages before it, and ends the stages after
// it. It returns the error to pass up, or a hard failure of a later End.
func (j *jam) settle(m int, err error) error {
	var se *stageError
	if errors.As(err, &se) {
		return err
	}
	se = &stageError{m, err}
	if !stops(err) || m < j.lo {
		return se
	}
	j.lo = m + 1
	var exit *task.ExitError
	if errors.As(err, &exit) && exit.Code != 0 {
		j.status.exit(m, se)
	}
	if herr := j.drain(m + 1); herr != nil {
		return herr
	}
	return se
}

// drain runs the Ends of stages from on, in order: eof reaches them one
// after the other. It returns a hard failure, if one happens.
func (j *jam) drain(from int) error {
	for m := from; m < len(j.st); m++ {
		j.lo = m
		if s := j.st[m]; s.End != nil {
			if err := s.End(j.feed[m+1]); err != nil {
				if err = j.settle(m, err); !stops(err) {
					return err
				}
				return nil // the stop settled the stages after it
			}
		}
	}
	j.lo = len(j.st)
	return nil
}

// result is the error the composition returns for err: after a stop, the
// rightmost non-zero status wins over the stop that ended the task.
func (j *jam) result(err error) error {
	if status := j.status.err(); stops(err) && status != nil {
		return status
	}
	return err
}

// stops reports whether err ends a stage without failing the run.
func stops(err error) bool {
	var exit *task.ExitError
	return errors.Is(err, buffer.ErrReaderGone) || errors.As(err, &exit)
}
