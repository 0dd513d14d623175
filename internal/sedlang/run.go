package sedlang

import (
	"bytes"
	"strconv"
)

// Run is the state of one run of a script over a stream of lines: the
// line number, the ranges that are open, the last regex used, a line held
// back until the next shows whether it is the last. The caller feeds it
// records with Line and finishes with End; the output goes to the emit
// function given to both, a line at a time.
//
// A Run is not safe for concurrent use. Its zero value is not usable; see
// NewRun.
type Run struct {
	script *Script
	ranges []rangeState // by command index
	lineno int
	lastRE *regex
	quit   bool
	code   int
	err    *Error // a run error not yet returned

	ps, tmp []byte // the pattern space, and scratch for s and output

	// The line waiting for the next one, when $ needs to know the last.
	held    []byte
	hasHeld bool

	// GNU writes a missing final newline back as missing, and adds it if
	// anything is printed after: pend is such an output, not yet written.
	pend     []byte
	pendOpen bool

	spans []int
}

// NewRun returns a run of sc from its first line.
func NewRun(sc *Script) *Run {
	r := &Run{script: sc}
	r.Reset()
	return r
}

// Reset makes r ready for a new run from the first line, keeping its
// buffers.
func (r *Run) Reset() {
	r.lineno, r.lastRE, r.quit, r.code, r.err = 0, nil, false, 0, nil
	r.hasHeld, r.pendOpen = false, false
	r.ranges = make([]rangeState, len(r.script.cmds))
	for i, c := range r.script.cmds {
		if c.a1 != nil && c.a1.kind == 'n' && c.a1.n == 0 {
			r.ranges[i].active = true // 0,/RE/ is in its range before line 1
		}
	}
}

// Line runs the script on one input record, a line with or without its
// final '\n'; r does not keep rec. When the script needs to know the last
// line ($), a record waits until the next one arrives or End is called.
// After Done, Line does nothing.
//
// The error is emit's, or an *Error when the script cannot go on: GNU
// sed stops then, with status 1, and so does r (see Done and Status).
// Each output record passed to emit is valid only for the call.
func (r *Run) Line(rec []byte, emit func([]byte) error) error {
	if r.quit {
		return nil
	}
	if !r.script.needLast {
		return r.result(r.cycle(rec, false, emit))
	}
	if r.hasHeld {
		if err := r.cycle(r.held, false, emit); err != nil {
			return err
		}
	}
	r.held = append(r.held[:0], rec...)
	r.hasHeld = true
	return r.result(nil)
}

// End runs the held line, if any, as the last one and writes an output
// that waits for its newline. Its errors are those of Line.
func (r *Run) End(emit func([]byte) error) error {
	if r.hasHeld && !r.quit {
		r.hasHeld = false
		if err := r.cycle(r.held, true, emit); err != nil {
			return err
		}
	}
	if r.pendOpen && len(r.pend) > 0 {
		r.pendOpen = false
		if err := emit(r.pend); err != nil {
			return err
		}
	}
	return r.result(nil)
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

// cycle runs the script on one line. last is set for the last line of the
// input when the script asks ($).
func (r *Run) cycle(rec []byte, last bool, emit func([]byte) error) error {
	nl := len(rec) > 0 && rec[len(rec)-1] == '\n'
	if nl {
		rec = rec[:len(rec)-1]
	}
	r.ps = append(r.ps[:0], rec...)
	r.lineno++
	cmds := r.script.cmds
	for pc := 0; pc < len(cmds); pc++ {
		c := &cmds[pc]
		sel := r.selected(c, &r.ranges[pc], last)
		if r.quit {
			return nil
		}
		if !sel {
			if c.op == '{' {
				pc = c.close
			}
			continue
		}
		switch c.op {
		case '{', '}':
		case '=':
			r.tmp = strconv.AppendInt(r.tmp[:0], int64(r.lineno), 10)
			if err := r.put(emit, r.tmp, true); err != nil {
				return err
			}
		case 'p':
			if err := r.put(emit, r.ps, nl); err != nil {
				return err
			}
		case 'd':
			return nil
		case 'q', 'Q':
			r.quit, r.code = true, c.code
			if c.op == 'q' && !r.script.quiet {
				// GNU ends this last output with a newline in any case.
				if err := r.put(emit, r.ps, true); err != nil {
					return err
				}
			}
			return nil
		case 's':
			done, err := r.subst(c)
			if err != nil {
				return err
			}
			if r.quit {
				return nil // no regex to reuse
			}
			if done && c.print {
				if err := r.put(emit, r.ps, nl); err != nil {
					return err
				}
			}
		case 'y':
			for i, b := range r.ps {
				r.ps[i] = c.ymap[b]
			}
		}
	}
	if r.script.quiet {
		return nil
	}
	return r.put(emit, r.ps, nl)
}

// selected reports whether c applies to the current line, and moves its
// range along.
func (r *Run) selected(c *command, st *rangeState, last bool) bool {
	if c.a1 == nil {
		return true
	}
	if c.a2 == nil {
		return r.match(c.a1, last) != c.neg
	}
	if !st.active {
		if !r.match(c.a1, last) {
			return c.neg
		}
		st.active = true
		switch a2 := c.a2; a2.kind {
		case 'n':
			st.end = a2.n
		case '+':
			st.end = r.lineno + a2.n
		case 'm':
			st.end = r.lineno
			if a2.n > 0 {
				st.end = (r.lineno + a2.n - 1) / a2.n * a2.n
			}
		case '$':
			st.active = !last
			return !c.neg
		default:
			return !c.neg // a regex end is looked for from the next line
		}
		if st.end <= r.lineno {
			st.active = false
		}
		return !c.neg
	}
	switch a2 := c.a2; a2.kind {
	case 'n', '+', 'm':
		if r.lineno >= st.end {
			st.active = false
		}
	case '$':
		st.active = !last
	default:
		if r.match(a2, last) {
			st.active = false
		}
	}
	return !c.neg
}

// match reports whether the current line matches a single address.
func (r *Run) match(a *address, last bool) bool {
	switch a.kind {
	case 'n':
		return r.lineno == a.n
	case '$':
		return last
	case '~':
		if a.step <= 0 {
			return r.lineno == a.n
		}
		return r.lineno >= a.n && (r.lineno-a.n)%a.step == 0
	}
	re := r.regex(a.re)
	if re == nil {
		r.noPrevious()
		return false
	}
	return re.match(r.ps)
}

// noPrevious stops the run, as GNU does, when the empty regex is used
// before any other. GNU gives no place for this error.
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

func (s *regex) match(b []byte) bool {
	if s.plain != nil {
		return bytes.Contains(b, s.plain)
	}
	return s.m.Match(b)
}

// subst runs an s command on the pattern space and reports whether it
// replaced anything.
func (r *Run) subst(c *command) (bool, error) {
	re := r.regex(c.re)
	if re == nil {
		r.noPrevious()
		return false, nil
	}
	limit := c.nth
	if c.glob {
		limit = -1
	}
	// Matches go to r.spans, stride ints each: start and end of the match
	// and of each group. They are counted by division, never by
	// multiplying N, which may be as large as an int holds.
	stride := 2
	r.spans = r.spans[:0]
	if re.plain != nil {
		for at := 0; limit < 0 || len(r.spans)/stride < limit; {
			i := bytes.Index(r.ps[at:], re.plain)
			if i < 0 {
				break
			}
			at += i
			r.spans = append(r.spans, at, at+len(re.plain))
			at += len(re.plain)
		}
	} else {
		if !re.m.MayMatch(r.ps) {
			return false, nil
		}
		stride = 2 * (re.m.Regexp().NumSubexp() + 1)
		if limit == 1 {
			r.spans = append(r.spans, re.m.Regexp().FindSubmatchIndex(r.ps)...)
		} else {
			for _, m := range re.m.Regexp().FindAllSubmatchIndex(r.ps, limit) {
				r.spans = append(r.spans, m...)
			}
		}
	}
	if len(r.spans)/stride < c.nth {
		return false, nil
	}
	out := r.tmp[:0]
	prev := 0
	for i := (c.nth - 1) * stride; i < len(r.spans); i += stride {
		m := r.spans[i : i+stride]
		out = append(out, r.ps[prev:m[0]]...)
		for _, p := range c.repl {
			if p.group < 0 {
				out = append(out, p.text...)
			} else if g := m[2*p.group:]; g[0] >= 0 {
				out = append(out, r.ps[g[0]:g[1]]...)
			}
		}
		prev = m[1]
		if !c.glob {
			break
		}
	}
	out = append(out, r.ps[prev:]...)
	r.ps, r.tmp = out, r.ps
	return true, nil
}

// put writes text as output lines, ending with a newline if nl. A missing
// newline is written only if more output follows.
func (r *Run) put(emit func([]byte) error, text []byte, nl bool) error {
	if r.pendOpen {
		r.pendOpen = false
		r.pend = append(r.pend, '\n')
		if err := emit(r.pend); err != nil {
			return err
		}
	}
	// A pattern space may hold newlines: pass one line per record.
	for {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		if err := emit(text[:i+1]); err != nil {
			return err
		}
		text = text[i+1:]
	}
	if !nl {
		r.pend = append(r.pend[:0], text...)
		r.pendOpen = true
		return nil
	}
	r.pend = append(append(r.pend[:0], text...), '\n')
	return emit(r.pend)
}
