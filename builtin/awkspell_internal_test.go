package builtin

import (
	"errors"
	"strings"
	"testing"

	"github.com/benhoyt/goawk/parser"
)

// A parse error in a program that spells a definition "func" names the
// line and column of the text as written, not as GoAWK was given it (with
// "function"): the byte there is the one GoAWK stopped at.
func TestAwkSpelledPositionPointsAtTheSameByte(t *testing.T) {
	for _, prog := range []string{
		`func f(,) { }`,
		`func f(a) { return a } func g(b) { return b + }`,
		"func f(a) {\n  x = (\n}",
		"BEGIN { x = 1 }\nfunc f(a) { return a }; func g(b) { return ) }",
		`func f(a) { return a } BEGIN { print f(1) ) }`,
	} {
		src, at := awkSpellFunction(prog)
		if len(at) == 0 {
			t.Fatalf("%q: no func written out", prog)
		}
		_, err := parser.ParseProgram([]byte(src), nil)
		var pe *parser.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%q: %v, want a parse error", prog, err)
		}
		col := awkSpelledPosition(src, at, pe.Position.Line, pe.Position.Column)
		was := byteAt(src, pe.Position.Line, pe.Position.Column)
		now := byteAt(prog, pe.Position.Line, col)
		if was != now {
			t.Errorf("%q: error at %d:%d of the text given GoAWK (%q), moved to column %d (%q)",
				prog, pe.Position.Line, pe.Position.Column, was, col, now)
		}
	}
	// A position within a "function" written out moves to its start.
	if got := awkSpelledPosition("function f", []int{0}, 1, 6); got != 1 {
		t.Errorf("column 6 of a function written out: %d, want 1", got)
	}
}

// byteAt returns the byte at line and 1-based column of text: '\n' just
// past a line's end.
func byteAt(text string, line, col int) byte {
	l := strings.Split(text, "\n")[line-1]
	if col-1 >= len(l) {
		return '\n'
	}
	return l[col-1]
}
