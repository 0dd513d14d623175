package merge

import (
	"fmt"

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
