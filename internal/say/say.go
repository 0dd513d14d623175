// Package say holds small helpers for messages to people.
package say

import (
	"strings"
	"unicode/utf8"
)

// Plural returns word for one and word+"s" for any other n: "1 job",
// "2 jobs", "0 jobs".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// OneLine returns s with each newline turned into a space, so that a
// message of several lines (a program's stderr in an error) stays on one.
func OneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// Width is the columns help text fills: one less than the classic
// terminal's 80, so that a full line never makes the terminal wrap early.
const Width = 79

// Wrap breaks s into lines of at most width columns at its blanks (runs
// of spaces, tabs and newlines are one break). See Fill.
func Wrap(s string, width int) []string { return Fill(strings.Fields(s), width) }

// Fill joins words with single spaces into lines of at most width
// columns, a column being a rune. A word wider than width is never cut:
// it stands alone on a line that is too long. Fill(nil, n) is nil.
func Fill(words []string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0 // runes in line
	for _, w := range words {
		wn := utf8.RuneCountInString(w)
		if n > 0 && n+1+wn > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(w)
		n += wn
	}
	if n > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
