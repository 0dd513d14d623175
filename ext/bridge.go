package ext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

// Bridges. A task that copies between its ports and a pipe of a program
// waits in system calls, where the pool's deadlock detection cannot see
// it. Each copy below therefore goes through pipeEnd, which does the
// system calls itself on the non-blocking descriptor (through
// syscall.RawConn, so the runtime's poller still does the waiting) and
// tells the pool when it is about to wait with nothing moved
// (buffer.Ports.WaitOutside) and when bytes move again (Moved). A partial
// write or read counts as progress, so a program that drains a pipe slowly
// is not taken for one that has stopped. The scheduler names the program
// (buffer.Proc.SetProgram); a bridge that waits past the pool's grace with
// nothing moved then counts as blocked on it.
//
// os.File.Write was rejected for this: it hides partial writes inside one
// call, so a 64 KiB write to a program reading a line a second would look
// stuck for a minute.

// Feed returns a bridge task with one input port and no output that writes
// its records to w, the write end of a pipe the program named program
// reads (its standard input, or a /dev/fd/N it was given). If the program
// stops reading (EPIPE), the task stops reading too and returns nil, as
// the tasks before head do. The task closes w when it returns, and at once
// when ctx is cancelled, which ends a write waiting on the program: it
// then returns ctx's cause.
func Feed(w *os.File, program string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		defer w.Close()
		stop := afterFunc(ctx, func() { w.Close() })
		defer stop()
		err := feed(p, w, program)
		switch {
		case errors.Is(err, os.ErrClosed) && ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, syscall.EPIPE):
			return nil
		}
		return err
	}
}

// Drain returns a bridge task with no input port and one output port that
// cuts what the program named program writes to r, the read end of a pipe,
// into lines, until the program closes its end. A final line without '\n'
// stays so. The task closes r when it returns, and at once when ctx is
// cancelled, which ends a read waiting on the program: it then returns
// ctx's cause. (Without that, a run cancelled before the program started
// would wait for ever on a pipe nobody writes.)
func Drain(r *os.File, program string) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		defer r.Close()
		stop := afterFunc(ctx, func() { r.Close() })
		defer stop()
		err := drain(p, r, program)
		if errors.Is(err, os.ErrClosed) && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
}

// feed copies the bytes of input port 0 to w until eof, piece by piece
// (buffer.Input.ReadBytes), so that a line longer than the record size
// reaches the program without being held whole. Under
// buffer.Proc.CopyReads (the scheduler sets it for tasks that wait
// outside) the bytes are the task's own copy, so no pool buffer is held
// while the write waits on the program.
func feed(p *buffer.Ports, w *os.File, program string) error {
	pe := newPipeEnd(w, p)
	in := p.In(0)
	for {
		data, err := in.ReadBytes()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := pe.Write(data); err != nil {
			return fmt.Errorf("write to %s: %w", program, err)
		}
	}
}

// chunk is the size of a read from a program's pipe: a pipe holds 64 KiB
// on Linux.
const chunk = 64 << 10

// drain writes what the program writes to r to output port 0, cut into
// lines (buffer.Output.ScanFrom: a line longer than the record size goes
// on as a chain), until eof; a last line that lacks its '\n' is ended
// there. Each read lands in drain's own chunk first and is then scanned
// into the port: a read may wait, and before it waits the pool hands over
// the task's partial output buffer (WaitOutside flushes), which a read
// straight into that buffer would still be writing. A slow program's lines
// thus flow at once.
//
// r is closed as soon as the port's reader stops (`tail -f log | head
// -1`), not at the next line the program writes, which may never come:
// the program learns it at once, as it would in a shell when the next
// command exits (EPIPE or SIGPIPE at its next write, or GNU tail -f's
// check of its output), and drain returns buffer.ErrReaderGone.
func drain(p *buffer.Ports, r *os.File, program string) error {
	out := p.Out(0)
	finished := make(chan struct{})
	var gone atomic.Bool
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-out.Done():
			if out.Gone() {
				gone.Store(true)
				r.Close()
			}
		case <-finished:
		}
	})
	err := drainLines(p, r, program)
	close(finished)
	watch.Wait()
	if gone.Load() && errors.Is(err, os.ErrClosed) {
		return buffer.ErrReaderGone
	}
	return err
}

// drainLines is drain's copy, from the pipe to the port.
func drainLines(p *buffer.Ports, r *os.File, program string) error {
	pe := newPipeEnd(r, p)
	out := p.Out(0)
	buf := make([]byte, chunk)
	var br bytes.Reader
	for {
		n, err := pe.Read(buf)
		if n > 0 {
			br.Reset(buf[:n])
			if err := out.ScanFrom(&br, '\n'); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return out.EndRecord()
		}
		if err != nil {
			return fmt.Errorf("read from %s: %w", program, err)
		}
	}
}

// pipeEnd is a bridge's end of a pipe: Read or Write that report their
// waits to the bridge's pool. It belongs to one task.
type pipeEnd struct {
	f       *os.File
	rc      syscall.RawConn // nil: plain f.Read and f.Write, which the pool cannot see wait
	p       *buffer.Ports
	waiting bool // WaitOutside was called and Moved not yet
}

func newPipeEnd(f *os.File, p *buffer.Ports) *pipeEnd {
	pe := &pipeEnd{f: f, p: p}
	if rc, err := f.SyscallConn(); err == nil {
		pe.rc = rc
	}
	return pe
}

func (pe *pipeEnd) wait(op buffer.Op) {
	if !pe.waiting {
		pe.waiting = true
		pe.p.WaitOutside(op)
	}
}

func (pe *pipeEnd) moved() {
	if pe.waiting {
		pe.waiting = false
		pe.p.Moved()
	}
}

// Write writes all of b, or returns why not: the error of the write
// (syscall.EPIPE when the program has closed its end), or os.ErrClosed
// when f was closed meanwhile.
func (pe *pipeEnd) Write(b []byte) (int, error) {
	if pe.rc == nil {
		return pe.f.Write(b)
	}
	n := 0
	var werr error
	err := pe.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			k, err := syscall.Write(int(fd), b[n:])
			if k > 0 {
				n += k
				pe.moved()
			}
			switch err {
			case nil:
			case syscall.EINTR:
			case syscall.EAGAIN:
				pe.wait(buffer.OpWrite)
				return false // the poller waits until the pipe has room
			default:
				werr = err
				return true
			}
		}
		return true
	})
	pe.moved()
	return n, pe.err("write", werr, err)
}

// Read reads what the pipe holds, waiting while it is empty; at the end
// it returns 0, io.EOF.
func (pe *pipeEnd) Read(b []byte) (int, error) {
	if pe.rc == nil {
		return pe.f.Read(b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	n := 0
	var rerr error
	err := pe.rc.Read(func(fd uintptr) bool {
		for {
			k, err := syscall.Read(int(fd), b)
			switch err {
			case nil:
				if k == 0 {
					rerr = io.EOF
				}
				n = k
				return true
			case syscall.EINTR:
			case syscall.EAGAIN:
				pe.wait(buffer.OpRead)
				return false // the poller waits until the pipe has bytes
			default:
				rerr = err
				return true
			}
		}
	})
	pe.moved()
	if rerr == io.EOF {
		return 0, io.EOF
	}
	return n, pe.err("read", rerr, err)
}

// err is the error of an operation: that of the system call, or else the
// poller's, which only a Close of f during the wait gives (the poller's
// own error value is internal, so it is given as os.ErrClosed).
func (pe *pipeEnd) err(op string, sys, poll error) error {
	switch {
	case sys != nil:
		return &os.PathError{Op: op, Path: pe.f.Name(), Err: sys}
	case poll != nil:
		return &os.PathError{Op: op, Path: pe.f.Name(), Err: os.ErrClosed}
	}
	return nil
}
