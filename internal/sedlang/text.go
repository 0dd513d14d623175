package sedlang

import (
	"errors"

	"github.com/tpipe/tpipe/internal/posixre"
)

// textKind says what a piece of script text is, for the escapes in it.
type textKind uint8

const (
	textRegex  textKind = iota // a regex: unknown escapes keep their backslash
	textRepl                   // an s replacement: likewise, and & \ made by \x stay literal
	textBuffer                 // the text of a, i, c and the strings of y: \X is X
)

// errRecursiveC is GNU's complaint about "\c\" not followed by another
// backslash.
var errRecursiveC = errors.New(`recursive escaping after \c not allowed`)

// normalize turns sed's escapes in s into the bytes they stand for, as GNU
// does before anything else reads the text: \a \f \n \r \t \v, \dNNN,
// \oNNN and \xHH (a byte by its decimal, octal or hex code), and \cX (the
// control character CTRL-X). In a regex the byte made is then read as
// regex syntax, so \x2e is any character, as in GNU. Other escapes keep
// their backslash for the regex or replacement parser, except in a
// textBuffer, where the backslash goes. normalize does not keep s.
func normalize(s []byte, kind textKind) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		if ctl, ok := posixre.ControlEscape(s[i]); ok {
			out = append(out, ctl) // \a \f \n \r \t \v
			continue
		}
		switch d := s[i]; d {
		case '\n':
			out = append(out, '\n')
		case 'd', 'o', 'x':
			b, n := number(s[i+1:], d)
			i += n
			if n == 0 {
				b = d // no digits: the letter itself
			}
			if kind == textRepl && (b == '&' || b == '\\') {
				out = append(out, '\\')
			}
			out = append(out, b)
		case 'c':
			if i+1 == len(s) {
				// A lone \c at the end: the backslash is passed on and
				// the c is lost, as in GNU.
				if kind != textBuffer {
					out = append(out, '\\')
				}
				continue
			}
			i++
			x := s[i]
			if x == '\\' {
				if i+1 == len(s) || s[i+1] != '\\' {
					return nil, errRecursiveC
				}
				i++
			}
			out = append(out, upper(x)^0x40)
		default:
			if kind != textBuffer {
				out = append(out, '\\')
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// number reads the digits of a \d, \o or \x escape from s: as many as
// keep the value's range within a byte's (three decimal or octal digits,
// two hex ones). It returns the byte, its value wrapped as GNU's char
// assignment wraps it, and how many digits it read.
func number(s []byte, letter byte) (byte, int) {
	base := map[byte]int{'d': 10, 'o': 8, 'x': 16}[letter]
	n, read := 0, 0
	for max := 1; read < len(s) && max <= 255; max *= base {
		d := digitValue(s[read])
		if d < 0 || d >= base {
			break
		}
		n = n*base + d
		read++
	}
	return byte(n), read
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c - 'A' + 'a'
	}
	return c
}

// replacement cuts the text of an s replacement, its escapes already
// normalized, into parts as GNU does: each \N, & and case escape (\L \U \E
// \l \u) ends a part; another escaped character stands for itself. It
// returns the parts and the largest group they name (-1 for none).
func replacement(t []byte) (parts []replPart, maxGroup int) {
	maxGroup = -1
	conv, saved := caseAsIs, caseAsIs
	base := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			part := replPart{text: t[base:i:i], group: -1, conv: conv}
			conv = saved
			i++
			if i == len(t) {
				part.text = t[base:i] // a trailing backslash is itself
				parts = append(parts, part)
				return parts, maxGroup
			}
			switch d := t[i]; {
			case d >= '0' && d <= '9':
				part.group = int(d - '0')
				maxGroup = max(maxGroup, part.group)
			case d == 'L':
				conv, saved = caseLower, caseLower
			case d == 'U':
				conv, saved = caseUpper, caseUpper
			case d == 'E':
				conv, saved = caseAsIs, caseAsIs
			case d == 'l':
				saved = conv
				conv |= caseLowerFirst
			case d == 'u':
				saved = conv
				conv |= caseUpperFirst
			default:
				part.text = append(part.text, d)
			}
			parts = append(parts, part)
			base = i + 1
		case '&':
			parts = append(parts, replPart{text: t[base:i:i], group: 0, conv: conv})
			conv = saved
			base = i + 1
		}
	}
	if base < len(t) {
		parts = append(parts, replPart{text: t[base:], group: -1, conv: conv})
	}
	// Even a part that holds nothing is kept: it ends the wait of a \u
	// or \l for a group that turned out empty, as in GNU.
	return parts, maxGroup
}

// appendConv appends s to dst changed as conv says, in the C locale:
// ASCII letters only, other bytes as they are. (GNU sed 4.9 writes 0xFF
// for a byte >= 0x80 that it converts there, which loses the byte; issue
// 30 rules that quirk out.)
func appendConv(dst, s []byte, conv caseConv) []byte {
	if conv == caseAsIs || len(s) == 0 {
		return append(dst, s...)
	}
	if conv&caseOneShot != 0 {
		if conv&caseUpperFirst != 0 {
			dst = append(dst, upper(s[0]))
		} else {
			dst = append(dst, lower(s[0]))
		}
		s = s[1:]
		conv &^= caseOneShot
		if conv == caseAsIs {
			return append(dst, s...)
		}
	}
	for _, c := range s {
		if conv&caseUpper != 0 {
			c = upper(c)
		} else {
			c = lower(c)
		}
		dst = append(dst, c)
	}
	return dst
}
