package record

import (
	"errors"
	"strconv"
)

// ErrTooLarge matches, with errors.Is, every *TooLargeError: the error of a
// Scanner or Writer that met a record longer than its limit.
var ErrTooLarge = errors.New("record: record exceeds record size")

// ErrClosed is returned by Writer.Write after Writer.Close.
var ErrClosed = errors.New("record: write after close")

// TooLargeError reports a record longer than the record size Max. When the
// record was cut off before its end was seen, AtLeast is set and Size is a
// lower bound of its length.
//
// For framings with a header (LengthPrefixed) or a fixed size, Size is exact
// and the error is reported as soon as the header is read. The message says
// nothing of how to raise the limit: that is the caller's setting to name.
type TooLargeError struct {
	Size, Max int
	AtLeast   bool
	// Limit, when set, names what Max is, for a limit other than the
	// record size: "the longest record a task holds whole".
	Limit string
}

func (e *TooLargeError) Error() string {
	b := make([]byte, 0, 80)
	b = append(b, "record of "...)
	if e.AtLeast {
		b = append(b, "at least "...)
	}
	b = strconv.AppendInt(b, int64(e.Size), 10)
	if e.Limit != "" {
		b = append(b, " bytes exceeds "...)
		b = append(b, e.Limit...)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(e.Max), 10)
		b = append(b, " bytes)"...)
		return string(b)
	}
	b = append(b, " bytes exceeds the record size of "...)
	b = strconv.AppendInt(b, int64(e.Max), 10)
	b = append(b, " bytes"...)
	return string(b)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }
