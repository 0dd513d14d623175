package pmjq1

import (
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/internal/argv"
)

// Marks that stand for a {{...}} action while the command is split into
// words: characters of Unicode's private use area, which no shell rule
// treats specially and no real command line holds.
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

// SplitTemplate splits a command template into word templates, with the
// word rules of go-shellwords (quotes, backslashes; no variables, no
// backquotes: never a shell). A {{...}} action stays within one word even
// where it holds blanks or quotes, so `cat {{.Input 0}}` is two words and
// its second is expanded as one argument whatever the file name holds.
func SplitTemplate(text string) ([]string, error) {
	if strings.ContainsRune(text, markOpen) || strings.ContainsRune(text, markClose) {
		return nil, fmt.Errorf("command template holds a character of Unicode's private use area (U+E000 or U+E001)")
	}
	var actions []string
	var b strings.Builder
	for rest := text; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("command template: %q has no closing }}", rest[i:])
		}
		b.WriteString(rest[:i])
		fmt.Fprintf(&b, "%c%d%c", markOpen, len(actions), markClose)
		actions = append(actions, rest[i:i+j+2])
		rest = rest[i+j+2:]
	}
	words, err := argv.Words(b.String())
	if err != nil {
		return nil, fmt.Errorf("command template: %v", err)
	}
	for i, w := range words {
		words[i] = restore(w, actions)
	}
	return words, nil
}

// restore puts the actions back in place of their marks.
func restore(w string, actions []string) string {
	if !strings.ContainsRune(w, markOpen) {
		return w
	}
	var b strings.Builder
	for {
		i := strings.IndexRune(w, markOpen)
		if i < 0 {
			b.WriteString(w)
			return b.String()
		}
		j := strings.IndexRune(w[i:], markClose)
		var n int
		fmt.Sscanf(w[i+len(string(markOpen)):i+j], "%d", &n)
		b.WriteString(w[:i])
		b.WriteString(actions[n])
		w = w[i+j+len(string(markClose)):]
	}
}
