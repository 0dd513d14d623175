// Package buffer holds the record memory of a tpipe run: one pool of B
// buffers of S bytes each (the FREE pool of "Thrifty Execution of Task
// Pipelines", Schneider, Conway and Skeen, 1984), bounded queues of buffers
// that link tasks, and the ports through which a task reads and writes
// records.
//
// # Two handles on a task
//
// A task sees its Ports: read, write, forward a buffer without a copy,
// write eof, stop reading. Its scheduler holds its Proc: how it parks,
// what it waits on, finishing it. Both are views of one record; the pool
// keeps the rest (the queues, FREE, deadlock detection). Pool settings are
// one Options value, fixed at NewPool.
//
// # Memory
//
// Record memory is at most B x S whatever the input size. A buffer's memory
// is allocated the first time the buffer leaves FREE and reused from then
// on, so a run allocates as many buffers as were ever out of FREE at once
// (Pool.Allocated, the high-water mark), never more than B, and nothing is
// allocated per record. A large B is therefore a cheap promise: the bound
// is stated before the run, and only what the run uses is paid for. A
// buffer may carry a batch of records back to back; each buffer also has a
// small index of record ends (at most MaxRecords entries), allocated with it.
// ScanFrom may leave that index to the reader: for a queue whose reader
// reads bytes (ReadBytes), it counts the lines it reads instead of
// indexing them, and a reader of records that takes such a buffer indexes
// it first, on its own core (Buf.lazy).
//
// # Records longer than a buffer
//
// A record longer than S travels as a chain: its pieces fill consecutive
// buffers of one queue (a queue has one writer, so nothing comes between
// them), each buffer but the last marked as going on in the next. Each
// buffer of a chain is taken as any other (reserve first, then FREE), so
// the bound B x S holds whatever the record length. Tasks that move bytes
// (Input.ReadChunk, Input.ReadBytes, Output.WriteChunk, Output.Copy)
// handle the pieces and never hold a record whole. Input.Read gives a
// task the whole record: it copies the pieces into memory of the port's,
// outside the pool, giving each buffer back as it goes, up to
// Options.MaxRecord (1 GiB by default) and past it fails with a
// *record.TooLargeError that names that limit. Batch paths (ReadBatch,
// Pass, Sift) stop before a record's first piece and never move a marked
// buffer; a spilled queue keeps the mark on disk. Bytes after a buffer's
// last record end, when it is handed over, are such a first piece: the
// record being written is not finished, and the end of the output ends
// it.
//
// # Where a buffer is
//
// Every buffer is at all times in exactly one place: FREE, a queue, or held
// by one task (a buffer being filled by a writer, or being read by a
// reader). Their count is B; Pool.Check verifies it.
//
// # Capacity and the write order
//
// A queue's capacity counts three things: buffers queued in it, the
// writer's reservations (a buffer being filled for it, or about to be taken
// from FREE for it), and the buffer its reader has taken and not yet given
// back. A write therefore first reserves room in its output queue, and only
// then takes a buffer from FREE: a task never waits for room while holding
// a buffer from FREE. Counting the reader's buffer against its input queue
// is what lets a task read records in place (no copy) and still keeps the
// bound of Theorem 3.2: with B >= the sum of the capacities, every buffer
// outside FREE is charged to some queue, so a task waiting for FREE proves
// some other queue is full. The paper's literal order (take from FREE, then
// wait for room) can deadlock at that B; package proofs shows both.
//
// # Batching
//
// Small records are packed into one buffer, which is how the cost per record
// gets small. A task hands over its partially filled output buffers before
// it blocks on anything in this package, so batching never holds a buffer
// hostage; a task about to block elsewhere (on a slow file or pipe) calls
// Ports.Flush itself.
//
// # Blocking and deadlock
//
// Input.Read blocks while its queue is empty; Output.Write blocks while its
// queue is full or FREE is empty. When every unfinished task of a pool is
// blocked in this package, the pool is stalled: it asks its resolver (see
// Options.Resolver and Options.Spill) and, failing that, fails the run with a *DeadlockError
// that says what every task waits on. A stall is detected by the last task
// to block, so there is no polling. The one exception is a task bridged to
// an external program, which waits in system calls: it says when it waits
// on the program's pipe (Ports.WaitOutside), and counts as blocked once it
// has waited Options.Grace with nothing moved; a timer, armed only while
// such a wait is in its grace, looks again when the grace runs out (see
// outside.go).
//
// # Handoff and time blocked
//
// A writer that pushes a buffer to a reader waiting for it hands the
// buffer over under its lock, as a channel hands a value to a waiting
// receiver: the reader goes on without taking the lock again. A task's
// time blocked (Proc.Blocked, which --stats, the live view, --cap auto
// and auto replicas read) is timed exactly for tasks that wait rarely and
// by sampling for tasks that wait every few microseconds, where two
// readings of the clock per wait would cost as much as the handoff
// itself (waittime.go says how, and how accurate it is), more sparsely
// for tasks whose time blocked nothing reads over milliseconds
// (Proc.SampleSparsely, under ros). A filter that a scheduler runs as
// plain calls (Filter.Step, under ros) never parks: it registers its
// wait as a parked task would and returns, and the wake
// reaches its scheduler through the task's Parker; so do a source and a
// sink run as calls (Source.Step, Sink.Step). A scheduler that runs
// its tasks one at a time on one thread (ros) keeps its own record of
// which wait (WaitTracker) and learns which task's thread a wake came
// from (UnparkerBy), so that a handoff between two of its tasks costs no
// atomic operation beyond the pool's lock.
//
// # Concurrency
//
// A Pool, its Queues and Procs are safe for concurrent use. Ports, and the
// Inputs and Outputs it owns, belong to one task and must be used by one
// goroutine at a time.
package buffer
