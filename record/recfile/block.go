package recfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

const (
	magic      = "tpRF"
	version    = 1
	fileHeader = 8  // magic, version, codec, two zero bytes
	blockHead  = 20 // records, raw, stored, method, flags, two zero bytes, crc

	methodStored = 0
	methodCodec  = 1
	methodEnd    = 0xFF

	// flagCont, in a block's flags byte, is Block.Cont. Only a Backlog
	// writes it; a file of Writer always has flags 0, so files read the
	// same as before the flag existed.
	flagCont = 1

	// MaxBlock is the largest raw payload of a block, and so the largest
	// record a file can hold (a little less: its length is stored too).
	MaxBlock = math.MaxInt32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTooLarge is returned by Block.Add for a record that no block can
// hold (more than MaxBlock bytes with its length).
var ErrTooLarge = errors.New("recfile: record too large for a block")

// CorruptError reports a file that does not follow the format: Offset is
// where the bad header or block starts. Err, when set, is the cause; it is
// io.ErrUnexpectedEOF for a file cut short.
type CorruptError struct {
	Offset int64
	Reason string
	Err    error
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("recfile: corrupt at byte %d: %s", e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *CorruptError) Unwrap() error { return e.Err }

// appendFileHeader appends the header of a file of codec c.
func appendFileHeader(b []byte, c Codec) []byte {
	return append(b, magic[0], magic[1], magic[2], magic[3], version, byte(c), 0, 0)
}

// parseFileHeader returns the codec of a file header h (fileHeader
// bytes). The error is a reason for a *CorruptError.
func parseFileHeader(h []byte) (Codec, string) {
	if string(h[:4]) != magic {
		return 0, "not a record file (bad magic)"
	}
	if h[4] != version {
		return 0, fmt.Sprintf("unknown version %d", h[4])
	}
	c := Codec(h[5])
	if c >= numCodecs {
		return 0, fmt.Sprintf("unknown codec %d", h[5])
	}
	if h[6] != 0 || h[7] != 0 {
		return 0, "bad file header"
	}
	return c, ""
}

// header is a parsed block header.
type header struct {
	records, raw, stored int
	method               byte
	flags                byte
	crc                  uint32
}

// parseHeader checks the block header h (blockHead bytes) against limit,
// the largest raw payload the reader accepts. Its error is a reason for a
// *CorruptError. It does no I/O.
func parseHeader(h []byte, limit int) (header, string) {
	hd := header{
		records: int(binary.LittleEndian.Uint32(h[0:])),
		raw:     int(binary.LittleEndian.Uint32(h[4:])),
		stored:  int(binary.LittleEndian.Uint32(h[8:])),
		method:  h[12],
		flags:   h[13],
		crc:     binary.LittleEndian.Uint32(h[16:]),
	}
	if h[13]&^flagCont != 0 || h[14] != 0 || h[15] != 0 || hd.method == methodEnd && h[13] != 0 {
		return hd, "bad block header"
	}
	switch hd.method {
	case methodEnd:
		if hd.records != 0 || hd.raw != 0 || hd.stored != 0 {
			return hd, "bad end of file"
		}
		if crc32.Checksum(h[:16], castagnoli) != hd.crc {
			return hd, "checksum mismatch"
		}
		return hd, ""
	case methodStored:
		if hd.stored != hd.raw {
			return hd, "stored block of the wrong length"
		}
	case methodCodec:
	default:
		return hd, fmt.Sprintf("unknown block method %d", hd.method)
	}
	switch {
	case hd.records == 0:
		return hd, "empty block"
	case hd.raw > limit || hd.raw > MaxBlock:
		return hd, fmt.Sprintf("block of %d bytes over the limit of %d", hd.raw, limit)
	case hd.records > hd.raw:
		// Every record costs at least its length's byte.
		return hd, fmt.Sprintf("%d records in %d bytes", hd.records, hd.raw)
	case hd.stored == 0 || hd.stored > MaxBlock:
		return hd, fmt.Sprintf("bad stored length %d", hd.stored)
	}
	return hd, ""
}

// Block is a batch of records that goes to disk as one block, and the
// scratch space to encode and decode it. Reuse one Block across blocks:
// it keeps its memory. The zero Block is empty and ready to use.
type Block struct {
	// Cont marks that the block's last record goes on as the first record
	// of the next block: a record longer than a buffer of package buffer,
	// spilled as a chain. Only a Backlog keeps it (Writer ignores it);
	// Reset clears it.
	Cont bool

	data  []byte // the records back to back
	ends  []int  // ends[i]: where record i ends in data
	lens  []byte // the records' lengths as uvarints, while encoding
	raw   []byte // the raw payload, lengths then data
	store []byte // a header and the stored payload
}

// Add appends a copy of rec to the block. It fails only for a record of
// more than MaxBlock bytes.
func (b *Block) Add(rec []byte) error {
	if len(rec) > MaxBlock-binary.MaxVarintLen64-len(b.data)-len(b.lens) {
		return ErrTooLarge
	}
	b.lens = binary.AppendUvarint(b.lens, uint64(len(rec)))
	b.data = append(b.data, rec...)
	b.ends = append(b.ends, len(b.data))
	return nil
}

// Reset empties the block, keeping its memory.
func (b *Block) Reset() {
	b.data, b.ends, b.lens = b.data[:0], b.ends[:0], b.lens[:0]
	b.Cont = false
}

// Len returns the number of records in the block.
func (b *Block) Len() int { return len(b.ends) }

// Size returns the bytes of the block's records, lengths not counted.
func (b *Block) Size() int { return len(b.data) }

// rawSize is the raw payload the block encodes to: lengths and records.
func (b *Block) rawSize() int { return len(b.data) + len(b.lens) }

// Record returns record i. It is the block's memory, valid until the block
// is next changed.
func (b *Block) Record(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]:b.ends[i]]
}

// Bytes returns the records back to back, and End(i) where record i ends
// in it. Both are the block's, valid until the block is next changed.
func (b *Block) Bytes() []byte { return b.data }

// End returns where record i ends in Bytes.
func (b *Block) End(i int) int { return b.ends[i] }

// encode returns the block as it goes to disk, header and payload, in the
// block's scratch space. The block must not be empty.
func (b *Block) encode(c Codec) ([]byte, error) {
	return b.encodeFlags(c, 0)
}

// encodeFlags is encode with the flags byte of the block header set to
// flags.
func (b *Block) encodeFlags(c Codec, flags byte) ([]byte, error) {
	b.raw = append(append(b.raw[:0], b.lens...), b.data...)
	out := append(b.store[:0], make([]byte, blockHead)...)
	method := byte(methodStored)
	if c != None {
		var err error
		out, err = encode(c, out, b.raw)
		if err != nil {
			return nil, err
		}
		method = methodCodec
		if len(out)-blockHead >= len(b.raw) {
			method = methodStored
		}
	}
	if method == methodStored {
		out = append(out[:blockHead], b.raw...)
	}
	b.store = out[:0]
	binary.LittleEndian.PutUint32(out[0:], uint32(len(b.ends)))
	binary.LittleEndian.PutUint32(out[4:], uint32(len(b.raw)))
	binary.LittleEndian.PutUint32(out[8:], uint32(len(out)-blockHead))
	out[12], out[13], out[14], out[15] = method, flags, 0, 0
	crc := crc32.Update(crc32.Checksum(out[:16], castagnoli), castagnoli, out[blockHead:])
	binary.LittleEndian.PutUint32(out[16:], crc)
	return out, nil
}

// endBlock is the block header that ends a file.
func endBlock() []byte {
	h := make([]byte, blockHead)
	h[12] = methodEnd
	binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	return h
}

// decode replaces the block's records with those of a block whose header
// is h (already parsed as hd) and whose stored payload is p. Its error is
// a reason for a *CorruptError.
func (b *Block) decode(c Codec, h []byte, hd header, p []byte) (string, error) {
	if crc32.Update(crc32.Checksum(h[:16], castagnoli), castagnoli, p) != hd.crc {
		return "checksum mismatch", nil
	}
	raw := p
	if hd.method == methodCodec {
		var err error
		b.raw, err = decode(c, b.raw[:0], p, hd.raw)
		if err != nil {
			return "cannot decompress block", err
		}
		raw = b.raw
	}
	b.Reset()
	// Lengths first; the rest is data and must add up exactly.
	total, rest := 0, raw
	for range hd.records {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(raw)) {
			return "bad record length", nil
		}
		rest = rest[k:]
		total += int(n)
		b.ends = append(b.ends, total)
	}
	if total != len(rest) {
		return fmt.Sprintf("records of %d bytes in %d", total, len(rest)), nil
	}
	b.data = append(b.data, rest...)
	b.Cont = hd.flags&flagCont != 0
	return "", nil
}

// unexpected turns io.EOF into io.ErrUnexpectedEOF: inside a header or a
// block, the end of the file is never clean.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
