package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/klauspost/compress/zstd"
)

// A spilled queue keeps its oldest buffers on disk: when the resolver must
// free memory and FREE is empty, the buffers queued in one queue are
// written, zstd-compressed, to the end of that queue's spill file (its
// backlog) and go back to FREE. The queue then reads its backlog first and
// its ring after, so the order of records never changes. A buffer read
// back from disk is taken from FREE, so record memory stays B x S; the
// codec's scratch space (one record size of compressed bytes, and zstd's
// own state) is outside it, as sort's spill buffers are.
//
// Writes and reads of the backlog happen with the pool locked. A spill is
// the rare way out of a deadlock, not the common path, and keeping it
// under the lock keeps every buffer's place exact at every moment.

// spillFile is one queue's backlog on disk: frames of one buffer each,
// appended at wr and read back from rd.
type spillFile struct {
	f      *os.File
	rd, wr int64
	frames int // frames written and not yet read back
}

// A frame is a header (records, raw data bytes, compressed sizes of the
// record lengths and of the data) and two zstd frames: the records'
// lengths as uvarints, then the records' bytes. Lengths compress to almost
// nothing; stored as raw offsets they would cost 4 bytes a record, more
// than a short line itself.
const frameHeader = 16

// spiller is the codec state of a pool, made at the first spill.
type spiller struct {
	dir     string
	enc     *zstd.Encoder
	dec     *zstd.Decoder
	scratch []byte // compressed frame
	lens    []byte // record lengths as uvarints
	// Written counts raw record bytes spilled, disk compressed bytes.
	written, disk int64
}

func (p *Pool) spillerLocked() (*spiller, error) {
	sp := p.spill
	if sp.enc == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			enc.Close()
			return nil, err
		}
		sp.enc, sp.dec = enc, dec
	}
	return sp, nil
}

// spillLocked moves every buffer queued in q to the end of q's backlog and
// gives them back to FREE. It returns the number of buffers freed.
func (q *Queue) spillLocked() (int, error) {
	p := q.pool
	if q.n == 0 {
		return 0, nil
	}
	sp, err := p.spillerLocked()
	if err != nil {
		return 0, err
	}
	if q.disk == nil {
		f, err := os.CreateTemp(sp.dir, "tpipe-spill-*")
		if err != nil {
			return 0, fmt.Errorf("spilling queue %s: %w", q.name, err)
		}
		// Unlinked at once: the file goes away with the process however
		// it ends.
		os.Remove(f.Name())
		q.disk = &spillFile{f: f}
	}
	n := 0
	for q.n > 0 {
		b := q.ring[q.head]
		if err := q.disk.writeFrame(sp, b); err != nil {
			return n, fmt.Errorf("spilling queue %s: %w", q.name, err)
		}
		q.popLocked()
		q.spilledBytes += int64(b.bytes())
		p.releaseLocked(b)
		n++
	}
	q.spills++
	q.roomLocked()
	return n, nil
}

// writeFrame appends b's live records as one frame.
func (s *spillFile) writeFrame(sp *spiller, b *Buf) error {
	start := 0
	if b.lo > 0 {
		start = int(b.ends[b.lo-1])
	}
	live := b.data[start:]
	lens := sp.lens[:0]
	prev := start
	for _, e := range b.ends[b.lo:] {
		lens = binary.AppendUvarint(lens, uint64(int(e)-prev))
		prev = int(e)
	}
	sp.lens = lens
	out := append(sp.scratch[:0], make([]byte, frameHeader)...)
	out = sp.enc.EncodeAll(lens, out)
	endsComp := len(out) - frameHeader
	out = sp.enc.EncodeAll(live, out)
	binary.LittleEndian.PutUint32(out[0:], uint32(len(b.ends)-b.lo))
	binary.LittleEndian.PutUint32(out[4:], uint32(len(live)))
	binary.LittleEndian.PutUint32(out[8:], uint32(endsComp))
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)-frameHeader-endsComp))
	sp.scratch = out[:0]
	if _, err := s.f.WriteAt(out, s.wr); err != nil {
		return err
	}
	s.wr += int64(len(out))
	s.frames++
	sp.written += int64(len(live))
	sp.disk += int64(len(out))
	return nil
}

var errBadFrame = errors.New("spill file: bad frame")

// readFrame reads the oldest frame into b (an empty buffer from FREE).
func (s *spillFile) readFrame(sp *spiller, b *Buf) error {
	var hdr [frameHeader]byte
	if _, err := s.f.ReadAt(hdr[:], s.rd); err != nil {
		return err
	}
	nrec := int(binary.LittleEndian.Uint32(hdr[0:]))
	raw := int(binary.LittleEndian.Uint32(hdr[4:]))
	endsComp := int(binary.LittleEndian.Uint32(hdr[8:]))
	dataComp := int(binary.LittleEndian.Uint32(hdr[12:]))
	if nrec > cap(b.ends) || raw > cap(b.data) {
		return errBadFrame
	}
	body := append(sp.scratch[:0], make([]byte, endsComp+dataComp)...)
	sp.scratch = body[:0]
	if _, err := s.f.ReadAt(body, s.rd+frameHeader); err != nil {
		return err
	}
	lens, err := sp.dec.DecodeAll(body[:endsComp], sp.lens[:0])
	if err != nil {
		return err
	}
	sp.lens = lens
	end := 0
	for len(lens) > 0 {
		n, k := binary.Uvarint(lens)
		if k <= 0 || len(b.ends) == nrec {
			return errBadFrame
		}
		lens = lens[k:]
		end += int(n)
		b.ends = append(b.ends, int32(end))
	}
	data, err := sp.dec.DecodeAll(body[endsComp:], b.data[:0])
	if err != nil {
		return err
	}
	if len(data) != raw || end != raw || len(b.ends) != nrec || (raw > 0 && &data[0] != &b.data[:1][0]) {
		return errBadFrame
	}
	b.data = b.data[:raw]
	s.rd += int64(frameHeader + endsComp + dataComp)
	s.frames--
	if s.frames == 0 {
		// Empty again: start over, so the file holds at most the largest
		// backlog, not everything ever spilled.
		s.rd, s.wr = 0, 0
		if err := s.f.Truncate(0); err != nil {
			return err
		}
	}
	return nil
}

// discardLocked drops q's backlog (its reader stopped).
func (q *Queue) discardLocked() {
	if q.disk == nil {
		return
	}
	q.disk.f.Close()
	q.disk = nil
}

// Close releases the spill files and the codec of the pool. Call it after
// every task has finished.
func (p *Pool) Close() error {
	p.stopWatch()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.queues {
		q.discardLocked()
	}
	if sp := p.spill; sp != nil && sp.enc != nil {
		sp.enc.Close()
		sp.dec.Close()
		sp.enc, sp.dec = nil, nil
	}
	return nil
}
