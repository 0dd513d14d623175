package shell

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer is pulled by the parser one token at a time (next). It keeps
// no state between tokens except its offset, so the parser's one token of
// lookahead is all the buffering there is.

type tokenKind int

const (
	tEOF     tokenKind = iota
	tNewline           // "\n"
	tPipe              // "|"
	tSemi              // ";"
	tRedir             // one of the RedirOp operators
	tWord              // a word, already split into fields
	tError             // the lexer stopped; err says why
)

type token struct {
	kind tokenKind
	off  int     // byte offset of the token's first byte
	op   RedirOp // tRedir

	// fields are the Words of a tWord after quote removal and expansion.
	// A word made only of expansions that came out empty has no fields.
	fields []Word

	err *ParseError // tError
}

type lexer struct {
	src    string
	off    int
	lines  []int // offset of the first byte of each line
	getenv func(string) string
}

func newLexer(src string, getenv func(string) string) *lexer {
	lines := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &lexer{src: src, lines: lines, getenv: getenv}
}

// pos turns a byte offset into a Pos.
func (l *lexer) pos(off int) Pos {
	i := sort.Search(len(l.lines), func(i int) bool { return l.lines[i] > off }) - 1
	return Pos{Line: i + 1, Col: off - l.lines[i] + 1}
}

func (l *lexer) errorf(off int, format string, args ...any) *ParseError {
	return &ParseError{Pos: l.pos(off), Msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) incomplete(off int, msg string) *ParseError {
	return &ParseError{Pos: l.pos(off), Msg: msg, Incomplete: true}
}

// byteAt returns the byte at offset off, or 0 past the end. NUL is an
// ordinary word byte, so callers only compare the result with operators.
func (l *lexer) byteAt(off int) byte {
	if off < len(l.src) {
		return l.src[off]
	}
	return 0
}

// skip returns off moved past any line continuations that begin there.
// A POSIX shell removes them before it splits the input into tokens, so
// they may stand inside an operator (">\\\n>" is ">>") or a name; the
// lexer looks through them wherever it looks ahead.
func (l *lexer) skip(off int) int {
	for l.byteAt(off) == '\\' && l.byteAt(off+1) == '\n' {
		off += 2
	}
	return off
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// isFieldSep reports whether c separates fields in the value of an
// unquoted expansion (go-shellwords' set: blanks and newline).
func isFieldSep(c byte) bool { return isBlank(c) || c == '\n' }

// endsWord reports whether an unquoted, unescaped c ends a word.
func endsWord(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '|', ';', '&', '<', '>', '(', ')':
		return true
	}
	return false
}

const sequenceHint = "tpipe runs pipelines; use a newline or ';' to run one after another"

// processSubstHint is what to write instead of <(CMD) or >(CMD): a
// named edge, which tpipe has for exactly this.
const processSubstHint = "send the command's output to a named edge and read the edge instead: CMD > @a; ... @a"

// next returns the next token, skipping blanks, line continuations and
// comments before it.
//
//	blank        = " " | "\t" | "\r" .
//	continuation = "\\" newline .        // removed; must not end the input
//	comment      = "#" { not newline } . // only where a token may begin
func (l *lexer) next() token {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case isBlank(c):
			l.off++
		case c == '\\' && l.byteAt(l.off+1) == '\n':
			if l.off+2 == len(l.src) {
				return l.fail(l.continuationAtEOF())
			}
			l.off += 2
		case c == '#':
			if nl := strings.IndexByte(l.src[l.off:], '\n'); nl >= 0 {
				l.off += nl
			} else {
				l.off = len(l.src)
			}
		default:
			return l.token()
		}
	}
	return token{kind: tEOF, off: len(l.src)}
}

// token lexes the operator or word that begins at l.off.
//
//	operator = newline | "|" | ";" | "<" | ">" | ">>" .  // and 2> 2>>, see word
//
// Operators of the POSIX shell that tpipe does not have are errors here,
// so that they are never taken for words or for two shorter operators
// ("&&" is not "&" twice, "<<" is not "<" twice).
func (l *lexer) token() token {
	start := l.off
	next := l.skip(start + 1)
	c, c1 := l.src[start], l.byteAt(next)
	switch c {
	case '\n':
		l.off++
		return token{kind: tNewline, off: start}
	case ';':
		l.off++
		return token{kind: tSemi, off: start}
	case '|':
		switch c1 {
		case '|':
			return l.fail(l.errorf(start, "`||` is not supported (%s)", sequenceHint))
		case '&':
			return l.fail(l.errorf(start, "`|&` is not supported (redirect standard error with 2> FILE)"))
		}
		l.off++
		return token{kind: tPipe, off: start}
	case '&':
		switch c1 {
		case '&':
			return l.fail(l.errorf(start, "`&&` is not supported (%s)", sequenceHint))
		case '>':
			return l.fail(l.errorf(start, "`&>` is not supported (redirect each stream on its own with > FILE and 2> FILE)"))
		}
		return l.fail(l.errorf(start, "`&` is not supported (tpipe has no background jobs; quote it to use it as text)"))
	case '(':
		return l.fail(l.errorf(start, "`(` is not supported (tpipe has no subshells or grouping; quote it to use it as text)"))
	case ')':
		return l.fail(l.errorf(start, "`)` is not supported (tpipe has no subshells or grouping; quote it to use it as text)"))
	case '<':
		switch c1 {
		case '(':
			return l.fail(l.errorf(start, "`<(` (process substitution) is not supported (%s)", processSubstHint))
		case '<':
			if l.byteAt(l.skip(next+1)) == '<' {
				return l.fail(l.errorf(start, "`<<<` (here-string) is not supported"))
			}
			return l.fail(l.errorf(start, "`<<` (here-document) is not supported"))
		case '>', '&':
			return l.fail(l.errorf(start, "`<%c` is not supported", c1))
		}
		l.off++
		return token{kind: tRedir, off: start, op: RedirIn}
	case '>':
		if c1 == '(' {
			return l.fail(l.errorf(start, "`>(` (process substitution) is not supported (read the edge a command writes instead: ... > @a; CMD @a)"))
		}
		return l.output(start, start, RedirOut)
	}
	return l.word()
}

func (l *lexer) fail(err *ParseError) token {
	return token{kind: tError, off: l.off, err: err}
}

// output lexes an output redirection whose '>' is at gt; start is where
// the operator began (the '2' of "2>"). op is RedirOut or RedirErr.
//
//	output = [ "2" ] ">" [ ">" ] .
func (l *lexer) output(start, gt int, op RedirOp) token {
	end := gt + 1
	if next := l.skip(end); l.byteAt(next) == '>' {
		end = next + 1
		if op == RedirOut {
			op = RedirAppend
		} else {
			op = RedirErrAppend
		}
	}
	switch next := l.skip(end); l.byteAt(next) {
	case '&':
		// Show the whole duplication, "2>&1" or ">&-", not just ">&".
		j := next + 1
		for j < len(l.src) && '0' <= l.src[j] && l.src[j] <= '9' {
			j++
		}
		if j == next+1 && l.byteAt(j) == '-' {
			j++
		}
		return l.fail(l.errorf(start, "`%s&%s` is not supported (tpipe keeps standard output and standard error apart; send each to a file with > and 2>)", op, l.src[next+1:j]))
	case '|':
		if op == RedirOut || op == RedirErr {
			return l.fail(l.errorf(start, "`%s|` is not supported", op))
		}
	}
	l.off = end
	return token{kind: tRedir, off: start, op: op}
}

// word lexes one word and expands it into fields.
//
//	word    = part { part } .
//	part    = plain | escaped | single | double | param .
//	plain   = any byte but blank, newline, "|;&<>()", quote, "\\", "`", "$" .
//	escaped = "\\" byte .                       // the byte, literally
//	single  = "'" { byte but "'" } "'" .        // literal, backslash too
//	double  = `"` { dbyte | "\\" ( `"` | "\\" | "$" | "`" | newline ) | param } `"` .
//	param   = "$" name | "${" name "}" .        // only with Getenv; else "$" is plain
//	name    = ( letter | digit | "_" ) { letter | digit | "_" } .
//
// "#" is plain inside a word; only where a token begins does it start a
// comment. An unsigned run of digits right before '<' or '>' would be a
// file descriptor number in a POSIX shell: "2" before '>' makes the
// operators 2> and 2>>, any other such number is an error.
func (l *lexer) word() token {
	start := l.off
	w := fieldBuilder{l: l, start: start}
	for l.off < len(l.src) {
		c := l.src[l.off]
		if endsWord(c) {
			break
		}
		if c != '\\' || l.byteAt(l.off+1) != '\n' { // a continuation is no part
			w.mark(l.off)
		}
		switch c {
		case '\\':
			switch {
			case l.off+1 == len(l.src):
				return l.fail(l.incomplete(l.off, "backslash at end of input"))
			case l.src[l.off+1] == '\n':
				if l.off+2 == len(l.src) {
					return l.fail(l.continuationAtEOF())
				}
				l.off += 2
			default:
				w.quoted = true
				w.buf = append(w.buf, l.src[l.off+1])
				l.off += 2
			}
		case '\'':
			end := strings.IndexByte(l.src[l.off+1:], '\'')
			if end < 0 {
				return l.fail(l.incomplete(l.off, "unterminated single quote"))
			}
			w.quoted = true
			w.buf = append(w.buf, l.src[l.off+1:l.off+1+end]...)
			l.off += end + 2
		case '"':
			if err := l.double(&w); err != nil {
				return l.fail(err)
			}
		case '`':
			return l.fail(l.backquote(l.off))
		case '$':
			if err := l.dollar(&w, false); err != nil {
				return l.fail(err)
			}
		default:
			w.buf = append(w.buf, c)
			l.off++
		}
	}
	fields := w.finish()

	if next := l.byteAt(l.off); (next == '<' || next == '>') && !w.expanded &&
		len(fields) == 1 && !fields[0].Quoted && isDigits(fields[0].Value) {
		if fields[0].Value == "2" && next == '>' {
			return l.output(start, l.off, RedirErr)
		}
		return l.fail(l.errorf(start, "`%s%c` is not supported (2> and 2>> are the only redirections that take a descriptor number)", fields[0].Value, next))
	}
	return token{kind: tWord, off: start, fields: fields}
}

// continuationAtEOF is the error for a backslash-newline that ends the
// input. A script rarely ends that way on purpose, and an interactive
// caller that appends each line with its newline needs Incomplete here to
// ask for the next line.
func (l *lexer) continuationAtEOF() *ParseError {
	return l.incomplete(l.off, "line continuation at end of input")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || '9' < s[i] {
			return false
		}
	}
	return s != ""
}

func (l *lexer) backquote(off int) *ParseError {
	return l.errorf(off, "backquote (command substitution) is not supported")
}

// double lexes a double-quoted part beginning at l.off. Backslash escapes
// only the bytes that are special inside double quotes and newline;
// before any other byte it stays, as in a POSIX shell ("\a" is \a).
func (l *lexer) double(w *fieldBuilder) *ParseError {
	open := l.off
	w.quoted = true
	l.off++
	for l.off < len(l.src) {
		switch c := l.src[l.off]; c {
		case '"':
			l.off++
			return nil
		case '\\':
			switch n := l.byteAt(l.off + 1); n {
			case '"', '\\', '$', '`':
				w.buf = append(w.buf, n)
				l.off += 2
			case '\n':
				l.off += 2
			default:
				// Also at the end of the input: the quote is what is
				// left open, so that is the error reported below.
				w.buf = append(w.buf, '\\')
				l.off++
			}
		case '`':
			return l.backquote(l.off)
		case '$':
			if err := l.dollar(w, true); err != nil {
				return err
			}
		default:
			w.buf = append(w.buf, c)
			l.off++
		}
	}
	return l.incomplete(open, "unterminated double quote")
}

// dollar lexes a part that begins with '$' at l.off. Command substitution
// and the quoting forms $'...' and $"..." are rejected whatever Getenv is:
// taking them literally would silently mean something other than in the
// shell the user knows.
func (l *lexer) dollar(w *fieldBuilder, inDouble bool) *ParseError {
	at := l.off
	next := l.skip(at + 1)
	switch l.byteAt(next) {
	case '(':
		if l.byteAt(l.skip(next+1)) == '(' {
			return l.errorf(at, "`$((` (arithmetic expansion) is not supported")
		}
		return l.errorf(at, "`$(` (command substitution) is not supported")
	case '\'':
		if !inDouble {
			return l.errorf(at, "`$'` (ANSI-C quoting) is not supported")
		}
	case '"':
		if !inDouble {
			return l.errorf(at, "`$\"` (locale quoting) is not supported")
		}
	}
	if l.getenv == nil {
		w.buf = append(w.buf, '$')
		l.off++
		return nil
	}

	var name string
	if l.byteAt(next) == '{' {
		var end int
		name, end = l.name(next + 1)
		end = l.skip(end)
		switch {
		case end == len(l.src):
			return l.incomplete(at, "unterminated `${`")
		case name == "" || l.src[end] != '}':
			return l.errorf(at, "bad substitution: only ${NAME} is supported")
		}
		l.off = end + 1
	} else {
		name, l.off = l.name(next)
		if name == "" {
			// A '$' that starts no name is a literal '$' (a lone "$",
			// "$-", "$$"), as in go-shellwords.
			w.buf = append(w.buf, '$')
			l.off = at + 1
			return nil
		}
	}

	w.expanded = true
	value := l.getenv(name)
	if inDouble {
		w.buf = append(w.buf, value...)
		return nil
	}
	// Unquoted, the value is split into fields on blanks and newlines and
	// is otherwise taken literally: quotes, '$' and operators in it are
	// ordinary bytes.
	for i := 0; i < len(value); i++ {
		if isFieldSep(value[i]) {
			w.split(at)
			continue
		}
		w.fresh = false
		w.buf = append(w.buf, value[i])
	}
	return nil
}

// name returns the variable name that begins at off, looking through line
// continuations, and the offset just past its last rune. Like
// go-shellwords it takes Unicode letters and digits, and a name may begin
// with a digit ($1 is the variable "1").
func (l *lexer) name(off int) (string, int) {
	var b strings.Builder
	for {
		i := l.skip(off)
		r, size := utf8.DecodeRuneInString(l.src[i:])
		if size == 0 || (r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)) {
			return b.String(), off
		}
		b.WriteString(l.src[i : i+size])
		off = i + size
	}
}

// fieldBuilder collects the fields of one word. A field exists once any
// byte was added to it or any part of it was quoted, so a pair of empty
// quotes is an empty field but an unquoted $EMPTY is no field at all.
type fieldBuilder struct {
	l        *lexer
	fields   []Word
	buf      []byte
	start    int  // offset where the current field began
	fresh    bool // the field began at a split and has no part yet
	quoted   bool // the current field has a quoted or escaped part
	expanded bool // some $NAME was expanded in the word
}

// split ends the current field, if there is one, because an unquoted
// expansion at offset at produced a separator. The next field begins in
// that expansion, or at the next part of the source if the expansion
// has no more to give.
func (w *fieldBuilder) split(at int) {
	w.flush()
	w.start, w.fresh = at, true
}

// mark tells w that a part of the source begins at offset off.
func (w *fieldBuilder) mark(off int) {
	if w.fresh {
		w.start, w.fresh = off, false
	}
}

func (w *fieldBuilder) flush() {
	if len(w.buf) > 0 || w.quoted {
		v := string(w.buf)
		w.fields = append(w.fields, Word{Pos: w.l.pos(w.start), Value: v, Quoted: w.quoted, Edge: !w.quoted && IsEdgeName(v)})
	}
	w.buf = w.buf[:0]
	w.quoted = false
}

func (w *fieldBuilder) finish() []Word {
	w.flush()
	return w.fields
}
