package builtin

// Fields read as numbers the way gawk reads them, in programs that run on
// GoAWK (outside the fast forms and the own interpreter). GoAWK turns a
// string into a number with its own reader, which takes a leading inf or
// nan and hex: "informed" and "INFO" are inf to it, "Nancy" nan, "0x1A"
// 26, where gawk reads 0 for all of them (only +inf, -inf, +nan and -nan
// spelled alone are special to gawk, and input is never hex). GoAWK's
// reader is internal to it, so the rewrite (awkRewrite) mends the places
// where a field becomes a number in plain sight in the program's text: a
// field that is an operand of arithmetic ($1 + 0, -$NF, s += $3), the
// argument of a math function (int($2)), and a printf or sprintf argument
// whose conversion is numeric (printf "%d", $1). Such a field is handed
// to __tpn, a Go function giving gawk's value (awkNumber, the fast forms'
// reader). What the text does not show stays GoAWK's: a field kept in a
// variable first, a comparison ($1 == 10 with $1 "0x0A"), the number
// printed for an infinity (docs/builtins.md).

import (
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// awkGawkNumber is __tpn: s read as a number as gawk reads input.
func awkGawkNumber(s string) float64 { return awkNumber([]byte(s)) }

// awkNumericFields returns the field references of toks that are read
// as numbers as the file's comment says: the index of each one's $
// token, mapped to the offset in src just past its last token.
func awkNumericFields(toks []awkToken, src string) map[int]int {
	wrap := map[int]int{}
	for i, t := range toks {
		if t.tok != lexer.DOLLAR {
			continue
		}
		end := awkFieldEnd(toks, i)
		if end < 0 {
			continue
		}
		var prev, next lexer.Token = lexer.NEWLINE, lexer.EOF
		if i > 0 {
			prev = toks[i-1].tok
		}
		if end+1 < len(toks) {
			next = toks[end+1].tok
		}
		if awkLvalueAround(prev, next) || prev == lexer.DOLLAR || prev == lexer.NOT {
			continue // assigned, or the operand of another $, or of !
		}
		if awkArithToken(prev) || awkArithToken(next) || awkMathArg(toks, i, end) {
			if at, ok := awkTokenEnd(toks[end], src); ok {
				wrap[i] = at
			}
		}
	}
	awkPrintfFields(toks, src, wrap)
	return wrap
}

// awkFieldEnd returns the index of the last token of the field reference
// whose $ is toks[i]: $ then a number, a name, a name with a subscript, a
// parenthesised expression or another field; -1 for anything else.
func awkFieldEnd(toks []awkToken, i int) int {
	j := i + 1
	if j >= len(toks) {
		return -1
	}
	switch toks[j].tok {
	case lexer.NUMBER:
		return j
	case lexer.NAME:
		if j+1 < len(toks) && toks[j+1].tok == lexer.LPAREN && toks[j+1].at == toks[j].at+len(toks[j].val) {
			return -1 // $f(x): a call
		}
		if j+1 < len(toks) && toks[j+1].tok == lexer.LBRACKET {
			return awkClose(toks, j+1, lexer.LBRACKET, lexer.RBRACKET)
		}
		return j
	case lexer.LPAREN:
		return awkClose(toks, j, lexer.LPAREN, lexer.RPAREN)
	case lexer.DOLLAR:
		return awkFieldEnd(toks, j)
	}
	return -1
}

// awkClose returns the index of the token closing the open one at
// toks[i], or -1.
func awkClose(toks []awkToken, i int, open, close lexer.Token) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].tok {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// awkTokenEnd is the offset in src just past t, for the tokens a field
// reference ends with.
func awkTokenEnd(t awkToken, src string) (int, bool) {
	switch t.tok {
	case lexer.NUMBER, lexer.NAME:
		if strings.HasPrefix(src[t.at:], t.val) {
			return t.at + len(t.val), true
		}
	case lexer.RPAREN, lexer.RBRACKET:
		return t.at + 1, true
	}
	return 0, false
}

// awkLvalueAround reports whether the tokens around an operand make it
// assigned to.
func awkLvalueAround(prev, next lexer.Token) bool {
	switch prev {
	case lexer.INCR, lexer.DECR, lexer.GETLINE:
		return true
	}
	switch next {
	case lexer.ASSIGN, lexer.ADD_ASSIGN, lexer.SUB_ASSIGN, lexer.MUL_ASSIGN, lexer.DIV_ASSIGN, lexer.MOD_ASSIGN,
		lexer.POW_ASSIGN, lexer.INCR, lexer.DECR:
		return true
	}
	return false
}

// awkArithToken reports whether tok takes numbers on both sides (or,
// before an operand, is a sign or an arithmetic assignment). A field is
// bound tighter than any of them, so one next to a field has it as
// operand.
func awkArithToken(tok lexer.Token) bool {
	switch tok {
	case lexer.ADD, lexer.SUB, lexer.MUL, lexer.DIV, lexer.MOD, lexer.POW,
		lexer.ADD_ASSIGN, lexer.SUB_ASSIGN, lexer.MUL_ASSIGN, lexer.DIV_ASSIGN, lexer.MOD_ASSIGN, lexer.POW_ASSIGN:
		return true
	}
	return false
}

// awkMathArg reports whether toks[i..end] is a whole argument of a
// function of numbers: int, sqrt, exp, log, sin, cos, atan2.
func awkMathArg(toks []awkToken, i, end int) bool {
	if end+1 >= len(toks) || toks[end+1].tok != lexer.RPAREN && toks[end+1].tok != lexer.COMMA {
		return false
	}
	open := i - 1
	if open >= 0 && toks[open].tok == lexer.COMMA {
		// atan2(y, $2): find atan2's parenthesis
		depth := 0
		for open--; open >= 0; open-- {
			if t := toks[open].tok; t == lexer.RPAREN || t == lexer.RBRACKET {
				depth++
			} else if t == lexer.LPAREN || t == lexer.LBRACKET {
				if depth == 0 {
					break
				}
				depth--
			}
		}
		if open < 1 || toks[open-1].tok != lexer.F_ATAN2 {
			return false
		}
	}
	if open < 1 || toks[open].tok != lexer.LPAREN {
		return false
	}
	switch toks[open-1].tok {
	case lexer.F_INT, lexer.F_SQRT, lexer.F_EXP, lexer.F_LOG, lexer.F_SIN, lexer.F_COS, lexer.F_ATAN2:
		return true
	}
	return false
}

// awkPrintfFields adds to wrap the fields that are whole arguments of a
// printf or sprintf whose format is a string literal and converts them
// as numbers (%d, %i, %o, %x, %X, %u, %e, %E, %f, %F, %g, %G, and a *
// width or precision).
func awkPrintfFields(toks []awkToken, src string, wrap map[int]int) {
	for i, t := range toks {
		if t.tok != lexer.PRINTF && t.tok != lexer.F_SPRINTF {
			continue
		}
		j := i + 1
		paren := j < len(toks) && toks[j].tok == lexer.LPAREN
		if paren {
			j++
		}
		if j+1 >= len(toks) || toks[j].tok != lexer.STRING || toks[j+1].tok != lexer.COMMA {
			continue // no arguments, or a format not all in one literal
		}
		numeric := awkPrintfNumeric(toks[j].val)
		arg, depth := -1, 0
		for k := j + 1; k < len(toks); k++ {
			tk := toks[k].tok
			if depth == 0 && tk == lexer.COMMA {
				arg++
				for k+1 < len(toks) && toks[k+1].tok == lexer.NEWLINE {
					k++
				}
				if k+1 < len(toks) && toks[k+1].tok == lexer.DOLLAR && arg < len(numeric) && numeric[arg] {
					end := awkFieldEnd(toks, k+1)
					if end > 0 && end+1 < len(toks) && awkEndsArg(toks[end+1].tok, paren) {
						if at, ok := awkTokenEnd(toks[end], src); ok {
							wrap[k+1] = at
						}
					}
				}
				continue
			}
			if depth == 0 && !paren && awkEndsArg(tk, false) {
				break
			}
			switch tk {
			case lexer.LPAREN, lexer.LBRACKET:
				depth++
			case lexer.RPAREN, lexer.RBRACKET:
				depth--
			}
			if depth < 0 {
				break
			}
		}
	}
}

// awkEndsArg reports whether tok ends a printf argument: a comma, or the
// end of the statement (paren false) or the closing parenthesis.
func awkEndsArg(tok lexer.Token, paren bool) bool {
	switch tok {
	case lexer.COMMA:
		return true
	case lexer.RPAREN:
		return paren
	case lexer.NEWLINE, lexer.SEMICOLON, lexer.RBRACE, lexer.GREATER, lexer.APPEND, lexer.PIPE, lexer.EOF:
		return !paren
	}
	return false
}

// awkPrintfNumeric reads a printf format and says, argument by argument,
// whether it is converted as a number.
func awkPrintfNumeric(format string) []bool {
	var numeric []bool
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("-+ #0'", format[i]) >= 0 {
			i++
		}
		for part := 0; part < 2 && i < len(format); part++ {
			if format[i] == '*' {
				numeric = append(numeric, true)
				i++
			}
			for i < len(format) && '0' <= format[i] && format[i] <= '9' {
				i++
			}
			if part == 0 && i < len(format) && format[i] == '.' {
				i++
			} else {
				break
			}
		}
		if i >= len(format) {
			break
		}
		switch format[i] {
		case '%':
		case 'd', 'i', 'o', 'x', 'X', 'u', 'e', 'E', 'f', 'F', 'g', 'G':
			numeric = append(numeric, true)
		default:
			numeric = append(numeric, false)
		}
	}
	return numeric
}
