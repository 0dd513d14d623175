// Package graph is tpipe's intermediate representation: tasks with
// numbered input and output ports, and edges (bounded queues) with
// capacities, in topological order. A chain `a | b | c` is the simplest
// graph; tee, route, merge and join are graphs too.
//
// A Graph is built by one goroutine and is read-only once a scheduler runs
// it. The zero Graph is an empty graph ready to use.
package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/task"
)

// DefaultCap is the queue capacity used when an edge asks for none.
const DefaultCap = 4

// Task is one vertex. Exactly one of Fn, Rec, Source and Sink is needed;
// when one of the last three is set, Fn may be nil and its general form
// is used.
type Task struct {
	Name    string
	In, Out int // number of ports
	Fn      task.Func
	Rec     *task.PerRecord
	// Source and Sink are the ends of a pipeline in per-record form (no
	// loop of their own): a source with no input and one output, a sink
	// with one input and no output. The ros policy calls them from its
	// scheduler as it calls a PerRecord filter.
	Source *task.Source
	Sink   *task.Sink
	// Index is the position in topological order, set by Validate: a task
	// only reads from tasks with a smaller index.
	Index int
	// Blocking marks a task that may wait outside tpipe for long (an
	// external process, a terminal). Policies that run one task at a time
	// run such a task on its own goroutine, so that its wait stalls no one.
	Blocking bool
	// Together, when not empty, names a group of tasks that must run at
	// the same time (the two halves of one external process: its stdin
	// feeder and its stdout reader). A policy that runs tasks in turn (the
	// serial one) runs a group as one step.
	Together string
	// ReadsAny marks a task with several inputs that reads them in the
	// order records arrive (buffer.Ports.Ready), like merge and join, and
	// never waits on one input while another has records. A graph whose
	// tasks all do has a safe B (see Shape); one with a task that reads
	// its inputs in turn (cat @x @y) has none.
	ReadsAny bool
	// Holds is how many buffers of each input the task keeps besides the
	// one it reads (buffer.Input.Hold: stabilize's lookahead of frames).
	// Each of its input queues gets that many slots more than its edge's
	// capacity (QueueCap), so its writer keeps the room it would have,
	// and the bound grows by as many (see Shape).
	Holds int
	// Ident says what the task does, in words that change whenever its
	// output could for the same input: its command words, the program it
	// runs, the files it reads with their size and modification time.
	// The spool names its outputs by a hash of it (package spool). Empty
	// means it cannot be said (standard input, a Go function): the task
	// then runs every time and its outputs are named by their content.
	Ident string
	// File, when set, says that the task's output is the lines of this
	// regular file as they are (a '<' redirect, cat FILE). The spool reads
	// such a file in place, in byte ranges cut at line ends, instead of
	// keeping a copy: the file is already on disk, and Ident (its size
	// and modification time) says when it changed.
	File string
	// Stderr, when set, is the standard error the task writes through:
	// the spool policy keeps what passes (up to a limit) with the task's
	// outputs, and writes it again on a rerun that finds them cached.
	// Tasks of one step (an external program's) may share one.
	Stderr *task.Stderr
	// Effects marks a task that acts outside its ports: it writes a file
	// of its own (tee FILE, awk's print > FILE, sed's w), runs a command,
	// or is an external program's bridge. Any other task is of no use
	// once the readers of all its outputs have stopped, and every policy
	// that runs tasks side by side stops it then, even while it waits
	// for input (buffer.Proc.StopUnread); a task with effects goes on
	// until its input ends or a write of it fails, as in a shell.
	Effects bool
}

// Func returns the function that runs the task.
func (t *Task) Func() task.Func {
	if t.Fn != nil {
		return t.Fn
	}
	switch {
	case t.Rec != nil:
		return t.Rec.Func()
	case t.Source != nil:
		return t.Source.Func()
	case t.Sink != nil:
		return t.Sink.Func()
	}
	return nil
}

// End names one port of one task.
type End struct {
	Task int // position in Graph.Tasks
	Port int
}

// Edge is a bounded queue from an output port to an input port.
type Edge struct {
	Name     string
	From, To End
	Cap      int
}

// Graph is a set of tasks and the edges between them.
type Graph struct {
	Tasks []*Task
	Edges []*Edge
	order []int // task positions in topological order, set by Validate
}

// Add adds a task with nin inputs and nout outputs and returns its
// position.
func (g *Graph) Add(name string, nin, nout int, fn task.Func) int {
	g.Tasks = append(g.Tasks, &Task{Name: name, In: nin, Out: nout, Fn: fn})
	g.order = nil
	return len(g.Tasks) - 1
}

// AddRecord adds a one-input, one-output task in per-record form.
func (g *Graph) AddRecord(name string, r task.PerRecord) int {
	g.Tasks = append(g.Tasks, &Task{Name: name, In: 1, Out: 1, Rec: &r})
	g.order = nil
	return len(g.Tasks) - 1
}

// Connect adds an edge from output port fromPort of task from to input
// port toPort of task to, with capacity c (DefaultCap if c is 0).
func (g *Graph) Connect(from, fromPort, to, toPort, c int) *Edge {
	if c == 0 {
		c = DefaultCap
	}
	e := &Edge{From: End{from, fromPort}, To: End{to, toPort}, Cap: c}
	g.Edges = append(g.Edges, e)
	g.order = nil
	return e
}

// Chain builds t[0] | t[1] | ... with every queue of capacity c. The first
// task must have no input and the last no output; the others one of each.
func Chain(c int, tasks ...*Task) *Graph {
	g := &Graph{}
	for i, t := range tasks {
		g.Tasks = append(g.Tasks, t)
		if i > 0 {
			g.Connect(i-1, 0, i, 0, c)
		}
	}
	return g
}

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("graph: invalid")

// Validate checks that every port is connected exactly once, capacities are
// positive and there is no cycle; it names the edges (F1, F2, ... in the
// paper's style, unless named) and sets each task's Index.
func (g *Graph) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	type slot struct{ in, out []int }
	ports := make([]slot, len(g.Tasks))
	for i, t := range g.Tasks {
		if t.Func() == nil {
			return bad("task %s has no code", t.Name)
		}
		if t.Rec != nil && (t.In != 1 || t.Out != 1) {
			return bad("per-record task %s needs one input and one output", t.Name)
		}
		if t.Source != nil && (t.In != 0 || t.Out != 1) {
			return bad("source %s needs no input and one output", t.Name)
		}
		if t.Sink != nil && (t.In != 1 || t.Out != 0) {
			return bad("sink %s needs one input and no output", t.Name)
		}
		if t.Holds < 0 {
			return bad("task %s holds %d buffers: need 0 or more", t.Name, t.Holds)
		}
		ports[i] = slot{make([]int, t.In), make([]int, t.Out)}
	}
	for k, e := range g.Edges {
		if e.Cap < 1 {
			return bad("edge %d: capacity %d: need at least 1", k+1, e.Cap)
		}
		for _, end := range []struct {
			e   End
			out bool
		}{{e.From, true}, {e.To, false}} {
			if end.e.Task < 0 || end.e.Task >= len(g.Tasks) {
				return bad("edge %d: no task %d", k+1, end.e.Task)
			}
			s := ports[end.e.Task]
			list, what := s.in, "input"
			if end.out {
				list, what = s.out, "output"
			}
			if end.e.Port < 0 || end.e.Port >= len(list) {
				return bad("edge %d: task %s has no %s port %d", k+1, g.Tasks[end.e.Task].Name, what, end.e.Port)
			}
			if list[end.e.Port] != 0 {
				return bad("task %s: %s port %d connected twice", g.Tasks[end.e.Task].Name, what, end.e.Port)
			}
			list[end.e.Port] = k + 1
		}
		if e.Name == "" {
			e.Name = fmt.Sprintf("F%d", k+1)
		}
	}
	for i, s := range ports {
		for p, e := range s.in {
			if e == 0 {
				return bad("task %s: input port %d is not connected", g.Tasks[i].Name, p)
			}
		}
		for p, e := range s.out {
			if e == 0 {
				return bad("task %s: output port %d is not connected", g.Tasks[i].Name, p)
			}
		}
	}
	// Kahn's algorithm; ties go to the lowest position so a chain keeps its
	// written order.
	indeg := make([]int, len(g.Tasks))
	succ := make([][]int, len(g.Tasks))
	for _, e := range g.Edges {
		indeg[e.To.Task]++
		succ[e.From.Task] = append(succ[e.From.Task], e.To.Task)
	}
	var ready, order []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		lo := 0
		for j, r := range ready {
			if r < ready[lo] {
				lo = j
			}
		}
		t := ready[lo]
		ready = append(ready[:lo], ready[lo+1:]...)
		g.Tasks[t].Index = len(order)
		order = append(order, t)
		for _, s := range succ[t] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) != len(g.Tasks) {
		var names []string
		for i, d := range indeg {
			if d > 0 {
				names = append(names, g.Tasks[i].Name)
			}
		}
		return bad("cycle through %s", strings.Join(names, ", "))
	}
	g.order = order
	return nil
}

// Order returns task positions in topological order (after Validate).
func (g *Graph) Order() []int { return g.order }

// IsChain reports whether the graph is a linear pipeline: every task has at
// most one input and one output and the edges link them in a line.
func (g *Graph) IsChain() bool {
	for _, t := range g.Tasks {
		if t.In > 1 || t.Out > 1 {
			return false
		}
	}
	return len(g.Edges) == len(g.Tasks)-1 || len(g.Tasks) == 0
}

// Bound is the sum of the queue capacities (QueueCap): the B of Theorem
// 3.2 of "Thrifty Execution of Task Pipelines", enough to rule out
// deadlock for a chain run concurrently with reserve-first writes. For
// other shapes it is only a starting point (see Shape); it is at least 1.
func (g *Graph) Bound() int {
	b := 0
	for _, e := range g.Edges {
		b += g.QueueCap(e)
	}
	return max(b, 1)
}

// QueueCap is the capacity of e's queue: e.Cap, plus the buffers its
// reader keeps besides the one it reads (Task.Holds), which would
// otherwise take that room from the writer.
func (g *Graph) QueueCap(e *Edge) int { return e.Cap + g.Tasks[e.To.Task].Holds }

// Held returns the buffers the tasks of g keep besides the ones they read
// (Task.Holds, on each input), and a phrase naming them for a plan's
// explanation ("stabilize 30"); 0 and "" when none does.
func (g *Graph) Held() (n int, who string) {
	var names []string
	for _, t := range g.Tasks {
		if t.Holds > 0 {
			n += t.Holds * t.In
			names = append(names, fmt.Sprintf("%s %d", t.Name, t.Holds*t.In))
		}
	}
	return n, strings.Join(names, ", ")
}

// Shape says what the scheduler can promise for g (after Validate): the
// least B that rules out deadlock when there is one (safe), or the least B
// with which run-time resolution can always make progress, and why.
//
// A chain needs the sum of its capacities (Theorem 3.2 of "Thrifty
// Execution of Task Pipelines", with reserve-first writes). The paper's
// argument carries over to a DAG whose tasks with several inputs all read
// them as records arrive: at a stall every buffer outside FREE is charged
// to some queue, so no writer waits for FREE; a writer waiting for room
// waits on its reader, which cannot be waiting to read a full queue; and
// following such waits downstream ends at a sink, which only waits to
// read: a contradiction. A task that reads its inputs in turn breaks the
// argument, and then no fixed capacity is enough (a tee feeding `cat @x
// @y` fills y while cat still reads x). The pool resolves such stalls at
// run time; for that, B must exceed the number of queues, since each
// queue's reader may hold one buffer it reads in place.
//
// A task that keeps N buffers of an input besides the one it reads
// (Task.Holds) takes N slots of that queue from its writer for good; its
// queue gets N more (QueueCap), and with every kept buffer charged to it
// the argument is unchanged: B grows by exactly the buffers kept.
func (g *Graph) Shape() (b int, safe bool, why string) {
	if g.IsChain() {
		return g.Bound(), true, "a chain: no deadlock at B >= the sum of queue capacities (Theorem 3.2, reserve-first writes)"
	}
	for _, i := range g.order {
		t := g.Tasks[i]
		if t.In > 1 && !t.ReadsAny {
			return max(g.Bound(), len(g.Edges)+1), false, fmt.Sprintf(
				"not safe for any fixed B: %s reads its inputs in turn, so a fork feeding it can fill one branch while it reads another; "+
					"stuck parts are resolved at run time by growing the smallest full queue while FREE has buffers, then spilling it to disk "+
					"(this needs B > the %d queues)", t.Name, len(g.Edges))
		}
	}
	return g.Bound(), true, "a DAG whose joins read inputs as records arrive: no deadlock at B >= the sum of queue capacities (Theorem 3.2's argument carries over); stalls would still be resolved at run time"
}
