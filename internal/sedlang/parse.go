package sedlang

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/internal/posixre"
)

// Options are the command line's say in how a script reads.
type Options struct {
	Extended bool // -E, -r: the regexes are EREs
	Quiet    bool // -n: print only what the script prints
}

// Error is a script GNU sed rejects, or one that tpipe cannot run, with
// where GNU says it is: the -e piece, from 1, and how many characters of
// that piece were read when the error was found.
type Error struct {
	Expr int
	Char int
	Msg  string
}

// Error returns the message as GNU sed prints it after "sed: ".
func (e *Error) Error() string {
	return fmt.Sprintf("-e expression #%d, char %d: %s", e.Expr, e.Char, e.Msg)
}

// Script is a parsed script. It does not change once Parse returns it, so
// that any number of Runs may use it at once.
type Script struct {
	cmds     []command
	quiet    bool
	needLast bool // some address is $, so each line waits for the next
	quits    bool // q or Q may stop the input early
}

// Quits reports whether a q or Q command may end the run before the
// input does, so that a caller can stop reading then.
func (s *Script) Quits() bool { return s.quits }

// command is one command of a script.
type command struct {
	a1, a2 *address // a2 is set for a range
	neg    bool
	op     byte // one of { } = d p q Q s y

	// { : index of its }
	close int
	// q, Q
	code int
	// s
	re    *regex // nil: the last regex used
	repl  []replPart
	glob  bool
	nth   int // replace from the nth match on (1 by default)
	print bool
	// y
	ymap *[256]byte
}

// rangeState is the state of a command's range in a run: active from its
// first line to its last; end is the last line number when it is known
// (the second address a number, +N or ~N).
type rangeState struct {
	active bool
	end    int
}

// address is an address: a line number, $, FIRST~STEP or a regex; or, as
// the end of a range, +N or ~N.
type address struct {
	kind byte // 'n' line, '$' last, '~' step, '/' regex, '+' and 'm' (end ~N)
	n    int  // the line, or FIRST of FIRST~STEP, or N of +N and ~N
	step int
	re   *regex // nil for // (the last regex used)
}

// regex is a compiled address or s regex. A regex with no special
// character is searched as the string plain instead of being compiled.
type regex struct {
	plain []byte
	m     *posixre.Matcher
}

// replPart is a piece of an s replacement: literal text, or a group (0 for
// the whole match, written & or \0).
type replPart struct {
	text  []byte
	group int // -1 for text
}

// parser reads a script. The grammar (GNU sed's, in part):
//
//	script  = { [ address [ "," address2 ] ] { " " } { "!" } command end }
//	address = N | "$" | FIRST "~" STEP | "/" RE "/" [ "I" ] | "\" C RE C [ "I" ]
//	address2 = address | "+" N | "~" N
//	command = "{" | "}" | "=" | "d" | "p" | ("q" | "Q") [ CODE ]
//	        | "s" C RE C REPL C { FLAG } | "y" C SRC C DST C
//	end     = { " " } ( ";" | newline | "}" | "#" comment | end of script )
type parser struct {
	src    string
	pos    int
	starts []int // where each -e piece starts in src
	ere    bool
	script *Script
	open   []int // the open { commands
}

// Parse parses a script given as -e pieces, which are joined by newlines
// as GNU does (one SCRIPT operand is one piece). A bad script is an
// *Error. No pieces at all is an empty script.
func Parse(pieces []string, o Options) (*Script, error) {
	if len(pieces) == 0 {
		pieces = []string{""}
	}
	p := &parser{ere: o.Extended, script: &Script{quiet: o.Quiet}}
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
		return nil, &Error{Expr: 1, Char: 0, Msg: "unmatched `{'"}
	}
	return p.script, nil
}

// errorf reports a script error as GNU does: the -e piece and the number of
// characters read in it.
func (p *parser) errorf(format string, args ...any) error {
	// The newline that joins two pieces belongs to the first.
	n := 0
	for i, s := range p.starts {
		if s < p.pos {
			n = i
		}
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Expr: n + 1, Char: p.pos - p.starts[n], Msg: msg}
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) skipSpaces() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// commands parses the whole script.
func (p *parser) commands() error {
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
func (p *parser) command() error {
	c := command{nth: 1}
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
func (p *parser) endOfCommand() error {
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
func (p *parser) address(second bool) (*address, error) {
	c := p.peek()
	switch {
	case c >= '0' && c <= '9':
		n := p.number()
		if p.peek() == '~' && !second {
			p.pos++
			if d := p.peek(); d < '0' || d > '9' {
				return &address{kind: '~', n: n}, nil
			}
			return &address{kind: '~', n: n, step: p.number()}, nil
		}
		return &address{kind: 'n', n: n}, nil
	case c == '$':
		p.pos++
		p.script.needLast = true
		return &address{kind: '$'}, nil
	case (c == '+' || c == '~') && second:
		p.pos++
		kind := byte('+')
		if c == '~' {
			kind = 'm'
		}
		// GNU reads a missing N as 0: "A,+" and "A,~" end where they start.
		n := 0
		if d := p.peek(); d >= '0' && d <= '9' {
			n = p.number()
		}
		return &address{kind: kind, n: n}, nil
	case c == '/' || c == '\\':
		p.pos++
		delim := byte('/')
		if c == '\\' {
			if p.eof() {
				return nil, p.errorf("unterminated address regex")
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
		return &address{kind: '/', re: re}, nil
	}
	return nil, nil
}

func (p *parser) number() int {
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
func (p *parser) delimited(delim byte, regex bool) (string, bool) {
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
func (p *parser) compile(pat string, icase bool) (*regex, error) {
	if pat == "" {
		return nil, nil
	}
	syn, fl := posixre.Basic, posixre.Sed
	if p.ere {
		syn = posixre.Extended
	}
	if !icase && posixre.IsLiteral(pat, syn) {
		return &regex{plain: []byte(pat)}, nil
	}
	if icase {
		fl |= posixre.IgnoreCase
	}
	re, err := posixre.Compile(pat, syn, fl)
	if err != nil {
		return nil, p.errorf("%s", err)
	}
	re.Longest()
	return &regex{m: posixre.NewMatcher(re)}, nil
}

// subst parses the rest of an s command and what follows it.
func (p *parser) subst(c *command) error {
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
func (p *parser) replacement(s string, groups int) ([]replPart, error) {
	var parts []replPart
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			parts = append(parts, replPart{text: lit, group: -1})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '&':
			flush()
			parts = append(parts, replPart{group: 0})
		case c == '\\' && i+1 < len(s):
			i++
			d := s[i]
			if d >= '0' && d <= '9' {
				g := int(d - '0')
				if groups >= 0 && g > groups {
					return nil, p.errorf("invalid reference \\%c on `s' command's RHS", d)
				}
				flush()
				parts = append(parts, replPart{group: g})
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
func (p *parser) translit(c *command) error {
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
