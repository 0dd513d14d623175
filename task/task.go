// Package task is the contract between tpipe's runtime and the code of a
// task, and a small library of tasks used by tests, benchmarks and the
// paper's examples.
//
// A task is Go code with numbered input and output ports. In the general
// form (Func) it gets a *buffer.Ports and calls In(i).Read, Out(j).Write and
// Out(j).Forward as it likes, under these rules, which are the paper's B1-B4
// made concrete:
//
//   - A record returned by Read is valid until the next Read on that port
//     (or until it is forwarded); the task must not keep it or write into
//     it. Read returns io.EOF at the end of the input and again on every
//     later call (B1: a task reads nothing after eof).
//   - Write copies the record; the task may reuse its slice at once.
//     Forward hands over the record last read, without a copy when it can;
//     after Forward that record must not be used.
//   - The task writes eof by returning: the runtime closes every output,
//     after the records written (B3, B4). A task that returns before eof
//     on an input stops reading it; its writer then gets
//     buffer.ErrReaderGone, which is how `head` stops the tasks upstream
//     (a clean early exit, not a failure; B2 is relaxed only for this).
//   - ctx is cancelled when the run fails or is cancelled; Read and Write
//     then return an error, and a task blocked outside tpipe (a slow file,
//     a process) should watch ctx itself and call Proc.Flush before such a
//     wait, so its partial output batch keeps flowing.
//   - Returning a non-nil error (other than buffer.ErrReaderGone) fails
//     the run; the first error wins and names the task.
//
// The per-record form (PerRecord) is a function of one record to zero or
// more records. It runs as a Func under every policy, and the fused policy
// can compile a chain of them into one loop with no queue between them
// (loop jamming, section 5 of "Thrifty Execution of Task Pipelines"). The
// ends of a pipeline have such forms too (Source, Sink: ends.go); with
// them and filters, the ros policy calls every task of a chain from its
// scheduler, with no coroutine switch.
package task

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/tpipe/tpipe/buffer"
)

// Func is the general form of a task. See the package doc for the rules.
type Func func(ctx context.Context, p *buffer.Ports) error

// Emit writes one output record; the caller may reuse rec after it returns.
type Emit func(rec []byte) error

// EmitLines emits b, whole lines (it ends in '\n'), a line a record: a
// task whose record may hold a newline it made (awk's print $1 "\n" $2,
// cut --output-delimiter=$'\n') so hands the next task lines, as a pipe
// would.
func EmitLines(emit Emit, b []byte) error {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || i == len(b)-1 {
			return emit(b)
		}
		if err := emit(b[:i+1]); err != nil {
			return err
		}
		b = b[i+1:]
	}
}

// PerRecord is the per-record form of a task with one input and one output.
// Exactly one of Keep and Each must be set.
type PerRecord struct {
	// Start, if set, runs before the first record (PREFIX writes its
	// header here).
	Start func(emit Emit) error
	// Keep, if set, makes the task a filter: records for which it returns
	// true pass unchanged, forwarded without a copy where possible.
	Keep func(rec []byte) bool
	// Each, if set, is called once per record and may emit any number of
	// records. rec is valid only during the call.
	Each func(rec []byte, emit Emit) error
	// End, if set, runs after the last record (a sum writes its total).
	End func(emit Emit) error
	// Text, with Each, says that what Each emits is text whose records
	// need not be lines (tr -d '\n'): it is written by
	// buffer.Output.WriteText, which cuts it into lines and carries a
	// line without its '\n' over to the next emit. A Text task must not
	// set Fresh: copies would carry a line over to each other.
	Text bool
	// Verbatim, with Keep, says that Keep is true of every record: the
	// task copies its input unchanged, so it moves buffers whole
	// (buffer.Output.Copy) and a record longer than the record size
	// passes in its pieces, never held whole (cat of a file with no
	// newline in it).
	Verbatim bool
	// Fresh, if set, says the task is stateless: what it emits for a
	// record depends on that record alone, and Start and End emit
	// nothing. It returns a new copy of the task with scratch state of its
	// own. The runtime may then run several copies at once on different
	// records and put their output back in input order (Replicas), and
	// the spool policy runs one on each segment of the input apart.
	Fresh func() *PerRecord
}

// ErrNoBody is returned by PerRecord.Func when neither or both of Keep and
// Each are set.
var ErrNoBody = errors.New("task: a per-record task needs exactly one of Keep and Each")

// Func returns the general form of r: a loop that reads port 0 and writes
// port 0.
func (r PerRecord) Func() Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		if (r.Keep == nil) == (r.Each == nil) {
			return ErrNoBody
		}
		in, out := p.In(0), p.Out(0)
		emit := Emit(out.Write)
		if r.Text {
			emit = out.WriteText
		}
		if r.Start != nil {
			if err := r.Start(emit); err != nil {
				return err
			}
		}
		for r.Keep != nil {
			var err error
			if r.Verbatim {
				err = out.Copy(in)
			} else {
				err = out.Pass(in, r.Keep)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		for r.Each != nil {
			rec, err := in.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if err := r.Each(rec, emit); err != nil {
				return err
			}
		}
		if r.End != nil {
			return r.End(emit)
		}
		return nil
	}
}
