package shell

import "strings"

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

// Caret returns two lines for a terminal, without a final newline: the
// source line that holds e.Pos, and a caret under the offending byte.
//
//	cat x | | wc
//	        ^
//
// src must be the text that was given to Parse. Tabs in the line are kept
// in the caret line and every other rune becomes one space, so the caret
// lines up when the terminal shows each rune in one cell.
func (e *ParseError) Caret(src string) string {
	line := ""
	if e.Pos.Line >= 1 {
		rest := src
		for i := 1; i < e.Pos.Line && rest != ""; i++ {
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
	col := min(max(e.Pos.Col-1, 0), len(line))

	var b strings.Builder
	b.WriteString(line)
	b.WriteByte('\n')
	for _, r := range line[:col] {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	return b.String()
}
