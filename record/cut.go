package record

import (
	"errors"
	"fmt"
	"io"
)

// cutter is the logic Scanner and Writer share: it calls a framing's Split
// and holds the answer against the record size. It does no I/O, so that
// both adapters buffer bytes their own way around the same decisions.
type cutter struct {
	f     Framing
	sizer sizer // f's, or nil
	// native is set for the framings of this package, whose errors
	// carry context already.
	native bool
	max    int // largest record, excluding the framing's overhead
	// limit is the smallest number of buffered bytes that proves an
	// unfinished record too large: max+overhead could still end at EOF
	// with a record of max bytes, one more byte cannot.
	limit int
}

func newCutter(f Framing, maxSize int) cutter {
	c := cutter{f: f, max: maxSize, limit: maxSize + f.Overhead() + 1}
	c.sizer, _ = f.(sizer)
	switch f.(type) {
	case delimited, lengthPrefixed, fixed:
		c.native = true
	}
	return c
}

var errNoAdvance = errors.New("split returned a record without consuming input")

// cut returns the next record at the start of data, with the number of
// bytes it spans. A result of (0, nil, nil) means that data holds no whole
// record: more input is needed or, at EOF, the stream ended cleanly. A
// positive advance with a nil record means bytes to skip.
//
// Callers keep an unfinished record in a buffer of c.limit bytes: cut
// returns a *TooLargeError rather than asking for more when data already
// holds c.limit bytes, so the buffer never needs to grow.
func (c *cutter) cut(data []byte, atEOF bool) (int, []byte, error) {
	advance, token, err := c.f.Split(data, atEOF)
	if err != nil || (advance == 0 && token == nil) {
		// No record: if the framing knows the size of the one that
		// starts here, a record over the limit is the error to report,
		// whether the stream goes on or not.
		if c.sizer != nil {
			if size, ok := c.sizer.recordSize(data); ok && size > c.max {
				return 0, nil, &TooLargeError{Size: size, Max: c.max}
			}
		}
	}
	switch {
	case err != nil:
		if !c.native {
			err = fmt.Errorf("record: %s: %w", c.f.Name(), err)
		}
		return 0, nil, err
	case advance < 0 || advance > len(data):
		return 0, nil, fmt.Errorf("record: %s: split advanced %d bytes over %d", c.f.Name(), advance, len(data))
	case token != nil && len(token) > c.max:
		return 0, nil, &TooLargeError{Size: len(token), Max: c.max}
	case token != nil && advance == 0 && !atEOF:
		return 0, nil, fmt.Errorf("record: %s: %w", c.f.Name(), errNoAdvance)
	case advance > 0 || token != nil:
		return advance, token, nil
	case atEOF:
		if len(data) > 0 {
			return 0, nil, fmt.Errorf("record: %s: %d bytes left over at end of stream: %w",
				c.f.Name(), len(data), io.ErrUnexpectedEOF)
		}
		return 0, nil, nil
	case len(data) >= c.limit:
		// Split wants more input, and the record cannot fit.
		return 0, nil, &TooLargeError{Size: len(data) - c.f.Overhead(), Max: c.max, AtLeast: true}
	}
	return 0, nil, nil
}
