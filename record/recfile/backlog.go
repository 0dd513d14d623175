package recfile

import (
	"io"
	"os"
)

// Backlog is a queue of blocks in a temporary file: blocks are appended at
// the end and read back from the front, each once. When the last block has
// been read the file is truncated, so it holds at most the largest backlog
// at one time, not everything that ever went through it. It is what a
// spilled queue of package buffer keeps on disk.
//
// A Backlog keeps no memory between calls but its file: the caller brings
// the Block to encode from or decode into, so many backlogs can share one.
// The zero Backlog is not usable; call NewBacklog. It is not safe for
// concurrent use.
type Backlog struct {
	f      *os.File
	codec  Codec
	limit  int
	rd, wr int64 // the next block to read, the end of the file
	blocks int   // blocks appended and not yet read
	hdr    [blockHead]byte
	buf    []byte // stored payload while reading; dropped after each call

	written, disk int64
}

// NewBacklog makes an empty backlog in a new temporary file in dir (see
// CreateTemp) whose blocks are compressed with c. limit is the largest
// raw block it reads back (0: MaxBlock).
func NewBacklog(dir string, c Codec, limit int) (*Backlog, error) {
	if limit <= 0 || limit > MaxBlock {
		limit = MaxBlock
	}
	f, err := CreateTemp(dir)
	if err != nil {
		return nil, err
	}
	return &Backlog{f: f, codec: c, limit: limit, rd: fileHeader, wr: fileHeader}, nil
}

// Append writes the records of b as one block at the end of the backlog,
// and empties b. An empty b writes nothing. Unlike a file, a backlog keeps
// b.Cont (in the block header's flags byte), and ReadBlock gives it back.
func (l *Backlog) Append(b *Block) error {
	if b.Len() == 0 {
		b.Reset()
		return nil
	}
	var flags byte
	if b.Cont {
		flags = flagCont
	}
	out, err := b.encodeFlags(l.codec, flags)
	if err != nil {
		return err
	}
	if l.wr == fileHeader {
		if _, err := l.f.WriteAt(appendFileHeader(nil, l.codec), 0); err != nil {
			return err
		}
	}
	if _, err := l.f.WriteAt(out, l.wr); err != nil {
		// The file may hold part of the block past wr: harmless, the next
		// block overwrites it.
		return err
	}
	l.written += int64(b.Size())
	l.disk += int64(len(out))
	l.wr += int64(len(out))
	l.blocks++
	b.Reset()
	return nil
}

// ReadBlock replaces the records of b with those of the oldest block and
// takes that block off the backlog. It returns io.EOF when the backlog is
// empty.
func (l *Backlog) ReadBlock(b *Block) error {
	if l.blocks == 0 {
		return io.EOF
	}
	at := l.rd
	if _, err := l.f.ReadAt(l.hdr[:], at); err != nil {
		return &CorruptError{Offset: at, Reason: "short block header", Err: unexpected(err)}
	}
	hd, reason := parseHeader(l.hdr[:], l.limit)
	if reason == "" && hd.method == methodEnd {
		reason = "end of file in a backlog"
	}
	if reason == "" && at+blockHead+int64(hd.stored) > l.wr {
		reason = "block past the end of the backlog"
	}
	if reason != "" {
		return &CorruptError{Offset: at, Reason: reason}
	}
	l.buf = grow(l.buf[:0], hd.stored)[:hd.stored]
	if _, err := l.f.ReadAt(l.buf, at+blockHead); err != nil {
		return &CorruptError{Offset: at, Reason: "short block", Err: unexpected(err)}
	}
	reason, err := b.decode(l.codec, l.hdr[:], hd, l.buf)
	if reason != "" {
		return &CorruptError{Offset: at, Reason: reason, Err: err}
	}
	l.rd = at + blockHead + int64(hd.stored)
	l.blocks--
	if l.blocks == 0 {
		// Empty again: start over at the front.
		l.rd, l.wr = fileHeader, fileHeader
		if err := l.f.Truncate(fileHeader); err != nil {
			return err
		}
	}
	return nil
}

// Blocks returns the number of blocks appended and not yet read.
func (l *Backlog) Blocks() int { return l.blocks }

// Written returns the record bytes appended so far (lengths not counted),
// and Disk the bytes they took on disk, headers included.
func (l *Backlog) Written() int64 { return l.written }

// Disk returns the bytes written to the file so far, headers included.
func (l *Backlog) Disk() int64 { return l.disk }

// Close closes the file, and with it every block left.
func (l *Backlog) Close() error { return l.f.Close() }
