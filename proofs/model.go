package proofs

import (
	"fmt"
	"strings"
)

// The model. A state holds every task's place in its program and every
// queue's buffers; a step is what one task does when it is scheduled.
//
// A step starts at an operation on FREE or a queue (a read, a write, a
// move): the points where a task may block and where tpipe's runtime may
// switch tasks (buffer.Preempter). The task performs the operation, or as
// much of it as it can before it must wait, and then its local actions up
// to its next such operation: reading IN, writing OUT, computing, ending.
// Reading IN, writing OUT and computing touch nothing another task sees,
// so grouping them with the operation before them loses no behaviour;
// ending does (it marks eof and gives buffers back), and the runtime also
// ends a task in the same resumption as its last operation. So each step
// is exactly what one resumption of a task does in the runtime, which is
// what lets a counterexample be replayed there.

// buf is one buffer: n records.
type buf struct {
	n byte
	v [maxBatch]byte
}

func one(v byte) buf { return buf{n: 1, v: [maxBatch]byte{v}} }

func (b buf) String() string {
	names := make([]string, b.n)
	for i := range names {
		names[i] = RecordName(b.v[i])
	}
	return strings.Join(names, " ")
}

// Task phases.
const (
	phStart byte = iota // before its first record: PREFIX writes its header
	phRun               // reading its inputs
	phEnd               // eof on every input; writing what it writes last
	phEOF               // writing eof records
	phDone
)

// Where a task stands inside a write it has begun.
const (
	subNone     byte = iota
	subReserved      // reserve-first: room reserved, waiting for FREE
	subHolding       // literal: holds a buffer from FREE, waiting for room
)

// Task flags.
const (
	fWaiting byte = 1 << iota // in FREE's line of waiters (Handoff)
	fGot                      // FREE handed it a buffer (Handoff)
)

type taskState struct {
	phase, sub, flags byte
	nout              byte
	out               [2]emission // records decided and not yet written, first first
	ks                kindState
	eofs              byte           // bit i: input i is at eof
	pos               byte           // records read from IN
	held              [maxPorts]byte // in place: the record whose buffer it reads on input i (0: none)
	inbuf             [maxPorts]buf  // batching: records of a buffer read on input i, copied, not yet used
	pend              [maxPorts]buf  // batching: the partial buffer for output i
}

type queueState struct {
	n    byte
	bufs [maxSlots]buf
	eof  bool // eof mark (not EOFRecords)
	res  byte // writer's reservations: room taken for a buffer not yet queued
	held byte // buffers taken by the reader, read in place, not given back
	cap  byte
}

func (q *queueState) occupancy() int { return int(q.n) + int(q.res) + int(q.held) }
func (q *queueState) full() bool     { return q.occupancy() >= int(q.cap) }

func (q *queueState) push(b buf) {
	if int(q.n) >= maxSlots {
		panic("proofs: queue overflow")
	}
	q.bufs[q.n] = b
	q.n++
}

func (q *queueState) pop() buf {
	b := q.bufs[0]
	copy(q.bufs[:], q.bufs[1:q.n])
	q.n--
	q.bufs[q.n] = buf{}
	return b
}

type state struct {
	t      [MaxTasks]taskState
	q      [MaxQueues]queueState
	inLen  byte
	outPos byte           // records written to OUT
	used   byte           // buffers outside FREE
	nwait  byte           // Handoff: tasks waiting for FREE
	wait   [MaxTasks]byte // ... in the order they began to wait
	cur    byte           // Cooperative: the running task + 1 (0: none)
}

// action is what a task does next.
type action byte

const (
	aNone action = iota
	// Local actions.
	aStart     // decide the records written before reading
	aReadFile  // read IN
	aReadCopy  // take the next record of a batch already copied in
	aWriteFile // write OUT
	aAppend    // add a record to a partial output buffer
	aEnd       // decide the records written after eof
	aEOFs      // decide to write eof records
	aFinish    // end
	// Operations on FREE and the queues.
	aRead
	aWrite
	aMove
)

func (a action) local() bool { return a < aRead && a != aNone }

// opResult is how far a task got with an operation.
type opResult byte

const (
	opBlocked opResult = iota // it could not start: nothing changed
	opStopped                 // it did part of it, or prepared to wait, and now waits
	opDone
)

// machine interprets a pipeline's tasks under one configuration.
type machine struct {
	p       Pipeline
	c       Config
	nt, nq  int
	batch   int
	inPlace [MaxTasks]bool // reads in place
	moves   [MaxTasks]bool // a filter that passes its buffers on
	reader  [MaxQueues]int
	writer  [MaxQueues]int
	serial  [maxInput + 1][]byte
	// log, when set, receives each action as a line.
	log func(string)
	// tmp is the successor state being built; callbacks must not keep it.
	tmp state
	// bad is set by a step that wrote OUT a record the serial schedule
	// does not write there.
	bad string
}

func newMachine(p Pipeline, c Config) (*machine, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	m := &machine{p: p, c: c, nt: len(p.Tasks), nq: len(p.Queues), batch: c.batch()}
	for i, t := range p.Tasks {
		m.moves[i] = c.Move && t.Kind.IsFilter() && t.In[0] != File && t.Out[0] != File
		m.inPlace[i] = c.InPlace || m.moves[i]
		for _, q := range t.In {
			if q != File {
				m.reader[q] = i
			}
		}
		for _, q := range t.Out {
			if q != File {
				m.writer[q] = i
			}
		}
	}
	for n := 0; n <= maxInput; n++ {
		m.serial[n] = p.Serial(n)
	}
	return m, nil
}

// logf logs an action of task t; callers check m.log first, so that a
// search does not pay for formatting.
func (m *machine) logf(t int, format string, args ...any) {
	m.log(m.p.TaskName(t) + " " + fmt.Sprintf(format, args...))
}

func (m *machine) qname(q int) string {
	if q == File {
		return "OUT"
	}
	return m.p.Queues[q].Name
}

// initial returns the state in which the input has n records and every
// task has done its local actions up to its first operation.
func (m *machine) initial(n int, prime func(t int)) state {
	var s state
	s.inLen = byte(n)
	for q := range m.nq {
		s.q[q].cap = byte(m.p.Queues[q].Cap)
	}
	for t := range m.nt {
		m.locals(&s, t)
		if prime != nil {
			prime(t)
		}
	}
	return s
}

// next returns what task t does next and on which port (a queue index for
// writes and moves, an input port for reads).
func (m *machine) next(s *state, t int) (action, int) {
	ts := &s.t[t]
	spec := &m.p.Tasks[t]
	if ts.phase == phDone {
		return aNone, 0
	}
	if ts.nout > 0 {
		e := ts.out[0]
		q := spec.Out[e.port]
		switch {
		case q == File:
			return aWriteFile, q
		case e.move:
			return aMove, q
		case ts.sub == subNone && ts.pend[e.port].n > 0 && int(ts.pend[e.port].n) < m.batch:
			return aAppend, q
		}
		return aWrite, q
	}
	switch ts.phase {
	case phStart:
		return aStart, 0
	case phRun:
		in := spec.Kind.nextInput(&ts.ks, ts.eofs, len(spec.In))
		switch {
		case in < 0:
			return aEnd, 0
		case spec.In[in] == File:
			return aReadFile, in
		case ts.inbuf[in].n > 0:
			return aReadCopy, in
		}
		return aRead, in
	case phEnd:
		if m.c.EOFRecords {
			return aEOFs, 0
		}
	}
	return aFinish, 0
}

// step lets task t take one step; it reports whether anything changed
// (false: t is blocked or has ended).
func (m *machine) step(s *state, t int) bool {
	a, arg := m.next(s, t)
	var r opResult
	switch a {
	case aNone:
		return false
	case aRead:
		r = m.read(s, t, arg)
	case aWrite:
		r = m.write(s, t, arg)
	case aMove:
		r = m.move(s, t, arg)
	default:
		panic("proofs: a step begins at a local action")
	}
	switch r {
	case opBlocked:
		return false
	case opDone:
		m.locals(s, t)
	}
	return true
}

// locals runs t's local actions up to its next operation or its end.
func (m *machine) locals(s *state, t int) {
	ts := &s.t[t]
	spec := &m.p.Tasks[t]
	for {
		a, arg := m.next(s, t)
		if !a.local() {
			return
		}
		switch a {
		case aStart:
			m.emit(ts, spec.Kind.start(t))
			ts.phase = phRun
		case aReadFile:
			if ts.pos < s.inLen {
				ts.pos++
				if m.log != nil {
					m.logf(t, "reads %s from IN", RecordName(ts.pos))
				}
				m.consume(ts, t, arg, ts.pos, false)
			} else {
				if m.log != nil {
					m.logf(t, "reads eof from IN")
				}
				ts.eofs |= 1 << arg
			}
		case aReadCopy:
			b := &ts.inbuf[arg]
			v := b.v[0]
			copy(b.v[:], b.v[1:b.n])
			b.n--
			b.v[b.n] = 0
			if m.log != nil {
				m.logf(t, "reads %s from its copy of a buffer of %s", RecordName(v), m.qname(spec.In[arg]))
			}
			m.consume(ts, t, arg, v, false)
		case aWriteFile:
			v := ts.out[0].val
			if m.log != nil {
				m.logf(t, "writes %s to OUT", RecordName(v))
			}
			want := m.serial[s.inLen]
			if int(s.outPos) >= len(want) || want[s.outPos] != v {
				if m.bad == "" {
					m.bad = fmt.Sprintf("%s wrote %s as record %d of OUT; the serial schedule writes %s", m.p.TaskName(t), RecordName(v), s.outPos+1, serialAt(want, int(s.outPos)))
				}
			}
			s.outPos++
			m.popOut(ts)
		case aAppend:
			e := ts.out[0]
			b := &ts.pend[e.port]
			b.v[b.n] = e.val
			b.n++
			if m.log != nil {
				m.logf(t, "adds %s to its buffer for %s", RecordName(e.val), m.qname(spec.Out[e.port]))
			}
			m.popOut(ts)
		case aEnd:
			m.emit(ts, spec.Kind.end(&ts.ks))
			ts.phase = phEnd
		case aEOFs:
			for port, q := range spec.Out {
				if q != File {
					m.emit(ts, []emission{{port: byte(port), val: eofValue}})
				}
			}
			ts.phase = phEOF
		case aFinish:
			m.finish(s, t)
		}
	}
}

func serialAt(out []byte, i int) string {
	if i >= len(out) {
		return "nothing"
	}
	return RecordName(out[i])
}

func (m *machine) emit(ts *taskState, es []emission) {
	for _, e := range es {
		if int(ts.nout) == len(ts.out) {
			panic("proofs: too many records decided at once")
		}
		ts.out[ts.nout] = e
		ts.nout++
	}
}

func (m *machine) popOut(ts *taskState) {
	ts.out[0] = ts.out[1]
	ts.out[1] = emission{}
	ts.nout--
}

// consume applies t's kind to record v read on input in; queued says it
// was read in place from a queue, so a filter passes its buffer on.
func (m *machine) consume(ts *taskState, t, in int, v byte, queued bool) {
	es := m.p.Tasks[t].Kind.record(&ts.ks, in, v)
	if queued && m.moves[t] {
		for i := range es {
			es[i].move = true
		}
	}
	m.emit(ts, es)
}

// finish ends t: with eof marks, its outputs are marked eof and the
// buffers it reads in place go back to FREE.
func (m *machine) finish(s *state, t int) {
	ts := &s.t[t]
	spec := &m.p.Tasks[t]
	var marks []string
	for port, q := range spec.Out {
		if q == File {
			continue
		}
		if ts.pend[port].n > 0 {
			m.commit(s, t, port, "")
		}
		if !m.c.EOFRecords {
			s.q[q].eof = true
			marks = append(marks, m.qname(q))
		}
	}
	for in, q := range spec.In {
		if ts.held[in] != 0 {
			m.giveBack(s, t, in, q)
		}
	}
	if len(marks) > 0 {
		if m.log != nil {
			m.logf(t, "ends (eof on %s)", strings.Join(marks, ", "))
		}
	} else {
		if m.log != nil {
			m.logf(t, "ends")
		}
	}
	s.t[t] = taskState{phase: phDone}
}

// release puts a buffer back in FREE, or hands it to the first waiter.
func (m *machine) release(s *state) {
	if m.c.Handoff && s.nwait > 0 {
		w := s.wait[0]
		copy(s.wait[:], s.wait[1:s.nwait])
		s.nwait--
		s.wait[s.nwait] = 0
		s.t[w].flags = s.t[w].flags&^fWaiting | fGot
		if m.log != nil {
			m.log("FREE hands the buffer to " + m.p.TaskName(int(w)))
		}
		return
	}
	s.used--
}

// takeFree takes a buffer from FREE for t, if it can.
func (m *machine) takeFree(s *state, t int) bool {
	ts := &s.t[t]
	if ts.flags&fGot != 0 {
		ts.flags &^= fGot
		return true
	}
	if s.nwait > 0 {
		return false // FREE is empty whenever someone waits
	}
	if m.c.B == 0 || int(s.used) < m.c.B {
		s.used++
		return true
	}
	return false
}

// block is what t does when an operation cannot go on: it hands over its
// partial output buffers (the batching rule) and, waiting for FREE under
// Handoff, gets in line. progress says whether the operation already did
// something.
func (m *machine) block(s *state, t int, progress, onFree bool) opResult {
	ts := &s.t[t]
	changed := progress
	if m.batch > 1 && !m.c.NoFlush {
		for port := range m.p.Tasks[t].Out {
			if ts.pend[port].n > 0 {
				m.commit(s, t, port, " before it waits")
				changed = true
			}
		}
	}
	if onFree && m.c.Handoff && ts.flags&fWaiting == 0 {
		ts.flags |= fWaiting
		s.wait[s.nwait] = byte(t)
		s.nwait++
		if m.log != nil {
			m.logf(t, "gets in line for FREE (FREE 0 of %d)", m.c.B)
		}
		changed = true
	}
	if changed {
		return opStopped
	}
	return opBlocked
}

// commit hands t's partial buffer for output port over to its queue; its
// room was reserved when the buffer was taken.
func (m *machine) commit(s *state, t, port int, why string) {
	ts := &s.t[t]
	q := m.p.Tasks[t].Out[port]
	b := ts.pend[port]
	ts.pend[port] = buf{}
	s.q[q].res--
	s.q[q].push(b)
	if m.log != nil {
		m.logf(t, "hands over its buffer (%s) to %s%s", b, m.qname(q), why)
	}
}

// giveBack returns the buffer t reads in place on input in to FREE.
func (m *machine) giveBack(s *state, t, in, q int) {
	ts := &s.t[t]
	if m.log != nil {
		m.logf(t, "gives the buffer of %s back to FREE", RecordName(ts.held[in]))
	}
	ts.held[in] = 0
	s.q[q].held--
	m.release(s)
}

// read is the read operation on input port in.
func (m *machine) read(s *state, t, in int) opResult {
	ts := &s.t[t]
	q := m.p.Tasks[t].In[in]
	qs := &s.q[q]
	progress := false
	if ts.held[in] != 0 {
		m.giveBack(s, t, in, q)
		progress = true
	}
	switch {
	case qs.n > 0:
		b := qs.pop()
		if b.v[0] == eofValue {
			if m.log != nil {
				m.logf(t, "reads eof from %s", m.qname(q))
			}
			m.release(s)
			ts.eofs |= 1 << in
			return opDone
		}
		if m.inPlace[t] {
			ts.held[in] = b.v[0]
			qs.held++
			if m.log != nil {
				m.logf(t, "reads %s from %s in place", RecordName(b.v[0]), m.qname(q))
			}
			m.consume(ts, t, in, b.v[0], true)
			return opDone
		}
		if b.n > 1 {
			if m.log != nil {
				m.logf(t, "reads %s from %s (one buffer, copied)", b, m.qname(q))
			}
		} else {
			if m.log != nil {
				m.logf(t, "reads %s from %s", RecordName(b.v[0]), m.qname(q))
			}
		}
		m.release(s)
		v := b.v[0]
		copy(b.v[:], b.v[1:b.n])
		b.n--
		b.v[b.n] = 0
		ts.inbuf[in] = b
		m.consume(ts, t, in, v, false)
		return opDone
	case qs.eof:
		if m.log != nil {
			m.logf(t, "reads eof from %s", m.qname(q))
		}
		ts.eofs |= 1 << in
		return opDone
	}
	return m.block(s, t, progress, false)
}

// write is the write operation of t's next record to queue q.
func (m *machine) write(s *state, t, q int) opResult {
	ts := &s.t[t]
	e := ts.out[0]
	qs := &s.q[q]
	var name string
	if m.log != nil {
		name = RecordName(e.val)
	}
	if m.c.Write == Literal {
		progress := false
		if ts.sub == subNone {
			if !m.takeFree(s, t) {
				return m.block(s, t, false, true)
			}
			ts.sub = subHolding
			progress = true
		}
		if qs.full() {
			if progress {
				if m.log != nil {
					m.logf(t, "acquires a buffer from FREE for %s", name)
				}
			}
			return m.block(s, t, progress, false)
		}
		if progress {
			if m.log != nil {
				m.logf(t, "writes %s to %s", name, m.qname(q))
			}
		} else {
			if m.log != nil {
				m.logf(t, "releases %s to %s", name, m.qname(q))
			}
		}
		qs.push(one(e.val))
		ts.sub = subNone
		m.popOut(ts)
		return opDone
	}
	progress, reservedNow := false, false
	if ts.sub == subNone {
		if ts.pend[e.port].n > 0 {
			m.commit(s, t, int(e.port), "") // full: hand it over first
			progress = true
		}
		if qs.full() {
			return m.block(s, t, progress, false)
		}
		qs.res++
		ts.sub = subReserved
		progress, reservedNow = true, true
		if m.c.fine {
			if m.log != nil {
				m.logf(t, "reserves room in %s for %s", m.qname(q), name)
			}
			return opStopped
		}
	}
	if !m.takeFree(s, t) {
		if reservedNow {
			if m.log != nil {
				m.logf(t, "reserves room in %s for %s", m.qname(q), name)
			}
		}
		return m.block(s, t, progress, true)
	}
	how := "writes"
	if !reservedNow {
		how = "takes a buffer from FREE and writes"
	}
	ts.sub = subNone
	m.popOut(ts)
	if m.batch > 1 {
		ts.pend[e.port] = one(e.val)
		if m.log != nil {
			m.logf(t, "%s %s to a new buffer for %s", how, name, m.qname(q))
		}
		return opDone
	}
	qs.res--
	qs.push(one(e.val))
	if m.log != nil {
		m.logf(t, "%s %s to %s", how, name, m.qname(q))
	}
	return opDone
}

// needsFree reports whether t's next step begins by taking a buffer from
// FREE.
func (m *machine) needsFree(s *state, t int) bool {
	if a, _ := m.next(s, t); a != aWrite {
		return false
	}
	ts := &s.t[t]
	return ts.sub == subReserved || (m.c.Write == Literal && ts.sub == subNone)
}

// move passes the buffer a filter reads in place on to its output queue q:
// it reserves room in q (waiting while q is full, the buffer still charged
// to its input queue) and moves it, with no buffer from FREE.
func (m *machine) move(s *state, t, q int) opResult {
	ts := &s.t[t]
	qs := &s.q[q]
	if qs.full() {
		return m.block(s, t, false, false)
	}
	in := m.p.Tasks[t].In[0]
	v := ts.held[0]
	if m.log != nil {
		m.logf(t, "moves the buffer of %s from %s to %s", RecordName(v), m.qname(in), m.qname(q))
	}
	ts.held[0] = 0
	s.q[in].held--
	qs.push(one(v))
	m.popOut(ts)
	return opDone
}

// blocked describes why task t cannot take a step in s, or "" if it can or
// has ended.
func (m *machine) blocked(s *state, t int) string {
	ts := &s.t[t]
	a, arg := m.next(s, t)
	occ := func(q int) string {
		qs := &s.q[q]
		d := fmt.Sprintf("full %d/%d", qs.occupancy(), qs.cap)
		if qs.res > 0 || qs.held > 0 {
			d += fmt.Sprintf(": %d queued, %d reserved, %d being read", qs.n, qs.res, qs.held)
		}
		return d
	}
	free := func() string {
		if m.c.B == 0 {
			return "FREE"
		}
		d := fmt.Sprintf("FREE (%d of %d)", m.c.B-int(s.used), m.c.B)
		if ts.flags&fWaiting != 0 {
			d += " in line"
		}
		return d
	}
	name := m.p.TaskName(t)
	switch a {
	case aRead:
		q := m.p.Tasks[t].In[arg]
		return fmt.Sprintf("%s blocked acquiring %s (empty)", name, m.qname(q))
	case aWrite:
		e := ts.out[0]
		switch {
		case ts.sub == subHolding:
			return fmt.Sprintf("%s blocked releasing %s to %s (%s)", name, RecordName(e.val), m.qname(arg), occ(arg))
		case ts.sub == subReserved || m.c.Write == Literal:
			return fmt.Sprintf("%s blocked acquiring %s for %s", name, free(), m.qname(arg))
		}
		return fmt.Sprintf("%s blocked reserving room in %s (%s)", name, m.qname(arg), occ(arg))
	case aMove:
		return fmt.Sprintf("%s blocked moving %s to %s (%s)", name, RecordName(ts.held[0]), m.qname(arg), occ(arg))
	}
	return ""
}

// describe says why no task can go on in s.
func (m *machine) describe(s *state) string {
	var parts []string
	for t := range m.nt {
		if d := m.blocked(s, t); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, ", ")
}

// done reports whether every task has ended.
func (m *machine) done(s *state) bool {
	for t := range m.nt {
		if s.t[t].phase != phDone {
			return false
		}
	}
	return true
}

// successors calls f for every state the policy lets s step to, with the
// task that stepped. It returns how many there were.
func (m *machine) successors(s *state, f func(t int, next *state)) int {
	switch m.c.Policy {
	case ROS:
		for t := m.nt - 1; t >= 0; t-- {
			m.tmp = *s
			if m.step(&m.tmp, t) {
				f(t, &m.tmp)
				return 1
			}
		}
		return 0
	case Cooperative:
		if c := int(s.cur) - 1; c >= 0 {
			m.tmp = *s
			if m.step(&m.tmp, c) {
				f(c, &m.tmp)
				return 1
			}
		}
		for t := m.nt - 1; t >= 0; t-- {
			m.tmp = *s
			if m.step(&m.tmp, t) {
				m.tmp.cur = byte(t + 1)
				f(t, &m.tmp)
				return 1
			}
		}
		return 0
	}
	count := 0
	for t := range m.nt {
		m.tmp = *s
		if m.step(&m.tmp, t) {
			f(t, &m.tmp)
			count++
		}
	}
	return count
}

// growth returns the queue a resolver grows in the deadlocked state s, or
// -1 if none would help (a real deadlock: every wait on a cycle is a read).
func (m *machine) growth(s *state) int {
	// Each blocked task waits for one other: the reader of a queue it
	// waits for room in, the writer of a queue it waits to read.
	waitsFor := make([]int, m.nt)
	via := make([]int, m.nt) // the full queue it waits for room in, or -1
	for t := range m.nt {
		waitsFor[t], via[t] = -1, -1
		a, arg := m.next(s, t)
		switch a {
		case aRead:
			waitsFor[t] = m.writer[m.p.Tasks[t].In[arg]]
		case aWrite, aMove:
			if s.q[arg].full() {
				waitsFor[t], via[t] = m.reader[arg], arg
			}
		}
	}
	best := -1
	better := func(q int) {
		if best < 0 || s.q[q].cap < s.q[best].cap {
			best = q
		}
	}
	if m.c.Grow == GrowParks {
		for q := range m.nq {
			if s.q[q].full() {
				better(q)
			}
		}
		return best
	}
	// The wait-for graph is a function: walking from any task ends in a
	// cycle. Collect the full queues on every cycle.
	onCycle := make([]bool, m.nt)
	for start := range m.nt {
		seen := map[int]int{}
		t := start
		for i := 0; t >= 0; i++ {
			if _, ok := seen[t]; ok {
				break
			}
			seen[t] = i
			t = waitsFor[t]
		}
		if t < 0 {
			continue
		}
		for u := t; ; {
			onCycle[u] = true
			u = waitsFor[u]
			if u == t {
				break
			}
		}
	}
	for t := range m.nt {
		if onCycle[t] && via[t] >= 0 {
			better(via[t])
		}
	}
	return best
}
