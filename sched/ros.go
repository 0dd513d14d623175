package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/task"
)

// Record Oriented Scheduling ("Thrifty Execution of Task Pipelines",
// section 4): exactly one task runs at a time, always the runnable one with
// the greatest index, and by Theorem 4.1 one buffer is enough for a chain.
// Tasks keep their blocking Read and Write: each runs as a coroutine
// (iter.Pull), and parking in the pool yields back to the scheduler, a
// direct handoff with no trip through the goroutine scheduler's queues and
// no busy waiting. A per-record filter is cheaper still: it needs no
// stack of its own between buffers, so the scheduler calls it as a
// function (buffer.Filter.Step, the loop jamming of section 5 at run
// time), with no switch at all, and resumes it as a coroutine only for
// what a step leaves to the task's own loop. So are a source that makes
// its next record when asked and a sink that takes records as they come
// (task.Source, task.Sink; buffer.Source.Step, buffer.Sink.Step): a chain
// of such ends and filters moves a record with no switch (see
// rosStepper).
//
// A task that reads records in place and then writes would hold the only
// buffer while it needs another, so under ros every task with outputs
// copies each input batch into a private buffer (buffer.Proc.CopyReads),
// the paper's task-local record; filters (Pass) still move buffers.

// rosCore decides which task runs next. It is deterministic and runs no
// goroutines: given which tasks are done, which wait, and which run on
// their own goroutine, the choice is the greatest index left.
type rosCore struct {
	done     []bool // by index
	external []bool // by index: tasks on their own goroutine, never chosen
}

func newROSCore(n int) *rosCore {
	return &rosCore{done: make([]bool, n), external: make([]bool, n)}
}

// next returns the index of the task to run, or -1 when none can.
func (c *rosCore) next(waiting func(idx int) bool) int {
	return c.nextFrom(len(c.done)-1, waiting)
}

// nextFrom is next for a caller that knows no task above from can run:
// none was runnable above the last task chosen, and a task woken since
// is at most the greatest index woken.
func (c *rosCore) nextFrom(from int, waiting func(idx int) bool) int {
	for i := min(from, len(c.done)-1); i >= 0; i-- {
		if !c.done[i] && !c.external[i] && !waiting(i) {
			return i
		}
	}
	return -1
}

// finished reports whether every task the core schedules is done.
func (c *rosCore) finished() bool {
	for i, d := range c.done {
		if !d && !c.external[i] {
			return false
		}
	}
	return true
}

// coroutine is one task run under ros.
type coroutine struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
}

// rosParker parks a coroutine task by yielding to the scheduler, and
// tells an idle scheduler that a task may run again. It is a
// buffer.Yielder too: a task about to go on without waiting yields when a
// task with a greater index has become runnable, since the paper's rule is
// that the runnable task with the greatest index always runs (a task that
// gave the one buffer back and woke a greater one must not take it again
// first). A task about to wait just parks: it was not runnable.
//
// It is a buffer.WaitTracker: the scheduler learns that a task waits from
// parked (set by Park, read once the task has switched back) or from
// Filter.Waits, and that it was woken from woken, so the pool keeps no
// atomic flag per task for it.
type rosParker struct {
	co     *coroutine
	notify chan struct{}
	idx    int
	// woken holds the tasks made runnable since the scheduler last chose;
	// at that choice no greater task was runnable, so a greater one now
	// must have been woken since.
	woken *wokenSet
	// external is rosCore.external, by index: the tasks on their own
	// goroutines. Fixed before any task starts.
	external []bool
	// parked is set by Park and cleared by Yield, on the task's coroutine;
	// the scheduler reads it when the task has switched back.
	parked bool
}

func (k *rosParker) Park(t *buffer.Proc) error {
	k.parked = true
	return k.yield()
}

func (k *rosParker) Unpark(t *buffer.Proc) {
	k.woken.add(t.Index())
	k.notifyIdle()
}

// UnparkBy is Unpark for a wake on the thread of task by: if by is one of
// the tasks the scheduler runs, the wake is on the scheduler's thread
// (buffer.UnparkerBy), and is noted with no atomic operation.
func (k *rosParker) UnparkBy(t, by *buffer.Proc) {
	if k.external[by.Index()] {
		k.Unpark(t)
		return
	}
	k.woken.addLocal(t.Index())
}

// notifyIdle wakes the scheduler if it waits for a task on its own
// goroutine.
func (k *rosParker) notifyIdle() {
	if k.notify != nil {
		select {
		case k.notify <- struct{}{}:
		default:
		}
	}
}

// MustYield reports whether a task with a greater index was made runnable
// since the scheduler chose this one.
func (k *rosParker) MustYield(*buffer.Proc) bool { return k.woken.above(k.idx) }

func (k *rosParker) Yield(*buffer.Proc) error {
	k.parked = false
	return k.yield()
}

// TracksWaits marks rosParker as a buffer.WaitTracker.
func (k *rosParker) TracksWaits() {}

var (
	_ buffer.Yielder     = (*rosParker)(nil)
	_ buffer.WaitTracker = (*rosParker)(nil)
	_ buffer.UnparkerBy  = (*rosParker)(nil)
)

// wokenSet is the set of tasks, by index, woken since the scheduler last
// took it: a bit per task. Unpark adds to it with the pool's lock held,
// from whichever goroutine wakes the task (a task on its own goroutine, or
// an Abort), with one atomic OR, where a flag per task set and cleared by
// the pool cost two atomic stores; UnparkBy adds a wake on the
// scheduler's own thread to local, a plain word, with none. The scheduler
// takes the set whole.
type wokenSet struct {
	words []atomic.Uint64
	local []uint64 // only on the scheduler's thread
}

func newWokenSet(n int) *wokenSet {
	return &wokenSet{words: make([]atomic.Uint64, (n+63)/64), local: make([]uint64, (n+63)/64)}
}

func (s *wokenSet) add(idx int) { s.words[idx/64].Or(1 << (idx % 64)) }

// addLocal adds idx on the scheduler's thread.
func (s *wokenSet) addLocal(idx int) { s.local[idx/64] |= 1 << (idx % 64) }

// above reports whether a task of index greater than idx is in the set;
// it runs on the scheduler's thread.
func (s *wokenSet) above(idx int) bool {
	i := idx / 64
	if (s.local[i]|s.words[i].Load())>>(idx%64)>>1 != 0 {
		return true
	}
	for i++; i < len(s.words); i++ {
		if s.local[i]|s.words[i].Load() != 0 {
			return true
		}
	}
	return false
}

// take empties the set, clears waits[idx] for each task idx that was in
// it (the scheduler's record: woken tasks no longer wait), and returns
// the greatest index taken, or -1. It sets the flags itself rather than
// calling a function per task: it runs once per step of the scheduler.
func (s *wokenSet) take(waits []bool) int {
	top := -1
	for i := range s.words {
		x := s.local[i]
		if w := &s.words[i]; w.Load() != 0 {
			x |= w.Swap(0)
		}
		if x == 0 {
			continue
		}
		s.local[i] = 0
		for ; x != 0; x &= x - 1 {
			top = i*64 + bits.TrailingZeros64(x)
			waits[top] = false
		}
	}
	return top
}

// yield gives the CPU back to the scheduler; an error means the scheduler
// stopped this coroutine and the task must end.
func (k *rosParker) yield() error {
	if !k.co.yield(struct{}{}) {
		return errROSStopped
	}
	return nil
}

var errROSStopped = errors.New("sched: ros scheduler stopped a task")

// notifyParker is the parker of a task on its own goroutine under ros: it
// parks on a channel as usual and also wakes an idle scheduler.
type notifyParker struct {
	wake   chan struct{}
	notify chan struct{}
}

func (k *notifyParker) Park(*buffer.Proc) error { <-k.wake; return nil }

func (k *notifyParker) Unpark(*buffer.Proc) {
	k.wake <- struct{}{}
	select {
	case k.notify <- struct{}{}:
	default:
	}
}

// planROS is the ros row's plan: Theorem 4.1's one buffer for a chain,
// plus what tasks on their own goroutines may keep.
func planROS(g *graph.Graph, pl *Plan) {
	pl.Bound = rosBound(g)
	pl.BoundIs = "one, plus what tasks on their own goroutines may keep"
	if pl.Resolve && !pl.Safe {
		// One buffer is enough to resolve any stall, by spilling one
		// buffer at a time; a queue per buffer more lets stalls grow a
		// queue instead (tee | cat of 50,000 lines, S = 4K: 386 ms at
		// B = 1, 7 ms at B = 8).
		pl.Bound = max(pl.Bound, len(g.Edges)+1)
	}
	if pl.Resolve {
		pl.Shape = "Record Oriented Scheduling on a graph: one task at a time, the greatest runnable index first; tasks copy what they read, so at a stall every buffer is queued and a stuck part can always be resolved by growing or spilling a queue"
	} else {
		pl.Shape = "Record Oriented Scheduling: one buffer suffices for a chain (Theorem 4.1)"
	}
	if n, who := g.Held(); n > 0 {
		pl.BoundIs += ", plus every queue into a task that keeps buffers or above one"
		pl.Shape += fmt.Sprintf("; tasks that keep what they read (%s, %d buffers in all) read in place and write while they keep, so that their input queues, and those above, may all be full when they need a buffer: "+
			"B counts those queues whole, as Theorem 3.2 does, and the one buffer of Theorem 4.1 circulates among the rest",
			who, n)
	}
}

// rosBound is the B the ros policy needs: by Theorem 4.1 one buffer for the
// tasks it runs one at a time, plus, for each task on its own goroutine
// (graph.Task.Blocking) that writes, the capacity of its outputs: such a
// task is outside the one-at-a-time rule and can keep that many buffers
// (a partly filled one counts against the same capacity as queued ones).
//
// A task that keeps buffers of its input (graph.Task.Holds) reads it in
// place, not copied, and writes while it keeps them: Theorem 4.1's one
// circulating buffer no longer suffices. When such a task waits for FREE,
// its input queue may be full (what it keeps, what it reads, what its
// writer queued), and so may every queue above it, each reader blocked on
// the queue below (TestDelaysCompleteUnderEveryPolicy found both). So B
// counts, as Theorem 3.2 does, every queue into such a task or into a
// task above one, and the one circulating buffer on top.
func rosBound(g *graph.Graph) int {
	keeps := make([]bool, len(g.Tasks)) // holds, or feeds one that does
	for i, t := range g.Tasks {
		if t.Holds > 0 {
			keeps[i] = true
			for u, is := range ancestors(g, i).of {
				keeps[u] = keeps[u] || is
			}
		}
	}
	b := 1
	for _, e := range g.Edges {
		switch {
		case keeps[e.To.Task]:
			b += g.QueueCap(e)
		case g.Tasks[e.From.Task].Blocking:
			b += e.Cap
		}
	}
	return b
}

func runROS(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, error) {
	r, err := newRun(ctx, g, pl, o, true)
	if err != nil {
		return nil, err
	}
	order := g.Order() // order[idx] is the task at index idx
	core := newROSCore(len(order))
	cos := make([]*coroutine, len(order))
	// steps[idx] is set for a task run as plain calls (a buffer.Filter,
	// Source or Sink) rather than resumed as a coroutine, until it needs
	// its general form.
	steps := make([]stepper, len(order))
	starts := make([]time.Time, len(order)) // when each task first ran
	// notify wakes the scheduler when it waits for a task on its own
	// goroutine; coroutines need it only if there are such tasks.
	notify := make(chan struct{}, 1)
	coNotify := notify
	if !hasBlocking(g) {
		coNotify = nil
	}
	var wg sync.WaitGroup
	// waits[idx] is the scheduler's own record of whether a task it runs
	// waits: set when the task stops waiting (rosParker.parked,
	// Filter.Waits), cleared when the set of tasks woken has it. A wake
	// comes after the wait began, so taking the set after recording the
	// wait never misses it. Tasks on their own goroutines keep the pool's
	// record (their notifyParker is no WaitTracker), but the core never
	// asks about them.
	waits := make([]bool, len(order))
	waiting := func(idx int) bool { return waits[idx] }
	woken := newWokenSet(len(order))
	parkers := make([]*rosParker, len(order))
	for idx, i := range order {
		p := r.procs[i]
		// A task that keeps what it reads (graph.Task.Holds) reads in
		// place; rosBound gives it the buffers for that.
		if g.Tasks[i].Out > 0 && g.Tasks[i].Holds == 0 || g.Tasks[i].Blocking {
			p.CopyReads()
		}
		if g.Tasks[i].Blocking {
			core.external[idx] = true
			p.SetParker(&notifyParker{wake: make(chan struct{}, 1), notify: notify})
			continue
		}
		// Nothing reads its time blocked over windows of milliseconds
		// (ros has neither --cap auto nor replicas): fewer clock readings.
		p.SampleSparsely()
		fn := r.pl.taskFunc(r.g, i)
		steps[idx] = rosStepper(r.ctx, g, &r.pl, o, i, p.Ports())
		if src, ok := steps[idx].(*sourceStep); ok {
			// The loop goes on from what the steps left: a record
			// longer than S that they could not write.
			fn = func(_ context.Context, p *buffer.Ports) error { return src.form.Loop(p, src.Held()) }
		}
		co := &coroutine{}
		co.next, co.stop = iter.Pull(func(yield func(struct{}) bool) {
			co.yield = yield
			r.endTask(i, starts[idx], call(r.ctx, fn, p.Ports()))
		})
		parkers[idx] = &rosParker{co: co, notify: coNotify, idx: idx, woken: woken, external: core.external}
		p.SetParker(parkers[idx])
		cos[idx] = co
	}
	// Every task is set up before the first one starts.
	for idx, i := range order {
		if !core.external[idx] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runTask(i)
			select {
			case notify <- struct{}{}:
			default:
			}
		}()
	}
	defer func() {
		for _, co := range cos {
			if co != nil {
				co.stop()
			}
		}
	}()
	left := 0 // tasks the core schedules that are not done
	for idx := range order {
		if !core.external[idx] {
			left++
		}
	}
	last := len(order) - 1 // the task chosen last
	for step := 1; left > 0; {
		// Taking the greatest index woken also starts the record of wakes
		// for the task about to run (rosParker.MustYield).
		idx := core.nextFrom(max(woken.take(waits), last), waiting)
		if idx < 0 {
			if coNotify == nil {
				// Nothing could wake a task: the pool should have seen
				// the stall. Aborting wakes every task, to end.
				r.pool.Abort(errors.New("sched: internal error: no task can run under ros"))
				continue
			}
			// Only tasks on their own goroutines can change anything now
			// (the pool aborts a stall of the others at once).
			<-notify
			continue
		}
		last = idx
		t := g.Tasks[order[idx]]
		if starts[idx].IsZero() {
			starts[idx] = time.Now()
		}
		stepped := false
		if f := steps[idx]; f != nil {
			stepped = true
			switch err := runStep(f); {
			case err == nil:
				// It waits, or gives way.
				waits[idx] = f.Waits()
			case errors.Is(err, buffer.ErrStepUnfit), err == io.EOF && hasEnd(t):
				// The task's own loop from here on, on the same ports
				// (after the end, its Pass or Read returns io.EOF at
				// once and End runs).
				steps[idx] = nil
				stepped = false
			default:
				if err == io.EOF {
					err = nil
				}
				r.endTask(order[idx], starts[idx], err)
				core.done[idx] = true
				left--
			}
		}
		if !stepped {
			if _, more := cos[idx].next(); !more {
				core.done[idx] = true
				left--
			} else {
				waits[idx] = parkers[idx].parked
			}
		}
		if o.Trace != nil {
			traceStep(o.Trace, step, t, r.procs[order[idx]], core.done[idx])
			step++
		}
	}
	wg.Wait()
	return r.finish()
}

// stepper is a task that ros runs as plain calls: a buffer.Filter,
// Source or Sink.
type stepper interface {
	Step() error
	Waits() bool
}

var (
	_ stepper = (*buffer.Filter)(nil)
	_ stepper = (*sourceStep)(nil)
	_ stepper = (*buffer.Sink)(nil)
)

// sourceStep is a task.Source run as calls: its Start before the first
// step, and its Stop (task.Source.End) once a step ends it.
type sourceStep struct {
	*buffer.Source
	form    *task.Source
	ctx     context.Context
	p       *buffer.Ports
	started bool
}

// Step runs the source's Start the first time, and then a step; a step
// that ends the source returns End's verdict, or io.EOF if that is no
// error, so that the scheduler finishes the task either way.
func (s *sourceStep) Step() error {
	if !s.started {
		s.started = true
		if s.form.Start != nil {
			if err := s.form.Start(s.ctx, s.p); err != nil {
				return err
			}
		}
	}
	err := s.Source.Step()
	if err == nil || errors.Is(err, buffer.ErrStepUnfit) {
		return err
	}
	if err == io.EOF {
		err = nil
	}
	if err := s.form.End(err); err != nil {
		return err
	}
	return io.EOF
}

// rosStepper returns task i, whose ports are p, as a stepper if ros can
// run it as plain calls instead of a coroutine, or nil. Such a task is in
// a per-record form with no loop of its own: a filter (task.PerRecord
// with Keep) that moves the records it keeps, with nothing to write
// before its first record, run as itself (not as replicas); a source
// (task.Source); or a sink (task.Sink). None of them may wait outside
// tpipe (Blocking), and no test hook may force a schedule operation by
// operation.
func rosStepper(ctx context.Context, g *graph.Graph, pl *Plan, o Options, i int, p *buffer.Ports) stepper {
	t := g.Tasks[i]
	if t.Fn != nil || t.Blocking || o.Hook != nil {
		return nil
	}
	switch {
	case t.Source != nil && t.In == 0 && t.Out == 1 && t.Source.Next != nil:
		return &sourceStep{Source: p.Source(t.Source.Next), form: t.Source, ctx: ctx, p: p}
	case t.Sink != nil && t.In == 1 && t.Out == 0 && (t.Sink.Each == nil) != (t.Sink.Bytes == nil):
		if t.Sink.Each != nil {
			return p.SinkRecords(t.Sink.Each)
		}
		return p.SinkBytes(t.Sink.Bytes)
	}
	rec := t.Rec
	if rec == nil || rec.Keep == nil || rec.Each != nil || rec.Verbatim || rec.Start != nil || t.In != 1 || t.Out != 1 {
		return nil
	}
	for _, rp := range pl.Replicas {
		if g == pl.Graph && rp.Task == i {
			return nil
		}
	}
	return p.Filter(rec.Keep)
}

// hasEnd reports whether t, a task ros runs as calls, has an End to run
// in its own loop after its input's end.
func hasEnd(t *graph.Task) bool {
	return t.Rec != nil && t.Rec.End != nil || t.Sink != nil && t.Sink.End != nil
}

// runStep runs one step of a task run as calls; a panic in its function
// (keep, next, each) is the task's error, as call makes it for a task
// function.
func runStep(f stepper) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return f.Step()
}

// traceStep writes one line: which task ran, and why it stopped.
func traceStep(w io.Writer, step int, t *graph.Task, p *buffer.Proc, done bool) {
	why := "ends"
	if !done {
		if wt, ok := p.Wait(); ok {
			switch wt.On {
			case "read":
				why = fmt.Sprintf("waits to read %s", wt.Queue)
			case "room":
				why = fmt.Sprintf("waits for room in %s (%d/%d)", wt.Queue, wt.Len, wt.Cap)
			default:
				why = fmt.Sprintf("waits for a free buffer (FREE %d of %d)", wt.Free, wt.Total)
			}
		} else {
			why = "gives way to a runnable task with a greater index"
		}
	}
	fmt.Fprintf(w, "%d run %s: %s\n", step, t.Name, why)
}
