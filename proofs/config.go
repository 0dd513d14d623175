package proofs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/sched"
)

// WriteOrder is how a write to a communication file uses FREE and the
// file's queue.
type WriteOrder uint8

const (
	// ReserveFirst is tpipe's order: wait for room in the output queue and
	// reserve it, then take a buffer from FREE. A buffer outside FREE is
	// always charged to some queue's capacity.
	ReserveFirst WriteOrder = iota
	// Literal is the paper's order (section 3.1): acquire(FREE), fill the
	// buffer, release(OUT). The release may wait for room while the task
	// holds the buffer, which no queue is charged for.
	Literal
)

func (w WriteOrder) String() string {
	if w == Literal {
		return "literal"
	}
	return "reserve-first"
}

// Policy is the scheduler.
type Policy uint8

const (
	// Concurrent lets any task with something to do take the next step:
	// every interleaving of cobegin T1 // ... // Tn coend.
	Concurrent Policy = iota
	// ROS is Record Oriented Scheduling as the paper defines it (section
	// 4): after every step, the runnable task with the greatest index runs.
	ROS
	// Cooperative is the variant tpipe first built by mistake: the task
	// chosen (the runnable one with the greatest index) runs until it
	// blocks, and only then is another chosen.
	Cooperative
)

// String names the policy as tpipe's table does (package sched).
func (p Policy) String() string {
	switch p {
	case ROS:
		return sched.ROS.String()
	case Cooperative:
		return "cooperative " + sched.ROS.String()
	}
	return sched.Concurrent.String()
}

// Growth is how a deadlock is resolved, if at all.
type Growth uint8

const (
	NoGrowth Growth = iota
	// GrowCycle raises by one the capacity of the smallest full queue on a
	// cycle of waits (Geilen and Basten's refinement of Parks).
	GrowCycle
	// GrowParks raises by one the capacity of the smallest full queue of
	// all (Parks' rule as first stated).
	GrowParks
)

// Config is one variant of the buffer model.
type Config struct {
	Write  WriteOrder
	Policy Policy
	// B is the number of buffers; 0 means as many as ever needed (FREE is
	// never empty).
	B int
	// EOFRecords makes eof a record that travels in a buffer, as in the
	// paper; otherwise eof is a mark on the queue, as in tpipe.
	EOFRecords bool
	// InPlace makes a task read a record in the buffer it came in and give
	// that buffer back only at its next read (tpipe without CopyReads); the
	// buffer stays charged to the input queue. Otherwise a read copies the
	// record into the task and gives the buffer back at once (the paper's
	// read, and tpipe's CopyReads).
	InPlace bool
	// Move makes filters (COPY, PREFIX, FILTER between two queues) read in
	// place and pass a kept record on in its own buffer (tpipe's Pass).
	Move bool
	// Handoff makes FREE hand a released buffer to the task that has waited
	// for one longest, instead of waking every waiter to compete.
	Handoff bool
	// Batch is how many records a buffer carries (0 and 1 mean one, handed
	// over as soon as it is written). With more, a task keeps its output
	// buffer until it is full, and hands it over before it blocks.
	Batch int
	// NoFlush drops the rule that a task hands over its partial output
	// buffers before it blocks (to show the rule is needed).
	NoFlush bool
	// Grow resolves deadlocks by growing a queue (then B must be 0).
	Grow Growth
	// Inputs are the input lengths explored; nil means 0 to 3 records.
	Inputs []int
	// fine splits every step just before it takes a buffer from FREE (see
	// BufferProfile).
	fine bool
}

// Preset configurations.
var (
	// PaperLiteral is the paper's model: literal writes, reads that copy
	// the record and give the buffer back at once, eof in a buffer.
	PaperLiteral = Config{Write: Literal, EOFRecords: true}
	// PaperReserve is the paper's model with tpipe's write order.
	PaperReserve = Config{Write: ReserveFirst, EOFRecords: true}
	// TPipe is tpipe's concurrent runtime: reserve-first writes, in-place
	// reads, filters that move buffers, eof as a mark.
	TPipe = Config{Write: ReserveFirst, InPlace: true, Move: true}
	// TPipeCopy is tpipe with CopyReads on every task that is not a filter.
	TPipeCopy = Config{Write: ReserveFirst, Move: true}
	// TPipeROS is tpipe's ros policy: one buffer, preemptive, private
	// copies of input records (filters still move buffers), no handoff.
	TPipeROS = Config{Write: ReserveFirst, Move: true, Policy: ROS, B: 1}
)

func (c Config) batch() int { return max(c.Batch, 1) }

func (c Config) inputs() []int {
	if c.Inputs != nil {
		return c.Inputs
	}
	return []int{0, 1, 2, 3}
}

// String names the variant: "literal, copy reads, eof records, B=2".
func (c Config) String() string {
	parts := []string{c.Write.String()}
	switch {
	case c.InPlace:
		parts = append(parts, "in-place reads")
	default:
		parts = append(parts, "copy reads")
	}
	if c.Move {
		parts = append(parts, "filters move buffers")
	}
	if c.EOFRecords {
		parts = append(parts, "eof records")
	} else {
		parts = append(parts, "eof marks")
	}
	if c.Policy != Concurrent {
		parts = append(parts, c.Policy.String())
	}
	if c.Handoff {
		parts = append(parts, "FREE hands off")
	}
	if c.Batch > 1 {
		parts = append(parts, fmt.Sprintf("batches of %d", c.Batch))
		if c.NoFlush {
			parts = append(parts, "no hand-over before blocking")
		}
	}
	switch c.Grow {
	case GrowCycle:
		parts = append(parts, "growing the smallest full queue on a cycle")
	case GrowParks:
		parts = append(parts, "growing the smallest full queue")
	}
	if c.B > 0 {
		parts = append(parts, fmt.Sprintf("B=%d", c.B))
	} else {
		parts = append(parts, "B unbounded")
	}
	return strings.Join(parts, ", ")
}

func (c Config) validate() error {
	switch {
	case c.B < 0:
		return errors.New("proofs: negative B")
	case c.Write == Literal && (c.InPlace || c.Move || c.Batch > 1):
		return errors.New("proofs: the literal write order is modelled with copy reads and one record per buffer only")
	case (c.InPlace || c.Move) && (c.EOFRecords || c.Batch > 1):
		return errors.New("proofs: in-place reads are modelled with eof marks and one record per buffer only")
	case c.Batch > maxBatch || (c.Batch > 1 && c.EOFRecords):
		return fmt.Errorf("proofs: batches of at most %d records, with eof marks", maxBatch)
	case c.Grow != NoGrowth && c.B != 0:
		return errors.New("proofs: growing queues needs B unbounded (B grows with them)")
	}
	for _, n := range c.inputs() {
		if n < 0 || n > maxInput {
			return fmt.Errorf("proofs: input of %d records: at most %d", n, maxInput)
		}
	}
	return nil
}
