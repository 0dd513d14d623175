// Package y4m reads and writes YUV4MPEG2 (.y4m) video: a header line that
// gives the frame size, rate and colour layout, then frames, each a
// "FRAME" line followed by the raw planes of one picture (Y, then Cb and
// Cr, then alpha if any), row by row, with no padding.
//
// A header round-trips: ParseHeader then Header.String gives back the line
// byte for byte, unknown tokens included, in their order. Layout says how
// big a frame is for every colour space ffmpeg's yuv4mpegpipe muxer
// writes (8-bit 4:2:0, 4:1:1, 4:2:2, 4:4:4, 4:4:4 with alpha, grey, and
// the 9- to 16-bit forms, two bytes per sample, little-endian).
//
// Reader hands out frames in one buffer it reuses; Writer checks what it
// writes against the header. Neither is safe for concurrent use.
package y4m

import (
	"errors"
	"fmt"
	"strconv"
)

// Magic starts every y4m stream.
const Magic = "YUV4MPEG2"

// MaxHeaderLine is the longest header line ParseHeader and NewReader take,
// '\n' included.
const MaxHeaderLine = 4096

// MaxDimension is the largest width or height accepted.
const MaxDimension = 1 << 16

// ErrNotY4M is matched (errors.Is) by the error for input that does not
// start with Magic.
var ErrNotY4M = errors.New("not a y4m stream")

// Ratio is a fraction num:den as y4m writes frame rates (F30000:1001) and
// pixel aspect ratios (A1:1). 0:0 means unknown.
type Ratio struct{ Num, Den int }

func (r Ratio) String() string { return strconv.Itoa(r.Num) + ":" + strconv.Itoa(r.Den) }

// Header is a y4m stream header. Width and Height are required; the other
// fields are zero when their token is absent. The zero Header is not
// valid (no size).
type Header struct {
	Width, Height int
	Rate          Ratio  // F, frames per second
	Interlace     byte   // I: 'p', 't', 'b', 'm' or '?'
	Aspect        Ratio  // A, pixel aspect ratio
	Color         string // C: "420jpeg", "444", "mono16", ...; "" means 420jpeg
	// Extra are the X tokens and any token of an unknown letter, each
	// whole (letter included, "XYSCSS=420JPEG"), in the order they came.
	Extra []string

	// order lists the tokens as parsed, one letter each ('x' for the next
	// of Extra), so that String writes them back where they were. For a
	// Header made by hand it is empty and String uses the usual order.
	order string
}

// SyntaxError is a header or frame line that is not valid y4m. Offset is
// the byte of the line where the problem is.
type SyntaxError struct {
	Offset int
	Msg    string
	err    error // ErrNotY4M for a wrong magic
}

func (e *SyntaxError) Error() string {
	if e.err == ErrNotY4M {
		return "y4m: " + e.Msg
	}
	return fmt.Sprintf("y4m: header: byte %d: %s", e.Offset, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return e.err }

// ParseHeader parses one header line, with or without its final '\n'. It
// is strict: one space between tokens, numbers in plain decimal, each of
// W H F I A C at most once, no control bytes. Unknown tokens are kept in
// Extra.
func ParseHeader(line []byte) (Header, error) {
	var h Header
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if len(line) < len(Magic) || string(line[:len(Magic)]) != Magic {
		return h, notY4M(line)
	}
	if len(line)+1 > MaxHeaderLine {
		return h, &SyntaxError{Offset: MaxHeaderLine, Msg: fmt.Sprintf("line longer than %d bytes", MaxHeaderLine)}
	}
	order := make([]byte, 0, 8)
	for i := len(Magic); i < len(line); {
		if line[i] != ' ' {
			return h, &SyntaxError{Offset: i, Msg: fmt.Sprintf("want a space before a parameter, found %q", line[i])}
		}
		i++
		start := i
		for i < len(line) && line[i] != ' ' {
			if c := line[i]; c < ' ' || c == 0x7f {
				return h, &SyntaxError{Offset: i, Msg: fmt.Sprintf("control byte %q", c)}
			}
			i++
		}
		tok := line[start:i]
		if len(tok) == 0 {
			return h, &SyntaxError{Offset: start, Msg: "empty parameter"}
		}
		key, val := tok[0], string(tok[1:])
		if key != 'X' && bytesIndex(order, key) >= 0 {
			return h, &SyntaxError{Offset: start, Msg: fmt.Sprintf("parameter %c given twice", key)}
		}
		var err string
		switch key {
		case 'W':
			h.Width, err = dimension(val)
		case 'H':
			h.Height, err = dimension(val)
		case 'F':
			h.Rate, err = ratio(val)
		case 'A':
			h.Aspect, err = ratio(val)
		case 'I':
			if len(val) != 1 || bytesIndex([]byte("ptbm?"), val[0]) < 0 {
				err = fmt.Sprintf("interlacing %q: want p, t, b, m or ?", val)
			} else {
				h.Interlace = val[0]
			}
		case 'C':
			if val == "" {
				err = "empty colour space"
			}
			h.Color = val
		default:
			h.Extra = append(h.Extra, string(tok))
			key = 'x'
		}
		if err != "" {
			return Header{}, &SyntaxError{Offset: start, Msg: fmt.Sprintf("%c: %s", tok[0], err)}
		}
		order = append(order, key)
	}
	switch {
	case bytesIndex(order, 'W') < 0:
		return Header{}, &SyntaxError{Offset: len(line), Msg: "no width (W)"}
	case bytesIndex(order, 'H') < 0:
		return Header{}, &SyntaxError{Offset: len(line), Msg: "no height (H)"}
	}
	h.order = string(order)
	return h, nil
}

// notY4M is the error for input that does not start with Magic: it shows
// the first bytes, which usually say what the input is.
func notY4M(b []byte) error {
	if len(b) == 0 {
		return &SyntaxError{Msg: ErrNotY4M.Error() + " (the input is empty)", err: ErrNotY4M}
	}
	show := b[:min(len(b), 12)]
	return &SyntaxError{Msg: fmt.Sprintf("%s (it starts with %s, not %q)", ErrNotY4M, quoteBytes(show), Magic), err: ErrNotY4M}
}

func bytesIndex(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// decimal parses plain decimal digits: no sign, no leading zero, at most
// nine digits (so that it fits any int).
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func dimension(s string) (int, string) {
	n, ok := decimal(s)
	if !ok || n < 1 || n > MaxDimension {
		return 0, fmt.Sprintf("%q: want a number from 1 to %d", s, MaxDimension)
	}
	return n, ""
}

func ratio(s string) (Ratio, string) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		num, ok1 := decimal(s[:i])
		den, ok2 := decimal(s[i+1:])
		if !ok1 || !ok2 {
			break
		}
		if den == 0 && num != 0 {
			return Ratio{}, fmt.Sprintf("%q: zero denominator", s)
		}
		return Ratio{num, den}, ""
	}
	return Ratio{}, fmt.Sprintf("%q: want N:D", s)
}

// String returns the header line, '\n' included.
func (h Header) String() string { return string(h.Append(nil)) }

// Append appends the header line, '\n' included, to dst. Tokens come in
// the order they were parsed in; a field set by hand and not parsed comes
// after them, in the order W H F I A C, then the rest of Extra.
func (h Header) Append(dst []byte) []byte {
	dst = append(dst, Magic...)
	done := make([]bool, 6) // W H F I A C
	extra := 0
	for i := 0; i < len(h.order); i++ {
		if h.order[i] == 'x' {
			if extra < len(h.Extra) {
				dst = append(append(dst, ' '), h.Extra[extra]...)
				extra++
			}
			continue
		}
		dst = h.appendField(dst, h.order[i], true)
		done[bytesIndex([]byte("WHFIAC"), h.order[i])] = true
	}
	for k, key := range []byte("WHFIAC") {
		if !done[k] {
			dst = h.appendField(dst, key, false)
		}
	}
	for _, x := range h.Extra[extra:] {
		dst = append(append(dst, ' '), x...)
	}
	return append(dst, '\n')
}

// appendField appends " Kvalue" for key; a field at its zero value is
// written only if always is set (it was parsed, "A0:0").
func (h Header) appendField(dst []byte, key byte, always bool) []byte {
	switch key {
	case 'W':
		return strconv.AppendInt(append(dst, " W"...), int64(h.Width), 10)
	case 'H':
		return strconv.AppendInt(append(dst, " H"...), int64(h.Height), 10)
	case 'F':
		if always || h.Rate != (Ratio{}) {
			return append(append(dst, " F"...), h.Rate.String()...)
		}
	case 'A':
		if always || h.Aspect != (Ratio{}) {
			return append(append(dst, " A"...), h.Aspect.String()...)
		}
	case 'I':
		if h.Interlace != 0 {
			return append(dst, ' ', 'I', h.Interlace)
		}
	case 'C':
		if h.Color != "" {
			return append(append(dst, " C"...), h.Color...)
		}
	}
	return dst
}

// quoteBytes quotes b for a message byte by byte: printable ASCII as is,
// anything else as \xNN, so that binary input shows what it is.
func quoteBytes(b []byte) string {
	s := make([]byte, 0, len(b)+2)
	s = append(s, '"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			s = append(s, '\\', c)
		case c == '\n':
			s = append(s, '\\', 'n')
		case c < ' ' || c >= 0x7f:
			s = append(s, fmt.Sprintf(`\x%02x`, c)...)
		default:
			s = append(s, c)
		}
	}
	return string(append(s, '"'))
}
