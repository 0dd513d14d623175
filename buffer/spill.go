package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tpipe/tpipe/record/recfile"
)

// A spilled queue keeps its oldest records on disk: when the resolver must
// free memory and FREE is empty, the buffers queued in one queue are
// written, zstd-compressed, to the end of that queue's backlog (a
// recfile.Backlog, one block per buffer) and go back to FREE. From then on,
// until its reader has drained the backlog, every buffer written to the
// queue goes to the backlog too (spillPushLocked): the records stay in
// order, and the data goes to disk once, in whole buffers, sequentially.
// Spilling only what is queued at each stall and letting the ring fill
// again made a queue read late stall the pool once per few buffers, and
// wrote the partly filled buffers that a stall flushes as tiny blocks
// (issue 13: 20 edges read in turn took 16 s and 175 MB of disk for 25.6
// MB of lines). The reader reads its backlog first and its ring after; a
// buffer read back is taken from FREE, so record memory stays B x S. The
// codec's scratch space (one Block shared by the pool, and zstd's own
// state) is outside it, as sort's spill buffers are.
//
// Writes and reads of a backlog happen with the pool locked, which keeps
// every buffer's place exact at every moment. Each is one buffer's worth
// of compression and a write, or two reads and a decompression; in the
// 20-edge case of issue 13 most of the CPU goes to zstd, not to waiting
// for the lock.

// spiller is the spill state of a pool with Options.Spill.
type spiller struct {
	dir string
	blk recfile.Block // scratch shared by every queue, used under the lock
	// written counts raw record bytes spilled, disk the bytes on disk.
	written, disk int64
}

// spillLocked moves every buffer queued in q to the end of q's backlog and
// gives them back to FREE. It returns the number of buffers freed.
func (q *Queue) spillLocked() (int, error) {
	p := q.pool
	if q.n == 0 {
		return 0, nil
	}
	sp := p.spill
	if q.disk == nil {
		// The limit on reading back: a buffer's bytes and the lengths of
		// its records.
		l, err := recfile.NewBacklog(sp.dir, recfile.Zstd, p.size+p.nrec*binary.MaxVarintLen32)
		if err != nil {
			return 0, fmt.Errorf("spilling queue %s: %w", q.name, err)
		}
		q.disk = l
	}
	n := 0
	for q.n > 0 {
		b := q.ring[q.head]
		if err := sp.appendLocked(q.disk, b); err != nil {
			return n, fmt.Errorf("spilling queue %s: %w", q.name, err)
		}
		q.popLocked()
		q.spilledBytes += int64(b.bytes())
		p.releaseLocked(b)
		n++
	}
	q.spills++
	q.roomLocked()
	return n, nil
}

// appendLocked writes b's live records to l as one block.
func (sp *spiller) appendLocked(l *recfile.Backlog, b *Buf) error {
	b.index() // the file holds every record's end
	start := 0
	if b.lo > 0 {
		start = int(b.ends[b.lo-1])
	}
	blk := &sp.blk
	blk.Reset()
	for _, e := range b.ends[b.lo:] {
		blk.Add(b.data[start:e])
		start = int(e)
	}
	// The block keeps the chain mark, so a long record spilled in pieces
	// is still one record when read back.
	blk.Cont = b.cont
	before := l.Disk()
	if err := l.Append(blk); err != nil {
		return err
	}
	sp.written += int64(b.bytes())
	sp.disk += l.Disk() - before
	return nil
}

// spillPushLocked appends b, just written to q, to q's backlog and gives
// it back to FREE. While a queue has a backlog every buffer written to it
// goes this way, so its ring stays empty and the order of records holds
// (backlog first). That is what makes a spill cost one pass over the data:
// the queue neither fills up again nor stalls the pool once per few
// buffers, each stall spilling a handful of partly filled buffers as tiny
// blocks. When the reader has drained the backlog the queue is in memory
// again. A disk error aborts the run.
func (q *Queue) spillPushLocked(b *Buf) {
	p := q.pool
	q.records += int64(b.records())
	q.bytes += int64(b.bytes())
	if err := p.spill.appendLocked(q.disk, b); err != nil {
		p.releaseLocked(b)
		p.abortLocked(fmt.Errorf("spilling queue %s: %w", q.name, err))
		return
	}
	q.spilledBytes += int64(b.bytes())
	p.releaseLocked(b)
	if r := q.rwait; r != nil {
		q.rwait = nil
		p.wakeLocked(r)
	}
}

var errBigBlock = errors.New("spill file: block larger than a buffer")

// readLocked reads the oldest block of l into b (an empty buffer from
// FREE).
func (sp *spiller) readLocked(l *recfile.Backlog, b *Buf) error {
	blk := &sp.blk
	if err := l.ReadBlock(blk); err != nil {
		return err
	}
	if blk.Len() > cap(b.ends) || blk.Size() > cap(b.data) {
		return errBigBlock
	}
	b.data = append(b.data[:0], blk.Bytes()...)
	for i := range blk.Len() {
		b.ends = append(b.ends, int32(blk.End(i)))
	}
	b.cont = blk.Cont
	blk.Reset()
	return nil
}

// discardLocked drops q's backlog (its reader stopped).
func (q *Queue) discardLocked() {
	if q.disk == nil {
		return
	}
	q.disk.Close()
	q.disk = nil
}
