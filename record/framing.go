package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// SplitFunc has the shape of [bufio.SplitFunc]: given the unprocessed bytes
// data, and whether no more bytes will follow (atEOF), it returns how many
// bytes to consume, the next record if one is complete, and an error.
//
// A result of (0, nil, nil) asks for more data. The token aliases data and
// is valid only as long as data is.
type SplitFunc func(data []byte, atEOF bool) (advance int, token []byte, err error)

// Framing maps a byte stream to records and back. Split cuts records out of
// a stream and Append encodes one, so that appending every record Split
// returns, in order, reproduces the stream byte for byte.
//
// The framings of this package are comparable values without state and are
// safe for concurrent use.
type Framing interface {
	// Name is the name ParseFraming accepts for the framing: "lines",
	// "nul", "length" or "fixed:N".
	Name() string
	// Split is the framing's SplitFunc. It returns a wrapped
	// io.ErrUnexpectedEOF when the stream ends inside a record that cannot
	// be short (a length prefix or payload, a fixed frame).
	Split(data []byte, atEOF bool) (advance int, token []byte, err error)
	// Append appends the encoded form of rec to dst and returns the
	// extended slice. It does not retain rec.
	Append(dst, rec []byte) []byte
	// Overhead is the number of bytes Append adds to a record.
	Overhead() int
}

var (
	// Lines frames records as newline-terminated lines. A record includes
	// its trailing '\n'; only the last record of a stream may lack one, and
	// it is written back without one. Append writes records verbatim, so a
	// record without '\n' that is not last runs into the next one.
	Lines Framing = delimited{delim: '\n', name: "lines"}

	// NUL frames records like Lines, with '\x00' in place of '\n' (the
	// output of find -print0 or the input of xargs -0).
	NUL Framing = delimited{delim: 0, name: "nul"}

	// LengthPrefixed frames each record as a 4-byte big-endian unsigned
	// length followed by that many bytes of payload. The record is the
	// payload alone. Append panics if rec is longer than math.MaxUint32.
	LengthPrefixed Framing = lengthPrefixed{}
)

// Compile-time checks of the optional behaviours the adapters look for.
var (
	_ verbatim = delimited{}
	_ verbatim = fixed{}
	_ sizer    = lengthPrefixed{}
	_ sizer    = fixed{}
	_ checker  = lengthPrefixed{}
	_ checker  = fixed{}
)

// verbatim is implemented by framings whose Append copies the record
// unchanged, so that NewReader can hand out the source's bytes directly.
type verbatim interface{ verbatim() }

// sizer is implemented by framings that know the size of the record
// starting at data before all of it has arrived. Scanner and Writer use it
// to report an exact size in a TooLargeError, and to report it early.
type sizer interface {
	recordSize(data []byte) (size int, ok bool)
}

// checker is implemented by framings that cannot encode every record.
// NewReader calls it before Append.
type checker interface {
	check(rec []byte) error
}

// delimited is a framing whose records end with a delimiter byte that is
// part of the record.
type delimited struct {
	delim byte
	name  string
}

func (d delimited) Name() string  { return d.name }
func (d delimited) Overhead() int { return 0 }
func (delimited) verbatim()       {}

func (d delimited) Split(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, d.delim); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF && len(data) > 0 {
		// The final record of a stream may lack its delimiter.
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (d delimited) Append(dst, rec []byte) []byte { return append(dst, rec...) }

// headerLen is the size of the length prefix of LengthPrefixed.
const headerLen = 4

type lengthPrefixed struct{}

func (lengthPrefixed) Name() string  { return "length" }
func (lengthPrefixed) Overhead() int { return headerLen }

func (lengthPrefixed) Split(data []byte, atEOF bool) (int, []byte, error) {
	if len(data) < headerLen {
		if atEOF && len(data) > 0 {
			return 0, nil, fmt.Errorf("record: length: stream ends inside a header (%d of %d bytes): %w",
				len(data), headerLen, io.ErrUnexpectedEOF)
		}
		return 0, nil, nil
	}
	// Compare in uint64 so that a large header cannot overflow int.
	n := uint64(binary.BigEndian.Uint32(data))
	if uint64(len(data)-headerLen) < n {
		if atEOF {
			return 0, nil, fmt.Errorf("record: length: stream ends inside a payload (%d of %d bytes): %w",
				len(data)-headerLen, n, io.ErrUnexpectedEOF)
		}
		return 0, nil, nil
	}
	end := headerLen + int(n)
	return end, data[headerLen:end:end], nil
}

func (lengthPrefixed) Append(dst, rec []byte) []byte {
	if uint64(len(rec)) > math.MaxUint32 {
		panic("record: length: record longer than the 4-byte length prefix can express")
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec)))
	return append(dst, rec...)
}

func (lengthPrefixed) recordSize(data []byte) (int, bool) {
	if len(data) < headerLen {
		return 0, false
	}
	n := uint64(binary.BigEndian.Uint32(data))
	if n > math.MaxInt {
		return math.MaxInt, true
	}
	return int(n), true
}

func (lengthPrefixed) check(rec []byte) error {
	if uint64(len(rec)) > math.MaxUint32 {
		return fmt.Errorf("record: length: record of %d bytes does not fit a 4-byte length prefix", len(rec))
	}
	return nil
}

type fixed struct {
	n    int
	name string // cached so that Name does not allocate
}

// Fixed returns the framing of records of exactly n bytes with no
// delimiter. A stream whose length is not a multiple of n ends with a short
// frame, which Split reports as a wrapped io.ErrUnexpectedEOF. Append writes
// records verbatim; NewReader rejects records that are not n bytes long.
//
// Fixed panics if n < 1: a frame size comes from the program or from
// ParseFraming, which rejects it first.
func Fixed(n int) Framing {
	if n < 1 {
		panic("record: Fixed: frame size " + strconv.Itoa(n) + " < 1")
	}
	return fixed{n: n, name: "fixed:" + strconv.Itoa(n)}
}

func (f fixed) Name() string  { return f.name }
func (f fixed) Overhead() int { return 0 }
func (fixed) verbatim()       {}

func (f fixed) Split(data []byte, atEOF bool) (int, []byte, error) {
	if len(data) >= f.n {
		return f.n, data[:f.n:f.n], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, fmt.Errorf("record: %s: final frame has %d of %d bytes: %w",
			f.name, len(data), f.n, io.ErrUnexpectedEOF)
	}
	return 0, nil, nil
}

func (f fixed) Append(dst, rec []byte) []byte { return append(dst, rec...) }

func (f fixed) recordSize(data []byte) (int, bool) { return f.n, len(data) > 0 }

func (f fixed) check(rec []byte) error {
	if len(rec) != f.n {
		return fmt.Errorf("record: %s: record of %d bytes", f.name, len(rec))
	}
	return nil
}

// ParseFraming returns the framing named s: "lines", "nul", "length", or
// "fixed:N" where N is a size in the syntax of ParseSize ("fixed:4K").
func ParseFraming(s string) (Framing, error) {
	switch s {
	case "lines":
		return Lines, nil
	case "nul":
		return NUL, nil
	case "length":
		return LengthPrefixed, nil
	}
	if arg, ok := strings.CutPrefix(s, "fixed:"); ok {
		n, err := parseSize(arg)
		if err != nil {
			return nil, fmt.Errorf("record: framing %q: %w", s, err)
		}
		return Fixed(n), nil
	}
	return nil, fmt.Errorf("record: unknown framing %q (want lines, nul, length or fixed:N)", s)
}

// TrimEOL returns rec without one trailing '\n', if it has one. It is meant
// for records of Lines; it leaves a '\r' in place.
func TrimEOL(rec []byte) []byte {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		return rec[:n-1]
	}
	return rec
}
