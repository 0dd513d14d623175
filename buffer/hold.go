package buffer

import (
	"errors"
	"fmt"
	"slices"
)

// Keeping records. A task that must see records again after it has read
// past them (stabilize's lookahead of frames) keeps them where they are,
// in their pool buffers, rather than copying them into memory of its own:
// Input.Hold pins the buffer of the record last read, Input.Release
// unpins it. When the task reads past a pinned buffer it does not go back
// to FREE: it stays with the task, still charged to the input's queue (as
// the buffer being read is), until its last pin goes. Every buffer is
// still in exactly one place, and FREE + queued + held = B, held counting
// the kept buffers (Pool.Check).
//
// The bound. Theorem 3.2 of "Thrifty Execution of Task Pipelines" rests
// on every buffer outside FREE being charged to a queue, within its
// capacity: with B at least the sum of the capacities, a task waiting
// for FREE then proves some queue full, and following the waits ends in
// a contradiction. The paper's tasks keep nothing (a read copies the
// record out and releases the buffer). A task that keeps up to N buffers
// besides the one it reads takes N slots of its input queue's capacity
// from its writer; raised by N, the queue gives the writer the room it
// had, every kept buffer is charged to it, and the argument goes through
// unchanged with B grown by exactly N (graph.Task.Holds; the plan adds
// it). A task that keeps more than it declared leaves its writer waiting
// for room it will not give back: that stall is detected and reported
// like any other, never a hang.

// Held is a record a task keeps (Input.Hold): its bytes stay in their
// pool buffer, unchanged, until Input.Release. The zero Held holds
// nothing.
type Held struct {
	rec []byte
	b   *Buf
}

// Bytes returns the record. The task must not write into it.
func (h Held) Bytes() []byte { return h.rec }

// ErrNotHeld is returned by Input.Hold when the record last read is not
// in a pool buffer it can keep: nothing was read, the record was
// reassembled from a chain (longer than S), or reads are copied
// (Proc.CopyReads). The task must copy the record instead.
var ErrNotHeld = errors.New("buffer: the record last read is not in a buffer that can be kept")

// Hold keeps the record last returned by Read: it and its buffer stay
// valid, whatever the task reads next, until Release. A buffer with
// several kept records goes back to FREE when all are released. Pass,
// Sift, Copy and Forward copy, rather than move, a buffer with kept
// records. The task must release what it keeps; what it still keeps when
// it ends is released then.
func (in *Input) Hold() (Held, error) {
	b := in.cur
	if in.last != lastRec || b == nil || b == in.priv || in.i == 0 {
		return Held{}, fmt.Errorf("hold on %s: %w", in.q.name, ErrNotHeld)
	}
	start := 0
	if in.i > 1 {
		start = int(b.ends[in.i-2])
	}
	end := int(b.ends[in.i-1])
	p := in.t.pool
	p.mu.Lock()
	b.pins++
	p.mu.Unlock()
	return Held{rec: b.data[start:end:end], b: b}, nil
}

// Release ends the keeping of h, a record Hold returned on this port;
// h's bytes must not be used after. The buffer goes back to FREE once
// none of its records is kept and the task has read past it. Releasing
// a zero Held does nothing; releasing a record twice panics.
func (in *Input) Release(h Held) {
	b := h.b
	if b == nil {
		return
	}
	p := in.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.pins <= 0 {
		panic("buffer: release of a record not kept on " + in.q.name)
	}
	b.pins--
	if b.pins > 0 || b == in.cur {
		return // still kept, or still being read: given back as usual
	}
	k := slices.Index(in.kept, b)
	if k < 0 {
		panic("buffer: release on " + in.q.name + " of a record kept on another port")
	}
	in.kept = slices.Delete(in.kept, k, k+1)
	in.freeKeptLocked(b)
}

// Kept returns how many buffers the task keeps on this port besides the
// one it reads.
func (in *Input) Kept() int {
	p := in.t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(in.kept)
}

// freeKeptLocked gives back a kept buffer the task no longer needs.
func (in *Input) freeKeptLocked(b *Buf) {
	b.pins = 0
	in.q.held--
	in.t.pool.releaseLocked(b)
	in.q.roomLocked()
}

// dropKeptLocked gives back every buffer still kept on the port: the
// task has ended.
func (in *Input) dropKeptLocked() {
	for _, b := range in.kept {
		in.freeKeptLocked(b)
	}
	clear(in.kept)
	in.kept = in.kept[:0]
}

// Alloc appends a record of n bytes to the output and returns them for
// the task to fill: Write without the copy, for a task that makes a
// record in place (stabilize warps a frame straight into the pool's
// buffer). The bytes are the buffer's, holding whatever it held before,
// and the task must fill all n of them before its next call on any port
// (which may hand the buffer over). n is at most S. Alloc blocks, and
// fails, as Write does.
func (o *Output) Alloc(n int) ([]byte, error) {
	b := o.pend
	if b == nil || len(b.data)+n > cap(b.data) || len(b.ends) == cap(b.ends) {
		switch p := o.t.pool; {
		case o.closed:
			return nil, ErrClosed
		case n < 0 || n > p.size:
			return nil, fmt.Errorf("buffer: a record of %d bytes made on %s: want 0 to S = %d", n, o.q.name, p.size)
		}
		o.lockFor(OpWrite)
		nb, err := o.newBufferLocked()
		o.t.pool.mu.Unlock()
		if err != nil {
			return nil, err
		}
		o.pend, b = nb, nb
	}
	m := len(b.data)
	b.data = b.data[:m+n]
	b.ends = append(b.ends, int32(m+n))
	return b.data[m : m+n : m+n], nil
}
