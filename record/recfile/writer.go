package recfile

import (
	"encoding/binary"
	"errors"
	"io"
)

// DefaultBlockSize is the raw bytes a Writer collects before it writes a
// block, when NewWriter is given 0.
const DefaultBlockSize = 256 << 10

// ErrClosed is returned by Writer.Add and Writer.EndBlock after Close.
var ErrClosed = errors.New("recfile: write after close")

// Writer writes a record file to an io.Writer: records are collected in a
// block of at most blockSize raw bytes (records and their lengths), which
// is compressed and written when full, at EndBlock, or at Close. A record
// too large for that has a block of its own, so a reader's limit must be
// ReadLimit(blockSize, the longest record). The first error is sticky. The zero
// Writer is not usable; call NewWriter.
type Writer struct {
	w         io.Writer
	codec     Codec
	blockSize int
	blk       Block
	started   bool
	closed    bool
	err       error
	written   int64
	blocks    int
	records   int64
}

// NewWriter returns a Writer of a file in codec c to w; blockSize 0 means
// DefaultBlockSize. It writes nothing until the first block or Close.
func NewWriter(w io.Writer, c Codec, blockSize int) *Writer {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	return &Writer{w: w, codec: c, blockSize: blockSize}
}

// Reset makes the Writer write a new file to w, keeping its memory and
// its codec and block size; the counters start again from zero.
func (w *Writer) Reset(dst io.Writer) {
	*w = Writer{w: dst, codec: w.codec, blockSize: w.blockSize, blk: w.blk}
	w.blk.Reset()
}

// Add appends a copy of rec to the file.
func (w *Writer) Add(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	if w.blk.Len() > 0 && w.blk.rawSize()+binary.MaxVarintLen64+len(rec) > w.blockSize {
		if err := w.EndBlock(); err != nil {
			return err
		}
	}
	if err := w.blk.Add(rec); err != nil {
		return err
	}
	w.records++
	return nil
}

// EndBlock writes the records added since the last block as a block, if
// there are any.
func (w *Writer) EndBlock() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	if w.blk.Len() == 0 {
		return nil
	}
	out, err := w.blk.encode(w.codec)
	if err == nil {
		err = w.write(out)
	}
	w.blk.Reset()
	w.blocks++
	return err
}

func (w *Writer) write(p []byte) error {
	if !w.started {
		w.started = true
		if err := w.write(appendFileHeader(nil, w.codec)); err != nil {
			return err
		}
	}
	n, err := w.w.Write(p)
	w.written += int64(n)
	if err != nil {
		w.err = err
	}
	return err
}

// Close writes the last block and the end of the file. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	err := w.EndBlock()
	if err == nil {
		err = w.write(endBlock())
	}
	w.closed = true
	return err
}

// Written returns the bytes written to the underlying writer so far.
func (w *Writer) Written() int64 { return w.written }

// Blocks returns the number of blocks written so far.
func (w *Writer) Blocks() int { return w.blocks }

// Records returns the number of records added so far.
func (w *Writer) Records() int64 { return w.records }

// ReadLimit is the largest raw block a Writer with blockSize writes when
// no record is longer than maxRecord: the limit to give its Reader.
func ReadLimit(blockSize, maxRecord int) int {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	return min(MaxBlock, max(blockSize, maxRecord+binary.MaxVarintLen64))
}
