package buffer

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/tpipe/tpipe/record"
)

// Ports is a task's handle on its pool: its numbered input and output
// ports, and what it may do with them. A task function gets *Ports from
// its scheduler (Proc.Ports). Ports, and the Inputs and Outputs it gives
// out, belong to one task and must be used by one goroutine at a time.
type Ports proc

func (ps *Ports) t() *proc { return (*proc)(ps) }

// Name returns the task's name.
func (ps *Ports) Name() string { return ps.name }

// In returns input port i. It panics if there is no such port.
func (ps *Ports) In(i int) *Input { return ps.ins[i] }

// Out returns output port i. It panics if there is no such port.
func (ps *Ports) Out(i int) *Output { return ps.outs[i] }

// NumIn returns the number of input ports.
func (ps *Ports) NumIn() int { return len(ps.ins) }

// NumOut returns the number of output ports.
func (ps *Ports) NumOut() int { return len(ps.outs) }

// RecordSize returns S, the bytes of one buffer. A longer record travels
// as a chain of buffers (see Input.Read).
func (ps *Ports) RecordSize() int { return ps.pool.size }

// MaxRecord returns the longest record Input.Read reassembles: the most a
// task that needs whole records should hold of one.
func (ps *Ports) MaxRecord() int { return ps.pool.maxRec }

// Blocked returns the time the task has spent waiting in this package so
// far, the current wait included (Proc.Blocked): a task that measures
// itself (busy is the wall time it ran less this) reads it.
func (ps *Ports) Blocked() time.Duration { return (*Proc)(ps).Blocked() }

// Flush hands over every partially filled output buffer. It never blocks.
// A task calls it before it may block outside this package (a read from a
// slow pipe, a sleep), so that records already written keep flowing.
func (ps *Ports) Flush() {
	t := ps.t()
	t.pool.mu.Lock()
	t.idleLocked()
	t.pool.mu.Unlock()
}

// Ready waits until some input port can be read without blocking and
// returns its number: a port with records left in its current buffer, with
// buffers queued, or at its end (its Read then returns io.EOF, once).
// Ready returns io.EOF when every input has returned io.EOF. It is how a
// task reads its inputs in the order records arrive (merge, join), which
// no fork can starve; ports are tried round robin, so none is starved
// either. Before it blocks it gives back used-up input buffers and hands
// over partial output buffers, as Read does.
func (ps *Ports) Ready() (int, error) {
	t := ps.t()
	n := len(t.ins)
	for k := 0; k < n; k++ {
		i := (t.rr + k) % n
		if in := t.ins[i]; !in.eof && in.cur != nil && in.i < len(in.cur.ends) {
			t.rr = (i + 1) % n
			return i, nil
		}
	}
	p := t.pool
	t.yieldPoint(OpRead)
	p.mu.Lock()
	defer p.mu.Unlock()
look:
	for {
		if p.err != nil {
			return -1, p.err
		}
		open := 0
		for k := 0; k < n; k++ {
			i := (t.rr + k) % n
			in := t.ins[i]
			if in.eof {
				continue
			}
			open++
			q := in.q
			if (in.cur != nil && in.i < len(in.cur.ends)) || q.n > 0 || q.backlog() > 0 || q.eof {
				if t.giveWayLocked() {
					continue look
				}
				t.rr = (i + 1) % n
				return i, nil
			}
			if in.cur != nil {
				in.giveBackLocked()
			}
		}
		if open == 0 {
			return -1, io.EOF
		}
		if t.unreadLocked() {
			return -1, ErrReaderGone
		}
		t.idleLocked()
		for _, in := range t.ins {
			if !in.eof {
				in.q.readerWaitsLocked(t)
			}
		}
		if err := t.parkLocked(waiting{kind: waitAny}); err != nil {
			return -1, err
		}
	}
}

// Input is a task's input port: the reading end of one queue.
type Input struct {
	t   *proc
	q   *Queue
	cur *Buf // the buffer being read, charged to q.held
	i   int  // index of the next record in cur
	off int  // start offset of record i
	eof bool
	// priv, with CopyReads, is the task's own buffer that Read serves
	// from; it is never in the pool (id -1).
	priv *Buf
	// long is the record Read last reassembled from a chain: task memory,
	// outside the pool, kept for the next long record.
	long []byte
	// kept are the buffers the task has read past and keeps (Hold), each
	// charged to q.held like cur.
	kept []*Buf
	last lastKind // what the last read returned, for Forward
	more bool     // the piece ReadChunk returned last goes on
	err  error    // sticky: a record over the pool's MaxRecord
}

// lastKind is what an Input's last read returned, which decides what
// Forward hands on.
type lastKind uint8

const (
	lastNone  lastKind = iota // nothing Forward can refer to
	lastRec                   // a whole record of cur, record i-1
	lastLong                  // a record reassembled in long
	lastPiece                 // a piece of cur (ReadChunk), record i-1
)

// Name returns the name of the port's queue (the graph's edge name).
func (in *Input) Name() string { return in.q.name }

// Read returns the next record. The record is valid until the next call to
// Read on this port (or a Forward of it); the task must not retain it or
// write into it. Read returns io.EOF, and nil data, once the writer has
// finished and every record was read; it keeps returning io.EOF after that
// (rule B1 of the paper: a task reads nothing after eof). Read blocks while
// the queue is empty; before it blocks it hands over the task's partially
// filled output buffers. Any other error means the run was aborted (an
// error elsewhere, cancellation, or a *DeadlockError).
//
// A record longer than S arrives as a chain of pieces; Read copies them
// into memory of the port's own, outside the pool (given back to FREE
// piece by piece), and returns the whole record. A record over the pool's
// MaxRecord is a *record.TooLargeError that names that limit, and stays
// the port's error. After a ReadChunk or ReadBytes that stopped inside a
// record, Read returns the rest of it.
func (in *Input) Read() ([]byte, error) {
	if b := in.cur; b != nil && in.i < b.whole() {
		end := int(b.ends[in.i])
		rec := b.data[in.off:end:end]
		in.i++
		in.off = end
		in.last = lastRec
		return rec, nil
	}
	return in.next()
}

// ReadChunk returns the next piece of the input and whether the record it
// belongs to goes on in the next piece: a record of at most S bytes is one
// piece, with more false; a longer one is a chain of pieces, each but the
// last with more set. Nothing is copied, and no record is too long: it is
// how a task that moves bytes (cat, a redirect, wc -c) reads lines of any
// length. The piece is valid until the next read on this port; errors are
// those of Read. A chain cut by the writer's end (eof after a piece with
// more set) ends there.
func (in *Input) ReadChunk() (piece []byte, more bool, err error) {
	b := in.cur
	if b == nil || in.i >= len(b.ends) {
		if err := in.fillFor(true); err != nil {
			in.last = lastNone
			return nil, false, err
		}
		b = in.cur
	}
	end := int(b.ends[in.i])
	piece = b.data[in.off:end:end]
	in.i++
	in.off = end
	in.more = in.i == len(b.ends) && b.cont
	in.last = lastPiece
	return piece, in.more, nil
}

// ReadBytes returns the bytes of the current buffer not yet read (of the
// next buffer, if it is used up), whatever records they make: whole
// records, and the start or the rest of a long one. It is the batch form of
// ReadChunk, for a task that sees its input as a byte stream (a sink
// writing to a file, a counter). The slice is valid until the next read on
// this port; Forward has nothing to refer to after it. Errors are those of
// Read.
func (in *Input) ReadBytes() ([]byte, error) {
	in.last = lastNone
	b := in.cur
	if b == nil || in.i >= len(b.ends) {
		if err := in.take(true, takeBytes); err != nil {
			return nil, err
		}
		b = in.cur
	}
	end := b.end()
	data := b.data[in.off:end:end]
	in.i, in.off = len(b.ends), end
	return data, nil
}

// Buffered returns how many records Read can return without taking the
// next buffer (so without blocking). A sink uses it to flush its own output
// before it may wait, so records reach a terminal a line at a time.
func (in *Input) Buffered() int {
	if in.cur == nil {
		return 0
	}
	return max(0, in.cur.whole()-in.i)
}

// Idle reports whether a Read would wait for a writer that has nothing
// more for now: every record handed over so far has been read, the input
// is not at its end, and the writer's last act on the queue was to hand
// over what it had before a wait of its own (for its input, a pipe, a
// program). A task that looks ahead before it writes (grep's probe for
// binary input) stops looking there, so that a stream's first lines are
// not held back until more comes. A writer that only paused to hand over
// a full buffer is not idle: on a file, the look ahead is the same at any
// speed.
func (in *Input) Idle() bool {
	if in.eof || in.Buffered() > 0 {
		return false
	}
	p := in.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	q := in.q
	return q.idle && q.n == 0 && q.backlog() == 0 && !q.eof
}

// Stop ends reading this port before its end, as a task that returns
// early does for all of them: the buffers queued go back to FREE, the
// writer's next write returns ErrReaderGone, and Read returns io.EOF from
// now on. The record last read must not be used after Stop.
func (in *Input) Stop() {
	p := in.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.eof {
		return
	}
	in.stopLocked()
	in.eof = true
	p.checkStallLocked()
}

func (in *Input) next() ([]byte, error) {
	if b := in.cur; b == nil || in.i >= len(b.ends) {
		if err := in.fillFor(true); err != nil {
			in.last = lastNone
			return nil, err
		}
	}
	b := in.cur
	if in.i < b.whole() {
		end := int(b.ends[in.i])
		rec := b.data[in.off:end:end]
		in.i++
		in.off = end
		in.last = lastRec
		return rec, nil
	}
	return in.readLong()
}

// readLong reassembles the record whose first piece is the next record of
// cur (the last of a chained buffer) into in.long, following the chain
// from buffer to buffer up to the pool's MaxRecord.
func (in *Input) readLong() ([]byte, error) {
	in.long = in.long[:0]
	return in.readLongOn()
}

// readLongOn is readLong with the record's first piece already in
// in.long: it follows the chain from the next piece on.
func (in *Input) readLongOn() ([]byte, error) {
	in.last = lastNone
	if in.err != nil {
		return nil, in.err
	}
	limit := in.t.pool.maxRec
	if len(in.long) > limit {
		in.err = &record.TooLargeError{Size: len(in.long), Max: limit, AtLeast: true, Limit: MaxRecordLimit}
		return nil, in.err
	}
	for {
		piece, more, err := in.ReadChunk()
		if err == io.EOF {
			break // the writer ended inside the record: it ends here
		}
		if err != nil {
			in.last = lastNone
			return nil, err
		}
		if len(in.long)+len(piece) > limit {
			in.err = &record.TooLargeError{Size: len(in.long) + len(piece), Max: limit, AtLeast: more, Limit: MaxRecordLimit}
			in.last = lastNone
			return nil, in.err
		}
		in.long = append(in.long, piece...)
		if !more {
			break
		}
	}
	in.last = lastLong
	return in.long, nil
}

// fill gives back the buffer being read and takes the next one, blocking
// while the queue is empty; io.EOF at the end.
func (in *Input) fill() error { return in.fillFor(false) }

// fillFor is fill; with copy set and a private buffer (CopyReads), the
// batch is copied into it and the pool's buffer goes back to FREE at once.
func (in *Input) fillFor(copyOut bool) error { return in.take(copyOut, takeRecords) }

// How Input.take leaves the buffer it takes.
const (
	takeRecords = iota // lines the writer left unindexed (Buf.lazy) are indexed
	takeBytes          // as it is, and the queue's writer learns it may leave lines unindexed (Queue.raw)
	takeAsIs           // as it is (Copy: the buffer moves on)
)

// take is fillFor, the buffer left as how says; indexing is done out of
// the pool's lock.
func (in *Input) take(copyOut bool, how int) error {
	if in.eof {
		return io.EOF
	}
	t := in.t
	p := t.pool
	t.yieldPoint(OpRead)
	p.mu.Lock()
	if in.cur != nil {
		in.giveBackLocked()
	}
	if how == takeBytes {
		in.q.raw = true
	}
	err := in.nextLocked(copyOut)
	if err == errHanded {
		err = nil // handed over while the task waited, and unlocked
	} else {
		p.mu.Unlock()
	}
	if err == nil && how == takeRecords {
		in.cur.index()
	}
	return err
}

// nextLocked takes the next buffer of in's queue, waiting while it is
// empty; io.EOF at the end. With copyOut and a private buffer, the batch
// is copied into it and the pool's buffer goes back at once. It returns
// errHanded, with the lock let go, when a writer handed the buffer over
// while the task waited.
func (in *Input) nextLocked(copyOut bool) error {
	t, q := in.t, in.q
	p := t.pool
	// A writer may hand its buffer straight to this input while the task
	// waits, unless the task copies what it reads, or a Preempter replays
	// a model's schedule step by step (package proofs), where a buffer
	// stays queued until its reader's own step takes it.
	hand := in
	if copyOut && in.priv != nil || t.preempt != nil {
		hand = nil
	}
	for {
		if p.err != nil {
			return p.err
		}
		if (q.backlog() > 0 || q.n > 0 || q.eof) && t.giveWayLocked() {
			continue
		}
		if q.backlog() > 0 {
			if err := in.readBackLocked(); err != nil {
				return err
			}
			if copyOut && in.priv != nil {
				in.copyOutLocked()
			}
			return nil
		}
		if q.n > 0 {
			in.takeLocked(q.popLocked())
			if copyOut && in.priv != nil {
				in.copyOutLocked()
			}
			return nil
		}
		if q.eof {
			in.eof = true
			return io.EOF
		}
		if t.unreadLocked() {
			return ErrReaderGone
		}
		t.idleLocked()
		q.readerWaitsLocked(t)
		if err := t.parkLocked(waiting{waitRead, q, hand}); err != nil {
			return err
		}
	}
}

// takeLocked makes b, just taken from in's queue, the buffer being read.
func (in *Input) takeLocked(b *Buf) {
	in.q.held++
	in.cur, in.i, in.off = b, b.lo, 0
	if b.lo > 0 {
		in.off = int(b.ends[b.lo-1])
	}
}

// readBackLocked takes a buffer from FREE (waiting for one if need be) and
// reads the oldest buffer of the queue's backlog into it.
func (in *Input) readBackLocked() error {
	t, q := in.t, in.q
	p := t.pool
	b, err := t.takeFreeWaitLocked(q)
	if err != nil {
		return err
	}
	if q.occupancy() >= q.cap {
		// The ring filled up while the backlog was on disk; the buffer
		// read back needs a slot of its own.
		q.resolveLocked()
	}
	if err := p.spill.readLocked(q.disk, b); err != nil {
		p.releaseLocked(b)
		err = fmt.Errorf("reading back spilled queue %s: %w", q.name, err)
		p.abortLocked(err)
		return err
	}
	q.held++
	in.cur, in.i, in.off = b, 0, 0
	return nil
}

// copyOutLocked copies the unread records of the buffer being read into
// the private buffer and gives the pool's buffer back.
func (in *Input) copyOutLocked() {
	b, pv := in.cur, in.priv
	base := in.off
	pv.data = append(pv.data[:0], b.data[base:b.end()]...)
	pv.ends = pv.ends[:0]
	for _, e := range b.ends[in.i:] {
		pv.ends = append(pv.ends, e-int32(base))
	}
	pv.lo = 0
	pv.cont = b.cont
	pv.lazy, pv.delim = b.lazy, b.delim // b is fresh: in.i and in.off are 0
	in.giveBackLocked()
	in.cur, in.i, in.off = pv, 0, 0
}

// giveBackLocked returns the buffer being read to FREE (a private buffer
// just stays with its task).
func (in *Input) giveBackLocked() {
	b := in.cur
	in.cur = nil
	if b == in.priv {
		return
	}
	if b.pins > 0 {
		in.kept = append(in.kept, b) // still charged to q
		return
	}
	in.q.held--
	in.t.pool.releaseLocked(b)
	in.q.roomByLocked(in.t)
}

// stopLocked ends reading: the buffer being read and every queued buffer go
// back to FREE, and the writer learns the reader is gone.
func (in *Input) stopLocked() {
	q := in.q
	p := in.t.pool
	if in.cur != nil {
		in.giveBackLocked()
	}
	for q.n > 0 {
		p.releaseLocked(q.popLocked())
	}
	q.discardLocked()
	if q.rwait == in.t {
		q.rwait = nil
	}
	if !q.eof {
		q.gone = true
		q.doneLocked()
	}
	q.roomLocked()
	q.wakeUnreadLocked()
}

// Output is a task's output port: the writing end of one queue.
type Output struct {
	t      *proc
	q      *Queue
	pend   *Buf // the buffer being filled, charged to q.reserved
	closed bool
	carry  []byte // ScanFrom's incomplete line between two buffers
	// scanBytes and scanLines are the bytes and lines of the last buffer
	// ScanFrom handed over (it guesses the next lines' length from them),
	// and carried the bytes it copied from one buffer to the next (tests
	// read it: it must stay small whatever S).
	scanBytes, scanLines int
	// scanLazy is whether ScanFrom may leave the lines of the buffer it
	// fills unindexed: the queue's reader reads bytes (Queue.raw).
	scanLazy bool
	carried  int64
	// open is set while the last buffer handed over ended a chain piece:
	// the record it started is not finished.
	open bool
}

// Name returns the name of the port's queue (the graph's edge name).
func (o *Output) Name() string { return o.q.name }

// Write appends a copy of rec to the output; the caller may reuse rec as
// soon as Write returns. Records are batched into the current output buffer;
// when it is full, Write hands it over, reserves room in the queue (blocking
// while the queue is full) and then takes a buffer from FREE (blocking while
// FREE is empty). It never blocks while holding a buffer from FREE other
// than the one being read on an input, which is charged to that input's
// queue. A record longer than S goes out as a chain of pieces over as many
// buffers, each taken the same way. Write returns ErrReaderGone once the
// reader has stopped, and the pool's error if the run was aborted.
//
// If the record being written is unfinished (WriteChunk with more set, or
// a line ScanFrom left without its end), rec's bytes finish it.
func (o *Output) Write(rec []byte) error {
	if b := o.pend; b != nil && len(b.data)+len(rec) <= cap(b.data) && len(b.ends) < cap(b.ends) {
		b.data = append(b.data, rec...)
		b.ends = append(b.ends, int32(len(b.data)))
		return nil
	}
	return o.writeSlow(rec)
}

func (o *Output) writeSlow(rec []byte) error {
	t := o.t
	p := t.pool
	if o.closed {
		return ErrClosed
	}
	if len(rec) > p.size {
		return o.writeBytes(rec, true)
	}
	o.lockFor(OpWrite)
	defer o.t.pool.mu.Unlock()
	b, err := o.newBufferLocked()
	if err != nil {
		return err
	}
	b.data = append(b.data, rec...)
	b.ends = append(b.ends, int32(len(b.data)))
	o.pend = b
	return nil
}

// WriteChunk appends piece to the record being written and, unless more is
// set, ends that record; with more set the record stays open and the next
// WriteChunk, Write or ScanFrom goes on with it. It is how a task that
// moves bytes copies a chain (see Input.ReadChunk) without reassembling
// it: a record of any length, in pieces of any size. The record may be cut
// into pieces differently from how it was written; a reader of whole
// records sees the same bytes. Ending the output (Close, or the task's
// return) ends an open record. The caller may reuse piece at once; errors
// are those of Write.
func (o *Output) WriteChunk(piece []byte, more bool) error {
	if !more {
		return o.Write(piece)
	}
	return o.writeBytes(piece, false)
}

// WriteText writes b, text that need not break where records do, as the
// lines it holds: each '\n' ends a record, and the bytes after the last
// one start a record that the next write goes on with (the end of the
// output ends it). A task whose output is text but whose records are not
// lines (tr -d '\n', sort -z, a separator holding a newline) writes
// through it, so that the next task reads lines, as it would from a pipe.
// Errors are those of Write.
func (o *Output) WriteText(b []byte) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return o.WriteChunk(b, true)
		}
		if err := o.WriteChunk(b[:i+1], false); err != nil {
			return err
		}
		b = b[i+1:]
	}
	return nil
}

// writeBytes appends data to the record being written, across as many
// buffers as it takes (the bytes after a buffer's last record end are the
// start of an unfinished record, and handing such a buffer over marks it
// as part of a chain), and ends the record if end is set. A record that
// would fit an empty buffer is not split to fill the room left in the
// current one, unless that record is already under way there.
func (o *Output) writeBytes(data []byte, end bool) error {
	if o.closed {
		return ErrClosed
	}
	if len(data) == 0 && !end {
		return nil
	}
	size := o.t.pool.size
	for {
		if b := o.pend; b != nil && len(b.ends) < cap(b.ends) {
			room := cap(b.data) - len(b.data)
			if len(data) <= room {
				b.data = append(b.data, data...)
				if end {
					b.ends = append(b.ends, int32(len(b.data)))
				}
				return nil
			}
			if b.end() < len(b.data) || len(data) > size {
				b.data = append(b.data, data[:room]...)
				data = data[room:]
			}
		}
		if err := o.nextBuffer(); err != nil {
			return err
		}
	}
}

// nextBuffer hands over the pending buffer (as part of a chain if it ends
// with an unfinished record) and takes a new one, reserve first.
func (o *Output) nextBuffer() error {
	o.lockFor(OpWrite)
	defer o.t.pool.mu.Unlock()
	b, err := o.newBufferLocked()
	if err != nil {
		return err
	}
	o.pend = b
	return nil
}

// reserveLocked waits for room in the queue and takes one slot.
func (o *Output) reserveLocked() error {
	q := o.q
	t := o.t
	p := t.pool
	for {
		if p.err != nil {
			return p.err
		}
		if q.gone {
			return ErrReaderGone
		}
		if q.occupancy() < q.cap {
			if t.giveWayLocked() {
				continue
			}
			q.reserved++
			return nil
		}
		t.flushLocked()
		if q.overflow && q.n > 0 && p.spill != nil {
			if _, err := q.spillLocked(); err != nil {
				p.abortLocked(err)
				return err
			}
			continue
		}
		q.wwait = t
		if err := t.parkLocked(waiting{kind: waitRoom, q: q}); err != nil {
			return err
		}
	}
}

// lockFor starts an operation on o that may block: a preemption point
// (and the test hook), then the pool's lock with o's partial buffer handed
// over. The caller unlocks. (It once returned the unlock function, for
// one-line defers: that method value was an allocation per buffer
// written.)
func (o *Output) lockFor(op Op) {
	t := o.t
	t.yieldPoint(op)
	t.pool.mu.Lock()
	if o.pend != nil {
		o.commitLocked()
	}
}

// newBufferLocked reserves room in o's queue and then takes a buffer from
// FREE for it: the reserve-first write of the package doc.
func (o *Output) newBufferLocked() (*Buf, error) {
	if err := o.reserveLocked(); err != nil {
		return nil, err
	}
	return o.acquireLocked()
}

// acquireLocked takes a buffer from FREE for a slot already reserved in
// o.q, waiting while FREE is empty. On failure the reservation is undone.
func (o *Output) acquireLocked() (*Buf, error) {
	b, err := o.t.takeFreeWaitLocked(nil)
	if err != nil {
		o.q.reserved--
	}
	return b, err
}

// commitLocked hands the pending buffer over to the queue (it never blocks:
// its slot is reserved). An empty pending buffer goes back to FREE. Bytes
// after the last record end are the start of a record not yet finished
// (WriteChunk, or a line ScanFrom has not seen the end of): they become
// the buffer's last record, and the buffer is marked as part of a chain,
// so that the reader joins them to what the next buffer starts with.
// (Handing them over as a record of their own, as tpipe once did, cut a
// line in two wherever a writer happened to block.)
func (o *Output) commitLocked() {
	b := o.pend
	o.pend = nil
	q := o.q
	q.reserved--
	p := o.t.pool
	if last := b.end(); last < len(b.data) {
		b.index() // the end below must follow the last line's
		b.ends = append(b.ends, int32(len(b.data)))
		b.cont = true
	}
	if b.records() == 0 || q.gone {
		p.releaseLocked(b)
		q.roomLocked()
		return
	}
	o.open = b.cont
	q.pushLocked(b)
}

// EndRecord ends the record being written where it is, if it is
// unfinished (a line ScanFrom left without its end, or WriteChunk with
// more set): what was written of it is the whole record, and the next
// write starts a new one. A source that hands over its last line before it
// ends (a process that closed its output and lives on) calls it before
// Ports.Flush. When the record's last piece is still in o's buffer,
// EndRecord only marks its end; when every piece was handed over already,
// it writes an empty last piece, which may block as Write does, and
// returns Write's errors.
func (o *Output) EndRecord() error {
	if b := o.pend; b != nil {
		if b.end() < len(b.data) || len(b.ends) == 0 && o.open {
			b.ends = append(b.ends, int32(len(b.data)))
		}
		return nil
	}
	if !o.open || o.closed {
		return nil
	}
	if err := o.nextBuffer(); err != nil {
		return err
	}
	o.pend.ends = append(o.pend.ends, 0)
	return nil
}

// endOpenLocked ends an unfinished record where it is: at eof, what was
// written of it is the whole record.
func (o *Output) endOpenLocked() {
	if b := o.pend; b != nil && b.end() < len(b.data) {
		b.ends = append(b.ends, int32(len(b.data)))
	}
}

// Forward writes the record last returned by in.Read (or ReadBatch's last,
// or the piece ReadChunk returned) to o. When that record is the last one
// in its buffer and o has no partial buffer, the buffer itself moves to
// o's queue with no copy (how a megabyte frame passes a stage); otherwise
// the record is copied as by Write. A record Read reassembled from a chain
// is copied, and so chained again; a piece is written as by WriteChunk, so
// a chain forwarded piece by piece stays one record. After Forward the
// record must not be used. Errors are those of Write.
func (o *Output) Forward(in *Input) error {
	switch in.last {
	case lastNone:
		return fmt.Errorf("buffer: forward on %s: no record was read", in.q.name)
	case lastLong:
		return o.Write(in.long)
	}
	b := in.cur
	if b == nil || in.i == 0 || in.i <= b.lo {
		return fmt.Errorf("buffer: forward on %s: no record was read", in.q.name)
	}
	start := 0
	if in.i > 1 {
		start = int(b.ends[in.i-2])
	}
	rec := b.data[start:b.ends[in.i-1]]
	if in.last == lastPiece && in.more {
		return o.WriteChunk(rec, true)
	}
	// A buffer that ends a chain's piece never moves: its next buffer
	// would not follow it in o's queue.
	if o.pend != nil || in.i != len(b.ends) || b == in.priv || b.cont || b.pins > 0 {
		return o.Write(rec)
	}
	return o.move(in, in.i-1)
}

// move hands the buffer being read on in over to o's queue, its records
// from index lo on, with no copy: it commits o's partial buffer first (to
// keep the order), reserves room in o's queue (blocking while it is full,
// the buffer meanwhile still charged to in's queue), then moves it.
func (o *Output) move(in *Input, lo int) error {
	if o.closed {
		return ErrClosed
	}
	p := o.t.pool
	o.lockFor(OpWrite)
	defer o.t.pool.mu.Unlock()
	if err := o.reserveLocked(); err != nil {
		return err
	}
	b := in.cur
	in.cur = nil
	in.q.held--
	in.q.roomByLocked(in.t)
	b.lo = lo
	o.q.reserved--
	if o.q.gone {
		p.releaseLocked(b)
		return nil
	}
	o.q.pushLocked(b)
	return nil
}

// Done returns a channel that is closed when the reader of this output has
// stopped reading or the run was aborted. A source that waits outside
// tpipe (on a terminal, a socket) selects on it to learn, without writing,
// that nobody wants its records any more.
func (o *Output) Done() <-chan struct{} {
	p := o.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.q.done == nil {
		if o.q.gone || p.err != nil {
			o.q.done = closedChan
		} else {
			o.q.done = make(chan struct{})
		}
	}
	return o.q.done
}

// Gone reports whether the reader of this output has stopped reading:
// a write would return ErrReaderGone. A task that waits outside tpipe
// reads it once Done is closed, to tell a reader gone from a run
// aborted.
func (o *Output) Gone() bool {
	p := o.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	return o.q.gone
}

// Drain hands over what was written and waits until the reader has taken
// every record and asks for more; it returns ErrReaderGone if the reader
// stopped first. A source that meets bad input (a record too large) drains
// before it reports it: if nobody reads that far (`head -n 3`), the bad
// record does not matter, as in a shell.
func (o *Output) Drain() error {
	t := o.t
	p := t.pool
	o.lockFor(OpWrite)
	defer o.t.pool.mu.Unlock()
	q := o.q
	for {
		switch {
		case p.err != nil:
			return p.err
		case q.gone:
			return ErrReaderGone
		case q.n == 0 && q.held == 0 && q.rwait == q.reader && q.reader != nil:
			return nil
		}
		q.wwait = t
		if err := t.parkLocked(waiting{kind: waitDrain, q: q}); err != nil {
			return err
		}
	}
}

// Close writes eof to this output after handing over what was written.
// Writes after Close return ErrClosed. Finishing the task closes every
// output too.
func (o *Output) Close() {
	p := o.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.closed {
		return
	}
	if o.pend != nil {
		o.endOpenLocked()
		o.commitLocked()
	}
	o.closeLocked()
}

// closeLocked writes eof to the queue: rule B4's last write.
func (o *Output) closeLocked() {
	o.closed = true
	o.q.eof = true
	if r := o.q.rwait; r != nil {
		o.q.rwait = nil
		o.t.pool.wakeLocked(r)
	}
}
