package shell

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
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
	tAnd               // "&&"
	tOr                // "||"
	tWord              // a word
	tError             // the lexer stopped; err says why
)

type token struct {
	kind tokenKind
	off  int     // byte offset of the token's first byte
	op   RedirOp // tRedir

	word Word // tWord

	err *ParseError // tError
}

type lexer struct {
	src   string
	off   int
	lines []int // offset of the first byte of each line
}

func newLexer(src string) *lexer {
	lines := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &lexer{src: src, lines: lines}
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

// endsWord reports whether an unquoted, unescaped c ends a word.
func endsWord(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '|', ';', '&', '<', '>', '(', ')':
		return true
	}
	return false
}

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
//	operator = newline | "|" | ";" | "&&" | "||" | "<" | ">" | ">>" .  // and 2> 2>>, see word
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
			l.off = next + 1
			return token{kind: tOr, off: start}
		case '&':
			return l.fail(l.errorf(start, "`|&` is not supported (redirect standard error with 2> FILE)"))
		}
		l.off++
		return token{kind: tPipe, off: start}
	case '&':
		switch c1 {
		case '&':
			l.off = next + 1
			return token{kind: tAnd, off: start}
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

// word lexes one word. A word with nothing to expand gets its Value
// here, after quote removal; one with a parameter, a pattern, braces or a
// leading tilde is also parsed by mvdan.cc/sh's syntax package, and the
// Expander expands it when its command runs.
//
//	word    = part { part } .
//	part    = plain | escaped | single | double | param | ansi .
//	plain   = any byte but blank, newline, "|;&<>()", quote, "\\", "`" .
//	escaped = "\\" byte .                       // the byte, literally
//	single  = "'" { byte but "'" } "'" .        // literal, backslash too
//	double  = `"` { dbyte | "\\" ( `"` | "\\" | "$" | "`" | newline ) | param } `"` .
//	param   = "$" ( name | special ) | "${" ... "}" | "$((" ... "))" .
//	ansi    = "$'" { byte | "\\" byte } "'" .    // bash's ANSI-C quoting
//
// "#" is plain inside a word; only where a token begins does it start a
// comment. An unsigned run of digits right before '<' or '>' would be a
// file descriptor number in a POSIX shell: "2" before '>' makes the
// operators 2> and 2>>, any other such number is an error.
func (l *lexer) word() token {
	start := l.off
	w := wordScan{}
	for l.off < len(l.src) {
		c := l.src[l.off]
		if endsWord(c) {
			break
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
		case '*', '?', '[', '{':
			w.expands = true // a pattern or braces; expansion decides
			w.buf = append(w.buf, c)
			l.off++
		case '~':
			if l.off == start {
				w.expands = true
			}
			w.buf = append(w.buf, c)
			l.off++
		default:
			w.buf = append(w.buf, c)
			l.off++
		}
	}
	word := Word{Pos: l.pos(start), Value: string(w.buf), Quoted: w.quoted, Raw: l.src[start:l.off]}
	if w.expands {
		sw, err := l.parseWord(start, l.off)
		if err != nil {
			return l.fail(err)
		}
		word.syntax = sw
	} else {
		word.Edge = !w.quoted && IsEdgeName(word.Value)
	}

	if next := l.byteAt(l.off); (next == '<' || next == '>') && !w.expands &&
		!w.quoted && isDigits(word.Value) {
		if word.Value == "2" && next == '>' {
			return l.output(start, l.off, RedirErr)
		}
		return l.fail(l.errorf(start, "`%s%c` is not supported (2> and 2>> are the only redirections that take a descriptor number)", word.Value, next))
	}
	return token{kind: tWord, off: start, word: word}
}

// quotesInside reports whether w has a quoted or escaped part.
func quotesInside(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// singleInside reports whether w has a single-quoted part.
func singleInside(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.SglQuoted); ok {
			return true
		}
	}
	return false
}

// wordScan is what word learns of a word on its way through it.
type wordScan struct {
	buf     []byte // the value with quotes removed and nothing expanded
	quoted  bool   // some part was quoted or escaped
	expands bool   // the word has something to expand
}

// parseWord parses src[start:end], a word the lexer has found the end of,
// with mvdan.cc/sh in bash's dialect, for the Expander. Its errors (a bad
// ${...}) are given the position in src.
func (l *lexer) parseWord(start, end int) (*syntax.Word, *ParseError) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	var words []*syntax.Word
	for w, err := range p.WordsSeq(strings.NewReader(l.src[start:end])) {
		if err != nil {
			var pe syntax.ParseError
			if errors.As(err, &pe) {
				off := start + min(int(pe.Pos.Offset()), end-start-1)
				for off > start && l.src[off] == '\n' {
					off-- // a position is on a byte of a line
				}
				return nil, &ParseError{Pos: l.pos(off), Msg: pe.Text, Incomplete: pe.Incomplete}
			}
			return nil, l.errorf(start, "%v", err)
		}
		words = append(words, w)
	}
	if len(words) != 1 {
		// The lexer and the library disagree on where the word ends; say
		// so rather than run something else than what was written.
		return nil, l.errorf(start, "cannot read this word (%d words where one was expected); quote it", len(words))
	}
	var err *ParseError
	for _, part := range words[0].Parts {
		if pe, ok := part.(*syntax.ParamExp); ok && pe.Exp != nil && pe.Exp.Word != nil && quotesInside(pe.Exp.Word) {
			// The library expands the word of ${X:-word} to a string and
			// then splits it, losing the quotes bash keeps.
			return nil, l.errorf(start+int(pe.Dollar.Offset()), "quotes inside an unquoted `${...}` are not kept: quote the whole of it instead (\"${NAME:-a b}\")")
		}
	}
	syntax.Walk(words[0], func(n syntax.Node) bool {
		if dq, ok := n.(*syntax.DblQuoted); ok && err == nil {
			for _, part := range dq.Parts {
				if pe, ok := part.(*syntax.ParamExp); ok && pe.Exp != nil && pe.Exp.Word != nil && singleInside(pe.Exp.Word) {
					err = l.errorf(start+int(pe.Dollar.Offset()), "single quotes inside `\"${...}\"` are text to bash but quotes to tpipe's expansion: leave them out")
				}
			}
		}
		pe, ok := n.(*syntax.ParamExp)
		if !ok || pe.Repl == nil || pe.Repl.Orig == nil || len(pe.Repl.Orig.Parts) == 0 || err != nil {
			return err == nil
		}
		if lit, ok := pe.Repl.Orig.Parts[0].(*syntax.Lit); ok && (strings.HasPrefix(lit.Value, "#") || strings.HasPrefix(lit.Value, "%")) {
			// The library would take the anchor for a byte of the
			// pattern and replace nothing.
			err = l.errorf(start+int(pe.Dollar.Offset()), "`${NAME/%c...}` (a replacement anchored at the start or end) is not supported: use ${NAME#PATTERN} or ${NAME%%PATTERN} and join the new text", lit.Value[0])
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return words[0], nil
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
func (l *lexer) double(w *wordScan) *ParseError {
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

// dollar lexes a part that begins with '$' at l.off: it finds where the
// part ends and marks the word as one to expand. Command substitution is
// rejected: tpipe runs no command to make a word.
func (l *lexer) dollar(w *wordScan, inDouble bool) *ParseError {
	at := l.off
	next := l.skip(at + 1)
	switch c := l.byteAt(next); {
	case c == '(':
		if l.byteAt(l.skip(next+1)) != '(' {
			return l.errorf(at, "`$(` (command substitution) is not supported (tpipe runs no command to make a word)")
		}
		end, err := l.arith(at, next+2)
		if err != nil {
			return err
		}
		w.buf = append(w.buf, l.src[at:end]...)
		l.off = end
	case c == '{':
		end, err := l.braced(at, next+1)
		if err != nil {
			return err
		}
		w.buf = append(w.buf, l.src[at:end]...)
		l.off = end
	case c == '\'' && !inDouble:
		// $'...': backslash escapes as in C, expanded by the library.
		i := next + 1
		for ; i < len(l.src) && l.src[i] != '\''; i++ {
			if l.src[i] == '\\' {
				i++
			}
		}
		if i >= len(l.src) {
			return l.incomplete(at, "unterminated `$'`")
		}
		w.quoted = true
		w.buf = append(w.buf, l.src[next+1:i]...)
		l.off = i + 1
	case c == '"' && !inDouble:
		// $"..." is a double-quoted string (translated in other locales).
		l.off = next
		if err := l.double(w); err != nil {
			return err
		}
	case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)) || '0' <= c && c <= '9' ||
		strings.IndexByte("?#@*$!-", c) >= 0:
		w.buf = append(w.buf, '$')
		l.off = at + 1
	default:
		// A '$' that starts nothing is a literal '$': a lone "$", "$/".
		w.buf = append(w.buf, '$')
		l.off = at + 1
		return nil
	}
	w.expands = true
	return nil
}

// braced finds the '}' that closes the ${ at offset at, whose body begins
// at off, and returns the offset just past it. Quotes, escapes and nested
// ${ and $(( inside are skipped whole.
func (l *lexer) braced(at, off int) (int, *ParseError) {
	// bash reads ${ followed by a blank as a command (bash 5.3's ${ cmd;}),
	// and ${} as nothing: both are bad substitutions here.
	switch c := l.byteAt(l.skip(off)); {
	case c == '_', c < utf8.RuneSelf && unicode.IsLetter(rune(c)), '0' <= c && c <= '9',
		strings.IndexByte("?#@*$!-", c) >= 0:
	default:
		end := off
		for end < len(l.src) && l.src[end] != '}' && l.src[end] != '\n' {
			end++
		}
		if end < len(l.src) && l.src[end] == '}' {
			end++
		}
		return 0, l.errorf(at, "`%s`: bad substitution", l.src[at:end])
	}
	for i := off; i < len(l.src); {
		switch c := l.src[i]; c {
		case '}':
			return i + 1, nil
		case '\\':
			i += 2
		case '\'':
			end := strings.IndexByte(l.src[i+1:], '\'')
			if end < 0 {
				return 0, l.incomplete(at, "unterminated `${`")
			}
			i += end + 2
		case '"':
			save := l.off
			l.off = i
			err := l.double(&wordScan{})
			i, l.off = l.off, save
			if err != nil {
				return 0, err
			}
		case '`':
			return 0, l.backquote(i)
		case '$':
			save := l.off
			l.off = i
			err := l.dollar(&wordScan{}, false)
			i, l.off = l.off, save
			if err != nil {
				return 0, err
			}
		default:
			i++
		}
	}
	return 0, l.incomplete(at, "unterminated `${`")
}

// arith finds the "))" that closes the $(( at offset at, whose expression
// begins at off, and returns the offset just past it.
func (l *lexer) arith(at, off int) (int, *ParseError) {
	depth := 0
	for i := off; i < len(l.src); i++ {
		switch l.src[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			if l.byteAt(i+1) == ')' {
				return i + 2, nil
			}
			return 0, l.errorf(at, "`$((` without its `))`")
		case '`':
			return 0, l.backquote(i)
		}
	}
	return 0, l.incomplete(at, "unterminated `$((`")
}
