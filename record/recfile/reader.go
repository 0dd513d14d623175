package recfile

import (
	"io"
)

// Reader reads a record file from an io.Reader. The first error is
// sticky: io.EOF after the end of the file, a *CorruptError for a file
// that breaks the format, or the error of the underlying reader. A Reader
// allocates at most its limit (the largest block it accepts) per block,
// whatever its input claims. The zero Reader is not usable; call NewReader.
type Reader struct {
	r     io.Reader
	limit int
	codec Codec
	begun bool
	off   int64 // bytes consumed
	blk   Block
	next  int // the next record of blk that Next returns
	hdr   [blockHead]byte
	buf   []byte // stored payload
	err   error
}

// NewReader returns a Reader of the file r holds. limit is the largest
// raw block it accepts (0: MaxBlock); give the writer's block size, or
// the record size when records may be larger.
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 || limit > MaxBlock {
		limit = MaxBlock
	}
	return &Reader{r: r, limit: limit}
}

// Reset makes the Reader read a new file from src with limit as
// NewReader does, keeping the memory it has grown for blocks.
func (r *Reader) Reset(src io.Reader, limit int) {
	blk, buf := r.blk, r.buf[:0]
	blk.Reset()
	*r = *NewReader(src, limit)
	r.blk, r.buf = blk, buf
}

// Next returns the next record. The slice is the Reader's, valid until the
// next call of Next or ReadBlock.
func (r *Reader) Next() ([]byte, error) {
	for r.next == r.blk.Len() {
		if err := r.load(); err != nil {
			return nil, err
		}
	}
	r.next++
	return r.blk.Record(r.next - 1), nil
}

// ReadBlock replaces the records of b with the records of the next block
// (or those of the current block that Next has not returned yet). It
// returns io.EOF at the end of the file.
func (r *Reader) ReadBlock(b *Block) error {
	for r.next == r.blk.Len() {
		if err := r.load(); err != nil {
			return err
		}
	}
	if r.next == 0 {
		// A whole block: hand it over and keep the caller's memory.
		r.blk, *b = *b, r.blk
		r.blk.Reset()
		return nil
	}
	b.Reset()
	for ; r.next < r.blk.Len(); r.next++ {
		b.Add(r.blk.Record(r.next))
	}
	return nil
}

// Offset returns the bytes of the file consumed so far.
func (r *Reader) Offset() int64 { return r.off }

// load reads the next block into r.blk.
func (r *Reader) load() error {
	if r.err != nil {
		return r.err
	}
	r.err = r.readBlock()
	return r.err
}

func (r *Reader) corrupt(at int64, reason string, err error) error {
	return &CorruptError{Offset: at, Reason: reason, Err: err}
}

func (r *Reader) readBlock() error {
	if !r.begun {
		var h [fileHeader]byte
		if err := r.fill(h[:]); err != nil {
			return r.corrupt(0, "short file header", unexpected(err))
		}
		c, reason := parseFileHeader(h[:])
		if reason != "" {
			return r.corrupt(0, reason, nil)
		}
		r.codec, r.begun = c, true
	}
	at := r.off
	if err := r.fill(r.hdr[:]); err != nil {
		// Even at a block boundary: a finished file has its end block.
		return r.corrupt(at, "file ends without its end block", unexpected(err))
	}
	hd, reason := parseHeader(r.hdr[:], r.limit)
	if reason != "" {
		return r.corrupt(at, reason, nil)
	}
	if hd.method == methodEnd {
		return io.EOF
	}
	// Grow the payload as it arrives: a header that lies about a length
	// costs the bytes the file really has, not the bytes it claims.
	r.buf = r.buf[:0]
	for len(r.buf) < hd.stored {
		n := min(hd.stored-len(r.buf), 1<<20)
		r.buf = grow(r.buf, n)
		if err := r.fill(r.buf[len(r.buf) : len(r.buf)+n]); err != nil {
			return r.corrupt(at, "short block", unexpected(err))
		}
		r.buf = r.buf[:len(r.buf)+n]
	}
	reason, err := r.blk.decode(r.codec, r.hdr[:], hd, r.buf)
	if reason != "" {
		return r.corrupt(at, reason, err)
	}
	r.next = 0
	return nil
}

// fill reads exactly len(p) bytes; io.EOF only if none were there.
func (r *Reader) fill(p []byte) error {
	n, err := io.ReadFull(r.r, p)
	r.off += int64(n)
	return err
}
