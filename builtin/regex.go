package builtin

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file translates POSIX regular expressions, GNU flavour, into Go's
// RE2 syntax, for grep and sed. RE2 has no back-references, so a pattern
// that uses one is rejected rather than matched differently.
//
// What GNU does in the C locale, and so what this translation keeps:
//
//   - BRE: \( \) group, \{m,n\} interval, \| alternation, \+ and \? are
//     operators; * is literal at the start of a branch (also right after a
//     leading ^), as are \{ \+ \?; ^ is an anchor only at the start of a
//     branch and $ only at its end; elsewhere they are literal.
//   - ERE: ( ) { } | + ? are operators; ^ and $ are always anchors, and an
//     operator after one makes it optional or not; an operator with
//     nothing to repeat (at the start of a branch) is ignored; a { that
//     does not open a valid interval is literal, as is an unmatched ).
//   - GNU sed's regcomp is stricter than GNU grep: it rejects an operator
//     with nothing to repeat in an ERE, a BRE \{ at the start of a branch,
//     a** in a BRE, a bad ERE interval and an unmatched ).
//   - Both: bracket expressions with [:class:], [=c=] and [.c.]; the escapes
//     \w \W \s \S \b \B \` \'; \< and \> when the next (previous) piece
//     surely matches a word character, which RE2's \b can then express;
//     any other escaped character stands for itself.
//   - Case folding (-i, I) is ASCII only, as in the C locale: a letter
//     becomes a class of its two cases.
//
// Go matches UTF-8 text, not bytes: a pattern or line with non-ASCII bytes
// is matched as Go decodes it ('.' takes a whole valid UTF-8 character),
// which can differ from GNU in the C locale, where every byte is a
// character.

// regexOptions selects the dialect of a pattern.
type regexOptions struct {
	ere   bool // extended syntax (grep -E, sed -E)
	icase bool // ASCII case folding
	// sed turns on sed's extra escapes (\n \t \a \f \v \r stand for the
	// control character) and its stricter syntax, and lets '.' match a
	// newline, which a pattern space may hold.
	sed bool
}

// regexError is a pattern GNU rejects, or one tpipe cannot translate; its
// text is GNU's message where GNU has one ("Unmatched ( or \(").
type regexError struct{ msg string }

func (e *regexError) Error() string { return e.msg }

func regexErrorf(format string, args ...any) *regexError {
	if len(args) == 0 {
		return &regexError{format}
	}
	return &regexError{msg: fmt.Sprintf(format, args...)}
}

// Messages of GNU's regcomp, for the errors both dialects share.
const (
	regexErrParen     = `Unmatched ( or \(`
	regexErrRParen    = `Unmatched ) or \)`
	regexErrBrace     = `Unmatched \{`
	regexErrInterval  = `Invalid content of \{\}`
	regexErrBracket   = `Unmatched [, [^, [:, [., or [=`
	regexErrRange     = `Invalid range end`
	regexErrClass     = `Invalid character class name`
	regexErrTrailing  = `Trailing backslash`
	regexErrTooBig    = `Regular expression too big`
	regexErrBackref   = `back-references (\1 to \9) in a pattern are not supported`
	regexErrWordEdge  = `\< and \> are supported only next to a word character`
	regexErrPreceding = `Invalid preceding regular expression`
)

// regexMaxRepeat is the largest count RE2 accepts in an interval; GNU's
// limit is higher (32767), and a count between the two is an error here.
const regexMaxRepeat = 1000

// regexTranslate returns the Go syntax of the POSIX pattern pat.
func regexTranslate(pat string, o regexOptions) (string, error) {
	p := &regexParser{src: pat, o: o}
	out, err := p.alternation(0)
	if err != nil {
		return "", err
	}
	if p.pos < len(p.src) {
		// Only a closing group can stop the top level early.
		return "", regexErrorf(regexErrRParen)
	}
	if o.sed {
		out = "(?s)" + out
	}
	return out, nil
}

// regexCompile compiles a translation. The translation is valid RE2; what
// can fail is a limit, such as a pattern too large once its intervals are
// expanded.
func regexCompile(src string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, regexErrorf("%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// regexIsLiteral reports whether pat, in the given dialect, has no special
// character at all, so that it matches exactly its own bytes.
func regexIsLiteral(pat string, ere bool) bool {
	special := `\.[*^$`
	if ere {
		special = `\.[*^$+?{}()|`
	}
	return !strings.ContainsAny(pat, special)
}

// regexParser is the state of one translation. The grammar, with BRE's
// operators written as ERE's:
//
//	alternation = branch { "|" branch }
//	branch      = { piece }
//	piece       = atom { "*" | "+" | "?" | interval }
//	atom        = char | "." | bracket | "(" alternation ")" | anchor | escape
type regexParser struct {
	src string
	pos int
	o   regexOptions
}

// piece is one translated atom with what \< and \> need to know of it.
type regexPiece struct {
	text string
	// word is set when every string the piece matches is a non-empty run
	// of word characters.
	word bool
	// simple is set when a repetition operator can follow text directly.
	simple bool
	// repeated is set once an operator was applied (RE2 rejects a**).
	repeated bool
}

func (p *regexParser) more() bool { return p.pos < len(p.src) }

// peek returns the next byte, or 0 at the end.
func (p *regexParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// at reports whether the source continues with s.
func (p *regexParser) at(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

// atAlt reports whether an alternation operator comes next.
func (p *regexParser) atAlt() bool {
	if p.o.ere {
		return p.at("|")
	}
	return p.at(`\|`)
}

// atClose reports whether a group's closing parenthesis comes next, at
// depth (an unmatched ')' is literal in ERE).
func (p *regexParser) atClose(depth int) bool {
	if p.o.ere {
		return depth > 0 && p.at(")")
	}
	return p.at(`\)`)
}

// alternation = branch { "|" branch }
func (p *regexParser) alternation(depth int) (string, error) {
	var b strings.Builder
	for {
		s, err := p.branch(depth)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		if !p.atAlt() {
			return b.String(), nil
		}
		if p.o.ere {
			p.pos++
		} else {
			p.pos += 2
		}
		b.WriteByte('|')
	}
}

// branch = { piece }
func (p *regexParser) branch(depth int) (string, error) {
	var b strings.Builder
	start := true       // nothing yet in this branch but anchors
	anchored := false   // a leading ^ was seen (a second one is literal in a BRE)
	var prev regexPiece // the last piece, for \>
	wantWord := false   // a \< waits for the next piece
	for p.more() && !p.atAlt() && !p.atClose(depth) {
		if p.at(`\)`) && !p.o.ere || p.at(")") && p.o.ere && p.o.sed {
			return "", regexErrorf(regexErrRParen)
		}
		// Anchors.
		switch c := p.peek(); {
		case c == '^' && (p.o.ere || start && !anchored):
			p.pos++
			anchored = true
			if p.o.sed && p.o.ere && p.atRepeat() {
				return "", regexErrorf(regexErrPreceding)
			}
			if !p.skipStrayRepeats() {
				b.WriteByte('^')
			}
			prev = regexPiece{}
			continue
		case c == '$' && (p.o.ere || p.dollarEnds(depth)):
			p.pos++
			if p.o.sed && p.o.ere && p.atRepeat() {
				return "", regexErrorf(regexErrPreceding)
			}
			if !p.skipStrayRepeats() {
				b.WriteByte('$')
			}
			prev = regexPiece{}
			start = false
			continue
		case p.at(`\<`) || p.at(`\>`):
			if p.at(`\>`) && !prev.word {
				return "", regexErrorf(regexErrWordEdge)
			}
			if p.at(`\<`) {
				wantWord = true
			}
			p.pos += 2
			b.WriteString(`\b`)
			continue
		}
		if start && p.o.ere && p.atRepeat() {
			// GNU grep ignores an ERE operator that has nothing to
			// repeat; GNU sed rejects it.
			if p.o.sed {
				return "", regexErrorf(regexErrPreceding)
			}
			p.skipStrayRepeats()
			continue
		}
		pc, err := p.piece(depth)
		if err != nil {
			return "", err
		}
		if wantWord && !pc.word {
			return "", regexErrorf(regexErrWordEdge)
		}
		wantWord = false
		b.WriteString(pc.text)
		prev = pc
		start = false
	}
	if wantWord {
		return "", regexErrorf(regexErrWordEdge)
	}
	return b.String(), nil
}

// dollarEnds reports whether a BRE '$' at pos is an anchor: it ends the
// pattern, a group or a branch.
func (p *regexParser) dollarEnds(depth int) bool {
	rest := p.src[p.pos+1:]
	return rest == "" || strings.HasPrefix(rest, `\|`) || (depth > 0 && strings.HasPrefix(rest, `\)`))
}

// atRepeat reports whether a repetition operator comes next.
func (p *regexParser) atRepeat() bool {
	if p.o.ere {
		switch p.peek() {
		case '*', '+', '?':
			return true
		case '{':
			// In sed, a '{' always opens an interval.
			_, _, _, ok, _ := p.interval(p.pos + 1)
			return ok || p.o.sed
		}
		return false
	}
	return p.at("*") || p.at(`\+`) || p.at(`\?`) || p.at(`\{`)
}

// skipStrayRepeats drops ERE operators that start a branch, where GNU
// matches them as if absent, or follow an anchor, which they make optional
// if one of them may repeat it zero times: it reports whether they do. In
// a BRE the caller's next piece takes a '*' there as literal instead.
func (p *regexParser) skipStrayRepeats() (optional bool) {
	for p.o.ere && p.atRepeat() {
		switch p.peek() {
		case '{':
			lo, _, end, _, _ := p.interval(p.pos + 1)
			p.pos = end
			optional = optional || lo == 0
		case '*', '?':
			optional = true
			p.pos++
		default:
			p.pos++
		}
	}
	return optional
}

// piece = atom { repetition }
func (p *regexParser) piece(depth int) (regexPiece, error) {
	pc, err := p.atom(depth)
	if err != nil {
		return pc, err
	}
	for p.more() {
		var op string
		least := 0 // the fewest times the operator repeats
		switch {
		case p.peek() == '*':
			op = "*"
			p.pos++
		case p.o.ere && (p.peek() == '+' || p.peek() == '?'):
			op = p.src[p.pos : p.pos+1]
			p.pos++
		case !p.o.ere && (p.at(`\+`) || p.at(`\?`)):
			op = p.src[p.pos+1 : p.pos+2]
			p.pos += 2
		case p.o.ere && p.peek() == '{':
			lo, hi, end, ok, err := p.interval(p.pos + 1)
			if err != nil {
				return pc, err
			}
			if !ok && p.o.sed {
				if end >= len(p.src) {
					return pc, regexErrorf(regexErrBrace)
				}
				return pc, regexErrorf(regexErrInterval)
			}
			if !ok {
				return pc, nil // a literal '{', the next atom
			}
			p.pos = end
			op, least = regexIntervalOp(lo, hi), lo
		case !p.o.ere && p.at(`\{`):
			lo, hi, end, ok, err := p.interval(p.pos + 2)
			if err != nil {
				return pc, err
			}
			if !ok {
				if end >= len(p.src) {
					return pc, regexErrorf(regexErrBrace)
				}
				return pc, regexErrorf(regexErrInterval)
			}
			p.pos = end
			op, least = regexIntervalOp(lo, hi), lo
		default:
			return pc, nil
		}
		if op == "+" {
			least = 1
		}
		if pc.repeated && p.o.sed && !p.o.ere && op[0] != '+' && op[0] != '?' {
			// GNU sed rejects a** and a*\{2\}, not a*\+.
			return pc, regexErrorf(regexErrPreceding)
		}
		if !pc.simple || pc.repeated {
			pc.text = "(?:" + pc.text + ")"
		}
		pc.text += op
		pc.simple, pc.repeated = false, true
		pc.word = pc.word && least >= 1
	}
	return pc, nil
}

func regexIntervalOp(lo, hi int) string {
	switch {
	case hi < 0:
		return "{" + strconv.Itoa(lo) + ",}"
	case lo == hi:
		return "{" + strconv.Itoa(lo) + "}"
	}
	return "{" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "}"
}

// interval parses "m}", "m,}", "m,n}" or ",n}" from i (just after the
// opening brace; in a BRE the closing one is "\}"). hi is -1 for no upper
// bound. ok is false when the text there is not an interval: for an ERE,
// the brace is then literal; for a BRE, end tells whether the pattern
// ended first. err is an interval GNU rejects.
func (p *regexParser) interval(i int) (lo, hi, end int, ok bool, err error) {
	num := func() (int, bool) {
		j := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		if i == j {
			return -1, false
		}
		n, e := strconv.Atoi(p.src[j:i])
		if e != nil || n > 32767 {
			n = 32768
		}
		return n, true
	}
	lo, hasLo := num()
	hi = lo
	comma := false
	if i < len(p.src) && p.src[i] == ',' {
		comma = true
		i++
		hi, _ = num()
	}
	closer := "}"
	if !p.o.ere {
		closer = `\}`
	}
	if !strings.HasPrefix(p.src[i:], closer) {
		return 0, 0, i, false, nil
	}
	end = i + len(closer)
	if !hasLo && !comma {
		return 0, 0, end, false, regexErrorf(regexErrInterval)
	}
	if !hasLo {
		lo = 0
	}
	switch {
	case hi >= 0 && lo > hi:
		return 0, 0, end, false, regexErrorf(regexErrInterval)
	case lo > 32767 || hi > 32767:
		return 0, 0, end, false, regexErrorf(regexErrTooBig)
	case lo > regexMaxRepeat || hi > regexMaxRepeat:
		return 0, 0, end, false, regexErrorf("repetition count over %d is not supported", regexMaxRepeat)
	}
	return lo, hi, end, true, nil
}

// atom = char | "." | bracket | "(" alternation ")" | escape
func (p *regexParser) atom(depth int) (regexPiece, error) {
	c := p.peek()
	switch {
	case c == '.':
		p.pos++
		return regexPiece{text: ".", simple: true}, nil
	case c == '[':
		return p.bracket()
	case c == '(' && p.o.ere:
		p.pos++
		return p.group(depth)
	case c == '\\':
		return p.escape(depth)
	case c == '{' && p.o.ere:
		// Not an interval (or atRepeat would have said so): literal.
		p.pos++
		return p.literal('{'), nil
	}
	// '*' at the start of a BRE branch lands here and is literal.
	return p.literalRune()
}

// group parses the rest of a group after its opening parenthesis.
func (p *regexParser) group(depth int) (regexPiece, error) {
	inner, err := p.alternation(depth + 1)
	if err != nil {
		return regexPiece{}, err
	}
	if !p.atClose(depth + 1) {
		return regexPiece{}, regexErrorf(regexErrParen)
	}
	if p.o.ere {
		p.pos++
	} else {
		p.pos += 2
	}
	return regexPiece{text: "(" + inner + ")", simple: true}, nil
}

// escape parses a backslash sequence that is not an anchor or operator.
func (p *regexParser) escape(depth int) (regexPiece, error) {
	if p.pos+1 >= len(p.src) {
		return regexPiece{}, regexErrorf(regexErrTrailing)
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case '(':
		if !p.o.ere {
			return p.group(depth)
		}
	case '{':
		// Only reached at the start of a BRE branch: literal for grep.
		if p.o.sed {
			return regexPiece{}, regexErrorf(regexErrPreceding)
		}
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return regexPiece{}, regexErrorf(regexErrBackref)
	case 'w':
		return regexPiece{text: `[0-9A-Z_a-z]`, simple: true, word: true}, nil
	case 'W':
		return regexPiece{text: `[^0-9A-Z_a-z]`, simple: true}, nil
	case 's':
		return regexPiece{text: `[\t-\r ]`, simple: true}, nil
	case 'S':
		return regexPiece{text: `[^\t-\r ]`, simple: true}, nil
	case 'b':
		return regexPiece{text: `\b`}, nil
	case 'B':
		return regexPiece{text: `\B`}, nil
	case '`':
		return regexPiece{text: `\A`}, nil
	case '\'':
		return regexPiece{text: `\z`}, nil
	}
	if p.o.sed {
		if ctl, ok := regexSedEscape(c); ok {
			return p.literal(ctl), nil
		}
		switch c {
		case 'c', 'd', 'o', 'x':
			return regexPiece{}, regexErrorf(`the escape \%c is not supported`, c)
		}
	}
	if c >= utf8.RuneSelf {
		p.pos--
		return p.literalRune()
	}
	return p.literal(c), nil
}

// regexSedEscape maps sed's escapes for control characters.
func regexSedEscape(c byte) (byte, bool) {
	switch c {
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case 'a':
		return '\a', true
	case 'f':
		return '\f', true
	case 'v':
		return '\v', true
	case 'r':
		return '\r', true
	}
	return 0, false
}

// literalRune takes one literal character at pos: a byte, or a whole UTF-8
// sequence, which Go then matches as the same bytes.
func (p *regexParser) literalRune() (regexPiece, error) {
	c := p.src[p.pos]
	if c < utf8.RuneSelf {
		p.pos++
		return p.literal(c), nil
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	if r == utf8.RuneError && n == 1 {
		// Go reads a stray byte of the input as U+FFFD too.
		return regexPiece{text: `\x{FFFD}`, simple: true}, nil
	}
	return regexPiece{text: string(r), simple: true}, nil
}

// literal is the piece matching the ASCII byte c.
func (p *regexParser) literal(c byte) regexPiece {
	word := regexIsWord(c)
	if p.o.icase && regexIsLetter(c) {
		lo, up := c|0x20, c&^0x20
		return regexPiece{text: "[" + string(up) + string(lo) + "]", simple: true, word: true}
	}
	return regexPiece{text: regexQuote(c), simple: true, word: word}
}

func regexIsLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func regexIsWord(c byte) bool {
	return regexIsLetter(c) || c >= '0' && c <= '9' || c == '_'
}

// regexQuote returns the RE2 text for the ASCII byte c alone.
func regexQuote(c byte) string {
	switch {
	case regexIsWord(c) || c == ' ':
		return string(c)
	case c > ' ' && c < 0x7f:
		return `\` + string(c)
	}
	return `\x{` + strconv.FormatUint(uint64(c), 16) + `}`
}

// regexClasses are the character classes of the C locale.
var regexClasses = map[string]func(c byte) bool{
	"alpha":  regexIsLetter,
	"digit":  func(c byte) bool { return c >= '0' && c <= '9' },
	"alnum":  func(c byte) bool { return regexIsLetter(c) || c >= '0' && c <= '9' },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"space":  func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"punct":  func(c byte) bool { return c > ' ' && c < 0x7f && !regexIsLetter(c) && !(c >= '0' && c <= '9') },
	"print":  func(c byte) bool { return c >= ' ' && c < 0x7f },
	"graph":  func(c byte) bool { return c > ' ' && c < 0x7f },
	"cntrl":  func(c byte) bool { return c < ' ' || c == 0x7f },
	"xdigit": func(c byte) bool { return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'f' },
}

// bracket parses a bracket expression at pos into a set of bytes and
// writes it as an RE2 class.
func (p *regexParser) bracket() (regexPiece, error) {
	p.pos++ // '['
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	if p.peek() == ':' {
		// "[:alpha:]" where "[[:alpha:]]" was meant.
		if end := strings.IndexByte(p.src[p.pos+1:], ']'); end > 0 && p.src[p.pos+end] == ':' {
			return regexPiece{}, regexErrorf("character class syntax is [[:space:]], not [:space:]")
		}
	}
	var set [256]bool
	var runes []rune // non-ASCII characters, matched as Go decodes them
	first := true
	for {
		if !p.more() {
			return regexPiece{}, regexErrorf(regexErrBracket)
		}
		if p.peek() == ']' && !first {
			p.pos++
			break
		}
		first = false
		lo, isChar, err := p.bracketElem(&set, &runes)
		if err != nil {
			return regexPiece{}, err
		}
		if !isChar {
			continue
		}
		// A range, unless '-' is last in the expression.
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, isChar, err := p.bracketElem(nil, &runes)
			if err != nil {
				return regexPiece{}, err
			}
			if !isChar || hi < lo {
				return regexPiece{}, regexErrorf(regexErrRange)
			}
			for c := lo; ; c++ {
				set[c] = true
				if c == hi {
					break
				}
			}
		}
	}
	if p.o.icase {
		for c := 'A'; c <= 'Z'; c++ {
			if set[c] || set[c|0x20] {
				set[c], set[c|0x20] = true, true
			}
		}
	}
	var b strings.Builder
	b.WriteByte('[')
	if neg {
		b.WriteByte('^')
	}
	word, empty := !neg, true
	for c := 0; c < 256; c++ {
		if !set[c] {
			continue
		}
		if c >= utf8.RuneSelf {
			// A byte of a UTF-8 sequence: its rune is in runes.
			continue
		}
		empty = false
		word = word && regexIsWord(byte(c))
		e := c
		for e+1 < utf8.RuneSelf && set[e+1] {
			e++
		}
		b.WriteString(regexQuote(byte(c)))
		if e > c {
			b.WriteByte('-')
			b.WriteString(regexQuote(byte(e)))
		}
		c = e
	}
	for _, r := range runes {
		empty, word = false, false
		b.WriteRune(r)
	}
	b.WriteByte(']')
	if empty {
		// Only bytes Go cannot see alone: match nothing.
		return regexPiece{text: `[^\x00-\x{10FFFF}]`, simple: true}, nil
	}
	return regexPiece{text: b.String(), simple: true, word: word}, nil
}

// bracketElem parses one element of a bracket expression. A single
// character (which may start or end a range) is returned with isChar set;
// a class or a non-ASCII character is added to set and runes directly
// (set is nil for the end of a range, which must be a character).
func (p *regexParser) bracketElem(set *[256]bool, runes *[]rune) (c byte, isChar bool, err error) {
	if p.at("[:") || p.at("[=") || p.at("[.") {
		kind := p.src[p.pos+1]
		end := strings.Index(p.src[p.pos+2:], string(kind)+"]")
		if end < 0 {
			return 0, false, regexErrorf(regexErrBracket)
		}
		name := p.src[p.pos+2 : p.pos+2+end]
		p.pos += 2 + end + 2
		switch kind {
		case ':':
			in, ok := regexClasses[name]
			if !ok {
				return 0, false, regexErrorf(regexErrClass)
			}
			if set == nil {
				return 0, false, regexErrorf(regexErrRange)
			}
			for c := 0; c < 256; c++ {
				if in(byte(c)) {
					set[c] = true
				}
			}
			return 0, false, nil
		default: // [=c=] and [.c.] name one character in the C locale
			if len(name) != 1 {
				return 0, false, regexErrorf("Invalid collation character")
			}
			c = name[0]
		}
	} else {
		c = p.src[p.pos]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(p.src[p.pos:])
			p.pos += n
			if r == utf8.RuneError && n == 1 {
				r = utf8.RuneError
			}
			if set == nil {
				return 0, false, regexErrorf("a range ending in a non-ASCII byte is not supported")
			}
			*runes = append(*runes, r)
			return 0, false, nil
		}
		p.pos++
	}
	if set != nil {
		set[c] = true
	}
	return c, true, nil
}

// regexMatcher decides whether a line matches a compiled pattern, running
// the regexp only when it must. Go's regexp has no DFA and costs around a
// microsecond a line, where the strings a pattern needs can be searched
// with bytes.Index at memory speed:
//
//   - A pattern made only of strings joined by ".*", maybe anchored, as
//     "ERROR.*timeout" or "^foo", is decided by searching the strings in
//     order (chain): the regexp never runs.
//   - Otherwise need, when set, is a string every match contains: a line
//     without it cannot match.
//
// A zero regexMatcher is not usable; see regexNewMatcher. It is safe for
// concurrent use, as is a regexp.
type regexMatcher struct {
	re         *regexp.Regexp
	chained    bool
	chain      []regexLit
	begin, end bool // chain is anchored at the start, the end
	need       regexLit
}

// regexLit is a string to search for; with fold, it is in lower case and
// matches ASCII letters of either case.
type regexLit struct {
	text []byte
	fold bool
}

func (l regexLit) index(b []byte) int {
	if l.fold {
		return grepFoldIndex(b, l.text)
	}
	return bytes.Index(b, l.text)
}

// regexNewMatcher analyses the RE2 pattern src, compiled as re.
func regexNewMatcher(src string, re *regexp.Regexp) *regexMatcher {
	m := &regexMatcher{re: re}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return m
	}
	parsed = parsed.Simplify()
	m.chain, m.begin, m.end, m.chained = regexChain(parsed)
	if r := regexRequiredOf(parsed); len(r.text) >= 2 {
		m.need = r
	}
	return m
}

// match reports whether b holds a match.
func (m *regexMatcher) match(b []byte) bool {
	if m.chained {
		return m.matchChain(b)
	}
	return m.mayMatch(b) && m.re.Match(b)
}

// mayMatch is false when b surely holds no match.
func (m *regexMatcher) mayMatch(b []byte) bool {
	return m.need.text == nil || m.need.index(b) >= 0
}

// matchChain finds the strings of the chain in order, each as early as it
// can be: if any placement works, this one does.
func (m *regexMatcher) matchChain(b []byte) bool {
	n := len(m.chain)
	if n == 0 {
		return !(m.begin && m.end) || len(b) == 0 // "^$" or always
	}
	pos := 0
	for i, l := range m.chain {
		switch {
		case i == n-1 && m.end:
			at := len(b) - len(l.text)
			if at < pos || l.index(b[at:]) != 0 {
				return false
			}
			return !(n == 1 && m.begin) || at == 0
		case i == 0 && m.begin:
			if len(b) < len(l.text) || l.index(b[:len(l.text)]) != 0 {
				return false
			}
			pos = len(l.text)
		default:
			j := l.index(b[pos:])
			if j < 0 {
				return false
			}
			pos += j + len(l.text)
		}
	}
	return true
}

// regexChain recognises a pattern made of strings joined by ".*", maybe
// with "^" and "$" at its ends. Letters are matched exactly, or all
// folded (-i). begin and end are set when the first and last strings are
// anchored; with no string at all, they are both set for "^$" (only the
// empty line matches) and both clear for a pattern that matches anything.
func regexChain(re *syntax.Regexp) (chain []regexLit, begin, end, ok bool) {
	items := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		items = re.Sub
	}
	hasBegin, hasEnd := false, false
	if len(items) > 0 && items[0].Op == syntax.OpBeginText {
		hasBegin, items = true, items[1:]
	}
	if len(items) > 0 && items[len(items)-1].Op == syntax.OpEndText {
		hasEnd, items = true, items[:len(items)-1]
	}
	var cur regexLit
	curLetters := false
	firstGap, lastGap := false, false // a ".*" before the first string, after the last
	for _, it := range items {
		switch {
		case it.Op == syntax.OpEmptyMatch:
		case it.Op == syntax.OpStar && (it.Sub[0].Op == syntax.OpAnyCharNotNL || it.Sub[0].Op == syntax.OpAnyChar):
			if cur.text != nil {
				chain = append(chain, cur)
				cur, curLetters = regexLit{}, false
			}
			if len(chain) == 0 {
				firstGap = true
			}
			lastGap = true
		default:
			l := regexRequiredOf(it)
			if l.text == nil || !regexExact(it) {
				return nil, false, false, false
			}
			letters := bytes.ContainsFunc(l.text, func(r rune) bool { return r < utf8.RuneSelf && regexIsLetter(byte(r)) })
			if cur.text != nil && l.fold != cur.fold && (l.fold && curLetters || !l.fold && letters) {
				return nil, false, false, false // "a[Bb]": some letters folded, some not
			}
			cur.text = append(cur.text, l.text...)
			cur.fold = cur.fold || l.fold
			curLetters = curLetters || letters
			lastGap = false
		}
	}
	if cur.text != nil {
		chain = append(chain, cur)
	}
	if len(chain) == 0 {
		empty := hasBegin && hasEnd && !firstGap
		return nil, empty, empty, true
	}
	return chain, hasBegin && !firstGap, hasEnd && !lastGap, true
}

// regexExact reports whether re matches exactly the string regexRequiredOf
// gives for it (a literal, or a class of one letter in two cases).
func regexExact(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return false
			}
		}
		return true
	case syntax.OpCharClass:
		_, ok := regexFoldPair(re.Rune)
		return ok
	}
	return false
}

// regexRequiredOf walks a parsed pattern: the longest required run of
// characters in a concatenation, looking through captures and repeats that
// must happen at least once. It returns a nil text when there is none.
func regexRequiredOf(re *syntax.Regexp) regexLit {
	switch re.Op {
	case syntax.OpLiteral:
		var b []byte
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return regexLit{}
			}
			b = append(b, byte(r))
		}
		if re.Flags&syntax.FoldCase != 0 {
			return regexLit{text: regexLower(b), fold: true}
		}
		return regexLit{text: b}
	case syntax.OpCharClass:
		if c, ok := regexFoldPair(re.Rune); ok {
			return regexLit{text: []byte{c}, fold: true}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return regexRequiredOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return regexRequiredOf(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literal runs join, folded if either is (a prefilter
		// may match more than the pattern); anything else ends a run.
		var best, cur regexLit
		flush := func() {
			if len(cur.text) > len(best.text) {
				best = cur
			}
			cur = regexLit{}
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral || sub.Op == syntax.OpCharClass {
				l := regexRequiredOf(sub)
				if l.text == nil {
					flush()
					continue
				}
				if l.fold || cur.fold {
					cur.text, l.text = regexLower(cur.text), regexLower(l.text)
				}
				cur.text = append(cur.text, l.text...)
				cur.fold = cur.fold || l.fold
				continue
			}
			flush()
			if l := regexRequiredOf(sub); len(l.text) > len(best.text) {
				best = l
			}
		}
		flush()
		return best
	}
	return regexLit{}
}

// regexLower turns the ASCII letters of b to lower case, in place.
func regexLower(b []byte) []byte {
	for i, c := range b {
		b[i] = grepLower[c]
	}
	return b
}

// regexFoldPair recognises the class [Aa] of one letter in both cases and
// returns the lower case letter.
func regexFoldPair(ranges []rune) (byte, bool) {
	if len(ranges) == 4 && ranges[0] == ranges[1] && ranges[2] == ranges[3] &&
		ranges[0] < utf8.RuneSelf && regexIsLetter(byte(ranges[0])) && ranges[2] == ranges[0]|0x20 {
		return byte(ranges[2]), true
	}
	return 0, false
}
