// Package recfile is the one on-disk format of tpipe's records: what a
// spilled queue keeps in its backlog, what the serial policy keeps for an
// edge, what sort keeps for a run, and what the spool will keep for a
// segment. It owns the framing, the compression (the only code of tpipe
// that builds a codec of github.com/klauspost/compress), the checksum and
// the life of temporary files.
//
// # Format
//
// A file is a header and a sequence of blocks:
//
//	file   = header block* end
//	header = "tpRF" version:u8 codec:u8 0:u16                  (8 bytes)
//	block  = records:u32 raw:u32 stored:u32 method:u8 flags:u8 0:u16 crc:u32 payload
//	end    = a block header with method 0xFF and every length 0
//
// Integers are little-endian. The raw payload of a block is the length of
// each record as a uvarint, then the records back to back: lengths compress
// to almost nothing, where fixed offsets would cost more than a short line.
// Method 1 stores that payload compressed with the file's codec, method 0
// as is (when compression would not make it smaller). The CRC-32C covers
// the first 16 bytes of the block header and the stored payload, so a
// damaged block is refused before it is decompressed.
//
// The flags byte was a zero byte in the first files of version 1, and a
// file written by Writer still has 0 there. A Backlog sets bit 0 (Cont) on
// a block whose last record goes on in the next block: a record of package
// buffer longer than a buffer, spilled as a chain. Any other bit is
// refused as corrupt, so a reader that predates a new flag fails loudly.
//
// A file written by Writer ends with the end block, so a file cut at a
// block boundary is told apart from a finished one. A Backlog has no end:
// it is a private queue of blocks and never outlives its process.
//
// # Errors
//
// Bad input is never a panic. A file that does not follow the format (bad
// magic, a checksum mismatch, lengths that disagree, a file cut short) is
// a *CorruptError; one cut short also matches io.ErrUnexpectedEOF. The
// clean end of a file is io.EOF.
//
// # Temporary files
//
// CreateTemp makes files that are gone when the process is, however it
// ends: on Linux they are opened with O_TMPFILE and never have a name;
// elsewhere they are unlinked as soon as they are created. Files written to
// be kept (the spool) go through WriteAtomic: a temporary name, fsync,
// rename, fsync of the directory.
//
// # Concurrency
//
// Writer, Reader, Backlog and Block are not safe for concurrent use. The
// codecs behind them are shared by the whole process and are.
package recfile
