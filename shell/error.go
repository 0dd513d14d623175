package shell

import (
	"strings"

	"github.com/tpipe/tpipe/internal/visible"
)

// ParseError is the error Parse returns: what is wrong and where. Parse
// stops at the first error, so there is at most one per call.
type ParseError struct {
	Pos Pos    // always the position of a byte of the source
	Msg string // lowercase, without the position

	// Incomplete reports that the text ended too early and more input
	// could complete it: an unterminated quote or ${, a '|' with no
	// command after it, or a backslash (or backslash-newline) at the very
	// end. An interactive caller prints a continuation prompt, appends the
	// next line and parses again instead of reporting the error.
	Incomplete bool
}

// Error returns the position and the message, for example
// "1:6: unterminated single quote".
func (e *ParseError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Caret returns the source line that holds e.Pos with a caret under the
// offending byte (see Pos.Caret).
func (e *ParseError) Caret(src string) string { return e.Pos.Caret(src) }

// Caret returns two lines for a terminal, without a final newline: the
// line of src that holds p, and a caret under the byte at p.
//
//	cat x | | wc
//	        ^
//
// src must be the text that was given to Parse. Tabs in the line are kept
// in the caret line and every other rune becomes one space, so the caret
// lines up when the terminal shows each rune in one cell; other control
// bytes are shown escaped (package visible), with as many spaces under
// them as the escape is long. Errors found
// after parsing (a named edge with two writers) point at a word this way.
func (p Pos) Caret(src string) string {
	line := ""
	if p.Line >= 1 {
		rest := src
		for i := 1; i < p.Line && rest != ""; i++ {
			nl := strings.IndexByte(rest, '\n')
			if nl < 0 {
				rest = ""
				break
			}
			rest = rest[nl+1:]
		}
		line, _, _ = strings.Cut(rest, "\n")
	}
	line = strings.TrimSuffix(line, "\r")
	col := min(max(p.Col-1, 0), len(line))

	var b strings.Builder
	for i, part := range strings.Split(line, "\t") {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(visible.Controls(part))
	}
	b.WriteByte('\n')
	for _, r := range line[:col] {
		switch {
		case r == '\t':
			b.WriteByte('\t')
		case r < 0x20 || r == 0x7f:
			b.WriteString(strings.Repeat(" ", len(visible.Controls(string(r)))))
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	return b.String()
}
