// Package sched runs a graph of tasks under a scheduling policy. The
// concurrent policy runs one goroutine per task on one pool of B buffers;
// with B at least the sum of the queue capacities, Theorem 3.2 of
// "Thrifty Execution of Task Pipelines" (with tpipe's reserve-first writes)
// says a chain cannot deadlock. Below that bound a run may deadlock; the
// pool then detects it and Run returns a *buffer.DeadlockError that says
// what every task waits on. Nothing ever hangs.
//
// Run is safe to call from several goroutines on different graphs.
package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// DefaultRecordSize is S when Options.RecordSize is 0.
const DefaultRecordSize = 256 << 10

// Options configure a run. The zero Options run the default policy (Auto)
// with B at the bound and records of DefaultRecordSize.
type Options struct {
	// Policy is the scheduling policy.
	Policy Policy
	// Buffers is B; 0 means the graph's bound (graph.Graph.Bound). A B
	// below the bound is accepted with a warning (Plan.Warning).
	Buffers int
	// RecordSize is S in bytes; 0 means DefaultRecordSize.
	RecordSize int
	// MaxRecord is the longest record a task reassembles from a chain of
	// buffers; 0 means buffer.DefaultMaxRecord (see buffer.Options).
	MaxRecord int
	// Stderr receives Run's warnings; nil discards them.
	Stderr io.Writer
	// Hook, if set, sees every task before each operation that may block
	// (see buffer.Hook); tests use it to force a schedule.
	Hook buffer.Hook
	// Resolver, if set, is asked to resolve a stall before it is reported
	// as a deadlock (see buffer.Resolver).
	Resolver buffer.Resolver
	// SpillBelowBound has the stalls of a chain run with fewer Buffers
	// than its bound resolved as a graph's are (a queue grown, then spilled
	// to disk), where they would otherwise be reported as the deadlock that
	// Theorem 3.2 allows. The runner sets it: a user who asks for few
	// buffers gets a slower run, not an error. Studies of the theorem leave
	// it off.
	SpillBelowBound bool
	// Trace, if set, receives one line per task switch under the ros
	// policy: which task ran and why it stopped.
	Trace io.Writer
	// CapAuto sizes queue capacities at run time instead of using the
	// graph's: every queue starts at 2 and the bottleneck's inputs grow as
	// the sliding-window rule asks (see capauto.go). B defaults to the most
	// the rule can ask for; capacities never exceed B in total. Policies
	// that cannot (ros, serial) use the graph's capacities.
	CapAuto bool
	// TempDir is where queues spill when a graph's stall is resolved by
	// moving buffers to disk, and where the serial policy keeps its
	// edges; "" means os.TempDir().
	TempDir string
	// Spool configures the spool policy; nil under it runs on a
	// temporary spool.
	Spool *SpoolOptions
	// Replicas is how many copies a stateless per-record task
	// (task.PerRecord.Fresh) may run as under the concurrent policy, its
	// output kept in input order (task.PerRecord.Replicated): 0 is auto,
	// as many as GOMAXPROCS, taken once the task measures itself busy; 1
	// never; N >= 2 that many from the start.
	Replicas int
	// Live, if set, shows the run while it goes (see Live).
	Live *Live
}

// Replica says that a task runs as several copies (Options.Replicas).
type Replica struct {
	Task int    // index in the graph's tasks
	Name string // the task's name
	N    int    // copies at most
	Auto bool   // turned to copies once measured busy, not from the start
}

// TaskError is a task's failure; Run returns the first one.
type TaskError struct {
	Task  string
	Index int
	Err   error
}

func (e *TaskError) Error() string { return e.Task + ": " + e.Err.Error() }
func (e *TaskError) Unwrap() error { return e.Err }

// TaskStats are the statistics of one task. Blocked comes from the pool's
// timing of waits (buffer.Proc.Blocked): exact for a task that waits less
// often than every 32 µs, and for a faster one an unbiased estimate from
// sampled waits, within a few percent over thousands of waits and much
// closer over a run. Busy is the rest of the task's wall time.
type TaskStats struct {
	Name    string        `json:"name"`
	Index   int           `json:"index"`
	Busy    time.Duration `json:"busy_ns"`    // wall time not spent blocked in tpipe
	Blocked time.Duration `json:"blocked_ns"` // time waiting for a queue or FREE
	Status  int           `json:"status"`     // exit status, from a *task.ExitError
	Err     string        `json:"error,omitempty"`
	// Under the spool policy: the segments of output the task made in
	// this run, and those it found made by an earlier one (the cache).
	SegmentsRun    int `json:"segments_run"`
	SegmentsCached int `json:"segments_cached"`
}

// EdgeStats are the statistics of one queue.
type EdgeStats struct {
	Name      string        `json:"name"`
	From      string        `json:"from"`
	To        string        `json:"to"`
	Cap       int           `json:"cap"`
	Records   int64         `json:"records"`
	Bytes     int64         `json:"bytes"`
	HighWater int           `json:"high_water"`
	ReadWait  time.Duration `json:"read_wait_ns"`
	WriteWait time.Duration `json:"write_wait_ns"`
	Growths   int           `json:"growths"`
	Spills    int           `json:"spills"`
	Spilled   int64         `json:"spilled_bytes"`
}

// Stats describe a finished run. They are returned even when the run
// failed.
type Stats struct {
	Policy           Policy        `json:"policy"`
	Runs             Policy        `json:"runs"` // the policy auto chose, or Policy
	Buffers          int           `json:"buffers"`
	RecordSize       int           `json:"record_size"`
	Bound            int           `json:"bound"`
	BuffersHighWater int           `json:"buffers_high_water"` // most buffers outside FREE at once
	Wall             time.Duration `json:"wall_ns"`
	Tasks            []TaskStats   `json:"tasks"`
	Edges            []EdgeStats   `json:"edges"`
	Disk             *DiskStats    `json:"disk,omitempty"` // the serial policy's bytes to and from disk
	Spool            *SpoolStats   `json:"spool,omitempty"`
	// What resolving stalls took (graphs that are not chains): queue
	// growths, spills to disk, record bytes spilled and their compressed
	// size on disk.
	Growths        int   `json:"growths"`
	Spills         int   `json:"spills"`
	SpilledBytes   int64 `json:"spilled_bytes"`
	SpillDiskBytes int64 `json:"spill_disk_bytes"`
	// CapAuto says where capacities sized at run time landed.
	CapAuto *CapAutoStats `json:"cap_auto,omitempty"`
}

// Plan is a graph with everything decided about how it will run: the
// policy, B and S, what the bound is and whether it is safe. MakePlan makes
// it once; Plan.Run runs it.
type Plan struct {
	Graph   *graph.Graph
	Options Options
	Policy  Policy
	// Runs is the policy that actually runs: the same as Policy, except
	// for one that chooses (Auto), and Why says why.
	Runs       Policy
	Why        string
	Buffers    int
	RecordSize int
	Bound      int
	// BoundIs says in words what Bound counts.
	BoundIs string
	Warning string // set when Buffers is below Bound
	// Safe is true when no run at B >= Bound can deadlock; Shape says
	// why, or why no B is safe (graph.Graph.Shape).
	Safe  bool
	Shape string
	// Resolve is true when stalls are resolved at run time (a graph that
	// is not a chain): queues grow, then spill to disk.
	Resolve bool
	// spillsBelow is set when Resolve is only because Options.SpillBelowBound
	// asked it of a chain given fewer buffers than its bound.
	spillsBelow bool
	// capAuto is set when queue capacities are sized at run time:
	// Options.CapAuto under a policy that can.
	capAuto bool
	// Replicas lists the tasks that may run as several copies.
	Replicas []Replica
}

// planReplicas decides which tasks may run as copies: stateless per-record
// tasks, under the concurrent policy (ros runs one task at a time, fused
// loops and serial runs have no queue to share out), when there is more
// than one CPU or the user asked for copies.
func planReplicas(g *graph.Graph, pl *Plan) {
	n, auto := pl.Options.Replicas, pl.Options.Replicas == 0
	if auto {
		n = runtime.GOMAXPROCS(0)
	}
	if n < 2 || pl.Runs != Concurrent {
		return
	}
	for i, t := range g.Tasks {
		if t.Rec != nil && t.Rec.Fresh != nil && t.In == 1 && t.Out == 1 {
			pl.Replicas = append(pl.Replicas, Replica{Task: i, Name: t.Name, N: n, Auto: auto})
		}
	}
}

// taskFunc is the function that runs task i of g (the plan's graph, or
// the part of it a policy runs): its own, or its replicated form.
func (pl *Plan) taskFunc(g *graph.Graph, i int) task.Func {
	t := g.Tasks[i]
	for _, r := range pl.Replicas {
		if g == pl.Graph && r.Task == i {
			return t.Rec.Replicated(r.N, r.Auto)
		}
	}
	return t.Func()
}

// Memory returns B x S, the record memory of the run.
func (p *Plan) Memory() int64 { return int64(p.Buffers) * int64(p.RecordSize) }

// MakePlan validates g and decides how it runs under o.
func MakePlan(g *graph.Graph, o Options) (*Plan, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if o.Policy >= numPolicies {
		return nil, fmt.Errorf("sched: %v: no such policy", o.Policy)
	}
	pl := &Plan{Graph: g, Options: o, Policy: o.Policy, Runs: o.Policy, Buffers: o.Buffers, RecordSize: o.RecordSize,
		Resolve: !g.IsChain(), BoundIs: "the sum of queue capacities"}
	if choose := o.Policy.row().choose; choose != nil {
		pl.Runs, pl.Why = choose(runtime.GOMAXPROCS(0))
	}
	pl.capAuto = o.CapAuto && pl.Runs.row().capAuto
	pl.Bound, pl.Safe, pl.Shape = g.Shape()
	if progs := programs(g); len(progs) > 0 {
		// What a program does with its pipes is not in the graph: no B
		// can be promised safe. Stalls through it are seen at run time.
		if pl.Safe {
			pl.Bound = max(pl.Bound, len(g.Edges)+1)
		}
		pl.Safe = false
		pl.Shape += fmt.Sprintf("; this does not cover the external programs (%s): one may stop reading a pipe until another is fed or drained, "+
			"which tpipe cannot know in advance; at run time a program's task that waits on its pipe with no bytes moved for %v counts as blocked, "+
			"and such a stall is resolved like any other (grow the smallest full queue, then spill it) or reported", strings.Join(progs, ", "), buffer.DefaultGrace)
	}
	if pl.Resolve && !pl.Safe {
		pl.BoundIs = "the larger of the sum of queue capacities and one more than the queues"
	}
	if o.CapAuto && g.IsChain() {
		pl.Bound = capAutoBound(g)
		pl.BoundIs = "every queue at 2 plus the largest window --cap auto may ask for"
		pl.Shape = "a chain with capacities sized at run time (--cap auto): every queue starts at 2 and the bottleneck's input grows to the sliding window of PipeFlow; B covers the largest window, so Theorem 3.2 holds throughout"
	}
	if adjust := pl.Runs.row().plan; adjust != nil {
		adjust(g, pl)
	}
	if !pl.Resolve && o.SpillBelowBound && o.Buffers > 0 && o.Buffers < pl.Bound {
		pl.Resolve, pl.spillsBelow = true, true
	}
	if n, who := g.Held(); n > 0 && pl.Runs != ROS {
		pl.Shape += fmt.Sprintf("; the capacities count the %d buffers that tasks keep besides the ones they read (%s): "+
			"each input queue of such a task has as many slots more, so that its writer keeps its room, and every kept buffer is charged to it, "+
			"so Theorem 3.2's argument holds with B grown by exactly %d", n, who, n)
	}
	if pl.RecordSize == 0 {
		pl.RecordSize = DefaultRecordSize
	}
	if pl.RecordSize < 0 {
		return nil, fmt.Errorf("sched: record size %d: need a positive size", pl.RecordSize)
	}
	switch {
	case pl.Buffers == 0:
		pl.Buffers = pl.Bound
	case pl.Buffers < 0:
		return nil, fmt.Errorf("sched: %d buffers: need at least 1", pl.Buffers)
	case pl.spillsBelow:
		pl.Warning = fmt.Sprintf("%d buffers is below the bound of %d (%s, Theorem 3.2); stalls will be resolved by spilling queued records to disk, which is slower", pl.Buffers, pl.Bound, pl.BoundIs)
	case pl.Buffers < pl.Bound && pl.Resolve && pl.Runs.row().anyB:
		pl.Warning = fmt.Sprintf("%d buffers is below %d (%s); stalls will be resolved by spilling a buffer at a time, which is slow", pl.Buffers, pl.Bound, pl.BoundIs)
	case pl.Buffers < pl.Bound && pl.Resolve && !pl.Safe:
		pl.Warning = fmt.Sprintf("%d buffers is below %d (%s); a stall may not be resolvable and would be reported", pl.Buffers, pl.Bound, pl.BoundIs)
	case pl.Buffers < pl.Bound:
		pl.Warning = fmt.Sprintf("%d buffers is below the bound of %d (the sum of queue capacities, Theorem 3.2); the run may deadlock", pl.Buffers, pl.Bound)
	}
	if err := checkMemory(pl); err != nil {
		return nil, err
	}
	planReplicas(g, pl)
	return pl, nil
}

// chooseAuto picks the policy auto runs with n CPUs. Fusing per-record
// stages saves a queue handoff per buffer, which batching has already made
// small, and gives up running the stages in parallel. Measured on 2 CPUs
// with 1 GiB of log lines: 'grep | cut | sort | uniq -c' 0.82 s concurrent,
// 1.04 s fused; three greps 0.37 s against 0.74 s. On one CPU there is no
// parallelism to lose and fusion is ahead (BenchmarkPolicies -cpu 1).
func chooseAuto(n int) (Policy, string) {
	if n == 1 {
		return Fused, "one CPU: fusing per-record stages saves handoffs and loses no parallelism"
	}
	return Concurrent, fmt.Sprintf("%d CPUs: stages in parallel beat fused loops (measured: fusion was 1.3x to 2x slower on 2 CPUs)", n)
}

// Run plans g under o (MakePlan), prints the plan's warning, if any, on
// o.Stderr, and runs it (Plan.Run).
func Run(ctx context.Context, g *graph.Graph, o Options) (*Stats, error) {
	pl, err := MakePlan(g, o)
	if err != nil {
		return nil, err
	}
	if pl.Warning != "" && o.Stderr != nil {
		fmt.Fprintf(o.Stderr, "tpipe: warning: %s\n", pl.Warning)
	}
	return pl.Run(ctx)
}

// Run runs the plan's graph to completion and returns its statistics and
// an error: the first hard failure (a *TaskError naming the task, a
// *buffer.DeadlockError, or ctx's error), which stops every task; or else,
// when tasks ended with a non-zero *task.ExitError, a *TaskError for the one
// with the greatest index (the rightmost, as bash's pipefail). It returns
// only after every task it started has returned. A plan runs once: tasks
// keep their state.
func (pl *Plan) Run(ctx context.Context) (*Stats, error) {
	st, err := pl.Runs.row().run(ctx, pl.Graph, *pl, pl.Options)
	if st != nil {
		st.Policy, st.Runs = pl.Policy, pl.Runs
	}
	return st, err
}

// programs returns the external programs of g (graph.Task.Together), in
// task order.
func programs(g *graph.Graph) []string {
	var names []string
	for _, t := range g.Tasks {
		if t.Together != "" && !slices.Contains(names, t.Together) {
			names = append(names, t.Together)
		}
	}
	return names
}

func hasBlocking(g *graph.Graph) bool {
	for _, t := range g.Tasks {
		if t.Blocking {
			return true
		}
	}
	return false
}

// runState is what every policy shares: the pool, queues and procs of one
// run, the error rules, and the statistics.
type runState struct {
	g      *graph.Graph
	pl     Plan
	pool   *buffer.Pool
	queues []*buffer.Queue
	procs  []*buffer.Proc
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool
	st     *Stats
	start  time.Time

	auto   *capAuto // the capacity sampler of CapAuto, if on
	detach func()   // ends Options.Live's view of the run
	mu     sync.Mutex
	errs   pipefail // the run's error, under mu
	// ended[i] is set once task i has returned and st.Tasks[i] holds its
	// statistics; a sampler reads both under mu.
	ended []bool
}

// newRun sets up the pool, a queue per edge and a proc per task; compete
// switches off the pool's FREE handoff (buffer.Options.Compete). The
// caller must call finish.
func newRun(ctx context.Context, g *graph.Graph, pl Plan, o Options, compete bool) (*runState, error) {
	pool, err := buffer.NewPool(buffer.Options{
		Buffers: pl.Buffers, RecordSize: pl.RecordSize, MaxRecord: o.MaxRecord, Hook: o.Hook, Resolver: o.Resolver,
		Spill: pl.Resolve, SpillDir: o.TempDir,
		// A task waiting outside tpipe hides a stuck chain from the global
		// check: look for stuck parts.
		Local:   hasBlocking(g),
		Compete: compete,
	})
	if err != nil {
		return nil, err
	}
	r := &runState{g: g, pl: pl, pool: pool, queues: make([]*buffer.Queue, len(g.Edges)), procs: make([]*buffer.Proc, len(g.Tasks))}
	ins := make([][]*buffer.Queue, len(g.Tasks))
	outs := make([][]*buffer.Queue, len(g.Tasks))
	for i, t := range g.Tasks {
		ins[i] = make([]*buffer.Queue, t.In)
		outs[i] = make([]*buffer.Queue, t.Out)
	}
	for k, e := range g.Edges {
		c := g.QueueCap(e)
		if pl.capAuto {
			c = capAutoStart + g.Tasks[e.To.Task].Holds
		}
		q, err := pool.NewQueue(e.Name, c)
		if err != nil {
			return nil, err
		}
		r.queues[k] = q
		outs[e.From.Task][e.From.Port] = q
		ins[e.To.Task][e.To.Port] = q
	}
	for _, i := range g.Order() {
		t := g.Tasks[i]
		p, err := pool.NewProc(t.Name, t.Index, ins[i], outs[i])
		if err != nil {
			return nil, err
		}
		r.procs[i] = p
		if t.Together != "" {
			// A part of an external program: its waits on the program's
			// pipes count for deadlock detection.
			p.SetProgram(t.Together)
		}
		if t.Blocking && t.In > 0 {
			// No pool buffer may be kept through a wait outside tpipe.
			p.CopyReads()
		}
		if !t.Effects && t.Together == "" {
			p.StopUnread()
		}
	}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	r.stop = context.AfterFunc(r.ctx, func() { pool.Abort(context.Cause(r.ctx)) })
	r.st = &Stats{Policy: pl.Policy, Buffers: pl.Buffers, RecordSize: pl.RecordSize, Bound: pl.Bound,
		Tasks: make([]TaskStats, len(g.Tasks))}
	r.ended = make([]bool, len(g.Tasks))
	r.start = time.Now()
	if pl.capAuto {
		r.auto = startCapAuto(r)
	}
	r.detach = o.Live.Attach(r.sampleRun)
	return r, nil
}

// runTask runs task i to its end in the calling goroutine (or coroutine)
// and applies the error rules: a *task.ExitError is a status and the
// others go on; buffer.ErrReaderGone is success; any other error is a hard
// failure that aborts the run, unless it is the run's abort itself.
func (r *runState) runTask(i int) {
	t0 := time.Now()
	r.endTask(i, t0, call(r.ctx, r.pl.taskFunc(r.g, i), r.procs[i].Ports()))
}

// endTask ends task i, begun at t0, whose function returned err: it
// records the task's status and error (aborting the run on a failure),
// finishes its ports and keeps its statistics.
func (r *runState) endTask(i int, t0 time.Time, err error) {
	t, p := r.g.Tasks[i], r.procs[i]
	status := 0
	var exit *task.ExitError
	if errors.As(err, &exit) {
		te := &TaskError{Task: t.Name, Index: t.Index, Err: err}
		if exit.Code != 0 {
			r.mu.Lock()
			r.errs.exit(t.Index, te)
			r.mu.Unlock()
		}
		err = nil
		status = exit.Code
	}
	failed := err != nil && !errors.Is(err, buffer.ErrReaderGone)
	if failed {
		// An error that is the pool's own abort (a deadlock, a
		// cancellation, another task's failure) is not this task's.
		perr := r.pool.Err()
		if perr != nil && errors.Is(err, perr) {
			// The pool's own abort (a deadlock): tasks waiting outside
			// tpipe learn it from ctx, which stops their programs.
			r.cancel(perr)
		}
		if perr == nil || !errors.Is(err, perr) {
			te := &TaskError{Task: t.Name, Index: t.Index, Err: err}
			r.mu.Lock()
			r.errs.fail(te)
			r.mu.Unlock()
			r.pool.Abort(te)
			r.cancel(te)
		}
	}
	p.Finish(failed)
	wall := time.Since(t0)
	blocked := p.Blocked()
	ts := TaskStats{Name: t.Name, Index: t.Index, Blocked: blocked, Busy: max(0, wall-blocked), Status: status}
	if failed {
		ts.Err = err.Error()
	}
	r.mu.Lock()
	r.st.Tasks[i], r.ended[i] = ts, true
	r.mu.Unlock()
}

// finish collects the statistics, checks that every buffer came back to
// FREE, and picks the run's error. Every task must have returned.
func (r *runState) finish() (*Stats, error) {
	r.stop()
	r.cancel(nil)
	r.detach()
	st := r.st
	if r.auto != nil {
		st.CapAuto = r.auto.finish()
	}
	st.Wall = time.Since(r.start)
	st.BuffersHighWater = r.pool.HighWater()
	for k, e := range r.g.Edges {
		qs := r.queues[k].Stats()
		st.Edges = append(st.Edges, EdgeStats{
			Name: e.Name, From: r.g.Tasks[e.From.Task].Name, To: r.g.Tasks[e.To.Task].Name, Cap: qs.Cap,
			Records: qs.Records, Bytes: qs.Bytes, HighWater: qs.HighWater,
			ReadWait: qs.ReadWait, WriteWait: qs.WriteWait, Growths: qs.Growths,
			Spills: qs.Spills, Spilled: qs.Spilled,
		})
	}
	rs := r.pool.Resolved()
	st.Growths, st.Spills, st.SpilledBytes, st.SpillDiskBytes = rs.Growths, rs.Spills, rs.SpilledBytes, rs.DiskBytes
	r.pool.Close()
	if n := r.pool.Free(); n != r.pl.Buffers {
		return st, fmt.Errorf("sched: internal error: %d of %d buffers did not come back to FREE: %v", r.pl.Buffers-n, r.pl.Buffers, r.pool.Check())
	}
	if r.errs.first != nil {
		return st, r.errs.first
	}
	if err := r.pool.Err(); err != nil {
		var d *buffer.DeadlockError
		if errors.As(err, &d) && d.Artificial && d.Need == 0 && r.pl.Buffers < r.pl.Bound {
			d.Need, d.NeedIs = r.pl.Bound, "the bound"
			if r.pl.Resolve && !r.pl.Safe {
				d.NeedIs = "one more than the queues"
			}
		}
		return st, err
	}
	return st, r.errs.err()
}

// call runs fn, turning a panic into an error: no panic trace reaches a
// user, but the stack is kept in the error for whoever debugs the task.
func call(ctx context.Context, fn task.Func, p *buffer.Ports) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx, p)
}

// PanicError is a task's panic, turned into an error.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }
