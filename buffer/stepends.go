package buffer

import "io"

// A source and a sink run as plain calls, as Filter is for a filter (see
// step.go). A source that makes its next record when asked, and a sink
// that takes the records of one buffer at a time, need no stack of their
// own between records either: their state is the record not yet written
// and the buffer being read. Their scheduler calls them as functions that
// do what the task's loop of Write or Read would do until the task would
// wait or give way, and return, registering the wait as parkLocked would.
// With filters, sources and sinks all run as calls, a chain under Record
// Oriented Scheduling moves a record with no coroutine switch at all.

// Source is a task with no input that writes the records next returns
// to its output 0, run by its scheduler as plain calls (Step) instead of
// a loop of Output.Write. It belongs to the scheduler that runs the task,
// which must call Step only while the task is not waiting, from one
// goroutine at a time.
type Source struct {
	out  *Output
	next func() ([]byte, error)
	// rec is the record next returned last, not yet written, if has is
	// set; it is the source's memory, valid until next is called again.
	rec []byte
	has bool
	// reserved is set while the task holds a slot of its output queue
	// (q.reserved) for a buffer it has not yet taken from FREE.
	reserved bool
	stepWait
}

// Source returns the task as a Source that writes to its output 0 each
// record next returns, until next returns an error (io.EOF at the end).
// next's record must stay valid until next is called again.
func (ps *Ports) Source(next func() ([]byte, error)) *Source {
	return &Source{out: ps.outs[0], next: next}
}

// Step runs the source as far as it can go without waiting and without a
// task of greater index to give way to: it asks next for records and
// writes them as Output.Write would, batching them into a buffer and
// handing it over when the next record does not fit, reserve first. It
// returns nil when the task waits (for room, or for FREE) or must give
// way; next's error (io.EOF at the end: the scheduler then finishes the
// task, which hands over the last buffer, as returning from a loop does);
// ErrReaderGone when the reader has stopped; ErrStepUnfit when the record
// next returned is longer than S (Held returns it, for the task's own
// loop to write as a chain); or the pool's error. A panic in next leaves
// the pool as it was before the call.
func (s *Source) Step() error {
	o := s.out
	p := o.t.pool
	s.waits = false
	for {
		// A record held from the last Step (it waited, or gave way) is
		// written before next is asked again.
		if !s.has {
			rec, err := s.next()
			if err != nil {
				return err
			}
			s.rec, s.has = rec, true
		}
		if b := o.pend; b != nil && len(b.data)+len(s.rec) <= cap(b.data) && len(b.ends) < cap(b.ends) {
			b.data = append(b.data, s.rec...)
			b.ends = append(b.ends, int32(len(b.data)))
			s.has = false
			continue
		}
		if len(s.rec) > p.size {
			return ErrStepUnfit
		}
		p.mu.Lock()
		err := s.bufferLocked()
		p.mu.Unlock()
		if err != nil || s.has {
			return err // it waits, or gives way, or failed
		}
	}
}

// bufferLocked hands over the buffer being filled and takes the next one
// for the held record, as writeSlow does: room in the queue first, then a
// buffer from FREE. It writes the record there, or leaves it held with the
// task waiting or giving way.
func (s *Source) bufferLocked() error {
	o := s.out
	t, q := o.t, o.q
	p := t.pool
	if !s.resumeLocked(t) {
		return nil // not woken yet
	}
	if o.pend != nil {
		o.commitLocked()
	}
	for {
		if p.err != nil {
			s.unreserveLocked()
			return p.err
		}
		if !s.reserved {
			if q.gone {
				return ErrReaderGone
			}
			if q.occupancy() >= q.cap {
				if q.overflow && q.n > 0 && p.spill != nil {
					if _, err := q.spillLocked(); err != nil {
						p.abortLocked(err)
						return err
					}
					continue
				}
				q.wwait = t
				s.waitLocked(t, waiting{kind: waitRoom, q: q})
				return nil
			}
			if t.mustYieldLocked() {
				return nil
			}
			q.reserved++
			s.reserved = true
		}
		b := t.got // handed over from FREE while the task waited
		t.got = nil
		if b == nil {
			b = p.takeFreeLocked()
		}
		if b == nil {
			if n, err := p.spillOverflowLocked(); err != nil {
				p.abortLocked(err)
				s.unreserveLocked()
				return err
			} else if n > 0 {
				continue
			}
			p.freeWait = append(p.freeWait, t)
			s.waitLocked(t, waiting{kind: waitFree})
			return nil
		}
		// The reservation is now the buffer's (Output.pend).
		s.reserved = false
		b.data = append(b.data, s.rec...)
		b.ends = append(b.ends, int32(len(b.data)))
		o.pend = b
		s.has = false
		return nil
	}
}

// unreserveLocked gives back a reservation the task holds with no buffer
// for it, as acquireLocked does when it fails.
func (s *Source) unreserveLocked() {
	if s.reserved {
		s.reserved = false
		s.out.q.reserved--
	}
}

// Held returns the record next returned that Step has not written, or
// nil: after ErrStepUnfit, the record longer than S that the task's own
// loop must write first. It gives up any reservation Step held for it;
// call it only once Step is no longer called.
func (s *Source) Held() []byte {
	p := s.out.t.pool
	p.mu.Lock()
	s.unreserveLocked()
	p.mu.Unlock()
	if !s.has {
		return nil
	}
	s.has = false
	return s.rec
}

// Sink is a task with one input and no output whose records (each) or
// bytes (bytes) a function takes one buffer at a time, run by its
// scheduler as plain calls (Step) instead of a loop of Input.Read or
// Input.ReadBytes. It belongs to the scheduler that runs the task, as
// Filter does.
type Sink struct {
	in *Input
	// each takes one whole record; bytes takes a buffer's bytes, whole
	// records and the pieces of long ones alike. One of them is set.
	each  func(rec []byte) error
	bytes func(data []byte) error
	stepWait
}

// SinkRecords returns the task as a Sink that calls each on every record
// of its input 0, valid during the call.
func (ps *Ports) SinkRecords(each func(rec []byte) error) *Sink {
	return &Sink{in: ps.ins[0], each: each}
}

// SinkBytes returns the task as a Sink that calls bytes with the bytes of
// every buffer of its input 0 (what Input.ReadBytes returns), valid during
// the call: a record longer than S comes in its pieces, never whole.
func (ps *Ports) SinkBytes(bytes func(data []byte) error) *Sink {
	return &Sink{in: ps.ins[0], bytes: bytes}
}

// Step runs the sink as far as it can go without waiting and without a
// task of greater index to give way to: it takes buffers from the input,
// gives their records or bytes to the sink's function (outside the
// pool's lock), and gives each buffer back to FREE. It returns nil when
// the task waits or must give way; io.EOF at the end of the input; the
// function's error; ErrStepUnfit when the next buffer needs the task's
// own loop (the first piece of a record longer than S, for a sink of
// whole records, or a spilled queue), with a buffer handed over, if any,
// left as the input's current one; or the pool's error. A panic in the
// function leaves the sink holding its buffer, which Finish gives back.
func (s *Sink) Step() error {
	in := s.in
	t := in.t
	p := t.pool
	s.waits = false
	if t.handed {
		// Handed over as the task was woken (see Filter.Step).
		t.handed = false
		s.waited = waiting{}
		if err := s.take(); err != nil {
			return err
		}
		p.mu.Lock()
		in.giveBackLocked()
	} else {
		p.mu.Lock()
	}
	err := s.stepLocked()
	p.mu.Unlock() // not deferred: the sink's function runs unlocked
	return err
}

// take gives the input's current buffer to the sink's function; for a
// sink of records, ErrStepUnfit if the buffer ends with the first piece
// of a long record, after its whole records.
func (s *Sink) take() error {
	in := s.in
	b := in.cur
	if s.bytes != nil {
		end := b.end()
		data := b.data[in.off:end:end]
		in.i, in.off = len(b.ends), end
		return s.bytes(data)
	}
	b.index()
	for in.i < b.whole() {
		end := int(b.ends[in.i])
		rec := b.data[in.off:end:end]
		in.i++
		in.off = end
		if err := s.each(rec); err != nil {
			return err
		}
	}
	if in.i < len(b.ends) {
		return ErrStepUnfit
	}
	return nil
}

func (s *Sink) stepLocked() error {
	in := s.in
	t, q := in.t, in.q
	p := t.pool
	if !s.resumeLocked(t) {
		return nil // not woken yet
	}
	for {
		if p.err != nil {
			return p.err
		}
		if in.cur != nil || q.backlog() > 0 {
			return ErrStepUnfit
		}
		// The read half of Filter.stepLocked, written out again: a call
		// that is not inlined costs a step a few percent.
		if q.n == 0 && !q.eof {
			q.readerWaitsLocked(t)
			s.waitLocked(t, waiting{kind: waitRead, q: q, in: in})
			return nil
		}
		if t.mustYieldLocked() {
			return nil
		}
		if q.n == 0 {
			in.eof = true
			return io.EOF
		}
		in.takeLocked(q.popLocked())
		p.mu.Unlock()
		err := s.take()
		p.mu.Lock()
		if err != nil {
			return err
		}
		in.giveBackLocked()
	}
}
