package buffer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// ErrReaderGone is returned by Output.Write and Output.Forward when the task
// reading the queue has stopped reading (it finished early, like head). The
// writer should stop; a task function may return ErrReaderGone as is and the
// scheduler counts it as success, not failure (there is no SIGPIPE status).
var ErrReaderGone = errors.New("buffer: reader has stopped")

// ErrClosed is returned by Output.Write after the output was closed.
var ErrClosed = errors.New("buffer: write after close")

// MaxRecords is the most records one buffer can carry. A buffer of S bytes
// carries at most max(2, min(S/16, MaxRecords)) records, so the index of
// record ends costs at most a quarter of the buffer.
//
// It was 4096, which cut a default buffer of seq's 9-byte lines at 36 KiB:
// 20 million lines took 4,883 handoffs, each waking the reader on the
// other core, and seq 1 20000000 | wc -l spent a third of its time on
// them (0.34 s; 0.21 s with the limit at S/16, where GNU takes 0.25 s).
const MaxRecords = 1 << 16

// DefaultMaxRecord is Options.MaxRecord when it is 0: the longest record a
// task may need whole (1 GiB).
const DefaultMaxRecord = 1 << 30

// MaxRecordLimit is the Limit of a *record.TooLargeError for a record over
// a pool's MaxRecord, which names that limit rather than S.
const MaxRecordLimit = "the longest record a task holds whole"

// Buf is one record-size buffer: a batch of records stored back to back and
// the offsets where they end. Only this package touches a Buf's contents.
type Buf struct {
	data []byte  // len: bytes used; cap: the record size S
	ends []int32 // ends[i] is the end offset of record i in data
	lo   int     // records before lo were consumed upstream (zero-copy forward)
	// cont marks a chain: the last record is only the start of a longer
	// one, which goes on as the first record of the next buffer of the
	// same queue (a queue has one writer, so a chain's buffers are
	// consecutive). A chain ends at a buffer without cont, or at eof.
	cont bool
	id   int
	// pins counts the records of the buffer its reader keeps (Input.Hold);
	// a pinned buffer is kept, not given back, when the reader moves on.
	pins int32
	// lazy, when not 0, is the number of lines ScanFrom put in the buffer
	// without indexing them: the last entry of ends is then not a record
	// end but the end of those lines, which are whole and end in delim.
	// A reader of records indexes them (index) when it takes the buffer;
	// a reader of bytes (ReadBytes, Copy) never does. See ScanFrom.
	lazy  int32
	delim byte
	// Padding Buf and the ports to separate cache lines was measured (A/B,
	// BenchmarkChain) and made no difference once filters pass whole
	// buffers, so the structs stay small.
}

func (b *Buf) reset() {
	b.data = b.data[:0]
	b.ends = b.ends[:0]
	b.lo = 0
	b.cont = false
	b.lazy = 0
}

// index puts the lines of b that ScanFrom left unindexed (see Buf.lazy)
// into ends, so that ends holds one entry per record again.
func (b *Buf) index() {
	if b.lazy == 0 {
		return
	}
	b.ends = b.ends[:len(b.ends)-1]
	b.lazy = 0
	indexLines(b, b.end(), b.delim)
}

// count is the number of record ends b holds, the lines not yet indexed
// included.
func (b *Buf) count() int {
	if b.lazy == 0 {
		return len(b.ends)
	}
	return len(b.ends) - 1 + int(b.lazy)
}

// whole is the number of records of b that are whole: all but the last
// if b is part of a chain.
func (b *Buf) whole() int {
	if b.cont {
		return len(b.ends) - 1
	}
	return len(b.ends)
}

// end is the offset where b's last record ends (0 if it has none).
func (b *Buf) end() int {
	if len(b.ends) == 0 {
		return 0
	}
	return int(b.ends[len(b.ends)-1])
}

// records is the number of live records in b.
func (b *Buf) records() int { return b.count() - b.lo }

// bytes is the number of live bytes in b.
func (b *Buf) bytes() int {
	start := 0
	if b.lo > 0 {
		start = int(b.ends[b.lo-1])
	}
	return len(b.data) - start
}

// Options are the settings of a pool, fixed when it is made. The zero
// Options are not usable: Buffers and RecordSize must be set.
type Options struct {
	// Buffers is B, the number of record buffers (at least 1).
	Buffers int
	// RecordSize is S, the bytes of one buffer (at least 1). A record
	// longer than S travels as a chain of pieces over consecutive buffers
	// (see the package doc).
	RecordSize int
	// MaxRecord is the longest record Input.Read reassembles from a chain,
	// in task memory outside the pool; 0 means DefaultMaxRecord. Byte
	// paths (Input.ReadChunk, Input.ReadBytes) have no such limit.
	MaxRecord int
	// Hook, if set, sees every task before each operation that may block
	// (see Hook); tests use it to force a schedule.
	Hook Hook
	// Resolver, if set, is asked what to do before a stall is reported as
	// a deadlock (see Resolver).
	Resolver Resolver
	// Local makes the pool look for stuck parts of the graph whenever a
	// task blocks, not only when every task is blocked (see waitfor.go).
	// It costs a pass over the tasks each time one blocks, which a chain of
	// in-process tasks does not need: there, a stuck part stops the whole
	// chain. A pool whose tasks may wait outside tpipe (in a system call)
	// needs it, since such a task hides a stall from the global check.
	Local bool
	// Spill makes the pool resolve local deadlocks itself, by growing
	// queues while FREE has buffers and then spilling them to temp files
	// in SpillDir ("" means os.TempDir()). It implies Local.
	Spill    bool
	SpillDir string
	// Compete switches off the handoff of a buffer given back to FREE to
	// the first task waiting for one: the buffer goes to FREE and every
	// waiter is woken to compete for it. Under Record Oriented Scheduling
	// the scheduler, not the order of waiting, must decide who takes it (a
	// handoff to a task of lower index breaks Theorem 4.1).
	Compete bool
	// Grace is how long a bridge to an external program (Proc.SetProgram)
	// must wait on the program's pipe, with nothing moved, before deadlock
	// detection counts it as blocked (see outside.go); 0 means
	// DefaultGrace.
	Grace time.Duration
}

// A Resolver is asked, with the pool locked, how to resolve a stall before
// it is reported: it returns the queue whose capacity should grow by one
// (it need not hold a buffer: growing costs a buffer only when the writer
// then takes one), or nil to leave the stall to the pool's own resolution
// (Options.Spill) or to the report. It must not block or call the pool.
type Resolver func(d *DeadlockError) *Queue

// Pool is the FREE pool of one run: B buffers of S bytes, and the queues
// and tasks (Procs) that use them. FREE starts with all B buffers, but a
// buffer's memory is allocated the first time it leaves FREE and kept
// from then on: B x S is a bound the run never passes, and a run that
// needs few buffers (echo hi with B = 100000) costs only those few. All state changes happen
// under one mutex; the hot paths (a record read from, or written to, a
// buffer a task already holds) take no lock, so the lock is taken about
// once per buffer, not once per record. A lock per queue (and one for
// FREE) was built and measured slower on chains of single records, and
// no lock is what keeps their handoff above a channel's
// (bench/README.md, "The handoff of single records").
//
// A Pool is safe for concurrent use. The zero Pool is not usable; call
// NewPool.
type Pool struct {
	mu       sync.Mutex
	o        Options
	size     int     // S
	maxRec   int     // Options.MaxRecord, or its default
	nrec     int     // records one buffer can index
	nbuf     int     // B
	bufs     []*Buf  // the buffers allocated so far, by id; never more than B
	free     []*Buf  // allocated buffers in FREE; a stack, so recently used (cache-warm) buffers go out first
	freeWait []*proc // tasks waiting for FREE, first come first served
	queues   []*Queue
	procs    []*proc
	live     int   // procs started and not finished
	blocked  int   // procs parked in this package
	err      error // sticky: set once by Abort, returned by every later call
	high     int   // most buffers outside FREE at once
	// spill, with Options.Spill, is the state of spilling queues to disk.
	spill  *spiller
	mayAct []bool // scratch of stuckLocked

	// Bridges to external programs and their waits outside (outside.go).
	programs []string // names, by number (proc.prog)
	progMay  []bool   // scratch of stuckLocked, by program
	progPool []bool   // scratch of stuckLocked, by program
	outside  int      // tasks waiting outside now
	watch    *time.Timer
	watchAt  time.Time // when watch fires
	watchGen uint64    // which timer is current
	watchers sync.WaitGroup
	closed   bool // Close has begun: arm no timer
	recycled bool // Close gave the buffers' memory away (recycle.go)

	// The clock of waits (waittime.go): epoch holds the monotonic reading
	// it counts from; the tick times waits that go on.
	epoch     time.Time
	tick      *time.Timer
	tickArmed bool
	fakeClock func() int64 // set by tests: the clock of waits
}

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

// NewPool makes a pool of the B buffers of S bytes that o asks for. No
// buffer memory is allocated yet: each buffer is made the first time it
// leaves FREE (see Pool).
func NewPool(o Options) (*Pool, error) {
	b, s := o.Buffers, o.RecordSize
	if b < 1 {
		return nil, fmt.Errorf("buffer: %d buffers: need at least 1", b)
	}
	if s < 1 || s > math.MaxInt32 {
		return nil, fmt.Errorf("buffer: record size %d: need 1 to %d bytes", s, math.MaxInt32)
	}
	if uint64(b)*uint64(s) > math.MaxInt {
		return nil, fmt.Errorf("buffer: %d buffers of %d bytes overflow memory", b, s)
	}
	if o.Spill {
		o.Local = true
	}
	// At least two, so that ScanFrom can keep one free for a final
	// unterminated line.
	nrec := max(2, min(s/16, MaxRecords))
	if o.MaxRecord < 0 {
		return nil, fmt.Errorf("buffer: longest record %d: need a positive size", o.MaxRecord)
	}
	maxRec := o.MaxRecord
	if maxRec == 0 {
		maxRec = DefaultMaxRecord
	}
	p := &Pool{o: o, size: s, maxRec: maxRec, nrec: nrec, nbuf: b, epoch: time.Now()}
	if o.Spill {
		dir := o.SpillDir
		if dir == "" {
			dir = os.TempDir()
		}
		p.spill = &spiller{dir: dir}
	}
	return p, nil
}

// NewQueue makes a queue of capacity c >= 1 named name (for statistics and
// error messages). Create queues before any task starts.
func (p *Pool) NewQueue(name string, c int) (*Queue, error) {
	if c < 1 {
		return nil, fmt.Errorf("buffer: queue %s: capacity %d: need at least 1", name, c)
	}
	q := &Queue{pool: p, name: name, cap: c, ring: make([]*Buf, c)}
	p.mu.Lock()
	p.queues = append(p.queues, q)
	p.mu.Unlock()
	return q, nil
}

// NewProc registers a task named name with the given index (its position
// in topological order; a Hook sees it) and its input and output queues,
// and returns the scheduler's handle on it; the task itself gets
// Proc.Ports. A queue may be an input of one task and an output of one
// task. Register every task before any starts.
func (p *Pool) NewProc(name string, index int, ins, outs []*Queue) (*Proc, error) {
	t := &proc{pool: p, name: name, index: index, wake: make(chan struct{}, 1), prog: -1}
	t.waits.rng = rand.Uint64()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range ins {
		if q.reader != nil {
			return nil, fmt.Errorf("buffer: queue %s read by both %s and %s", q.name, q.reader.name, name)
		}
		q.reader = t
		t.ins = append(t.ins, &Input{t: t, q: q})
	}
	for _, q := range outs {
		if q.writer != nil {
			return nil, fmt.Errorf("buffer: queue %s written by both %s and %s", q.name, q.writer.name, name)
		}
		q.writer = t
		t.outs = append(t.outs, &Output{t: t, q: q})
	}
	p.procs = append(p.procs, t)
	p.live++
	return (*Proc)(t), nil
}

// Buffers returns B.
func (p *Pool) Buffers() int { return p.nbuf }

// Allocated returns how many of the B buffers have been allocated: the
// most that were ever outside FREE at once, so their memory is
// Allocated() x S.
func (p *Pool) Allocated() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bufs)
}

// RecordSize returns S.
func (p *Pool) RecordSize() int { return p.size }

// MaxRecord returns the longest record Input.Read reassembles.
func (p *Pool) MaxRecord() int { return p.maxRec }

// Free returns the number of buffers in FREE now.
func (p *Pool) Free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.freeLocked()
}

// freeLocked is the number of buffers in FREE: those allocated and given
// back, and those not allocated yet.
func (p *Pool) freeLocked() int { return len(p.free) + p.nbuf - len(p.bufs) }

// HighWater returns the most buffers that were outside FREE at once.
func (p *Pool) HighWater() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.high
}

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

// takeFreeLocked pops a buffer from FREE, or returns nil. A buffer given
// back before is reused first; only when none is left is a new one
// allocated, so the pool allocates as many buffers as were ever out at
// once (its high-water mark), never more than B.
func (p *Pool) takeFreeLocked() *Buf {
	var b *Buf
	if n := len(p.free); n > 0 {
		b = p.free[n-1]
		p.free = p.free[:n-1]
	} else if len(p.bufs) < p.nbuf {
		b = p.newBuf(len(p.bufs))
		p.bufs = append(p.bufs, b)
	} else {
		return nil
	}
	if out := p.nbuf - p.freeLocked(); out > p.high {
		p.high = out
	}
	return b
}

// releaseLocked gives b back to FREE, or straight to the first task waiting
// for FREE (a handoff, so no waiter can lose the buffer to a late comer).
func (p *Pool) releaseLocked(b *Buf) {
	b.reset()
	if p.o.Compete {
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
	nfree, nqueued, nheld := p.freeLocked(), 0, 0
	for _, q := range p.queues {
		for i := 0; i < q.n; i++ {
			if err := place(q.ring[(q.head+i)%len(q.ring)], "queue "+q.name); err != nil {
				return err
			}
		}
		nqueued += q.n
		if occ := q.n + q.reserved + q.held; occ > q.cap {
			return fmt.Errorf("queue %s holds %d buffers (%d queued, %d reserved, %d being read or kept) over its capacity %d",
				q.name, occ, q.n, q.reserved, q.held, q.cap)
		}
	}
	for _, t := range p.procs {
		for _, in := range t.ins {
			// A private buffer (CopyReads) is the task's own, not the pool's.
			if in.cur != nil && in.cur != in.priv {
				if err := place(in.cur, "task "+t.name+" (reading)"); err != nil {
					return err
				}
				nheld++
			}
			for _, b := range in.kept {
				if err := place(b, "task "+t.name+" (keeping)"); err != nil {
					return err
				}
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
	if nfree+nqueued+nheld != p.nbuf {
		for i, s := range seen {
			if s == "" {
				return fmt.Errorf("buffer %d is lost: FREE %d + queued %d + held %d != B %d", i, nfree, nqueued, nheld, p.nbuf)
			}
		}
		return fmt.Errorf("FREE %d + queued %d + held %d != B %d", nfree, nqueued, nheld, p.nbuf)
	}
	return nil
}

// Counts returns how many buffers are in FREE, queued, and held by tasks.
// Their sum is always B.
func (p *Pool) Counts() (free, queued, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free = p.freeLocked()
	for _, q := range p.queues {
		queued += q.n
	}
	return free, queued, p.nbuf - free - queued
}

// ResolveStats count what the resolver did in a run.
type ResolveStats struct {
	Growths      int   // queue capacities raised by one
	Spills       int   // times a queue's buffers went to disk
	SpilledBytes int64 // record bytes written to spill files
	DiskBytes    int64 // compressed bytes written
}

// Resolved returns what the resolver did so far.
func (p *Pool) Resolved() ResolveStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s ResolveStats
	for _, q := range p.queues {
		s.Growths += q.growths
		s.Spills += q.spills
	}
	if sp := p.spill; sp != nil {
		s.SpilledBytes, s.DiskBytes = sp.written, sp.disk
	}
	return s
}

func (s ResolveStats) String() string {
	return fmt.Sprintf("%d growths, %d spills, %d bytes spilled (%d on disk)", s.Growths, s.Spills, s.SpilledBytes, s.DiskBytes)
}

// Close releases the spill files of the pool, and its buffers' memory for
// the next pool of its record size (see recycle.go). Call it once, after
// every task has finished.
func (p *Pool) Close() error {
	p.stopWatch()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.queues {
		q.discardLocked()
	}
	p.recycleLocked()
	return nil
}

// now is the clock of waits outside the process (outside.go), a variable
// so that tests can pin it. Waits in the pool are timed on the pool's own
// monotonic clock (waittime.go).
var now = time.Now
