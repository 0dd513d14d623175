package record

import (
	"fmt"
	"io"
)

// Bounds cuts the first size bytes of r, a stream framed by f, into
// ranges of at least seg bytes that each end where a record ends (or at
// size: the stream's last record may lack its delimiter). It returns the
// offsets of the cuts, the first 0 and the last size; an empty stream has
// none. It reads only from each cut to the next delimiter, so f must be a
// framing whose records end with a delimiter byte (Lines, NUL): a record
// of any other cannot be found without reading the stream from its start.
// A range of the result is a stream of whole records of f, which a Scanner
// reads (through an io.SectionReader).
func Bounds(r io.ReaderAt, size, seg int64, f Framing) ([]int64, error) {
	d, ok := f.(delimited)
	if !ok {
		return nil, fmt.Errorf("record: %s: a stream is cut at record ends only for a delimited framing", f.Name())
	}
	if seg < 1 {
		seg = 1
	}
	bounds := []int64{0}
	buf := make([]byte, 64<<10)
	for at := int64(0); at < size; {
		next := at + seg
		for next < size {
			// The record that holds byte next-1 ends at its delimiter.
			n, err := r.ReadAt(buf, next-1)
			if advance, _, _ := d.Split(buf[:n], false); advance > 0 {
				next += int64(advance) - 1
				break
			}
			if err != nil {
				next = size
				break
			}
			next += int64(n)
		}
		at = min(next, size)
		bounds = append(bounds, at)
	}
	return bounds, nil
}
