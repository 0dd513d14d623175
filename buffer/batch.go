package buffer

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"sort"
)

// This file holds the batch forms of reading and writing: whole buffers at
// a time, for tasks that can work on many records at once (a source cutting
// a file into lines, a filter searching a buffer for a literal, a counter,
// a sink). They cost the same per buffer as the record forms cost per
// record, which is where tpipe's speed on short lines comes from.

// ReadBatch returns every record of the current input buffer not yet read,
// back to back as one slice, and how many records that is; it takes the
// next buffer first if the current one is used up, blocking as Read does.
// The slice is valid until the next Read or ReadBatch on this port and must
// not be written. After ReadBatch, Forward refers to the batch's last
// record. It returns io.EOF at the end, as Read does.
//
// A batch holds whole records only: it stops before the first piece of a
// record longer than S, and when that piece is all that is left, the batch
// is that one record, reassembled as by Read (and with Read's limit).
func (in *Input) ReadBatch() ([]byte, int, error) {
	if b := in.cur; b == nil || in.i >= len(b.ends) {
		if err := in.fillFor(true); err != nil {
			in.last = lastNone
			return nil, 0, err
		}
	}
	b := in.cur
	w := b.whole()
	if in.i >= w {
		rec, err := in.readLong()
		if err != nil {
			return nil, 0, err
		}
		return rec, 1, nil
	}
	end := int(b.ends[w-1])
	data := b.data[in.off:end:end]
	n := w - in.i
	in.i, in.off = w, end
	in.last = lastRec
	return data, n, nil
}

// ScanFrom reads r to its end straight into this output's buffers and cuts
// the bytes into records after each delim byte (a record keeps its delim,
// as a line keeps its newline). No byte is copied in user space except an
// incomplete line that straddles two buffers. When a read returns less
// than asked (a pipe or terminal with nothing more for now) and no line is
// incomplete, the filled part is handed over at once, so a slow producer's
// lines flow one by one.
//
// A line longer than S fills a buffer without an end: the buffer goes out
// as part of a chain and the line goes on in the next one, so no line is
// too long. Bytes after the last delim at r's end are an unfinished line:
// the next ScanFrom or Write (the next file of `cat a b`) goes on with it,
// and the end of the output ends it. The incomplete line, when one
// straddles buffers, is copied through a slice the Output reuses (at most
// S bytes, outside the pool).
//
// What a run costs does not grow with S: a buffer is handed over once it
// holds ScanBatch bytes of whole lines, and each read asks for no more
// than the lines the buffer's index still has room for, judged from the
// lines read so far (see scanWant). So a 64 MiB S reads, touches and
// copies what a 256 KiB one does; only a line longer than ScanBatch
// fills more of a buffer, up to S, before it is cut into a chain.
func (o *Output) ScanFrom(r io.Reader, delim byte) error {
	for {
		b := o.pend
		switch {
		case b != nil && len(b.data) == cap(b.data) && b.end() == 0:
			// A full buffer and no line end: a long line, which goes on
			// in the next buffer.
			if err := o.nextBuffer(); err != nil {
				return err
			}
		case b == nil || len(b.data) == cap(b.data) || b.count() >= cap(b.ends)-1 ||
			len(b.data) >= ScanBatch && b.end() > 0:
			if err := o.nextScanBuffer(delim); err != nil {
				return err
			}
		}
		b = o.pend
		start := len(b.data)
		want := o.scanWant(b)
		n, err := r.Read(b.data[start : start+want])
		if n > 0 {
			b.data = b.data[:start+n]
			if o.scanLazy {
				scanLines(b, start, delim)
			} else {
				indexLines(b, start, delim)
			}
		}
		if err == io.EOF {
			// Complete lines the index had no room for go on to fresh
			// buffers; only a final unterminated line may stay behind.
			for bytes.IndexByte(o.pend.data[o.pend.end():], delim) >= 0 {
				if err := o.nextScanBuffer(delim); err != nil {
					return err
				}
			}
			o.settleScan()
			return nil
		}
		if err != nil {
			o.settleScan()
			return err
		}
		if n < want && b.end() == len(b.data) {
			(*Ports)(o.t).Flush()
		}
	}
}

// ScanBatch is about the most bytes of whole lines ScanFrom puts in one
// buffer, and the most it reads at once: the default record size. Past
// it, a larger S only costs what its memory costs, and only for lines
// that need it. (ScanFrom once read S bytes at a time: with S = 64 MiB, a
// buffer's 4096 lines of 8 bytes were 32 KiB of a 64 MiB read, and the
// rest was copied to the next buffer, 4096 lines at a time: `cat f | wc -l`
// on 70 MB took 10 s instead of 0.2 s.)
const ScanBatch = 256 << 10

// scanMinRead is the least scanWant asks for: a read of a few lines.
const scanMinRead = 512

// scanWant returns how many bytes ScanFrom reads next into b, which has
// room for at least one: up to ScanBatch bytes in b (a line longer than
// that reads on ScanBatch at a time), and no more than what the free
// slots of b's index hold at the mean line length of b's lines (of the
// last buffer handed over, when b has none yet; a first read, with
// neither, is scanMinRead). So few whole lines are read that the index
// has no room for, which would be copied to the next buffer. A line under
// way reads at least its length so far, so a long line after short ones
// takes a few reads, not one per mean line length.
func (o *Output) scanWant(b *Buf) int {
	start := len(b.data)
	want := ScanBatch
	if start < ScanBatch {
		want = ScanBatch - start
	}
	bytes, lines := o.scanBytes, o.scanLines // of the buffer handed over last
	if len(b.ends) > 0 {
		bytes, lines = b.end(), b.count()
	}
	guess := scanMinRead
	if lines > 0 {
		slots := cap(b.ends) - 1 - b.count()
		guess = max(int(int64(slots)*int64(bytes)/int64(lines)), scanMinRead)
	}
	want = min(want, max(guess, start-b.end()))
	return min(want, cap(b.data)-start)
}

// scanLines is what ScanFrom does with the lines it has just read into
// b.data[from:] when the queue's reader reads bytes (wc, a file, a pipe to
// a program: Queue.raw). While b's index has room for all of them, it only
// counts them and moves the end of b's unindexed lines (Buf.lazy) past the
// last; a reader of records would index them when it takes b, and a
// reader of bytes never does. Past that room it indexes b now, as many
// lines as fit; the rest go on to the next buffer.
//
// tail -n 10000000 wrote its 90 MB to wc -l in 80 ms, 64 of them indexing
// lines that wc counted again without looking at the index: counting is a
// vector instruction's work, indexing a store per line. For a reader of
// records the index is built all the same, only on the reader's core, and
// cat FILE | grep LIT, whose grep looks only at the lines around a match,
// took 40% longer: so lines are left unindexed only for a reader that has
// shown itself a reader of bytes, from its first ReadBytes on.
func scanLines(b *Buf, from int, delim byte) {
	data := b.data[from:]
	c := bytes.Count(data, []byte{delim})
	if c == 0 {
		return
	}
	if b.count()+c > cap(b.ends)-1 {
		b.index()
		indexLines(b, from, delim)
		return
	}
	last := int32(from + bytes.LastIndexByte(data, delim) + 1)
	if b.lazy == 0 {
		b.ends = append(b.ends, last)
		b.delim = delim
	} else {
		b.ends[len(b.ends)-1] = last
	}
	b.lazy += int32(c)
}

// settleScan leaves the pending buffer as the other writes expect it, its
// every line indexed, when ScanFrom returns: a buffer whose unindexed
// lines end it is handed over as it is (the reader indexes them, if it
// reads records); one with an unfinished line after them is indexed.
func (o *Output) settleScan() {
	b := o.pend
	if b == nil || b.lazy == 0 {
		return
	}
	if b.end() < len(b.data) {
		b.index()
		return
	}
	o.lockFor(OpWrite) // hands b over
	o.t.pool.mu.Unlock()
}

// indexLines records the end of every line that ends in b.data[from:],
// leaving one slot of ends free for a final unterminated line.
//
// Short lines (seq's, a column of numbers) are found eight bytes at a
// time, every delimiter of a word from one load, where bytes.IndexByte's
// call and setup cost more than the line. A line still going after
// indexLong bytes is searched for with bytes.IndexByte, faster on long
// ones, and so are the lines after it while they are long too.
//
// The word loop is a function of its own: sharing a loop with the call to
// bytes.IndexByte kept its values on the stack, reloaded on every word,
// and 9-byte lines were indexed at 1.2 GB/s; alone it reaches 1.7 to
// 3 GB/s (BenchmarkIndexLines). Storing the first two ends of a word
// whatever its count, to spare the branch, was slower still.
func indexLines(b *Buf, from int, delim byte) {
	// A line may have begun before from: search from the last end.
	pos := max(b.end(), from)
	data := b.data
	k, most := len(b.ends), cap(b.ends)-1
	if k >= most {
		return
	}
	ends := b.ends[:most]
	for k < most {
		// Short lines a word at a time, in a loop of its own: with the
		// call below in the same loop, its values lived on the stack.
		var full bool
		pos, k, full = indexWords(data, pos, ends, k, delim)
		if full || k == most {
			break
		}
		// A long line, or the last bytes: bytes.IndexByte, for this line
		// and the lines after it while they are long too.
		for k < most {
			i := bytes.IndexByte(data[pos:], delim)
			if i < 0 {
				b.ends = ends[:k]
				return
			}
			pos += i + 1
			ends[k] = int32(pos)
			k++
			if i < indexLong {
				break
			}
		}
	}
	b.ends = ends[:k]
}

// indexWords adds to ends[k:] the ends of the lines of data from pos,
// eight bytes at a time, while lines are shorter than indexLong and a
// whole word is left. It returns where it stopped (no delimiter is
// between the last end and there), how many ends there are now, and
// whether ends ran out of room with delimiters of the last word still to
// add.
func indexWords(data []byte, pos int, ends []int32, k int, delim byte) (int, int, bool) {
	most := len(ends)
	run := 0 // words in a row with no delimiter
	for pos+8 <= len(data) && run < indexLong/8 {
		m := delimBytes(binary.LittleEndian.Uint64(data[pos:]), delim)
		if m == 0 {
			run++
			pos += 8
			continue
		}
		run = 0
		for ; m != 0; m &= m - 1 {
			if k == most {
				return pos, k, true
			}
			ends[k] = int32(pos + bits.TrailingZeros64(m)>>3 + 1)
			k++
		}
		pos += 8
	}
	return pos, k, false
}

// indexLong is how far indexLines looks for a line's end eight bytes at a
// time before it hands the search to bytes.IndexByte.
const indexLong = 32

// delimBytes returns w (eight bytes, the first in the low bits) with the
// high bit of each byte that equals delim set, and every other bit clear.
// It is exact: no carry crosses from one byte to the next.
func delimBytes(w uint64, delim byte) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	x := w ^ (uint64(delim) * 0x0101010101010101) // zero where delim
	return ^((x&low7 + low7) | x | low7)
}

// nextScanBuffer hands over the pending buffer without its incomplete last
// line and takes a new one with that line copied to its start.
func (o *Output) nextScanBuffer(delim byte) error {
	t := o.t
	p := t.pool
	if o.closed {
		return ErrClosed
	}
	t.yieldPoint(OpWrite)
	p.mu.Lock()
	defer p.mu.Unlock()
	o.carry = o.carry[:0]
	if b := o.pend; b != nil {
		last := b.end()
		if len(b.ends) > 0 {
			o.scanBytes, o.scanLines = last, b.count()
		}
		o.carry = append(o.carry, b.data[last:]...)
		o.carried += int64(len(b.data) - last)
		b.data = b.data[:last]
		o.commitLocked()
	}
	b, err := o.newBufferLocked()
	if err != nil {
		return err
	}
	b.data = append(b.data, o.carry...)
	indexLines(b, 0, delim)
	o.pend = b
	o.scanLazy = o.q.raw
	return nil
}

// Pass is the batch form of a filter: it takes the records of in not yet
// read in its current buffer (the next buffer, if the current one is used
// up), keeps those for which keep returns true, and hands them to o without
// copying them: the kept records are packed in place and the buffer itself
// moves to o's queue. A buffer that ends with the start of a record longer
// than S moves on cut before that start, which is copied to the port's own
// memory; the record is then read whole, as by Read, and written if kept.
// So Pass holds one buffer at a time. rec is valid only during the call to
// keep. Pass
// returns io.EOF at the end of in; other errors are those of Read and
// Write. Records read from in before Pass must not be used after it.
func (o *Output) Pass(in *Input, keep func(rec []byte) bool) error {
	return o.pass(in, keep, nil)
}

// Copy moves the rest of in's current buffer (the next buffer, if it is
// used up) to o as it is, without a copy: the batch form of a task that
// copies its input unchanged. Unlike Pass it never looks at a record, so a
// record longer than S moves in its pieces and is never reassembled: a
// chain stays a chain, since such a task writes nothing between one
// buffer of a chain and the next. It returns io.EOF at the end of in;
// other errors are those of Write. Records read from in before Copy must
// not be used after it.
func (o *Output) Copy(in *Input) error {
	in.last = lastNone
	if b := in.cur; b == nil || in.i >= len(b.ends) {
		if err := in.take(false, takeAsIs); err != nil {
			return err
		}
	}
	b := in.cur
	if b == in.priv || b.pins > 0 {
		b.index()
		// The private buffer of CopyReads stays with its task, and a
		// buffer with kept records with its reader: copy the pieces, a
		// chain's last one left open.
		for in.i < len(b.ends) {
			end := int(b.ends[in.i])
			piece := b.data[in.off:end:end]
			in.i, in.off = in.i+1, end
			if err := o.WriteChunk(piece, in.i == len(b.ends) && b.cont); err != nil {
				return err
			}
		}
		return nil
	}
	lo := in.i
	in.i, in.off = len(b.ends), b.end()
	return o.move(in, lo)
}

// A Sieve decides which records of a batch pass a filter (Output.Sift).
// Keep decides one record; rec is valid only during the call. Skip, if
// set, decides many at once: given the unread records of a buffer back to
// back, it returns a length n and a verdict, meaning that every record
// ending at or before offset n shares that verdict (kept if keep is true,
// dropped otherwise) with no call to Keep; the record holding byte n, if
// any, is then decided by Keep. Skip must never put a record under a
// verdict Keep would not give it. For `grep LIT`, Skip finds LIT in the
// whole buffer and answers (its offset, false): the lines before the
// first match are dropped with one search and no call per line.
type Sieve struct {
	Keep func(rec []byte) bool
	Skip func(data []byte) (n int, keep bool)
}

// Sift is Pass with a Sieve: records decided in bulk by Skip, the others
// by Keep. Errors are those of Pass.
func (o *Output) Sift(in *Input, s Sieve) error {
	return o.pass(in, s.Keep, s.Skip)
}

func (o *Output) pass(in *Input, keep func(rec []byte) bool, skip func([]byte) (int, bool)) error {
	in.last = lastNone
	if b := in.cur; b == nil || in.i >= len(b.ends) {
		if err := in.fill(); err != nil {
			return err
		}
	}
	b := in.cur
	if b.cont && b != in.priv && b.pins == 0 && in.i < b.whole() {
		return o.passSplit(in, keep, skip)
	}
	if b == in.priv || b.cont || b.pins > 0 {
		// Records already copied out by Read (CopyReads): the private
		// buffer never goes to a queue, so the kept ones are copied. A
		// buffer that holds nothing but the first piece of a long
		// record cannot move either; that record is read whole, as by
		// Read. Nor can one whose reader keeps records of it (Hold).
		for w := b.whole(); in.i < w; {
			end := int(b.ends[in.i])
			rec := b.data[in.off:end:end]
			in.i, in.off = in.i+1, end
			if keep(rec) {
				if err := o.Write(rec); err != nil {
					return err
				}
			}
		}
		if b == in.priv {
			b.lo = in.i
		}
		if in.i < len(b.ends) {
			in.long = in.long[:0]
			return o.passLong(in, keep)
		}
		return nil
	}
	first, w := in.sift(keep, skip)
	if w == first {
		return nil // nothing kept; the buffer goes back to FREE on the next read
	}
	return o.move(in, first)
}

// passSplit is pass on a buffer that holds whole records and then the
// first piece of a record longer than S. Copying the kept records out to
// o would need a second buffer while this one is held, and under Record
// Oriented Scheduling on one buffer (Theorem 4.1 of "Thrifty Execution
// of Task Pipelines") there is none: the filter would wait for FREE while
// holding the only buffer. So the piece is copied to the port's own
// memory (in.long, as Read would), the buffer is cut before it, its whole
// records are sifted and the buffer moves on as any other; only then is
// the rest of the long record read, from the next buffers, and written if
// kept. The task holds one pool buffer at a time throughout.
func (o *Output) passSplit(in *Input, keep func(rec []byte) bool, skip func([]byte) (int, bool)) error {
	b := in.cur
	w := b.whole()
	start := int(b.ends[w-1])
	in.long = append(in.long[:0], b.data[start:b.end()]...)
	b.data, b.ends, b.cont = b.data[:start], b.ends[:w], false
	if first, kw := in.sift(keep, skip); kw > first {
		if err := o.move(in, first); err != nil {
			return err
		}
	}
	return o.passLong(in, keep)
}

// passLong reads the rest of the long record whose start is in in.long
// and writes it to o if keep keeps it.
func (o *Output) passLong(in *Input, keep func(rec []byte) bool) error {
	rec, err := in.readLongOn()
	if err != nil {
		return err
	}
	in.last = lastNone
	if keep(rec) {
		return o.Write(rec)
	}
	return nil
}

// sift keeps the records of the buffer being read, from the next one on,
// for which keep (or skip, see Sieve) says so, packing them in place, and
// consumes the buffer. The kept records are those from index first to w;
// none were kept if w == first.
func (in *Input) sift(keep func(rec []byte) bool, skip func([]byte) (int, bool)) (first, w int) {
	in.cur.index() // a step takes its buffer without Input.take
	b := in.cur
	first, w, woff := in.i, in.i, in.off
	// take moves record i (from off to end) into the kept part.
	take := func(off, end int) {
		if woff != off {
			copy(b.data[woff:], b.data[off:end])
		}
		woff += end - off
		b.ends[w] = int32(woff)
		w++
	}
	for i := in.i; i < len(b.ends); {
		if skip != nil {
			// Records before the one holding byte n share a fate.
			n, keeps := skip(b.data[in.off:b.end()])
			abs := int32(in.off + n)
			j := i + sort.Search(len(b.ends)-i, func(k int) bool { return b.ends[i+k] > abs })
			for ; i < j; i++ {
				end := int(b.ends[i])
				if keeps {
					take(in.off, end)
				}
				in.off = end
			}
			if i == len(b.ends) {
				break
			}
		}
		end := int(b.ends[i])
		if keep(b.data[in.off:end:end]) {
			take(in.off, end)
		}
		in.off = end
		i++
	}
	b.ends, b.data = b.ends[:w], b.data[:woff]
	// Everything is consumed as far as the reader goes: nothing is left to
	// Forward. If the buffer moves on, lo is set to the first kept record.
	in.i, in.off, b.lo = w, woff, w
	return first, w
}
