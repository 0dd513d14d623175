// Package say holds small helpers for messages to people.
package say

import "strings"

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
