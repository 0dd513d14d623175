// Package visible makes text from a user safe to echo in a message to a
// terminal: control bytes in a file name or a command word (an escape
// sequence, a bell, a carriage return) would otherwise act on the terminal
// instead of being read.
package visible

import (
	"strings"
)

// Controls returns s with every ASCII control byte (0x00 to 0x1f, and 0x7f)
// written as an escape: \a \b \t \n \v \f \r, or \xNN for the others. Other
// bytes, backslashes and UTF-8 included, are kept as they are, so that
// ordinary names read as typed.
func Controls(s string) string {
	i := strings.IndexFunc(s, isControl)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for j := i; j < len(s); j++ {
		c := s[j]
		if c >= 0x20 && c != 0x7f {
			b.WriteByte(c)
			continue
		}
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
