package buffer

import (
	"time"

	"github.com/tpipe/tpipe/record/recfile"
)

// Queue is a bounded FIFO of buffers between one writing task and one
// reading task: a communication file of the paper. Its capacity counts
// queued buffers, the writer's reservations and the buffer the reader has
// taken but not yet given back (see the package doc).
//
// A Queue is safe for concurrent use; a zero Queue is not usable (see
// Pool.NewQueue).
type Queue struct {
	pool     *Pool
	name     string
	cap      int
	ring     []*Buf
	head, n  int
	reserved int // writer's reservations: a buffer being filled, or about to be taken
	held     int // buffers taken by the reader and not yet given back
	eof      bool
	gone     bool // the reader stopped; writes fail with ErrReaderGone
	// idle is set when the writer's last act on the queue was to hand
	// over what it had before a wait of its own (flushLocked): it has
	// nothing more for the reader until something wakes it. Any other
	// push clears it. Input.Idle reads it.
	idle bool
	// raw is set once the reader has taken a buffer as bytes (ReadBytes):
	// it never looks at records, so ScanFrom leaves lines unindexed for
	// it (Buf.lazy).
	raw   bool
	done  chan struct{} // closed when gone or aborted; made on demand
	rwait *proc         // the reader, when it waits for a buffer or eof
	wwait *proc         // the writer, when it waits for room

	records, bytes      int64
	high                int
	readWait, writeWait time.Duration
	growths             int
	writer, reader      *proc
	// disk is the backlog of a spilled queue (see spill.go): its oldest
	// buffers, read before the ring.
	disk         *recfile.Backlog
	spills       int
	spilledBytes int64
	// overflow is set while the queue's reader is a bridge stuck on its
	// program (outside.go): a full queue then spills at once instead of
	// making its writer wait for another stall to be seen.
	overflow bool
}

// backlog is the number of buffers of q on disk.
func (q *Queue) backlog() int {
	if q.disk == nil {
		return 0
	}
	return q.disk.Blocks()
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Cap returns the queue's current capacity.
func (q *Queue) Cap() int {
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	return q.cap
}

// occupancy is what counts against the capacity.
func (q *Queue) occupancy() int { return q.n + q.reserved + q.held }

// pushLocked queues b, or hands it to the reader waiting for it. It runs
// on the thread of q's writer (see UnparkerBy), which wakes the reader.
func (q *Queue) pushLocked(b *Buf) {
	q.idle = false
	if q.backlog() > 0 {
		q.spillPushLocked(b)
		return
	}
	if q.n == len(q.ring) {
		// Only after a resolution raised cap with a writer already reserved;
		// the ring follows the capacity.
		q.resizeLocked(max(q.cap, q.n+1))
	}
	q.ring[(q.head+q.n)%len(q.ring)] = b
	q.n++
	if q.n > q.high {
		q.high = q.n
	}
	// A record is counted in the buffer where it ends.
	q.records += int64(b.records())
	if b.cont {
		q.records--
	}
	q.bytes += int64(b.bytes())
	if r := q.rwait; r != nil {
		q.rwait = nil
		if in := r.wait.in; in != nil && r.wait.kind == waitRead && r.wait.q == q && q.n == 1 && q.backlog() == 0 {
			// The reader waits for this very buffer: hand it over, as a
			// channel hands a value to a waiting receiver, so that the
			// reader need not take the lock again to take it.
			in.takeLocked(q.popLocked())
			r.handed = true
			q.pool.wakeByLocked(r, q.writer)
			q.readWait += r.waits.last
			return
		}
		q.pool.wakeByLocked(r, q.writer)
	}
}

func (q *Queue) popLocked() *Buf {
	b := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return b
}

func (q *Queue) resizeLocked(size int) {
	ring := make([]*Buf, size)
	for i := 0; i < q.n; i++ {
		ring[i] = q.ring[(q.head+i)%len(q.ring)]
	}
	q.ring, q.head = ring, 0
}

// doneLocked closes q.done, if anyone asked for it.
func (q *Queue) doneLocked() {
	if q.done == nil {
		q.done = closedChan
		return
	}
	select {
	case <-q.done:
	default:
		close(q.done)
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// roomLocked wakes the writer waiting for room, if any.
func (q *Queue) roomLocked() { q.roomByLocked(nil) }

// roomByLocked is roomLocked on the thread of task by, if not nil: q's
// reader, which made the room by giving back or moving on the buffer it
// read (see UnparkerBy). Room made anywhere else (a queue grown or
// spilled, by whichever thread resolves a stall) comes through
// roomLocked.
func (q *Queue) roomByLocked(by *proc) {
	if w := q.wwait; w != nil {
		q.wwait = nil
		q.pool.wakeByLocked(w, by)
	}
}

// resolveLocked raises the capacity by one to resolve a stall, and counts
// it as a growth; it allocates only the queue's slot index, never a record
// buffer.
func (q *Queue) resolveLocked() {
	q.growLocked(1)
	q.growths++
}

// growLocked raises the capacity by n >= 1 and wakes a writer waiting for
// room.
func (q *Queue) growLocked(n int) {
	q.cap += n
	if len(q.ring) < q.cap {
		q.resizeLocked(q.cap)
	}
	q.roomLocked()
}

// Grow raises the capacity of q by n (a controller sizing queues at run
// time); capacities never shrink.
func (q *Queue) Grow(n int) {
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	if n > 0 {
		q.growLocked(n)
	}
}

// QueueStats are the counters of one queue.
type QueueStats struct {
	Name string
	Cap  int
	// Len is what counts against Cap now: buffers queued, the writer's
	// reservations and the buffers the reader holds. At Cap the writer
	// waits.
	Len       int
	Records   int64 // records that went through the queue
	Bytes     int64 // their bytes
	HighWater int   // most buffers queued at once
	// ReadWait is the time its reader spent waiting for a buffer, and
	// WriteWait its writer's for room or for FREE; both are sums of the
	// waits' timings (Proc.Blocked): exact for rare waits, sampled
	// estimates for frequent short ones.
	ReadWait  time.Duration
	WriteWait time.Duration
	Growths   int   // times a resolver raised its capacity
	Spills    int   // times its queued buffers went to disk
	Spilled   int64 // record bytes that went to disk
}

// Stats returns the queue's counters so far.
func (q *Queue) Stats() QueueStats {
	q.pool.mu.Lock()
	defer q.pool.mu.Unlock()
	return QueueStats{
		Name: q.name, Cap: q.cap, Len: q.occupancy(), Records: q.records, Bytes: q.bytes, HighWater: q.high,
		ReadWait: q.readWait, WriteWait: q.writeWait, Growths: q.growths,
		Spills: q.spills, Spilled: q.spilledBytes,
	}
}
