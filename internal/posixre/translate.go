package posixre

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Syntax is the dialect of a pattern.
type Syntax uint8

const (
	Basic    Syntax = iota // BRE: grep, grep -G, sed
	Extended               // ERE: grep -E, sed -E
)

// Flags change how a pattern is read.
type Flags uint8

const (
	// IgnoreCase folds ASCII letters: grep -i, sed's I flag.
	IgnoreCase Flags = 1 << iota
	// Sed reads the pattern as GNU sed does: its escapes for control
	// characters, its stricter syntax, and '.' matching a newline.
	Sed
	// BackRefs translates a back-reference \N into an empty group named
	// BackRefName(N) instead of refusing it, and \< and \> into empty
	// groups named WordStartName and WordEndName. RE2 cannot run the
	// result as meant; a backtracking matcher (internal/backtrack) reads
	// the markers from the parsed translation.
	BackRefs
	// Newline is the matching half of GNU's REG_NEWLINE (sed's M flag):
	// neither '.' nor a bracket expression that starts with '^' matches a
	// newline.
	Newline
	// Multiline is its other half: '^' and '$' also match after and
	// before each newline. (GNU sed -z keeps the first half of M only.)
	Multiline
	// Bytes reads the pattern as GNU does in the C locale, where every
	// byte is a character: a byte c >= 0x80 of the pattern stands for
	// itself alone, as the rune ByteRune(c), so that '.' or [^a] takes
	// one such byte and two different ones never match each other. The
	// text must then be read through Encode (see HasHigh).
	Bytes
)

// The names of the empty groups that stand for \< and \> in a
// translation made with BackRefs.
const (
	WordStartName = "tpipewordstart"
	WordEndName   = "tpipewordend"
)

// BackRefName is the name of the empty group that stands for the
// back-reference \n in a translation made with BackRefs.
func BackRefName(n int) string { return "tpipebackref" + strconv.Itoa(n) }

// Error is a pattern GNU rejects, or one that cannot be translated to RE2.
type Error struct {
	// Offset is the byte offset in the pattern where the problem was
	// found, or -1 when it is the pattern as a whole (too large for RE2
	// once translated).
	Offset int
	// Msg is GNU's message where GNU has one ("Unmatched ( or \(").
	Msg string
	// Backtrack is set when the pattern is valid for GNU but RE2 cannot
	// run it: a back-reference, or a \< or \> that is not next to a word
	// character. Translated with BackRefs, a backtracking matcher can.
	Backtrack bool
	// Unsupported marks a pattern GNU accepts that this package cannot
	// run on RE2 (a back-reference, a large interval): a caller may hand
	// the work to GNU's own tool instead of refusing it.
	Unsupported bool
}

// Error returns Msg alone, as GNU prints it; a caller that wants to point
// at the place uses Offset.
func (e *Error) Error() string { return e.Msg }

// Messages of GNU's regcomp, for the errors both dialects share.
const (
	errParen      = `Unmatched ( or \(`
	errRParen     = `Unmatched ) or \)`
	errBrace      = `Unmatched \{`
	errInterval   = `Invalid content of \{\}`
	errBracket    = `Unmatched [, [^, [:, [., or [=`
	errRange      = `Invalid range end`
	errClass      = `Invalid character class name`
	errTrailing   = `Trailing backslash`
	errTooBig     = `Regular expression too big`
	errBackref    = `back-references (\1 to \9) in a pattern are not supported`
	errBadBackref = `Invalid back reference`
	errWordEdge   = `\< and \> are supported only next to a word character`
	errPreceding  = `Invalid preceding regular expression`
)

// MaxRepeat is the largest count an interval may have. GNU allows up to
// 32767, RE2 only this much; a count between the two is an *Error here.
const MaxRepeat = 1000

// Translate returns the RE2 syntax of the POSIX pattern pat. The result is
// valid for regexp.Compile, which may still refuse it for its size.
func Translate(pat string, syn Syntax, fl Flags) (string, error) {
	p := &parser{src: pat, ere: syn == Extended, icase: fl&IgnoreCase != 0, sed: fl&Sed != 0,
		newline: fl&Newline != 0, backRefs: fl&BackRefs != 0, bytes: fl&Bytes != 0}
	var mode string
	if p.sed && !p.newline {
		mode += "s" // '.' takes the newlines of sed's pattern space
	}
	if fl&Multiline != 0 {
		mode += "m"
	}
	out, err := p.alternation(0)
	if err != nil {
		return "", err
	}
	if p.pos < len(p.src) {
		// Only a closing group can stop the top level early.
		return "", p.errorf(p.pos, errRParen)
	}
	if mode != "" {
		out = "(?" + mode + ")" + out
	}
	return out, nil
}

// Compile translates pat and compiles the translation.
func Compile(pat string, syn Syntax, fl Flags) (*regexp.Regexp, error) {
	return CompileAny([]string{pat}, syn, fl)
}

// CompileAny compiles one regexp that matches where any of pats does, as
// grep does with several patterns. Its String is the translation, which
// NewMatcher analyses.
func CompileAny(pats []string, syn Syntax, fl Flags) (*regexp.Regexp, error) {
	var alt strings.Builder
	for i, pat := range pats {
		src, err := Translate(pat, syn, fl)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			alt.WriteByte('|')
		}
		if len(pats) > 1 {
			src = "(?:" + src + ")"
		}
		alt.WriteString(src)
	}
	re, err := regexp.Compile(alt.String())
	if err != nil {
		// The translation is valid RE2: what fails is a limit, such as
		// the size of a pattern once its intervals are expanded.
		return nil, &Error{Offset: -1, Msg: strings.TrimPrefix(err.Error(), "error parsing regexp: "), Unsupported: true}
	}
	return re, nil
}

// IsLiteral reports whether pat has no special character in syn, so that
// it matches exactly its own bytes and can be searched as a string.
func IsLiteral(pat string, syn Syntax) bool {
	special := `\.[*^$`
	if syn == Extended {
		special = `\.[*^$+?{}()|`
	}
	return !strings.ContainsAny(pat, special)
}

// parser is the state of one translation. The grammar, with BRE's
// operators written as ERE's:
//
//	alternation = branch { "|" branch }
//	branch      = { piece }
//	piece       = atom { "*" | "+" | "?" | interval }
//	atom        = char | "." | bracket | "(" alternation ")" | anchor | escape
type parser struct {
	src     string
	pos     int
	ere     bool
	icase   bool
	sed     bool
	newline bool
	bytes   bool
	// backRefs marks back-references instead of refusing them (BackRefs);
	// opened counts the groups opened so far, which numbers them, and
	// closed has bit n set for each group n closed in the branch being
	// read or before its alternation, which a back-reference may name
	// (GNU's regcomp: (a)|b\1 is invalid); backRef records that one was
	// seen.
	backRefs bool
	opened   int
	closed   uint64
	backRef  bool
}

// unsupported returns an *Error, found at offset at, for a pattern GNU
// accepts and RE2 cannot run.
func (p *parser) unsupported(at int, format string, args ...any) *Error {
	e := p.errorf(at, format, args...)
	e.Unsupported = true
	return e
}

// errorf returns an *Error found at offset at of the pattern.
func (p *parser) errorf(at int, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Offset: at, Msg: format}
	}
	return &Error{Offset: at, Msg: fmt.Sprintf(format, args...)}
}

// wordEdgeError refuses a \< or \> at offset at that RE2's \b would not
// test the same; a backtracker can (Error.Backtrack).
func (p *parser) wordEdgeError(at int) *Error {
	return &Error{Offset: at, Msg: errWordEdge, Backtrack: true, Unsupported: true}
}

// frag is a translated piece with what \< and \> need to know of it.
type frag struct {
	text string
	// word is set when every string the piece matches is a non-empty run
	// of word characters.
	word bool
	// simple is set when a repetition operator can follow text directly.
	simple bool
	// repeated is set once an operator was applied (RE2 rejects a**).
	repeated bool
}

func (p *parser) more() bool { return p.pos < len(p.src) }

// peek returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// at reports whether the source continues with s.
func (p *parser) at(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

// atAlt reports whether an alternation operator comes next.
func (p *parser) atAlt() bool {
	if p.ere {
		return p.at("|")
	}
	return p.at(`\|`)
}

// atClose reports whether a group's closing parenthesis comes next, at
// depth (an unmatched ')' is literal in ERE).
func (p *parser) atClose(depth int) bool {
	if p.ere {
		return depth > 0 && p.at(")")
	}
	return p.at(`\)`)
}

// alternation = branch { "|" branch }
func (p *parser) alternation(depth int) (string, error) {
	var b strings.Builder
	before, all := p.closed, p.closed
	for {
		s, err := p.branch(depth)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		all |= p.closed
		if !p.atAlt() {
			p.closed = all
			return b.String(), nil
		}
		// A group of one branch is no group to the next one's
		// back-references.
		p.closed = before
		if p.ere {
			p.pos++
		} else {
			p.pos += 2
		}
		b.WriteByte('|')
	}
}

// branch = { piece }
func (p *parser) branch(depth int) (string, error) {
	var b strings.Builder
	start := true     // nothing yet in this branch but anchors
	anchored := false // a leading ^ was seen (a second one is literal in a BRE)
	var prev frag     // the last piece, for \>
	wantWord := -1    // the offset of a \< that waits for the next piece
	for p.more() && !p.atAlt() && !p.atClose(depth) {
		if p.at(`\)`) && !p.ere || p.at(")") && p.ere && p.sed {
			return "", p.errorf(p.pos, errRParen)
		}
		// Anchors.
		switch c := p.peek(); {
		case c == '^' && (p.ere || start && !anchored):
			p.pos++
			anchored = true
			if p.sed && p.ere && p.atRepeat() {
				return "", p.errorf(p.pos, errPreceding)
			}
			if !p.skipStrayRepeats() {
				b.WriteByte('^')
			}
			prev = frag{}
			continue
		case c == '$' && (p.ere || p.dollarEnds(depth)):
			p.pos++
			if p.sed && p.ere && p.atRepeat() {
				return "", p.errorf(p.pos, errPreceding)
			}
			if !p.skipStrayRepeats() {
				b.WriteByte('$')
			}
			prev = frag{}
			start = false
			continue
		case (p.at(`\<`) || p.at(`\>`)) && p.backRefs:
			// A backtracker tests word edges exactly, next to anything.
			name := WordEndName
			if p.at(`\<`) {
				name = WordStartName
			}
			p.pos += 2
			b.WriteString("(?P<" + name + ">)")
			continue
		case p.at(`\<`) || p.at(`\>`):
			if p.at(`\>`) && !prev.word {
				return "", p.wordEdgeError(p.pos)
			}
			if p.at(`\<`) {
				wantWord = p.pos
			}
			p.pos += 2
			b.WriteString(`\b`)
			continue
		}
		if start && p.ere && p.atRepeat() {
			// GNU grep ignores an ERE operator that has nothing to
			// repeat; GNU sed rejects it.
			if p.sed {
				return "", p.errorf(p.pos, errPreceding)
			}
			p.skipStrayRepeats()
			continue
		}
		pc, err := p.piece(depth)
		if err != nil {
			return "", err
		}
		if wantWord >= 0 && !pc.word {
			return "", p.wordEdgeError(wantWord)
		}
		wantWord = -1
		b.WriteString(pc.text)
		prev = pc
		start = false
	}
	if wantWord >= 0 {
		return "", p.wordEdgeError(wantWord)
	}
	return b.String(), nil
}

// dollarEnds reports whether a BRE '$' at pos is an anchor: it ends the
// pattern, a group or a branch.
func (p *parser) dollarEnds(depth int) bool {
	rest := p.src[p.pos+1:]
	return rest == "" || strings.HasPrefix(rest, `\|`) || (depth > 0 && strings.HasPrefix(rest, `\)`))
}

// atRepeat reports whether a repetition operator comes next.
func (p *parser) atRepeat() bool {
	if p.ere {
		switch p.peek() {
		case '*', '+', '?':
			return true
		case '{':
			// In sed, a '{' always opens an interval.
			_, _, _, ok, _ := p.interval(p.pos + 1)
			return ok || p.sed
		}
		return false
	}
	return p.at("*") || p.at(`\+`) || p.at(`\?`) || p.at(`\{`)
}

// skipStrayRepeats drops ERE operators that start a branch, where GNU
// matches them as if absent, or follow an anchor, which they make optional
// if one of them may repeat it zero times: it reports whether they do. In
// a BRE the caller's next piece takes a '*' there as literal instead.
func (p *parser) skipStrayRepeats() (optional bool) {
	for p.ere && p.atRepeat() {
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

// onlyRepeatsInGroup reports whether the group that starts at p.pos
// holds '*', '+' and '?' and nothing else ("(*)", "(+?)"; GNU takes
// "({1})" as a group that matches nothing).
func (p *parser) onlyRepeatsInGroup() bool {
	i := p.pos
	for i < len(p.src) {
		switch p.src[i] {
		case '*', '+', '?':
			i++
			continue
		}
		break
	}
	return i > p.pos && i < len(p.src) && p.src[i] == ')'
}

// piece = atom { repetition }
func (p *parser) piece(depth int) (frag, error) {
	pc, err := p.atom(depth)
	if err != nil {
		return pc, err
	}
	for p.more() {
		var op string
		least := 0 // the fewest times the operator repeats
		opAt := p.pos
		switch {
		case p.peek() == '*':
			op = "*"
			p.pos++
		case p.ere && (p.peek() == '+' || p.peek() == '?'):
			op = p.src[p.pos : p.pos+1]
			p.pos++
		case !p.ere && (p.at(`\+`) || p.at(`\?`)):
			op = p.src[p.pos+1 : p.pos+2]
			p.pos += 2
		case p.ere && p.peek() == '{':
			lo, hi, end, ok, err := p.interval(p.pos + 1)
			if err != nil {
				return pc, err
			}
			if !ok && p.sed {
				if end >= len(p.src) {
					return pc, p.errorf(p.pos, errBrace)
				}
				return pc, p.errorf(p.pos, errInterval)
			}
			if !ok {
				return pc, nil // a literal '{', the next atom
			}
			p.pos = end
			op, least = intervalOp(lo, hi), lo
		case !p.ere && p.at(`\{`):
			lo, hi, end, ok, err := p.interval(p.pos + 2)
			if err != nil {
				return pc, err
			}
			if !ok {
				if end >= len(p.src) {
					return pc, p.errorf(p.pos, errBrace)
				}
				return pc, p.errorf(p.pos, errInterval)
			}
			p.pos = end
			op, least = intervalOp(lo, hi), lo
		default:
			return pc, nil
		}
		if op == "+" {
			least = 1
		}
		if pc.repeated && p.sed && !p.ere && op[0] != '+' && op[0] != '?' {
			// GNU sed rejects a** and a*\{2\}, not a*\+.
			return pc, p.errorf(opAt, errPreceding)
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

func intervalOp(lo, hi int) string {
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
// ended first. err is an interval GNU rejects, found at p.pos, where the
// caller has left the opening brace.
func (p *parser) interval(i int) (lo, hi, end int, ok bool, err error) {
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
	if !p.ere {
		closer = `\}`
	}
	if !strings.HasPrefix(p.src[i:], closer) {
		return 0, 0, i, false, nil
	}
	end = i + len(closer)
	if !hasLo && !comma {
		return 0, 0, end, false, p.errorf(p.pos, errInterval)
	}
	if !hasLo {
		lo = 0
	}
	switch {
	case hi >= 0 && lo > hi:
		return 0, 0, end, false, p.errorf(p.pos, errInterval)
	case lo > 32767 || hi > 32767:
		return 0, 0, end, false, p.errorf(p.pos, errTooBig)
	case lo > MaxRepeat || hi > MaxRepeat:
		return 0, 0, end, false, p.unsupported(p.pos, "repetition count over %d is not supported", MaxRepeat)
	}
	return lo, hi, end, true, nil
}

// atom = char | "." | bracket | "(" alternation ")" | escape
func (p *parser) atom(depth int) (frag, error) {
	c := p.peek()
	switch {
	case c == '.':
		p.pos++
		return frag{text: ".", simple: true}, nil
	case c == '[':
		return p.bracket()
	case c == '(' && p.ere:
		p.pos++
		return p.group(depth, p.pos-1)
	case c == '\\':
		return p.escape(depth)
	case c == '{' && p.ere:
		// Not an interval (or atRepeat would have said so): literal.
		p.pos++
		return p.literal('{'), nil
	}
	// '*' at the start of a BRE branch lands here and is literal.
	return p.literalRune()
}

// group parses the rest of a group after its opening parenthesis, which
// is at open.
func (p *parser) group(depth, open int) (frag, error) {
	if p.ere && !p.sed && p.onlyRepeatsInGroup() {
		// "(*)": GNU drops a stray repetition at the start of a branch,
		// but a group of nothing else is an error there.
		return frag{}, p.errorf(open, errParen)
	}
	p.opened++
	n := p.opened
	inner, err := p.alternation(depth + 1)
	if err != nil {
		return frag{}, err
	}
	if !p.atClose(depth + 1) {
		return frag{}, p.errorf(open, errParen)
	}
	if p.ere {
		p.pos++
	} else {
		p.pos += 2
	}
	if n < 64 {
		p.closed |= 1 << n
	}
	return frag{text: "(" + inner + ")", simple: true}, nil
}

// escape parses a backslash sequence that is not an anchor or operator.
func (p *parser) escape(depth int) (frag, error) {
	at := p.pos
	if at+1 >= len(p.src) {
		return frag{}, p.errorf(at, errTrailing)
	}
	c := p.src[at+1]
	p.pos += 2
	switch c {
	case '(':
		if !p.ere {
			return p.group(depth, at)
		}
	case '{':
		// Only reached at the start of a BRE branch: literal for grep.
		if p.sed {
			return frag{}, p.errorf(at, errPreceding)
		}
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n := int(c - '0')
		if p.closed&(1<<n) == 0 {
			return frag{}, p.errorf(at, errBadBackref)
		}
		p.backRef = true
		if !p.backRefs {
			return frag{}, &Error{Offset: at, Msg: errBackref, Backtrack: true, Unsupported: true}
		}
		return frag{text: "(?P<" + BackRefName(n) + ">)", simple: true}, nil
	case 'w':
		return frag{text: `[0-9A-Z_a-z]`, simple: true, word: true}, nil
	case 'W':
		return frag{text: `[^0-9A-Z_a-z]`, simple: true}, nil
	case 's':
		return frag{text: `[\t-\r ]`, simple: true}, nil
	case 'S':
		return frag{text: `[^\t-\r ]`, simple: true}, nil
	case 'b':
		return frag{text: `\b`}, nil
	case 'B':
		return frag{text: `\B`}, nil
	case '`':
		return frag{text: `\A`}, nil
	case '\'':
		return frag{text: `\z`}, nil
	}
	if p.sed {
		if ctl, ok := ControlEscape(c); ok {
			return p.literal(ctl), nil
		}
		switch c {
		case 'c', 'd', 'o', 'x':
			return frag{}, p.unsupported(at, `the escape \%c is not supported`, c)
		}
	}
	if c >= utf8.RuneSelf {
		p.pos--
		return p.literalRune()
	}
	return p.literal(c), nil
}

// ControlEscape returns the control character that sed's escape \c stands
// for (\n, \t, \a, \f, \v, \r): in a pattern read with the Sed flag, and
// in sed's replacements and y command.
func ControlEscape(c byte) (byte, bool) {
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
func (p *parser) literalRune() (frag, error) {
	c := p.src[p.pos]
	if c < utf8.RuneSelf {
		p.pos++
		return p.literal(c), nil
	}
	if p.bytes {
		p.pos++
		return frag{text: quote(c), simple: true}, nil
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	if r == utf8.RuneError && n == 1 {
		// Go reads a stray byte of the input as U+FFFD too.
		return frag{text: `\x{FFFD}`, simple: true}, nil
	}
	return frag{text: string(r), simple: true}, nil
}

// literal is the piece matching the ASCII byte c.
func (p *parser) literal(c byte) frag {
	word := isWord(c)
	if p.icase && isLetter(c) {
		lo, up := c|0x20, c&^0x20
		return frag{text: "[" + string(up) + string(lo) + "]", simple: true, word: true}
	}
	return frag{text: quote(c), simple: true, word: word}
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func isWord(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_'
}

// quote returns the RE2 text for the ASCII byte c alone, or for a byte
// c >= 0x80 read with Bytes.
func quote(c byte) string {
	switch {
	case c >= utf8.RuneSelf:
		return `\x{` + strconv.FormatUint(uint64(ByteRune(c)), 16) + `}`
	case isWord(c) || c == ' ':
		return string(c)
	case c > ' ' && c < 0x7f:
		return `\` + string(c)
	}
	return `\x{` + strconv.FormatUint(uint64(c), 16) + `}`
}

// Class returns the test for the character class name ("alpha", "digit",
// ...) of the C locale, or nil if there is no such class. tr's [:name:]
// uses the same classes as bracket expressions.
func Class(name string) func(c byte) bool { return classes[name] }

// classes are the character classes of the C locale.
var classes = map[string]func(c byte) bool{
	"alpha":  isLetter,
	"digit":  func(c byte) bool { return c >= '0' && c <= '9' },
	"alnum":  func(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"space":  func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"punct":  func(c byte) bool { return c > ' ' && c < 0x7f && !isLetter(c) && !(c >= '0' && c <= '9') },
	"print":  func(c byte) bool { return c >= ' ' && c < 0x7f },
	"graph":  func(c byte) bool { return c > ' ' && c < 0x7f },
	"cntrl":  func(c byte) bool { return c < ' ' || c == 0x7f },
	"xdigit": func(c byte) bool { return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'f' },
}

// bracket parses a bracket expression at pos into a set of bytes and
// writes it as an RE2 class.
func (p *parser) bracket() (frag, error) {
	open := p.pos
	p.pos++ // '['
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	if p.peek() == ':' {
		// "[:alpha:]" where "[[:alpha:]]" was meant.
		if end := strings.IndexByte(p.src[p.pos+1:], ']'); end > 0 && p.src[p.pos+end] == ':' {
			return frag{}, p.errorf(open, "character class syntax is [[:space:]], not [:space:]")
		}
	}
	var set [256]bool
	var runes []rune // non-ASCII characters, matched as Go decodes them
	first := true
	for {
		if !p.more() {
			return frag{}, p.errorf(open, errBracket)
		}
		if p.peek() == ']' && !first {
			p.pos++
			break
		}
		first = false
		loAt := p.pos
		lo, isChar, err := p.bracketElem(&set, &runes)
		if err != nil {
			return frag{}, err
		}
		if !isChar {
			continue
		}
		// A range, unless '-' is last in the expression.
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, isChar, err := p.bracketElem(nil, &runes)
			if err != nil {
				return frag{}, err
			}
			if !isChar || hi < lo {
				return frag{}, p.errorf(loAt, errRange)
			}
			for c := lo; ; c++ {
				set[c] = true
				if c == hi {
					break
				}
			}
			// A range's end does not start another ("[1-3-5]").
			if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
				return frag{}, p.errorf(loAt, errRange)
			}
		}
	}
	if neg && p.newline {
		set['\n'] = true // a negated list never matches a newline
	}
	if p.icase {
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
		if c >= utf8.RuneSelf && !p.bytes {
			// A byte of a UTF-8 sequence: its rune is in runes.
			continue
		}
		empty = false
		word = word && isWord(byte(c))
		e := c
		// A range stays on its side of 0x80, where the runes jump.
		for e+1 < 256 && set[e+1] && (e+1 < utf8.RuneSelf) == (c < utf8.RuneSelf) {
			e++
		}
		b.WriteString(quote(byte(c)))
		if e > c {
			b.WriteByte('-')
			b.WriteString(quote(byte(e)))
		}
		c = e
	}
	for _, r := range runes {
		empty, word = false, false
		b.WriteRune(r)
	}
	b.WriteByte(']')
	if empty {
		// Only bytes Go cannot see alone (without Bytes): match nothing.
		return frag{text: `[^\x00-\x{10FFFF}]`, simple: true}, nil
	}
	return frag{text: b.String(), simple: true, word: word}, nil
}

// bracketElem parses one element of a bracket expression. A single
// character (which may start or end a range) is returned with isChar set;
// a class or a non-ASCII character is added to set and runes directly
// (set is nil for the end of a range, which must be a character).
func (p *parser) bracketElem(set *[256]bool, runes *[]rune) (c byte, isChar bool, err error) {
	at := p.pos
	if p.at("[:") || p.at("[=") || p.at("[.") {
		kind := p.src[p.pos+1]
		end := strings.Index(p.src[p.pos+2:], string(kind)+"]")
		if end < 0 {
			return 0, false, p.errorf(at, errBracket)
		}
		name := p.src[p.pos+2 : p.pos+2+end]
		p.pos += 2 + end + 2
		switch kind {
		case ':':
			in, ok := classes[name]
			if !ok {
				return 0, false, p.errorf(at, errClass)
			}
			if set == nil {
				return 0, false, p.errorf(at, errRange)
			}
			for c := 0; c < 256; c++ {
				if in(byte(c)) {
					set[c] = true
				}
			}
			return 0, false, nil
		default: // [=c=] and [.c.] name one character in the C locale
			if len(name) != 1 {
				return 0, false, p.errorf(at, "Invalid collation character")
			}
			c = name[0]
		}
	} else {
		c = p.src[p.pos]
		if c >= utf8.RuneSelf && !p.bytes {
			r, n := utf8.DecodeRuneInString(p.src[p.pos:])
			p.pos += n
			if r == utf8.RuneError && n == 1 {
				r = utf8.RuneError
			}
			if set == nil {
				return 0, false, p.unsupported(at, "a range ending in a non-ASCII byte is not supported")
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

// ByteRune is the rune that stands for the byte c >= 0x80 in a pattern
// translated with Bytes, and in a text read through Encode: U+0180 to
// U+01FF, two bytes of UTF-8 each, which no other byte turns into.
func ByteRune(c byte) rune { return 0x100 + rune(c) }

// RuneByte is the byte that the rune r stands for, if it is a ByteRune.
func RuneByte(r rune) (byte, bool) {
	if r >= 0x180 && r <= 0x1ff {
		return byte(r - 0x100), true
	}
	return 0, false
}

// HasHigh reports whether b holds a byte >= 0x80: a text without one
// reads the same through Encode, and is matched as it is.
func HasHigh(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// Encode appends src to dst as a pattern translated with Bytes reads it:
// each byte c >= 0x80 as the UTF-8 form of ByteRune(c), ASCII as it is.
// Offsets into the result go back to src with DecodeOffsets.
func Encode(dst, src []byte) []byte {
	for _, c := range src {
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			continue
		}
		// ByteRune(c) is 0x100+c: its lead byte is 0xC6 or 0xC7, its
		// second keeps the low six bits of c.
		dst = append(dst, 0xC6|c>>6&1, 0x80|c&0x3F)
	}
	return dst
}

// DecodeOffsets turns offsets into enc, a text Encode made, each at the
// start of a character or at the end, into offsets into its source, in
// place. Negative offsets (a group that matched nothing) stay. Offsets
// near each other, as the spans of successive matches and their groups
// are, cost the distance between them.
func DecodeOffsets(enc []byte, offs []int) {
	pos, high := 0, 0 // high counts the bytes >= 0x80 in enc[:pos]
	for i, off := range offs {
		if off < 0 {
			continue
		}
		for ; pos < off; pos++ {
			if enc[pos] >= utf8.RuneSelf {
				high++
			}
		}
		for ; pos > off; pos-- {
			if enc[pos-1] >= utf8.RuneSelf {
				high--
			}
		}
		offs[i] = off - high/2
	}
}
