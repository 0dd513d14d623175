package sedlang

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Run is the state of one run of a script over a stream of lines: the
// pattern and hold spaces, the line number, the ranges that are open, the
// last regex used, the append queue, the files the script writes.
//
// The caller pushes input to it, a record at a time (Line), and says
// where a file ends when files are separate (EndFile) and where the input
// ends (End); the output goes to the emit function given to each call, a
// line at a time. A script that reads input itself (n, N) waits, its
// place kept, for the next Line; a script that needs to know the last
// line ($) keeps each record until the next one shows it is not.
//
// A Run is not safe for concurrent use. Its zero value is not usable; see
// NewRun.
type Run struct {
	sc *Script
	io IO

	ps, hold     []byte
	psNL, holdNL bool // whether the line had its delimiter: GNU writes it back only then
	lineno       int
	last         bool // the line in the pattern space is the last one ($)
	replaced     bool // an s replaced something since a line was read (t, T)
	ranges       []rangeState
	lastRE       *regex

	// Files, for F: the name of the pattern space's file, and of the
	// file SetFile named last, which GNU has open once it has looked past
	// the end of the pattern space's file for $ (peeked).
	name, nextName string
	fileSeq        int  // SetFile calls, to tell when the held record's file ended
	lastOfFile     bool // the pattern space's line ends its file, and more input follows
	peeked         bool

	// A cycle waiting for a line (n, N) resumes at pc.
	pc   int
	wait byte

	// The record waiting for the next one, when $ needs to know the last.
	held     []byte
	hasHeld  bool
	heldName string
	heldSeq  int

	queue []queued // what a, r and R give, for the end of the cycle
	qtext []byte   // the R lines in the queue

	out     framer
	main    stream // the output
	stdout  stream // w /dev/stdout
	sepOut  framer // its records when they go elsewhere (IO.Stdout)
	writers []*stream
	readers []*reader
	started bool

	quit  bool
	code  int
	err   *Error // a run error not yet returned
	loops int    // jumps back, for IO.Stop

	tmp   []byte
	spans []int
	enc   []byte // a text with bytes >= 0x80 as a regex reads it
}

// rangeState is the state of a command's range: never active, active
// from its first line on, or closed after its last (a range whose first
// address is a line number never opens again). end is the line that ends
// a +N or ~N range.
type rangeState struct {
	state uint8
	end   int
}

const (
	rangeInactive = iota
	rangeActive
	rangeClosed
)

// queued is an entry of the append queue: text to write, or a file to
// copy.
type queued struct {
	text     []byte
	from, to int // the text is qtext[from:to] (R)
	file     string
}

// NewRun returns a run of sc from its first line, with io for the files
// the script names. A script that names files must be started (Start)
// before the first line and closed (Close) after the last.
func NewRun(sc *Script, io IO) *Run {
	r := &Run{sc: sc, io: io, name: "-", nextName: "-"}
	r.main.delim[0] = sc.delim
	r.main.write = r.out.write
	r.stdout.delim[0] = sc.delim
	r.stdout.write = r.out.write
	if io.Stdout != nil {
		r.sepOut.emit = io.Stdout
		r.stdout.write = r.sepOut.write
	}
	r.Reset()
	return r
}

// Reset makes r ready for a new run from the first line, keeping its
// buffers. It does not touch the files of Start.
func (r *Run) Reset() {
	r.lineno, r.lastRE, r.quit, r.code, r.err = 0, nil, false, 0, nil
	r.hasHeld, r.wait, r.replaced = false, 0, false
	r.ps, r.hold, r.psNL, r.holdNL = r.ps[:0], r.hold[:0], true, true
	r.queue, r.qtext = r.queue[:0], r.qtext[:0]
	r.out.tail, r.sepOut.tail = r.out.tail[:0], r.sepOut.tail[:0]
	r.main.owes, r.stdout.owes = false, false
	if len(r.ranges) != len(r.sc.cmds) {
		r.ranges = make([]rangeState, len(r.sc.cmds))
	}
	r.resetRanges()
}

// resetRanges closes every range but those of 0,/RE/, which are open
// before the first line.
func (r *Run) resetRanges() {
	for i, c := range r.sc.cmds {
		r.ranges[i] = rangeState{}
		if c.a1 != nil && c.a1.kind == 'n' && c.a1.n == 0 && c.a2 != nil {
			r.ranges[i].state = rangeActive
		}
	}
}

// Start opens the files the script writes, truncating them, as GNU does
// before it reads any input, and readies those it reads. Its error is
// Create's, wrapped with GNU's words ("couldn't open file NAME: ...").
func (r *Run) Start() error {
	if r.started {
		return nil
	}
	r.started = true
	for _, name := range r.sc.writes {
		s := &stream{delim: [1]byte{r.sc.delim}}
		switch name {
		case "/dev/stdout":
			s = &r.stdout
		case "/dev/stderr":
			if r.io.Stderr != nil {
				s.write = writeTo(r.io.Stderr)
			} else {
				s.write = writeTo(io.Discard)
			}
		default:
			if r.io.Create == nil {
				return fmt.Errorf("couldn't open file %s: %w", name, errNoFiles)
			}
			wc, err := r.io.Create(name)
			if err != nil {
				return fmt.Errorf("couldn't open file %s: %w", name, err) // Close closes those before
			}
			bw := bufio.NewWriter(wc)
			s.write, s.closer, s.flusher = writeTo(bw), wc, bw
		}
		r.writers = append(r.writers, s)
	}
	for _, name := range r.sc.reads {
		r.readers = append(r.readers, &reader{name: name})
	}
	return nil
}

// errNoFiles is the error of a file a run was given no way to open.
var errNoFiles = fmt.Errorf("no files here")

func writeTo(w io.Writer) func([]byte) error {
	return func(b []byte) error {
		_, err := w.Write(b)
		return err
	}
}

// Close flushes and closes the files of Start. It returns the first
// error.
func (r *Run) Close() error {
	var first error
	for _, w := range r.writers {
		if err := w.close(); err != nil && first == nil {
			first = err
		}
	}
	for _, rd := range r.readers {
		if rd.rc != nil {
			rd.rc.Close()
		}
	}
	r.writers, r.readers, r.started = nil, nil, false
	return first
}

// SetFile names the file the next records come from, for F: "-" is the
// standard input.
func (r *Run) SetFile(name string) {
	r.nextName = name
	r.fileSeq++
}

// Line runs the script on one input record, a line with or without its
// final delimiter; r does not keep rec. When the script needs to know the
// last line ($), a record waits until the next one arrives or the input
// ends. After Done, Line does nothing.
//
// The error is emit's, or an *Error when the script cannot go on: GNU
// sed stops then, with status 1, and so does r (see Done and Status).
// Each output record passed to emit is valid only for the call.
func (r *Run) Line(rec []byte, emit func([]byte) error) error {
	r.out.emit = emit
	if r.quit {
		return nil
	}
	if !r.sc.needLast {
		return r.result(r.feed(rec, r.nextName, false))
	}
	if r.hasHeld {
		r.lastOfFile = r.heldSeq != r.fileSeq
		if err := r.feed(r.held, r.heldName, false); err != nil {
			return err
		}
	}
	r.held = append(r.held[:0], rec...)
	r.hasHeld, r.heldName, r.heldSeq = true, r.nextName, r.fileSeq
	return r.result(nil)
}

// EndFile ends one input file when files are separate (-s, -i): the
// record held back is that file's last line ($), the append queue is
// written, and the next record starts the next file at line 1, with an
// empty hold space, every range closed and the files R reads at their
// start again. With flush, an unfinished last line of output is written
// as it is, for it ends that file's output (-i).
func (r *Run) EndFile(emit func([]byte) error, flush bool) error {
	if err := r.endInput(emit, false); err != nil {
		return err
	}
	if flush {
		if err := r.out.flush(); err != nil {
			return err
		}
		r.main.owes = false
	}
	r.lineno, r.hold = 0, r.hold[:0]
	r.resetRanges()
	for _, rd := range r.readers {
		if rd.rc != nil {
			rd.rc.Close()
		}
		*rd = reader{name: rd.name}
	}
	return r.result(nil)
}

// End runs the record held back as the last line, writes the append
// queue, and writes an unfinished last line of output. Its errors are
// those of Line.
func (r *Run) End(emit func([]byte) error) error {
	if err := r.endInput(emit, true); err != nil {
		return err
	}
	if err := r.out.flush(); err != nil {
		return err
	}
	if err := r.sepOut.flush(); err != nil {
		return err
	}
	return r.result(nil)
}

// endInput finishes the input read so far: the held record, a cycle
// waiting for a line that will not come, the append queue. all is set at
// the end of the whole input, clear at the end of a separate file.
func (r *Run) endInput(emit func([]byte) error, all bool) error {
	r.out.emit = emit
	if r.quit {
		return nil
	}
	if r.hasHeld {
		r.hasHeld = false
		r.lastOfFile = all
		if err := r.feed(r.held, r.heldName, true); err != nil {
			return err
		}
	}
	if r.wait != 0 && !r.quit {
		if err := r.noInput(); err != nil {
			return err
		}
	}
	if r.quit {
		return nil
	}
	return r.flushQueue()
}

// Done reports whether the script has stopped reading input: a q or Q ran,
// or an *Error was returned.
func (r *Run) Done() bool { return r.quit }

// Status is the exit status the script asks for: the CODE of q or Q, 1
// after an *Error, 0 otherwise.
func (r *Run) Status() int { return r.code }

// result returns err or, if there is none, the run error not yet returned.
func (r *Run) result(err error) error {
	if err == nil && r.err != nil {
		err, r.err = r.err, nil
	}
	return err
}

// feed gives the script a line: it starts a cycle, or goes on with one
// that waits in n or N. last says whether the line is the last one.
func (r *Run) feed(rec []byte, name string, last bool) error {
	nl := len(rec) > 0 && rec[len(rec)-1] == r.sc.delim
	if nl {
		rec = rec[:len(rec)-1]
	}
	// As GNU reads a line: the append queue goes out, t forgets.
	if err := r.flushQueue(); err != nil {
		return err
	}
	r.replaced = false
	switch r.wait {
	case 0:
		r.ps = append(r.ps[:0], rec...)
		r.pc = 0
	case 'n':
		r.ps = append(r.ps[:0], rec...)
		r.pc++
	case 'N':
		r.ps = append(r.ps, rec...)
		r.pc++
		if err := r.grew(); err != nil {
			return err
		}
	}
	r.wait = 0
	r.psNL, r.last, r.name, r.peeked = nl, last, name, false
	r.lineno++
	return r.exec()
}

// noInput ends a cycle that waits in n or N when no line comes: n has
// printed the pattern space already; N prints it, without the delimiter
// it added (GNU's behaviour; POSIX would print nothing).
func (r *Run) noInput() error {
	op := r.wait
	r.wait = 0
	if op == 'N' {
		r.ps = r.ps[:len(r.ps)-1]
		if !r.sc.quiet {
			return r.main.line(r.ps, r.psNL)
		}
	}
	return nil
}

// exec runs the script from r.pc until the cycle ends, the script waits
// for a line, or it quits.
func (r *Run) exec() error {
	cmds, delim := r.sc.cmds, r.sc.delim
	for r.pc < len(cmds) {
		c := &cmds[r.pc]
		sel := r.selected(c, &r.ranges[r.pc])
		if r.quit {
			return nil // the empty regex before any other
		}
		if !sel {
			if c.op == '{' {
				r.pc = c.jump
			}
			r.pc++
			continue
		}
		switch c.op {
		case '{', '}', ':':
		case '=':
			if err := r.main.settle(); err != nil {
				return err
			}
			r.tmp = append(strconv.AppendInt(r.tmp[:0], int64(r.lineno), 10), delim)
			if err := r.out.write(r.tmp); err != nil {
				return err
			}
		case 'a':
			r.queue = append(r.queue, queued{text: c.text})
		case 'b':
			if err := r.jump(c.jump); err != nil {
				return err
			}
			continue
		case 'c':
			if r.ranges[r.pc].state != rangeActive && len(c.text) > 0 {
				if err := r.main.line(c.text[:len(c.text)-1], true); err != nil {
					return err
				}
			}
			return nil
		case 'd':
			return nil
		case 'D':
			i := bytes.IndexByte(r.ps, delim)
			if i < 0 {
				return nil
			}
			r.ps = append(r.ps[:0], r.ps[i+1:]...)
			if err := r.jump(0); err != nil {
				return err
			}
			continue
		case 'F':
			name := r.name
			if r.peeked {
				name = r.nextName
			}
			if err := r.main.line([]byte(name), true); err != nil {
				return err
			}
		case 'g':
			r.ps, r.psNL = append(r.ps[:0], r.hold...), r.holdNL
		case 'G':
			if err := r.join(&r.ps, &r.psNL, r.hold, r.holdNL); err != nil {
				return err
			}
		case 'h':
			r.hold, r.holdNL = append(r.hold[:0], r.ps...), r.psNL
		case 'H':
			if err := r.join(&r.hold, &r.holdNL, r.ps, r.psNL); err != nil {
				return err
			}
		case 'i':
			if len(c.text) > 0 {
				if err := r.main.line(c.text[:len(c.text)-1], true); err != nil {
					return err
				}
			}
		case 'l':
			if err := r.list(c.num); err != nil {
				return err
			}
		case 'n':
			if !r.sc.quiet {
				if err := r.main.line(r.ps, r.psNL); err != nil {
					return err
				}
			}
			r.wait = 'n'
			return nil
		case 'N':
			r.ps = append(r.ps, delim)
			r.wait = 'N'
			return nil
		case 'p':
			if err := r.main.line(r.ps, r.psNL); err != nil {
				return err
			}
		case 'P':
			text, nl := r.ps, r.psNL
			if i := bytes.IndexByte(text, delim); i >= 0 {
				text, nl = text[:i], true
			}
			if err := r.main.line(text, nl); err != nil {
				return err
			}
		case 'q':
			if !r.sc.quiet {
				if err := r.main.line(r.ps, r.psNL); err != nil {
					return err
				}
			}
			// GNU writes the queue here even if it is empty, and with it
			// the newline a last line without one owes.
			if err := r.main.settle(); err != nil {
				return err
			}
			if err := r.flushQueue(); err != nil {
				return err
			}
			r.quit, r.code = true, c.num
			return nil
		case 'Q':
			r.quit, r.code = true, c.num
			r.queue = r.queue[:0]
			return nil
		case 'r':
			r.queue = append(r.queue, queued{file: c.file})
		case '0': // 0r: the file before the first line
			if err := r.copyFile(c.file); err != nil {
				return err
			}
		case 'R':
			r.readLine(r.readers[c.index])
		case 's':
			if err := r.subst(c.sub); err != nil || r.quit {
				return err
			}
			if err := r.grew(); err != nil {
				return err
			}
		case 't':
			if r.replaced {
				r.replaced = false
				if err := r.jump(c.jump); err != nil {
					return err
				}
				continue
			}
		case 'T':
			if !r.replaced {
				if err := r.jump(c.jump); err != nil {
					return err
				}
				continue
			}
			r.replaced = false
		case 'w':
			if err := r.writers[c.index].line(r.ps, r.psNL); err != nil {
				return err
			}
		case 'W':
			text, nl := r.ps, r.psNL
			if i := bytes.IndexByte(text, delim); i >= 0 {
				text, nl = text[:i], true
			}
			if err := r.writers[c.index].line(text, nl); err != nil {
				return err
			}
		case 'x':
			r.ps, r.hold = r.hold, r.ps
			r.psNL, r.holdNL = r.holdNL, r.psNL
		case 'y':
			for i, b := range r.ps {
				r.ps[i] = c.ymap[b]
			}
		case 'z':
			r.ps = r.ps[:0]
		}
		r.pc++
	}
	if r.sc.quiet {
		return nil
	}
	return r.main.line(r.ps, r.psNL)
}

// jump moves the cycle to command to, and lets IO.Stop end a script that
// loops.
func (r *Run) jump(to int) error {
	if to <= r.pc {
		r.loops++
		if r.loops&1023 == 0 && r.io.Stop != nil {
			if err := r.io.Stop(); err != nil {
				return err
			}
		}
	}
	r.pc = to
	return nil
}

// join appends a delimiter and src to the space dst, for G and H: the
// space then ends as src does, with or without its newline, as in GNU.
func (r *Run) join(dst *[]byte, dstNL *bool, src []byte, srcNL bool) error {
	*dst = append(append(*dst, r.sc.delim), src...)
	*dstNL = srcNL
	return r.grew()
}

// grew checks the pattern and hold spaces against IO.MaxSpace.
func (r *Run) grew() error {
	if m := r.io.MaxSpace; m > 0 && (len(r.ps) > m || len(r.hold) > m) {
		return &SpaceError{Max: m}
	}
	return nil
}

// flushQueue writes what a, r and R queued, in order.
func (r *Run) flushQueue() error {
	if len(r.queue) == 0 {
		return nil
	}
	if err := r.main.settle(); err != nil {
		return err
	}
	for _, q := range r.queue {
		var err error
		switch {
		case q.file != "":
			err = r.copyFile(q.file)
		case q.text != nil:
			err = r.out.write(q.text)
		default:
			err = r.out.write(r.qtext[q.from:q.to])
		}
		if err != nil {
			return err
		}
	}
	r.queue, r.qtext = r.queue[:0], r.qtext[:0]
	return nil
}

// copyFile writes the file name to the output as it is. A file that
// cannot be read is as an empty one, as POSIX asks of r.
func (r *Run) copyFile(name string) error {
	if r.io.Open == nil {
		return nil
	}
	rc, err := r.io.Open(name)
	if err != nil {
		return nil
	}
	defer rc.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if werr := r.out.write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil // a read error ends the file, as EOF does
		}
	}
}

// readLine queues the next line of rd, for R.
func (r *Run) readLine(rd *reader) {
	if rd.done {
		return
	}
	if rd.br == nil {
		if r.io.Open == nil {
			rd.done = true
			return
		}
		rc, err := r.io.Open(rd.name)
		if err != nil {
			rd.done = true
			return
		}
		rd.rc, rd.br = rc, bufio.NewReader(rc)
	}
	line, err := rd.br.ReadBytes(r.sc.delim)
	if len(line) > 0 {
		from := len(r.qtext)
		r.qtext = append(r.qtext, line...)
		r.queue = append(r.queue, queued{from: from, to: len(r.qtext)})
	}
	if err != nil {
		rd.done = true
	}
}

// list writes the pattern space as l does: unambiguously, escapes for the
// bytes that do not print, lines wrapped with a '\' before width, and a
// '$' at the end. width is the command's own (-1 for none).
func (r *Run) list(width int) error {
	if width < 0 {
		width = r.sc.lineWrap
	}
	if err := r.main.settle(); err != nil {
		return err
	}
	b := r.tmp[:0]
	col := 0
	var esc [4]byte
	for _, c := range r.ps {
		o := esc[:0]
		switch {
		case c == '\\':
			o = append(o, '\\', '\\')
		case c >= ' ' && c < 0x7f:
			o = append(o, c)
		default:
			o = append(o, '\\')
			if i := strings.IndexByte(listEscapes, c); i >= 0 && i%2 == 0 {
				o = append(o, listEscapes[i+1])
			} else {
				o = append(o, '0'+c>>6, '0'+c>>3&7, '0'+c&7)
			}
		}
		if width > 0 && width-len(o) <= col {
			b = append(b, '\\', r.sc.delim)
			col = 0
		}
		b = append(b, o...)
		col += len(o)
	}
	b = append(b, '$', r.sc.delim)
	r.tmp = b
	return r.out.write(b)
}

// listEscapes pairs the control characters l writes as C escapes with
// their letters; the others are octal.
const listEscapes = "\aa\bb\ff\nn\rr\tt\vv"

// selected reports whether c applies to the current line, and moves its
// range along, as GNU's match_address_p does.
func (r *Run) selected(c *command, st *rangeState) bool {
	if c.a1 == nil {
		return !c.neg
	}
	return r.inRange(c, st) != c.neg
}

func (r *Run) inRange(c *command, st *rangeState) bool {
	a1, a2 := c.a1, c.a2
	if st.state != rangeActive {
		if a2 == nil {
			return r.match(a1)
		}
		// A line number opens its range once, at the first line at or
		// past it that the script reaches: an earlier d may have skipped
		// the line itself.
		if a1.kind == 'n' {
			if st.state == rangeClosed || r.lineno < a1.n {
				return false
			}
		} else if !r.match(a1) {
			return false
		}
		st.state = rangeActive
		switch a2.kind {
		case '/':
			return true // the end is looked for from the next line
		case 'n':
			if r.lineno >= a2.n {
				st.state = rangeClosed
			}
			return r.lineno <= a2.n || r.match(a1)
		case '+':
			st.end = addCap(r.lineno, a2.n)
			return true
		case 'm':
			st.end = addCap(r.lineno, a2.n-r.lineno%a2.n)
			return true
		}
		// $, FIRST~STEP and +0 may end the range on its first line.
	}
	if a2.kind == 'n' {
		// Past the end (a jump skipped it): the range is over.
		if r.lineno >= a2.n {
			st.state = rangeClosed
		}
		return r.lineno <= a2.n
	}
	var ends bool
	switch a2.kind {
	case '+', 'm':
		ends = st.end <= r.lineno
	default:
		ends = r.match(a2)
	}
	if ends {
		st.state = rangeClosed
	}
	return true
}

func addCap(a, b int) int {
	if s := a + b; s >= a {
		return s
	}
	return int(^uint(0) >> 1)
}

// match reports whether the current line matches a single address.
func (r *Run) match(a *address) bool {
	switch a.kind {
	case 'n':
		return r.lineno == a.n
	case '$':
		// GNU finds the last line by opening the files that follow, up to
		// one with data; F then names that one.
		r.peeked = r.peeked || r.lastOfFile
		return r.last
	case '~':
		return r.lineno >= a.n && (r.lineno-a.n)%a.step == 0
	case 'a':
		return true
	}
	re := r.regex(a.re)
	if re == nil {
		r.noPrevious()
		return false
	}
	return re.match(r.ps, &r.enc)
}

// noPrevious stops the run, as GNU does, when the empty regex is used
// before any other. GNU places this error at the start of the script.
func (r *Run) noPrevious() {
	if !r.quit {
		r.err = &Error{Expr: 1, Char: 0, Msg: "no previous regular expression"}
	}
	r.quit, r.code = true, 1
}

// regex returns re, or for the empty regex the last one used.
func (r *Run) regex(re *regex) *regex {
	if re == nil {
		return r.lastRE
	}
	r.lastRE = re
	return re
}
