// Package vtscreen is the least of a terminal that tests need to see what
// a person would see: text, carriage returns, newlines, and the cursor
// and erase sequences of ECMA-48 that redrawing views use (cursor up,
// erase in display, erase in line). Other escape sequences are skipped.
// A newline also returns the carriage, as it does behind a tty with the
// default output mode (onlcr). The screen has no height: nothing scrolls
// away.
package vtscreen

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Screen is a terminal's contents. The zero Screen is an empty screen
// with the cursor at the top left. A Screen is not safe for concurrent
// use.
type Screen struct {
	lines    [][]rune
	row, col int
	pending  []byte // an escape sequence or a UTF-8 character cut by a write
}

// Write interprets p as output to the terminal; it never fails.
func (s *Screen) Write(p []byte) (int, error) {
	b := append(s.pending, p...)
	s.pending = nil
	for len(b) > 0 {
		switch c := b[0]; {
		case c == '\x1b':
			n, ok := s.escape(b)
			if !ok {
				s.pending = append([]byte(nil), b...)
				return len(p), nil
			}
			b = b[n:]
		case c == '\r':
			s.col = 0
			b = b[1:]
		case c == '\n':
			// As shown behind a tty that maps NL to CR-NL (onlcr, the
			// default).
			s.row, s.col = s.row+1, 0
			b = b[1:]
		case c == '\b':
			s.col = max(0, s.col-1)
			b = b[1:]
		case c < ' ' || c == 0x7f:
			b = b[1:]
		default:
			r, n := utf8.DecodeRune(b)
			if r == utf8.RuneError && !utf8.FullRune(b) {
				s.pending = append([]byte(nil), b...)
				return len(p), nil
			}
			s.put(r)
			b = b[n:]
		}
	}
	return len(p), nil
}

// escape interprets the escape sequence at the start of b and returns its
// length; ok is false when b ends inside it.
func (s *Screen) escape(b []byte) (n int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 2, true // a two-byte escape: nothing a view needs
	}
	i := 2
	for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	arg := string(b[2:i])
	num := func(def int) int {
		if v, err := strconv.Atoi(arg); err == nil {
			return v
		}
		return def
	}
	switch b[i] {
	case 'A':
		s.row = max(0, s.row-num(1))
	case 'B':
		s.row += num(1)
	case 'C':
		s.col += num(1)
	case 'D':
		s.col = max(0, s.col-num(1))
	case 'G':
		s.col = max(0, num(1)-1)
	case 'J':
		if num(0) == 0 {
			s.eraseLine()
			if s.row+1 < len(s.lines) {
				s.lines = s.lines[:s.row+1]
			}
		}
	case 'K':
		if num(0) == 0 {
			s.eraseLine()
		}
	}
	return i + 1, true
}

func (s *Screen) line() []rune {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
	return s.lines[s.row]
}

// eraseLine erases from the cursor to the end of its line.
func (s *Screen) eraseLine() {
	if l := s.line(); s.col < len(l) {
		s.lines[s.row] = l[:s.col]
	}
}

func (s *Screen) put(r rune) {
	l := s.line()
	for len(l) <= s.col {
		l = append(l, ' ')
	}
	l[s.col] = r
	s.lines[s.row] = l
	s.col++
}

// Lines returns the screen's lines, without trailing spaces, and without
// the empty lines at the end.
func (s *Screen) Lines() []string {
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// String returns the lines joined by newlines.
func (s *Screen) String() string { return strings.Join(s.Lines(), "\n") }
