package sedlang

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/internal/backtrack"
	"github.com/tpipe/tpipe/internal/posixre"
)

// eof is what next returns at the end of a piece.
const eof = -1

// gnuVersion is the GNU sed this package follows; a v command asking for
// a later one is refused as GNU refuses it.
const gnuVersion = "4.9"

// parser reads a script, one piece at a time, as GNU sed does: a { or an
// a, i, c text may go on in the next piece, everything else ends with its
// piece. The grammar (GNU sed's):
//
//	script   = { { ";" | space } [ command ] }
//	command  = [ address [ "," address2 ] ] { blank } [ "!" { blank } ] cmd
//	address  = N [ "~" STEP ] | "$" | "/" RE "/" { "I" | "M" } | "\" C RE C { "I" | "M" }
//	address2 = address | "+" N | "~" N
//	cmd      = "{" | "}" | "=" | "d" | "D" | "F" | "g" | "G" | "h" | "H" | "n" | "N"
//	         | "p" | "P" | "x" | "z" | ("q" | "Q" | "l" | "L") [ N ]
//	         | ("a" | "i" | "c") ( "\" newline TEXT | "\" TEXT | TEXT )
//	         | (":" | "b" | "t" | "T") LABEL | "v" [ VERSION ] | "#" COMMENT
//	         | ("r" | "R" | "w" | "W") FILENAME
//	         | "s" C RE C REPL C { FLAG } | "y" C SRC C DST C
//	end      = { blank } ( ";" | newline | "}" | "#" | end of piece )
//
// after every command but {, a, i, c, :, b, t, T, r, R, w, W, s///w and #.
type parser struct {
	o      Options
	script *Script

	// The piece being read.
	src   string
	pos   int
	piece Piece
	expr  int // its -e number, counting only -e pieces; 0 for a file

	open    []openBlock // the { commands not yet closed
	labels  map[string]int
	jumps   []int // the b, t and T commands, for their labels
	names   []string
	pending int    // the a, i or c whose text goes on in the next piece, or -1
	text    []byte // that text so far
}

// openBlock is a { waiting for its }, and where GNU says it is when it
// never comes.
type openBlock struct {
	cmd   int
	where Error
}

// Parse parses a script given as pieces (-e expressions and -f files, in
// their order on the command line). A bad script is an *Error; so is one
// that tpipe does not run (Error.Unsupported). No pieces at all is an
// empty script.
func Parse(pieces []Piece, o Options) (*Script, error) {
	sc := &Script{quiet: o.Quiet, delim: '\n', lineWrap: 70}
	if o.NullData {
		sc.delim = 0
	}
	switch {
	case o.LineWrap < 0:
		sc.lineWrap = 0
	case o.LineWrap > 0:
		sc.lineWrap = o.LineWrap
	}
	p := &parser{o: o, script: sc, labels: map[string]int{}, pending: -1}
	// GNU: a script whose first piece starts with "#n" is as if -n (POSIX
	// asks for "#n" alone on its line; GNU 4.9 looks at two characters).
	if len(pieces) > 0 && strings.HasPrefix(pieces[0].Text, "#n") {
		sc.quiet = true
	}
	exprs := 0
	for _, pc := range pieces {
		p.src, p.pos, p.piece, p.expr = pc.Text, 0, pc, 0
		if pc.File == "" {
			exprs++
			p.expr = exprs
		}
		if p.pending >= 0 {
			p.readText('\n')
		}
		if err := p.commands(); err != nil {
			return nil, err
		}
	}
	if len(p.open) > 0 {
		e := p.open[len(p.open)-1].where
		e.Msg = "unmatched `{'"
		return nil, &e
	}
	if p.pending >= 0 {
		// The text ran to the end of the script: GNU keeps it as read.
		sc.cmds[p.pending].text = p.text
	}
	for _, i := range p.jumps {
		c := &sc.cmds[i]
		if c.file == "" {
			c.jump = len(sc.cmds)
			continue
		}
		at, ok := p.labels[c.file]
		if !ok {
			return nil, &Error{NoPlace: true, Panic: true, Msg: fmt.Sprintf("can't find label for jump to `%s'", c.file)}
		}
		c.jump = at
	}
	return sc, nil
}

// here is the place of the parser, as an *Error without its message.
func (p *parser) here() Error {
	if p.piece.File != "" {
		return Error{File: p.piece.File, Line: 1 + strings.Count(p.src[:p.pos], "\n")}
	}
	return Error{Expr: p.expr, Char: p.pos}
}

// errorf reports a script error where the parser is.
func (p *parser) errorf(format string, args ...any) *Error {
	e := p.here()
	e.Msg = format
	if len(args) > 0 {
		e.Msg = fmt.Sprintf(format, args...)
	}
	return &e
}

// unsupported reports a script GNU runs and tpipe does not: what names
// the part, and the message says why.
func (p *parser) unsupported(what, format string, args ...any) *Error {
	e := p.errorf(format, args...)
	e.Unsupported, e.What = true, what
	return e
}

// next reads a character, or eof.
func (p *parser) next() int {
	if p.pos >= len(p.src) {
		return eof
	}
	p.pos++
	return int(p.src[p.pos-1])
}

// back unreads c, the character next returned (GNU's savchar).
func (p *parser) back(c int) {
	if c != eof {
		p.pos--
	}
}

// nonBlank reads the next character that is not a space or tab.
func (p *parser) nonBlank() int {
	for {
		if c := p.next(); c != ' ' && c != '\t' {
			return c
		}
	}
}

// integer reads the digits from c on.
func (p *parser) integer(c int) int {
	n := 0
	for ; c >= '0' && c <= '9'; c = p.next() {
		if n > (int(^uint(0)>>1)-9)/10 {
			n = int(^uint(0) >> 1) // as large as it gets: no line is past it
			continue
		}
		n = n*10 + c - '0'
	}
	p.back(c)
	return n
}

func isSpace(c int) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// commands parses the rest of the piece.
func (p *parser) commands() error {
	for {
		c := p.next()
		for c == ';' || isSpace(c) {
			c = p.next()
		}
		if c == eof {
			return nil
		}
		if err := p.command(c); err != nil {
			return err
		}
	}
}

// command parses one command, whose first character c has been read.
func (p *parser) command(c int) error {
	sc := p.script
	cmd := command{num: -1}
	a1, err := p.address(c)
	if err != nil {
		return err
	}
	if a1 != nil {
		if a1.kind == '+' || a1.kind == 'm' {
			return p.errorf("invalid usage of +N or ~N as first address")
		}
		cmd.a1 = a1
		c = p.nonBlank()
		if c == ',' {
			a2, err := p.address(p.nonBlank())
			if err != nil {
				return err
			}
			if a2 == nil {
				return p.errorf("unexpected `,'")
			}
			cmd.a2 = a2
			c = p.nonBlank()
		}
		if a1.kind == 'n' && a1.n == 0 && (cmd.a2 == nil && c != 'r' || cmd.a2 != nil && cmd.a2.kind != '/') {
			return p.errorf("invalid usage of line address 0")
		}
	}
	if c == '!' {
		cmd.neg = true
		c = p.nonBlank()
		if c == '!' {
			return p.errorf("multiple `!'s")
		}
	}
	if c == eof {
		return p.errorf("missing command")
	}
	cmd.op = byte(c)
	here := len(sc.cmds)
	switch c {
	case '#':
		if cmd.a1 != nil {
			return p.errorf("comments don't accept any addresses")
		}
		for c != eof && c != '\n' {
			c = p.next()
		}
		return nil
	case 'v':
		v := p.label()
		if v == "" {
			v = "4.0"
		}
		if versionLess(gnuVersion, v) {
			return p.errorf("expected newer version of sed")
		}
		return nil
	case '{':
		p.open = append(p.open, openBlock{cmd: here, where: p.blockPlace()})
	case '}':
		if len(p.open) == 0 {
			return p.errorf("unexpected `}'")
		}
		if cmd.a1 != nil {
			return p.errorf("`}' doesn't want any addresses")
		}
		if err := p.endOfCommand(); err != nil {
			return err
		}
		open := p.open[len(p.open)-1]
		p.open = p.open[:len(p.open)-1]
		sc.cmds[open.cmd].jump = here
	case 'e':
		if p.o.Sandbox {
			return p.errorf("e/r/w commands disabled in sandbox mode")
		}
		return p.unsupported("e", "command `e' is not supported")
	case 'a', 'i', 'c':
		c = p.nonBlank()
		if c == eof {
			return p.errorf("expected \\ after `a', `c' or `i'")
		}
		if c == '\\' {
			c = p.next()
		} else {
			p.back(c)
			c = '\n'
		}
		sc.cmds = append(sc.cmds, cmd)
		p.pending, p.text = here, nil
		p.readText(c)
		return nil
	case ':':
		if cmd.a1 != nil {
			return p.errorf(": doesn't want any addresses")
		}
		name := p.label()
		if name == "" {
			return p.errorf("\":\" lacks a label")
		}
		p.labels[name] = here // GNU jumps to the last of labels of one name
	case 'b', 't', 'T':
		cmd.file = p.label()
		p.jumps = append(p.jumps, here)
		sc.loops = true
	case 'q', 'Q', 'l', 'L':
		if (c == 'q' || c == 'Q') && cmd.a2 != nil {
			return p.errorf("command only uses one address")
		}
		if c == 'L' {
			return p.errorf("unknown command: `L'") // gone from GNU sed since 4.3
		}
		if d := p.nonBlank(); d >= '0' && d <= '9' {
			cmd.num = p.integer(d)
		} else {
			p.back(d)
		}
		if c == 'q' || c == 'Q' {
			sc.quits = true
			cmd.num = max(cmd.num, 0)
		}
		if err := p.endOfCommand(); err != nil {
			return err
		}
	case '=', 'd', 'D', 'F', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'z', 'x':
		sc.loops = sc.loops || c == 'D'
		if err := p.endOfCommand(); err != nil {
			return err
		}
	case 'r', 'R', 'w', 'W':
		name, err := p.filename()
		if err != nil {
			return err
		}
		cmd.file = name
		switch c {
		case 'r':
			sc.readsFiles = true
			if cmd.a1 != nil && cmd.a1.kind == 'n' && cmd.a1.n == 0 && cmd.a2 == nil {
				// 0r: the file goes before the first line.
				cmd.a1 = &address{kind: 'n', n: 1}
				cmd.op = '0'
			}
		case 'R':
			sc.readsFiles = true
			cmd.index = p.fileIndex(&sc.reads, name)
		default:
			cmd.index = p.fileIndex(&sc.writes, name)
		}
	case 's':
		if err := p.subst(&cmd); err != nil {
			return err
		}
	case 'y':
		if err := p.translit(&cmd); err != nil {
			return err
		}
	default:
		return p.errorf("unknown command: `%c'", c)
	}
	sc.cmds = append(sc.cmds, cmd)
	return nil
}

// blockPlace is where GNU says an unmatched { is: its -e piece with no
// character count, or its file and line.
func (p *parser) blockPlace() Error {
	e := p.here()
	e.Char = 0
	return e
}

// fileIndex returns the index of name in *files, adding it if it is new.
func (p *parser) fileIndex(files *[]string, name string) int {
	for i, f := range *files {
		if f == name {
			return i
		}
	}
	*files = append(*files, name)
	return len(*files) - 1
}

// endOfCommand reads what may follow a command.
func (p *parser) endOfCommand() error {
	switch c := p.nonBlank(); c {
	case '}', '#':
		p.back(c)
	case eof, '\n', ';':
	default:
		return p.errorf("extra characters after command")
	}
	return nil
}

// label reads the label of :, b, t and T (and the version of v): up to a
// blank, ';', '}', '#' or the end of the line.
func (p *parser) label() string {
	p.back(p.nonBlank())
	start := p.pos
	c := p.next()
	for c != eof && c != '\n' && c != ' ' && c != '\t' && c != ';' && c != '}' && c != '#' {
		c = p.next()
	}
	p.back(c)
	return p.src[start:p.pos]
}

// filename reads the file name of r, R, w, W and s///w: the rest of the
// line, after blanks.
func (p *parser) filename() (string, error) {
	if p.o.Sandbox {
		return "", p.errorf("e/r/w commands disabled in sandbox mode")
	}
	c := p.nonBlank()
	start, end := p.pos-1, p.pos-1
	for ; c != eof && c != '\n'; c = p.next() {
		end = p.pos
	}
	if start >= end {
		return "", p.errorf("missing filename in r/R/w/W commands")
	}
	name := p.src[start:end]
	if name == "/dev/stdin" {
		return "", p.unsupported("a file /dev/stdin", "reading /dev/stdin is not supported")
	}
	return name, nil
}

// readText reads the text of a, i or c, from leadin (the character after
// "a\", or a newline when the text started on the command's line or on the
// next one) to the first newline not escaped by a backslash. A text cut by
// the end of its piece goes on in the next one (sed -e 'a\' -e 'text').
func (p *parser) readText(leadin int) {
	if leadin == eof {
		return // p.pending stays: the text is in the next piece, if any
	}
	if leadin != '\n' {
		p.text = append(p.text, byte(leadin))
	}
	for {
		c := p.next()
		if c == eof || c == '\n' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c != eof {
				p.text = append(p.text, '\\')
			}
		}
		if c == eof {
			p.text = append(p.text, '\n')
			return // goes on in the next piece
		}
		p.text = append(p.text, byte(c))
	}
	p.text = append(p.text, '\n')
	text, err := normalize(p.text, textBuffer)
	if err != nil {
		text = p.text // "\c\" cannot come out of a text whose escapes are pairs
	}
	p.script.cmds[p.pending].text = text
	p.pending, p.text = -1, nil
}

// address parses an address starting with c, if there is one.
func (p *parser) address(c int) (*address, error) {
	switch {
	case c == '/' || c == '\\':
		if c == '\\' {
			c = p.next()
		}
		pat, ok := p.matchSlash(c, true)
		if !ok {
			return nil, p.errorf("unterminated address regex")
		}
		var fl posixre.Flags
		for {
			switch c = p.nonBlank(); c {
			case 'I':
				fl |= posixre.IgnoreCase
				continue
			case 'M':
				fl |= posixre.Newline | posixre.Multiline
				continue
			}
			p.back(c)
			break
		}
		re, err := p.compile(pat, fl, 0)
		if err != nil {
			return nil, err
		}
		return &address{kind: '/', re: re}, nil
	case c >= '0' && c <= '9':
		n := p.integer(c)
		if c = p.nonBlank(); c != '~' {
			p.back(c)
			return &address{kind: 'n', n: n}, nil
		}
		step := p.integer(p.nonBlank())
		if step > 0 {
			return &address{kind: '~', n: n, step: step}, nil
		}
		return &address{kind: 'n', n: n}, nil
	case c == '+' || c == '~':
		n := p.integer(p.nonBlank())
		switch {
		case n == 0:
			// GNU: "A,+0" and "A,~0" end where they start; as a first
			// address, it matches every line.
			return &address{kind: 'a'}, nil
		case c == '+':
			return &address{kind: '+', n: n}, nil
		}
		return &address{kind: 'm', n: n}, nil
	case c == '$':
		p.script.needLast = true
		return &address{kind: '$'}, nil
	}
	return nil, nil // c stays read, as in GNU: it is the command
}

// matchSlash reads up to the next delim not escaped by a backslash and
// returns the text before it, as GNU's match_slash does: "\delim" stands
// for delim (in a replacement, "\&" stays as it is when & is the
// delimiter), a backslash-newline for a newline, and any other escape is
// kept for later. In a regex, a bracket expression is read whole, so that
// a delimiter or backslash inside it is itself: s/[/]/x/. ok is false when
// the line or piece ends first.
func (p *parser) matchSlash(delim int, regex bool) (text []byte, ok bool) {
	if delim == eof {
		return nil, false
	}
	var b []byte
	for {
		c := p.next()
		switch {
		case c == eof:
			return nil, false
		case c == '\n':
			p.back(c)
			return nil, false
		case c == delim:
			return b, true
		case c == '\\':
			c = p.next()
			if c == eof {
				return nil, false
			}
			if c != '\n' && (c != delim || !regex && c == '&') {
				b = append(b, '\\')
			}
		case c == '[' && regex:
			b = append(b, '[')
			if c = p.bracket(&b); c != ']' {
				p.back(c)
				return nil, false
			}
		}
		b = append(b, byte(c))
	}
}

// bracket reads the rest of a bracket expression into b, up to the ']'
// that ends it, which it returns unread into b; or eof or a newline,
// where it stopped. [:class:], [=c=] and [.c.] are read whole.
func (p *parser) bracket(b *[]byte) int {
	c := p.next()
	if c == '^' {
		*b = append(*b, '^')
		c = p.next()
	}
	if c == ']' {
		*b = append(*b, ']')
		c = p.next()
	}
	// state: 0 outside [: :], [= =] and [. .]; 1 just after a '['; 2
	// inside one; 3 after its closing ':', '=' or '.'.
	state, kind := 0, 0
	for ; ; c = p.next() {
		switch c {
		case eof, '\n':
			return c
		case '.', ':', '=':
			switch {
			case state == 1:
				kind, state = c, 2
			case state == 2 && c == kind:
				state = 3
			default:
				state &^= 1
			}
		case '[':
			if state == 0 {
				state = 1
			}
		case ']':
			if state == 0 || state == 1 {
				return c
			}
			if state == 3 {
				state = 0
			}
		default:
			state &^= 1
		}
		*b = append(*b, byte(c))
	}
}

// compile compiles an address or s regex; an empty one is the last regex
// used, and takes no flags. needGroup is the largest group the
// replacement names.
func (p *parser) compile(pat []byte, fl posixre.Flags, needGroup int) (*regex, error) {
	if len(pat) == 0 {
		if fl != 0 {
			return nil, p.errorf("cannot specify modifiers on empty regexp")
		}
		return nil, nil
	}
	text, err := normalize(pat, textRegex)
	if err != nil {
		return nil, p.errorf("%s", err)
	}
	segments := false
	if p.script.delim != '\n' && fl&posixre.Multiline != 0 {
		// GNU: ^ and $ hold at the NULs that end lines, not at newlines.
		fl &^= posixre.Multiline
		segments = true
	}
	fl |= posixre.Bytes
	syn := posixre.Basic
	if p.o.Extended {
		syn = posixre.Extended
	}
	re, err := posixre.Compile(string(text), syn, fl|posixre.Sed)
	var pe *posixre.Error
	if errors.As(err, &pe) && pe.Backtrack {
		rx, err := p.compileBacktrack(pat, string(text), syn, fl|posixre.Sed, needGroup)
		if rx != nil {
			rx.segments = segments
		}
		return rx, err
	}
	if err != nil {
		if pe != nil && pe.Unsupported {
			return nil, p.unsupported("/"+string(pat)+"/", "%s", err)
		}
		return nil, p.errorf("%s", err)
	}
	if groups := re.NumSubexp(); needGroup > groups {
		return nil, p.errorf("invalid reference \\%d on `s' command's RHS", needGroup)
	}
	re.Longest()
	rx := &regex{m: posixre.NewMatcher(re), newline: fl&posixre.Newline != 0, segments: segments, groups: re.NumSubexp()}
	rx.fast = fastOf(re, fl&posixre.Multiline != 0 || segments)
	return rx, nil
}

// compileBacktrack compiles pattern pat, which RE2 cannot run, for the
// backtracker; text is pat as normalize left it.
func (p *parser) compileBacktrack(pat []byte, text string, syn posixre.Syntax, fl posixre.Flags, needGroup int) (*regex, error) {
	bt, err := backtrack.Compile(text, syn, fl)
	if err != nil {
		var pe *posixre.Error
		if errors.As(err, &pe) && pe.Unsupported {
			return nil, p.unsupported("/"+string(pat)+"/", "%s", err)
		}
		return nil, p.errorf("%s", err)
	}
	if needGroup > bt.NumSubexp() {
		return nil, p.errorf("invalid reference \\%d on `s' command's RHS", needGroup)
	}
	rx := &regex{bt: bt, newline: fl&posixre.Newline != 0, groups: bt.NumSubexp()}
	if pre := bt.Prefilter(); pre != nil {
		rx.m = posixre.NewMatcher(pre)
	}
	return rx, nil
}

// subst parses the rest of an s command.
func (p *parser) subst(c *command) error {
	delim := p.next()
	pat, ok := p.matchSlash(delim, true)
	if !ok {
		return p.errorf("unterminated `s' command")
	}
	raw, ok := p.matchSlash(delim, false)
	if !ok {
		return p.errorf("unterminated `s' command")
	}
	repl, err := normalize(raw, textRepl)
	if err != nil {
		return p.errorf("%s", err)
	}
	s := &subst{write: -1}
	var maxGroup int
	s.repl, maxGroup = replacement(repl)
	s.simple = true
	for _, part := range s.repl {
		s.simple = s.simple && part.conv == caseAsIs
	}
	var fl posixre.Flags
flags:
	for {
		switch f := p.nonBlank(); {
		case f == 'i' || f == 'I':
			fl |= posixre.IgnoreCase
		case f == 'm' || f == 'M':
			fl |= posixre.Newline | posixre.Multiline
		case f == 'e':
			if p.o.Sandbox {
				return p.errorf("e/r/w commands disabled in sandbox mode")
			}
			return p.unsupported("s///e", "option `e' to `s' is not supported")
		case f == 'p':
			if s.print {
				return p.errorf("multiple `p' options to `s' command")
			}
			s.print = true
		case f == 'g':
			if s.glob {
				return p.errorf("multiple `g' options to `s' command")
			}
			s.glob = true
		case f == 'w':
			name, err := p.filename()
			if err != nil {
				return err
			}
			s.write = p.fileIndex(&p.script.writes, name)
			break flags
		case f >= '0' && f <= '9':
			if s.nth != 0 {
				return p.errorf("multiple number options to `s' command")
			}
			s.nth = p.integer(f)
			if s.nth == 0 {
				return p.errorf("number option to `s' command may not be zero")
			}
		case f == '}' || f == '#':
			p.back(f)
			break flags
		case f == eof || f == '\n' || f == ';':
			break flags
		case f == '\r' && p.pos < len(p.src) && p.src[p.pos] == '\n':
			// A script with DOS line ends: GNU takes CR LF after an s
			// command's flags as its end (and nowhere else).
			p.pos++
			break flags
		default:
			return p.errorf("unknown option to `s'")
		}
	}
	if s.nth == 0 {
		s.nth = 1
	}
	s.re, err = p.compile(pat, fl, maxGroup)
	if err != nil {
		return err
	}
	c.sub = s
	return nil
}

// translit parses the rest of a y command.
func (p *parser) translit(c *command) error {
	delim := p.next()
	var sets [2][]byte
	for k := range sets {
		raw, ok := p.matchSlash(delim, false)
		if !ok {
			return p.errorf("unterminated `y' command")
		}
		set, err := normalize(raw, textBuffer)
		if err != nil {
			return p.errorf("%s", err)
		}
		sets[k] = set
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
	return p.endOfCommand()
}

// versionLess reports whether version a is older than b, both dotted
// numbers ("4.9", "4.2.2").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
