// Package argv holds the two rules by which tpipe's job commands become
// argv words without a shell: Words splits a command's text, and
// Substitute puts file paths in place of $1, $2... Both keep a file name
// one word whatever it holds, so that a job named "a b; rm -rf ~" is one
// argument and never a command.
package argv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mattn/go-shellwords"
)

// Words splits a command's text into argv words with go-shellwords' rules
// (quotes and backslashes; no variables, no backquotes, never a shell).
// An unquoted ; & | < or > is an error: the text is one command.
func Words(text string) ([]string, error) {
	p := shellwords.NewParser()
	words, err := p.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%v (an unclosed quote?)", err)
	}
	if p.Position >= 0 && p.Position < len(text) {
		return nil, fmt.Errorf("unquoted %q: the command runs as argv words, never through a shell; quote it", text[p.Position])
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no command")
	}
	return words, nil
}

// Substitute returns words with $1..$9 and ${N} replaced by paths[N-1]. A
// reference past the last path, and a '$' followed by anything else, stay
// as they are. Each word stays one word whatever the paths hold, and a
// path is never substituted again.
func Substitute(words, paths []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if !strings.Contains(w, "$") {
			out[i] = w
			continue
		}
		var b strings.Builder
		for j := 0; j < len(w); {
			n, width := ref(w[j:])
			if width > 0 && n >= 1 && n <= len(paths) {
				b.WriteString(paths[n-1])
				j += width
				continue
			}
			b.WriteByte(w[j])
			j++
		}
		out[i] = b.String()
	}
	return out
}

// ref parses a reference at the start of s: $N (one digit) or ${N}; width
// is 0 when s does not start with one.
func ref(s string) (n, width int) {
	if len(s) < 2 || s[0] != '$' {
		return 0, 0
	}
	if s[1] >= '0' && s[1] <= '9' {
		return int(s[1] - '0'), 2
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 {
			return 0, 0
		}
		n, err := strconv.Atoi(s[2:end])
		if err != nil || n < 0 {
			return 0, 0
		}
		return n, end + 1
	}
	return 0, 0
}
