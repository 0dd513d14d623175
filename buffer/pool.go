package buffer

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tpipe/tpipe/record"
)

// ErrReaderGone is returned by Output.Write and Output.Forward when the task
// reading the queue has stopped reading (it finished early, like head). The
// writer should stop; a task function may return ErrReaderGone as is and the
// scheduler counts it as success, not failure (there is no SIGPIPE status).
var ErrReaderGone = errors.New("buffer: reader has stopped")

// ErrClosed is returned by Output.Write after the output was closed.
var ErrClosed = errors.New("buffer: write after close")

// errWouldBlock is returned instead of blocking when a pool is in test mode
// (see export_test.go): a model-based test drives every port from one
// goroutine and checks that the pool blocks exactly when the model says so.
var errWouldBlock = errors.New("buffer: would block")

// TooLargeError is returned by Output.Write for a record larger than the
// record size S of the pool.
type TooLargeError struct {
	Size, Max int
	AtLeast   bool // Size is a lower bound: the record was cut off
}

// Is makes errors.Is(err, record.ErrTooLarge) true, so one sentinel
// covers a record too large for a buffer and one too large for a scanner.
func (e *TooLargeError) Is(target error) bool { return target == record.ErrTooLarge }

func (e *TooLargeError) Error() string {
	least := ""
	if e.AtLeast {
		least = "at least "
	}
	return fmt.Sprintf("record of %s%d bytes exceeds the record size of %d bytes (raise it with --record-size)", least, e.Size, e.Max)
}

// MaxRecords is the most records one buffer can carry. A buffer of S bytes
// carries at most max(2, min(S/16, MaxRecords)) records, so the index of
// record ends costs at most a quarter of the buffer.
const MaxRecords = 4096

// Buf is one record-size buffer: a batch of records stored back to back and
// the offsets where they end. Only this package touches a Buf's contents.
type Buf struct {
	data []byte  // len: bytes used; cap: the record size S
	ends []int32 // ends[i] is the end offset of record i in data
	lo   int     // records before lo were consumed upstream (zero-copy forward)
	id   int
	// Padding Buf and the ports to separate cache lines was measured (A/B,
	// BenchmarkChain) and made no difference once filters pass whole
	// buffers, so the structs stay small.
}

func (b *Buf) reset() {
	b.data = b.data[:0]
	b.ends = b.ends[:0]
	b.lo = 0
}

// end is the offset where b's last record ends (0 if it has none).
func (b *Buf) end() int {
	if len(b.ends) == 0 {
		return 0
	}
	return int(b.ends[len(b.ends)-1])
}

// records is the number of live records in b.
func (b *Buf) records() int { return len(b.ends) - b.lo }

// bytes is the number of live bytes in b.
func (b *Buf) bytes() int {
	start := 0
	if b.lo > 0 {
		start = int(b.ends[b.lo-1])
	}
	return len(b.data) - start
}

// Pool is the FREE pool of one run: B buffers of S bytes allocated once,
// and the queues and tasks (Procs) that use them. All state changes happen
// under one mutex; the hot paths (a record read from, or written to, a
// buffer a task already holds) take no lock, so the lock is taken about
// once per buffer, not once per record.
//
// A Pool is safe for concurrent use. The zero Pool is not usable; call
// NewPool.
type Pool struct {
	mu       sync.Mutex
	size     int // S
	nrec     int // records one buffer can index
	bufs     []Buf
	free     []*Buf  // FREE; a stack, so recently used (cache-warm) buffers go out first
	freeWait []*Proc // tasks waiting for FREE, first come first served
	queues   []*Queue
	procs    []*Proc
	live     int   // procs started and not finished
	blocked  int   // procs parked in this package
	err      error // sticky: set once by Abort, returned by every later call
	high     int   // most buffers outside FREE at once
	resolve  func(*DeadlockError) bool
	hook     Hook
	noBlock  bool // test mode: return errWouldBlock instead of parking
	// compete, when set, makes a buffer given back to FREE go to FREE and
	// wake every task waiting for one, instead of going straight to the
	// first of them: under Record Oriented Scheduling the scheduler, not
	// the order of waiting, decides who takes it (a handoff to a task of
	// lower index breaks Theorem 4.1).
	compete bool
	// spill, when set (SetSpill), makes the pool resolve local deadlocks
	// itself by growing queues and spilling them to disk.
	spill  *spiller
	mayAct []bool // scratch of stuckLocked
	// local makes the pool look for stuck parts of the graph whenever a
	// task blocks, not only when every task is blocked (SetLocal).
	local bool
}

// SetLocal makes the pool detect a deadlock in part of the graph while
// other tasks still run or wait outside tpipe (see waitfor.go). It costs a
// pass over the tasks each time one blocks, which a chain of in-process
// tasks does not need: there, a stuck part stops the whole chain. Call it
// before any task starts; SetSpill implies it.
func (p *Pool) SetLocal() { p.local = true }

// SetCompete switches the FREE handoff off (see Pool.compete); call it
// before any task starts.
func (p *Pool) SetCompete() { p.compete = true }

// Op names a point where a task may block; a Hook sees it before the task
// tries the operation.
type Op uint8

const (
	OpRead  Op = iota + 1 // take the next buffer from an input queue
	OpWrite               // reserve room in an output queue, then take from FREE
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return fmt.Sprintf("Op(%d)", o)
}

// Hook is called by a task before each operation that may block, outside
// any lock. A test uses it to force a schedule (for example the paper's
// schedule DS) by making some tasks wait until others have done enough.
// The Hook may block; a task waiting in the Hook counts as running, not as
// blocked, so it never triggers deadlock detection.
type Hook interface {
	Before(task int, op Op)
}

// NewPool allocates B buffers of S bytes (b >= 1, s >= 1).
func NewPool(b, s int) (*Pool, error) {
	if b < 1 {
		return nil, fmt.Errorf("buffer: %d buffers: need at least 1", b)
	}
	if s < 1 || s > math.MaxInt32 {
		return nil, fmt.Errorf("buffer: record size %d: need 1 to %d bytes", s, math.MaxInt32)
	}
	if uint64(b)*uint64(s) > math.MaxInt {
		return nil, fmt.Errorf("buffer: %d buffers of %d bytes overflow memory", b, s)
	}
	// At least two, so that ScanFrom can keep one free for a final
	// unterminated line.
	nrec := max(2, min(s/16, MaxRecords))
	p := &Pool{size: s, nrec: nrec, bufs: make([]Buf, b), free: make([]*Buf, b)}
	data := make([]byte, b*s)
	ends := make([]int32, b*nrec)
	for i := range p.bufs {
		p.bufs[i] = Buf{
			data: data[i*s : i*s : (i+1)*s],
			ends: ends[i*nrec : i*nrec : (i+1)*nrec],
			id:   i,
		}
		// Hand out low ids first: the free list is a stack.
		p.free[b-1-i] = &p.bufs[i]
	}
	return p, nil
}

// Buffers returns B.
func (p *Pool) Buffers() int { return len(p.bufs) }

// RecordSize returns S.
func (p *Pool) RecordSize() int { return p.size }

// Free returns the number of buffers in FREE now.
func (p *Pool) Free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// HighWater returns the most buffers that were outside FREE at once.
func (p *Pool) HighWater() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.high
}

// SetHook installs h; call it before any task starts.
func (p *Pool) SetHook(h Hook) { p.hook = h }

// SetResolver installs the function a stalled pool calls before it reports
// a deadlock. It is called with the pool locked and must not block or call
// methods that lock the pool; it may call Queue.GrowLocked. It returns true
// when it has made some task runnable again. Call it before any task starts.
func (p *Pool) SetResolver(f func(*DeadlockError) bool) { p.resolve = f }

// Err returns the error the pool was aborted with, or nil.
func (p *Pool) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Abort fails every blocked and later operation with err; the first call
// wins. Buffers held by tasks come back to FREE as the tasks finish.
func (p *Pool) Abort(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.abortLocked(err)
}

func (p *Pool) abortLocked(err error) {
	if p.err != nil {
		return
	}
	p.err = err
	for _, q := range p.queues {
		if q.done != nil {
			q.doneLocked()
		}
	}
	for _, t := range p.procs {
		if t.wait.kind != waitNone {
			p.wakeLocked(t)
		}
	}
	p.freeWait = p.freeWait[:0]
}

// takeFreeLocked pops a buffer from FREE, or returns nil.
func (p *Pool) takeFreeLocked() *Buf {
	n := len(p.free)
	if n == 0 {
		return nil
	}
	b := p.free[n-1]
	p.free = p.free[:n-1]
	if out := len(p.bufs) - len(p.free); out > p.high {
		p.high = out
	}
	return b
}

// releaseLocked gives b back to FREE, or straight to the first task waiting
// for FREE (a handoff, so no waiter can lose the buffer to a late comer).
func (p *Pool) releaseLocked(b *Buf) {
	b.reset()
	if p.compete {
		p.free = append(p.free, b)
		for _, t := range p.freeWait {
			p.wakeLocked(t)
		}
		p.freeWait = p.freeWait[:0]
		return
	}
	if len(p.freeWait) > 0 {
		t := p.freeWait[0]
		copy(p.freeWait, p.freeWait[1:])
		p.freeWait = p.freeWait[:len(p.freeWait)-1]
		t.got = b
		p.wakeLocked(t)
		return
	}
	p.free = append(p.free, b)
}

// Check verifies buffer conservation: every one of the B buffers is in
// exactly one place (FREE, a queue, or held by one task) and the per-queue
// occupancy never exceeds the capacity. It returns a description of the
// first violation found.
func (p *Pool) Check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := make([]string, len(p.bufs))
	place := func(b *Buf, where string) error {
		if b == nil {
			return nil
		}
		if seen[b.id] != "" {
			return fmt.Errorf("buffer %d is both in %s and in %s", b.id, seen[b.id], where)
		}
		seen[b.id] = where
		return nil
	}
	for _, b := range p.free {
		if err := place(b, "FREE"); err != nil {
			return err
		}
	}
	nfree, nqueued, nheld := len(p.free), 0, 0
	for _, q := range p.queues {
		for i := 0; i < q.n; i++ {
			if err := place(q.ring[(q.head+i)%len(q.ring)], "queue "+q.name); err != nil {
				return err
			}
		}
		nqueued += q.n
		if occ := q.n + q.reserved + q.held; occ > q.cap {
			return fmt.Errorf("queue %s holds %d buffers (%d queued, %d reserved, %d being read) over its capacity %d",
				q.name, occ, q.n, q.reserved, q.held, q.cap)
		}
	}
	for _, t := range p.procs {
		for _, in := range t.ins {
			if err := place(in.cur, "task "+t.name+" (reading)"); err != nil {
				return err
			}
			if in.cur != nil {
				nheld++
			}
		}
		for _, o := range t.outs {
			if err := place(o.pend, "task "+t.name+" (writing)"); err != nil {
				return err
			}
			if o.pend != nil {
				nheld++
			}
		}
		if err := place(t.got, "task "+t.name+" (handed over)"); err != nil {
			return err
		}
		if t.got != nil {
			nheld++
		}
	}
	if nfree+nqueued+nheld != len(p.bufs) {
		for i, s := range seen {
			if s == "" {
				return fmt.Errorf("buffer %d is lost: FREE %d + queued %d + held %d != B %d", i, nfree, nqueued, nheld, len(p.bufs))
			}
		}
		return fmt.Errorf("FREE %d + queued %d + held %d != B %d", nfree, nqueued, nheld, len(p.bufs))
	}
	return nil
}

// Counts returns how many buffers are in FREE, queued, and held by tasks.
// Their sum is always B.
func (p *Pool) Counts() (free, queued, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free = len(p.free)
	for _, q := range p.queues {
		queued += q.n
	}
	return free, queued, len(p.bufs) - free - queued
}

// now is a variable so that tests of the statistics could pin time; the
// runtime reads the clock only when a task blocks or ends.
var now = time.Now
