package proofs

import (
	"errors"
	"fmt"
	"strings"
)

// The explorer: breadth-first search over states, each stored once under
// a canonical byte encoding, with a parent pointer so that the first
// deadlock found comes with a shortest schedule that reaches it.

// encode appends the canonical encoding of s to b: only what the pipeline
// uses, and nothing of a task that has ended.
func (m *machine) encode(b []byte, s *state) []byte {
	b = append(b, s.inLen, s.outPos, s.used, s.nwait)
	b = append(b, s.wait[:s.nwait]...)
	b = append(b, s.cur)
	for q := range m.nq {
		qs := &s.q[q]
		flags := qs.res<<1 | qs.held<<3
		if qs.eof {
			flags |= 1
		}
		b = append(b, qs.cap, qs.n, flags)
		for _, x := range qs.bufs[:qs.n] {
			b = m.appendBuf(b, x)
		}
	}
	for t := range m.nt {
		ts := &s.t[t]
		b = append(b, ts.phase)
		if ts.phase == phDone {
			continue
		}
		b = append(b, ts.sub, ts.flags, ts.nout)
		for _, e := range ts.out[:ts.nout] {
			mv := byte(0)
			if e.move {
				mv = 1
			}
			b = append(b, e.port|mv<<4, e.val)
		}
		b = append(b, ts.ks.acc, ts.ks.turn, ts.eofs, ts.pos)
		spec := &m.p.Tasks[t]
		b = append(b, ts.held[:len(spec.In)]...)
		if m.batch > 1 {
			for i := range spec.In {
				b = m.appendBuf(b, ts.inbuf[i])
			}
			for i := range spec.Out {
				b = m.appendBuf(b, ts.pend[i])
			}
		}
	}
	return b
}

func (m *machine) appendBuf(b []byte, x buf) []byte {
	if m.batch == 1 {
		return append(b, x.v[0])
	}
	return append(append(b, x.n), x.v[:x.n]...)
}

// decode is the inverse of encode.
func (m *machine) decode(b string) state {
	var s state
	i := 0
	next := func() byte { i++; return b[i-1] }
	s.inLen, s.outPos, s.used, s.nwait = next(), next(), next(), next()
	for w := range s.nwait {
		s.wait[w] = next()
	}
	s.cur = next()
	readBuf := func() buf {
		if m.batch == 1 {
			return one(next())
		}
		var x buf
		x.n = next()
		for k := range x.n {
			x.v[k] = next()
		}
		return x
	}
	for q := range m.nq {
		qs := &s.q[q]
		qs.cap, qs.n = next(), next()
		flags := next()
		qs.eof, qs.res, qs.held = flags&1 != 0, flags>>1&3, flags>>3
		for k := range qs.n {
			qs.bufs[k] = readBuf()
		}
	}
	for t := range m.nt {
		ts := &s.t[t]
		ts.phase = next()
		if ts.phase == phDone {
			continue
		}
		ts.sub, ts.flags, ts.nout = next(), next(), next()
		for k := range ts.nout {
			pm := next()
			ts.out[k] = emission{port: pm & 15, move: pm>>4 != 0, val: next()}
		}
		ts.ks.acc, ts.ks.turn, ts.eofs, ts.pos = next(), next(), next(), next()
		spec := &m.p.Tasks[t]
		for k := range spec.In {
			ts.held[k] = next()
		}
		if m.batch > 1 {
			for k := range spec.In {
				ts.inbuf[k] = readBuf()
			}
			for k := range spec.Out {
				ts.pend[k] = readBuf()
			}
		}
	}
	return s
}

// store holds every state found, by canonical encoding.
type store struct {
	m       *machine
	index   map[string]int32
	keys    []string
	parent  []int32
	label   []int8 // the task that stepped; -1-q: the resolver grew queue q; for a root, its input length
	scratch []byte
}

func newStore(m *machine) *store {
	return &store{m: m, index: make(map[string]int32)}
}

// add stores s, reached from parent by label, unless it is known.
func (st *store) add(s *state, parent int32, label int8) (int32, bool) {
	st.scratch = st.m.encode(st.scratch[:0], s)
	if id, ok := st.index[string(st.scratch)]; ok {
		return id, false
	}
	if len(st.keys) >= maxStates {
		panic(errTooManyStates)
	}
	key := string(st.scratch)
	id := int32(len(st.keys))
	st.index[key] = id
	st.keys = append(st.keys, key)
	st.parent = append(st.parent, parent)
	st.label = append(st.label, label)
	return id, true
}

func (st *store) get(id int32) state { return st.m.decode(st.keys[id]) }

// maxStates bounds one search, so that a mistake in a pipeline cannot eat
// the machine.
const maxStates = 4 << 20

var errTooManyStates = errors.New("proofs: more than 4M states")

// Result is what a search of one pipeline under one configuration found.
type Result struct {
	Pipeline Pipeline
	Config   Config
	// States is the number of reachable states; Terminal how many of them
	// have every task ended, Deadlocks how many have some task not ended
	// and none able to step.
	States, Terminal, Deadlocks int
	// Deadlock is a shortest schedule to a deadlock, or nil.
	Deadlock *Trace
	// Violation is a shortest schedule after which OUT differs from the
	// serial schedule's output (a record that should not be there, or too
	// few records at the end), or nil.
	Violation *Trace
	// MaxUsed is the most buffers outside FREE in any reachable state.
	MaxUsed int
	// Growths counts resolver steps; MaxCaps are the largest capacities
	// the queues reached.
	Growths int
	MaxCaps []int
}

// Check explores every state of p reachable under c, for every input
// length of c.
func Check(p Pipeline, c Config) (res *Result, err error) {
	m, err := newMachine(p, c)
	if err != nil {
		return nil, err
	}
	defer recoverLimit(&err)
	st := newStore(m)
	res = &Result{Pipeline: p, Config: c, MaxCaps: p.Caps()}
	for _, n := range c.inputs() {
		m.bad = ""
		s := m.initial(n, nil)
		id, _ := st.add(&s, -1, int8(n))
		if m.bad != "" && res.Violation == nil {
			res.Violation = m.trace(st, id, m.bad)
		}
	}
	for id := int32(0); int(id) < len(st.keys); id++ {
		s := st.get(id)
		res.MaxUsed = max(res.MaxUsed, int(s.used))
		for q := range m.nq {
			res.MaxCaps[q] = max(res.MaxCaps[q], int(s.q[q].cap))
		}
		if m.done(&s) {
			res.Terminal++
			if want := len(m.serial[s.inLen]); int(s.outPos) != want && res.Violation == nil {
				res.Violation = m.trace(st, id, fmt.Sprintf("OUT has %d records; the serial schedule writes %d", s.outPos, want))
			}
			continue
		}
		m.bad = ""
		n := m.successors(&s, func(t int, next *state) {
			nid, _ := st.add(next, id, int8(t))
			if m.bad != "" {
				if res.Violation == nil {
					res.Violation = m.trace(st, nid, m.bad)
				}
				m.bad = ""
			}
		})
		if n > 0 {
			continue
		}
		if c.Grow != NoGrowth {
			if q := m.growth(&s); q >= 0 {
				if s.q[q].cap >= maxSlots {
					return nil, fmt.Errorf("proofs: %s: resolver grew %s past %d", p, p.Queues[q].Name, maxSlots)
				}
				next := s
				next.q[q].cap++
				st.add(&next, id, int8(-1-q))
				res.Growths++
				continue
			}
		}
		res.Deadlocks++
		if res.Deadlock == nil {
			res.Deadlock = m.trace(st, id, "deadlock: "+m.describe(&s))
		}
	}
	res.States = len(st.keys)
	return res, nil
}

func recoverLimit(err *error) {
	if r := recover(); r != nil {
		if r == errTooManyStates {
			*err = errTooManyStates
			return
		}
		panic(r)
	}
}

// Profile is what BufferProfile found.
type Profile struct {
	Pipeline Pipeline
	Config   Config
	States   int
	Terminal int
	// DeadlockB lists, in increasing order, every B at which some schedule
	// deadlocks for want of a buffer in FREE.
	DeadlockB []int
	// AnyB, when positive, is the least B from which on a deadlock that
	// no number of buffers avoids is reachable.
	AnyB int
	// LeastB is the least B such that no B' >= B deadlocks; 0 if AnyB > 0.
	LeastB int
	// MaxUsed is the most buffers outside FREE in any schedule: with more
	// than that, FREE is never empty.
	MaxUsed int
	// Violation is a schedule after which OUT differs from the serial
	// output, or nil.
	Violation *Trace
}

// Deadlocks reports whether some schedule deadlocks with b buffers.
func (pr *Profile) Deadlocks(b int) bool {
	if pr.AnyB > 0 && b >= pr.AnyB {
		return true
	}
	for _, d := range pr.DeadlockB {
		if d == b {
			return true
		}
	}
	return false
}

// BufferProfile finds, with one search, every B at which p deadlocks under
// the concurrent policy (c.Policy, c.B and c.Grow are ignored; c must not
// hand off or batch).
//
// It searches with FREE never empty and with every step cut just before
// it takes a buffer from FREE. Taking a buffer is then always the first
// thing a step does, so with B buffers exactly the steps taken with
// unbounded FREE are possible except those that begin by taking a buffer
// while all B are out: the states reachable with B buffers are those
// reachable along a path on which never more than B buffers are out. The
// search computes, for each state, the least such B (a bottleneck path,
// found level by level). A state in which every task that has not ended
// is blocked or about to take a buffer is a deadlock for B equal to the
// buffers it has out, if it is reachable with that B.
//
// Cutting a reserve-first write between its reservation and its buffer
// adds interleavings Check does not take, but none a reservation could
// tell apart: only the writer looks at its own reservations. Tests check
// the two searches agree.
func BufferProfile(p Pipeline, c Config) (pr *Profile, err error) {
	if c.Handoff || c.Batch > 1 {
		return nil, errors.New("proofs: BufferProfile needs no handoff and one record per buffer")
	}
	c.Policy, c.B, c.Grow, c.fine = Concurrent, 0, NoGrowth, true
	m, err := newMachine(p, c)
	if err != nil {
		return nil, err
	}
	defer recoverLimit(&err)
	st := newStore(m)
	pr = &Profile{Pipeline: p, Config: c}
	// levels[b] lists the states reachable with b buffers and no fewer.
	var levels [][]int32
	place := func(id int32, b int) {
		for len(levels) <= b {
			levels = append(levels, nil)
		}
		levels[b] = append(levels[b], id)
	}
	for _, n := range c.inputs() {
		m.bad = ""
		s := m.initial(n, nil)
		if id, isNew := st.add(&s, -1, int8(n)); isNew {
			place(id, 0)
			if m.bad != "" && pr.Violation == nil {
				pr.Violation = m.trace(st, id, m.bad)
			}
		}
	}
	deadlockAt := map[int]bool{}
	for b := 0; b < len(levels); b++ {
		for i := 0; i < len(levels[b]); i++ {
			id := levels[b][i]
			s := st.get(id)
			used := int(s.used)
			pr.MaxUsed = max(pr.MaxUsed, used)
			if m.done(&s) {
				pr.Terminal++
				if want := len(m.serial[s.inLen]); int(s.outPos) != want && pr.Violation == nil {
					pr.Violation = m.trace(st, id, fmt.Sprintf("OUT has %d records; the serial schedule writes %d", s.outPos, want))
				}
				continue
			}
			// Which tasks can step, and which of those would first take
			// a buffer from FREE?
			canStep, needFree := 0, 0
			m.bad = ""
			m.successors(&s, func(t int, next *state) {
				canStep++
				if m.needsFree(&s, t) {
					needFree++
				}
				nb := max(b, int(next.used))
				nid, isNew := st.add(next, id, int8(t))
				if isNew {
					place(nid, nb)
				}
				if m.bad != "" {
					if pr.Violation == nil {
						pr.Violation = m.trace(st, nid, m.bad)
					}
					m.bad = ""
				}
			})
			switch {
			case canStep == 0:
				if pr.AnyB == 0 || b < pr.AnyB {
					pr.AnyB = max(b, 1)
				}
			case needFree == canStep && used == b && used > 0:
				deadlockAt[used] = true
			}
		}
	}
	pr.States = len(st.keys)
	for b := 1; b <= pr.MaxUsed+1; b++ {
		if deadlockAt[b] {
			pr.DeadlockB = append(pr.DeadlockB, b)
		}
	}
	if pr.AnyB == 0 {
		pr.LeastB = 1
		if n := len(pr.DeadlockB); n > 0 {
			pr.LeastB = pr.DeadlockB[n-1] + 1
		}
	}
	return pr, nil
}

// Step is one step of a schedule: what one task did when it was resumed
// (or what the resolver did), and the buffers after it.
type Step struct {
	// Task is the task that stepped, or -1-q when the resolver grew queue q.
	Task  int
	Lines []string
	// Free is the number of buffers in FREE (-1 when B is unbounded),
	// Queued the number in queues.
	Free, Queued int
}

// Trace is a schedule found by a search, readable like the paper's DS.
type Trace struct {
	Pipeline Pipeline
	Config   Config
	Input    int // records in IN
	// Prime holds, for each task in order, its local actions before its
	// first operation: what the runtime does when it first resumes it.
	Prime []Step
	Steps []Step
	// End says how the schedule ends: "deadlock: ..." or what is wrong
	// with OUT.
	End string
}

// Schedule returns the task of every step, in order.
func (tr *Trace) Schedule() []int {
	s := make([]int, len(tr.Steps))
	for i, st := range tr.Steps {
		s[i] = st.Task
	}
	return s
}

// String prints the schedule one action a line, numbered.
func (tr *Trace) String() string {
	var sb strings.Builder
	in := make([]string, tr.Input)
	for i := range in {
		in[i] = RecordName(byte(i + 1))
	}
	fmt.Fprintf(&sb, "%s\n%s\ninput: %s\n", tr.Pipeline, tr.Config, strings.Join(append(in, "eof"), " "))
	k := 0
	for _, steps := range [][]Step{tr.Prime, tr.Steps} {
		for _, st := range steps {
			for _, l := range st.Lines {
				k++
				fmt.Fprintf(&sb, "%3d. %s\n", k, l)
			}
		}
	}
	sb.WriteString(tr.End)
	return sb.String()
}

// trace rebuilds the schedule that reached state id, with every action
// logged.
func (m *machine) trace(st *store, id int32, end string) *Trace {
	var labels []int8
	for ; st.parent[id] >= 0; id = st.parent[id] {
		labels = append(labels, st.label[id])
	}
	n := int(st.label[id])
	mm := *m
	var lines []string
	mm.log = func(l string) { lines = append(lines, l) }
	tr := &Trace{Pipeline: m.p, Config: m.c, Input: n, End: end}
	s := mm.initial(n, func(t int) {
		tr.Prime = append(tr.Prime, Step{Task: t, Lines: lines})
		lines = nil
	})
	for i := len(labels) - 1; i >= 0; i-- {
		t := int(labels[i])
		if t >= 0 {
			mm.step(&s, t)
		} else {
			q := -1 - t
			s.q[q].cap++
			lines = append(lines, fmt.Sprintf("resolver grows %s to capacity %d", m.p.Queues[q].Name, s.q[q].cap))
		}
		step := Step{Task: t, Lines: lines, Free: -1}
		if m.c.B > 0 {
			step.Free = m.c.B - int(s.used)
		}
		for q := range m.nq {
			step.Queued += int(s.q[q].n)
		}
		tr.Steps = append(tr.Steps, step)
		lines = nil
	}
	return tr
}
