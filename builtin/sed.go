package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/posixre"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "sed",
		Usage: "sed [-n] [-E|-r] [-e SCRIPT]... [SCRIPT] [FILE]...",
		Help: "Edit a stream of lines with a script of commands separated by ';' or " +
			"newlines: s/RE/REPL/[gpNI], y/SRC/DST/, p, d, q [CODE], Q [CODE], = and " +
			"{ ... } blocks, each with an optional address (N, $, /RE/, \\cREc, " +
			"FIRST~STEP) or range (A,B with B also +N or ~N; 0,/RE/), negated by !. " +
			"-n prints only what the script prints; -E uses extended regular expressions.",
		New: newSed,
	})
}

// sedCmd is one command of a script.
type sedCmd struct {
	a1, a2 *sedAddr // a2 is set for a range
	neg    bool
	op     byte // one of { } = d p q Q s y

	// { : index of its }
	close int
	// q, Q
	code int
	// s
	re    *sedRegex // nil: the last regex used
	repl  []sedRepl
	glob  bool
	nth   int // replace from the nth match on (1 by default)
	print bool
	// y
	ymap *[256]byte
}

// sedRange is the state of a command's range in a run: active from its
// first line to its last; end is the last line number when it is known
// (the second address a number, +N or ~N).
type sedRange struct {
	active bool
	end    int
}

// sedAddr is an address: a line number, $, FIRST~STEP or a regex; or, as
// the end of a range, +N or ~N.
type sedAddr struct {
	kind byte // 'n' line, '$' last, '~' step, '/' regex, '+' and 'm' (end ~N)
	n    int  // the line, or FIRST of FIRST~STEP, or N of +N and ~N
	step int
	re   *sedRegex // nil for // (the last regex used)
}

// sedRegex is a compiled address or s regex. A regex with no special
// character is searched as the string plain instead of being compiled.
type sedRegex struct {
	plain []byte
	m     *posixre.Matcher
}

// sedRepl is a piece of an s replacement: literal text, or a group (0 for
// the whole match, written & or \0).
type sedRepl struct {
	text  []byte
	group int // -1 for text
}

// sedScript is a parsed script with its options.
type sedScript struct {
	cmds     []sedCmd
	quiet    bool
	needLast bool // some address is $, so each line waits for the next
	quits    bool // q or Q may stop the input early
}

var sedLongs = []longOpt{
	{"quiet", 'n', false},
	{"silent", 'n', false},
	{"regexp-extended", 'E', false},
	{"expression", 'e', true},
}

func newSed(env *Env, args []string) (*Cmd, error) {
	var pieces []string
	quiet, ere := false, false
	operands, err := getopt{cmd: "sed", shorts: "nErsiuze:", longs: sedLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'n':
			quiet = true
		case 'E', 'r':
			ere = true
		case 'e':
			pieces = append(pieces, arg)
		case 's', 'i', 'z':
			// Separate files, editing in place and NUL-separated lines.
			return usagef("sed", "option -%c is not supported", c)
		case 'u':
			// Unbuffered: output flows a line at a time anyway when input
			// does.
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pieces == nil {
		if len(operands) == 0 {
			return nil, usagef("sed", "no script; usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...")
		}
		pieces = []string{operands[0]}
		operands = operands[1:]
	}
	sc, err := sedParse(pieces, ere)
	if err != nil {
		return nil, err
	}
	sc.quiet = sc.quiet || quiet
	reads, err := edgeOperands("sed", operands)
	if err != nil {
		return nil, err
	}
	c := &Cmd{Name: "sed", ReadsInput: readsInput(operands), Reads: reads}
	if len(operands) == 0 && !sc.quits {
		r := newSedRun(sc, env)
		c.Rec = &task.PerRecord{
			Start: func(task.Emit) error { r.reset(); return nil },
			Each:  r.each,
			End:   r.end,
		}
		return c, nil
	}
	files := operands
	if len(files) == 0 {
		files = []string{"-"}
	}
	c.Fn = func(ctx context.Context, p *buffer.Ports) error {
		r := newSedRun(sc, env)
		emit := task.Emit(p.Out(0).Write)
		failed := false
		for _, name := range files {
			err := eachRecord(ctx, env, p, name, func(rec []byte) error {
				if err := r.each(rec, emit); err != nil {
					return err
				}
				if r.quit {
					return errSedQuit
				}
				return nil
			})
			if err == errSedQuit {
				break
			}
			if fe, ok := err.(*fileError); ok {
				shown := fe.name
				if fe.atOpen {
					shown = "can't read " + shown
				}
				warnFile(env, "sed", shown, fe.err)
				failed = true
				continue
			}
			if err != nil {
				return err
			}
		}
		if err := r.end(emit); err != nil {
			return err // an error, or q's exit status
		}
		if failed {
			return task.Exit(2)
		}
		return nil
	}
	return c, nil
}

// errSedQuit stops the reading loop after q or Q.
var errSedQuit = errors.New("sed: quit")

// sedRun is the state of one run of a script.
type sedRun struct {
	script *sedScript
	ranges []sedRange // by command index
	env    *Env
	lineno int
	lastRE *sedRegex
	quit   bool
	code   int

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

func newSedRun(sc *sedScript, env *Env) *sedRun {
	r := &sedRun{script: sc, env: env}
	r.reset()
	return r
}

// reset makes r ready for a new run.
func (r *sedRun) reset() {
	r.lineno, r.lastRE, r.quit, r.code = 0, nil, false, 0
	r.hasHeld, r.pendOpen = false, false
	r.ranges = make([]sedRange, len(r.script.cmds))
	for i, c := range r.script.cmds {
		if c.a1 != nil && c.a1.kind == 'n' && c.a1.n == 0 {
			r.ranges[i].active = true // 0,/RE/ is in its range before line 1
		}
	}
}

// each takes one input record. When the script needs to know the last
// line, a record waits until the next one arrives or the input ends.
func (r *sedRun) each(rec []byte, emit task.Emit) error {
	if r.quit {
		return nil
	}
	if !r.script.needLast {
		return r.cycle(rec, false, emit)
	}
	if r.hasHeld {
		if err := r.cycle(r.held, false, emit); err != nil {
			return err
		}
	}
	r.held = append(r.held[:0], rec...)
	r.hasHeld = true
	return nil
}

// end runs the held line, if any, as the last one and writes a pending
// output that lacks its newline.
func (r *sedRun) end(emit task.Emit) error {
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
	if r.code != 0 {
		return task.Exit(r.code)
	}
	return nil
}

// cycle runs the script on one line. last is set for the last line of the
// input when the script asks ($).
func (r *sedRun) cycle(rec []byte, last bool, emit task.Emit) error {
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
func (r *sedRun) selected(c *sedCmd, st *sedRange, last bool) bool {
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
func (r *sedRun) match(a *sedAddr, last bool) bool {
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
// before any other.
func (r *sedRun) noPrevious() {
	if !r.quit {
		io.WriteString(r.env.stderr(), "sed: -e expression #1, char 0: no previous regular expression\n")
	}
	r.quit, r.code = true, 1
}

// regex returns re, or for the empty regex the last one used.
func (r *sedRun) regex(re *sedRegex) *sedRegex {
	if re == nil {
		return r.lastRE
	}
	r.lastRE = re
	return re
}

func (s *sedRegex) match(b []byte) bool {
	if s.plain != nil {
		return bytes.Contains(b, s.plain)
	}
	return s.m.Match(b)
}

// subst runs an s command on the pattern space and reports whether it
// replaced anything.
func (r *sedRun) subst(c *sedCmd) (bool, error) {
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
	// and of each group.
	stride := 2
	r.spans = r.spans[:0]
	if re.plain != nil {
		for at := 0; limit < 0 || len(r.spans) < limit*stride; {
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
	if len(r.spans) < c.nth*stride {
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
func (r *sedRun) put(emit task.Emit, text []byte, nl bool) error {
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

// sedParser reads a script. The grammar (GNU sed's, in part):
//
//	script  = { [ address [ "," address2 ] ] { " " } { "!" } command end }
//	address = N | "$" | FIRST "~" STEP | "/" RE "/" [ "I" ] | "\" C RE C [ "I" ]
//	address2 = address | "+" N | "~" N
//	command = "{" | "}" | "=" | "d" | "p" | ("q" | "Q") [ CODE ]
//	        | "s" C RE C REPL C { FLAG } | "y" C SRC C DST C
//	end     = { " " } ( ";" | newline | "}" | "#" comment | end of script )
type sedParser struct {
	src    string
	pos    int
	starts []int // where each -e piece starts in src
	ere    bool
	script *sedScript
	open   []int // the open { commands
}

// sedParse parses the -e pieces of a script, joined by newlines as GNU
// does.
func sedParse(pieces []string, ere bool) (*sedScript, error) {
	p := &sedParser{ere: ere, script: &sedScript{}}
	for i, s := range pieces {
		if i > 0 {
			p.src += "\n"
		}
		p.starts = append(p.starts, len(p.src))
		p.src += s
	}
	// GNU: a script whose first line is exactly "#n" is as if -n.
	if first, _, _ := strings.Cut(pieces[0], "\n"); first == "#n" {
		p.script.quiet = true
	}
	if err := p.commands(); err != nil {
		return nil, err
	}
	if len(p.open) > 0 {
		return nil, usagef("sed", "-e expression #1, char 0: unmatched `{'")
	}
	return p.script, nil
}

// errorf reports a script error as GNU does: the -e piece and the number of
// characters read in it.
func (p *sedParser) errorf(format string, args ...any) error {
	// The newline that joins two pieces belongs to the first.
	n := 0
	for i, s := range p.starts {
		if s < p.pos {
			n = i
		}
	}
	return usagef("sed", "-e expression #%d, char %d: %s", n+1, p.pos-p.starts[n], sprintfArgs(format, args))
}

func sprintfArgs(format string, args []any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

func (p *sedParser) eof() bool { return p.pos >= len(p.src) }

func (p *sedParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *sedParser) skipSpaces() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// commands parses the whole script.
func (p *sedParser) commands() error {
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.src[p.pos]) >= 0 {
			p.pos++
		}
		if p.eof() {
			return nil
		}
		if p.peek() == '#' {
			for !p.eof() && p.src[p.pos] != '\n' {
				p.pos++
			}
			continue
		}
		if err := p.command(); err != nil {
			return err
		}
	}
}

// command parses one command with its addresses.
func (p *sedParser) command() error {
	c := sedCmd{nth: 1}
	a1, err := p.address(false)
	if err != nil {
		return err
	}
	c.a1 = a1
	if a1 != nil {
		p.skipSpaces()
		if p.peek() == ',' {
			p.pos++
			p.skipSpaces()
			a2, err := p.address(true)
			if err != nil {
				return err
			}
			if a2 == nil {
				return p.errorf("unexpected `,'")
			}
			c.a2 = a2
		}
	}
	p.skipSpaces()
	for p.peek() == '!' {
		if c.neg {
			p.pos++
			return p.errorf("multiple `!'s")
		}
		c.neg = true
		p.pos++
		p.skipSpaces()
	}
	if p.eof() {
		return p.errorf("missing command")
	}
	c.op = p.src[p.pos]
	p.pos++
	if a1 != nil && a1.kind == 'n' && a1.n == 0 && (c.a2 == nil || c.a2.kind != '/') {
		return p.errorf("invalid usage of line address 0")
	}
	switch c.op {
	case '{':
		p.open = append(p.open, len(p.script.cmds))
		p.script.cmds = append(p.script.cmds, c)
		return nil
	case '}':
		if len(p.open) == 0 {
			return p.errorf("unexpected `}'")
		}
		if c.a1 != nil {
			return p.errorf("} doesn't want any addresses")
		}
		open := p.open[len(p.open)-1]
		p.open = p.open[:len(p.open)-1]
		p.script.cmds[open].close = len(p.script.cmds)
	case '=', 'd', 'p':
	case 'q', 'Q':
		if c.a2 != nil {
			return p.errorf("command only uses one address")
		}
		p.skipSpaces()
		start := p.pos
		for !p.eof() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		if p.pos > start {
			c.code, _ = strconv.Atoi(p.src[start:p.pos])
		}
		p.script.quits = true
	case 's':
		if err := p.subst(&c); err != nil {
			return err
		}
		p.script.cmds = append(p.script.cmds, c)
		return nil // subst read the end of the command
	case 'y':
		if err := p.translit(&c); err != nil {
			return err
		}
	case 'a', 'b', 'c', 'D', 'e', 'F', 'g', 'G', 'h', 'H', 'i', 'l', 'n', 'N',
		'P', 'r', 'R', 't', 'T', 'v', 'w', 'W', 'x', 'z', ':':
		return p.errorf("command `%c' is not supported", c.op)
	default:
		return p.errorf("unknown command: `%c'", c.op)
	}
	p.script.cmds = append(p.script.cmds, c)
	return p.endOfCommand()
}

// endOfCommand reads what may follow a command.
func (p *sedParser) endOfCommand() error {
	p.skipSpaces()
	if p.eof() {
		return nil
	}
	switch p.src[p.pos] {
	case ';', '\n':
		p.pos++
		return nil
	case '}', '#':
		return nil
	}
	p.pos++
	return p.errorf("extra characters after command")
}

// address parses an address, if there is one. second allows +N and ~N.
func (p *sedParser) address(second bool) (*sedAddr, error) {
	c := p.peek()
	switch {
	case c >= '0' && c <= '9':
		n := p.number()
		if p.peek() == '~' && !second {
			p.pos++
			if d := p.peek(); d < '0' || d > '9' {
				return &sedAddr{kind: '~', n: n}, nil
			}
			return &sedAddr{kind: '~', n: n, step: p.number()}, nil
		}
		return &sedAddr{kind: 'n', n: n}, nil
	case c == '$':
		p.pos++
		p.script.needLast = true
		return &sedAddr{kind: '$'}, nil
	case (c == '+' || c == '~') && second:
		p.pos++
		if d := p.peek(); d < '0' || d > '9' {
			return nil, p.errorf("expected newer version of sed")
		}
		kind := byte('+')
		if c == '~' {
			kind = 'm'
		}
		return &sedAddr{kind: kind, n: p.number()}, nil
	case c == '/' || c == '\\':
		p.pos++
		delim := byte('/')
		if c == '\\' {
			if p.eof() {
				return nil, p.errorf("unexpected end of file")
			}
			delim = p.src[p.pos]
			p.pos++
		}
		pat, ok := p.delimited(delim, true)
		if !ok {
			return nil, p.errorf("unterminated address regex")
		}
		icase := false
		for p.peek() == 'I' {
			icase = true
			p.pos++
		}
		re, err := p.compile(pat, icase)
		if err != nil {
			return nil, err
		}
		return &sedAddr{kind: '/', re: re}, nil
	}
	return nil, nil
}

func (p *sedParser) number() int {
	start := p.pos
	for !p.eof() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil {
		n = int(^uint(0) >> 1)
	}
	return n
}

// delimited reads up to the next unescaped delim and returns the text
// before it. "\delim" stands for delim itself and loses its backslash, as
// in GNU sed (so in s.a\.b.X. the '.' is special again); in a regex, "\n"
// becomes a newline. Other escapes are kept for the regex or replacement
// parser.
func (p *sedParser) delimited(delim byte, regex bool) (string, bool) {
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == delim:
			return b.String(), true
		case c == '\n' && regex:
			return "", false
		case c == '\\':
			if p.eof() {
				return "", false
			}
			d := p.src[p.pos]
			p.pos++
			switch {
			case d == delim && !(d == '&' && !regex):
				b.WriteByte(d)
			case d == 'n' && regex:
				b.WriteByte('\n')
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// compile compiles an address or s regex; "" is the last regex used.
func (p *sedParser) compile(pat string, icase bool) (*sedRegex, error) {
	if pat == "" {
		return nil, nil
	}
	syn, fl := posixre.Basic, posixre.Sed
	if p.ere {
		syn = posixre.Extended
	}
	if !icase && posixre.IsLiteral(pat, syn) {
		return &sedRegex{plain: []byte(pat)}, nil
	}
	if icase {
		fl |= posixre.IgnoreCase
	}
	re, err := posixre.Compile(pat, syn, fl)
	if err != nil {
		return nil, p.errorf("%s", err)
	}
	re.Longest()
	return &sedRegex{m: posixre.NewMatcher(re)}, nil
}

// subst parses the rest of an s command and what follows it.
func (p *sedParser) subst(c *sedCmd) error {
	if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
		return p.errorf("unterminated `s' command")
	}
	delim := p.src[p.pos]
	p.pos++
	pat, ok := p.delimited(delim, true)
	if !ok {
		return p.errorf("unterminated `s' command")
	}
	repl, ok := p.delimited(delim, false)
	if !ok {
		return p.errorf("unterminated `s' command")
	}
	// Flags.
	icase, sawNum := false, false
flags:
	for !p.eof() {
		f := p.src[p.pos]
		p.pos++
		switch {
		case f == 'g':
			if c.glob {
				return p.errorf("multiple `g' options to `s' command")
			}
			c.glob = true
		case f == 'p':
			if c.print {
				return p.errorf("multiple `p' options to `s' command")
			}
			c.print = true
		case f == 'i' || f == 'I':
			icase = true
		case f >= '0' && f <= '9':
			if sawNum {
				return p.errorf("multiple number options to `s' command")
			}
			p.pos--
			n := p.number()
			if n == 0 {
				return p.errorf("number option to `s' command may not be zero")
			}
			c.nth, sawNum = n, true
		case f == ' ' || f == '\t':
		case f == ';' || f == '\n':
			break flags
		case f == '}' || f == '#':
			p.pos--
			break flags
		case f == 'm' || f == 'M' || f == 'e' || f == 'w':
			return p.errorf("option `%c' to `s' is not supported", f)
		default:
			return p.errorf("unknown option to `s'")
		}
	}
	re, err := p.compile(pat, icase)
	if err != nil {
		return err
	}
	c.re = re
	groups := -1 // unknown for the empty regex
	if re != nil {
		groups = 0
		if re.m != nil {
			groups = re.m.Regexp().NumSubexp()
		}
	}
	c.repl, err = p.replacement(repl, groups)
	return err
}

// replacement parses the replacement of an s command: & and \0 to \9 are
// the match and its groups, \n and friends control characters, a
// backslash-newline a newline, and any other escaped character itself.
func (p *sedParser) replacement(s string, groups int) ([]sedRepl, error) {
	var parts []sedRepl
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			parts = append(parts, sedRepl{text: lit, group: -1})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '&':
			flush()
			parts = append(parts, sedRepl{group: 0})
		case c == '\\' && i+1 < len(s):
			i++
			d := s[i]
			if d >= '0' && d <= '9' {
				g := int(d - '0')
				if groups >= 0 && g > groups {
					return nil, p.errorf("invalid reference \\%c on `s' command's RHS", d)
				}
				flush()
				parts = append(parts, sedRepl{group: g})
				continue
			}
			if ctl, ok := posixre.ControlEscape(d); ok {
				lit = append(lit, ctl)
				continue
			}
			switch d {
			case 'L', 'U', 'l', 'u', 'E', 'c', 'd', 'o', 'x':
				return nil, p.errorf("\\%c in an `s' replacement is not supported", d)
			}
			lit = append(lit, d) // "\&", "\\", "\<newline>", ...
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return parts, nil
}

// translit parses the rest of a y command.
func (p *sedParser) translit(c *sedCmd) error {
	if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
		return p.errorf("unterminated `y' command")
	}
	delim := p.src[p.pos]
	p.pos++
	var sets [2][]byte
	for k := range sets {
		for {
			if p.eof() {
				return p.errorf("unterminated `y' command")
			}
			ch := p.src[p.pos]
			p.pos++
			if ch == delim {
				break
			}
			if ch == '\\' && !p.eof() {
				d := p.src[p.pos]
				switch {
				case d == delim || d == '\\':
					ch = d
					p.pos++
				case d == 'n':
					ch = '\n'
					p.pos++
				default:
					if ctl, ok := posixre.ControlEscape(d); ok {
						ch = ctl
						p.pos++
					}
				}
			}
			sets[k] = append(sets[k], ch)
		}
	}
	if len(sets[0]) != len(sets[1]) {
		return p.errorf("strings for `y' command are different lengths")
	}
	m := new([256]byte)
	for i := range m {
		m[i] = byte(i)
	}
	for i, b := range sets[0] {
		m[b] = sets[1][i]
	}
	c.ymap = m
	return nil
}
