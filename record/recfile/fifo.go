package recfile

import (
	"errors"
	"io"
	"os"
)

// FIFO is a first-in, first-out queue of records whose memory is bounded:
// it keeps at most about Memory bytes of records in memory and moves the
// older ones to unlinked temporary files, in order. It is what lets tail
// -n N, head -n -N and the like hold N lines of any length and number.
//
// Records live in segments, oldest first. The newest segments are in
// memory; when they hold more than the budget, the oldest of them is
// appended to a temp file, which takes segments up to fifoFileSize and is
// closed (and so gone) once every segment in it is dropped or read: the
// files a FIFO keeps open grow with what it holds by one per 64 MiB, not
// one per segment, so a tail of gigabytes does not run out of file
// descriptors. A segment dropped whole (Drop, as tail does with lines it
// will never print) is forgotten unread, so tail reads back from disk only
// what it prints. The zero FIFO is not usable; call NewFIFO. A FIFO is not
// safe for concurrent use.
type FIFO struct {
	dir     string
	seg     int // target bytes of one memory segment
	budget  int // bytes of records kept in memory at most (about)
	segs    []*fifoSeg
	n       int64 // records held
	bytes   int64 // their total length
	mem     int   // bytes of the memory segments
	spare   *fifoSeg
	file    *fifoFile // the file spilled segments are appended to; nil before the first
	w       *Writer   // the writer of spilled segments, reused for each
	spilled int64     // bytes written to disk so far
	err     error
}

// fifoFileSize is the size past which spilled segments go to a new file.
const fifoFileSize = 64 << 20

// fifoFile is a temp file holding spilled segments back to back. Each is
// read through a section of its own (ReadAt), so appending a segment and
// reading an older one do not disturb each other.
type fifoFile struct {
	f      *os.File
	size   int64 // bytes written
	segs   int   // segments in it not yet dropped or read
	closed bool
}

func (ff *fifoFile) close() {
	if !ff.closed {
		ff.closed = true
		ff.f.Close()
	}
}

// fifoSeg is a run of consecutive records, in memory (data and ends) or in
// a section of a file (file, r). skip counts records at the front that are
// dropped but, on disk, not yet read past.
type fifoSeg struct {
	data []byte
	ends []int // ends[i] is the end of record i in data
	next int   // index of the oldest record not yet popped (memory)

	file  *fifoFile
	r     *Reader
	cur   []byte // the record Front returned, on disk
	have  bool   // cur is read and not popped
	skip  int64  // records to read past before the next one
	count int64  // records left (dropped ones excluded)
	size  int64  // their bytes
}

// NewFIFO returns an empty FIFO that keeps about memory bytes in memory
// and spills to files in dir ("" for os.TempDir()).
func NewFIFO(dir string, memory int) *FIFO {
	memory = max(memory, 4<<10)
	return &FIFO{dir: dir, budget: memory, seg: min(max(memory/8, 1<<10), fifoSegMax)}
}

// fifoSegMax is the most bytes of one memory segment. A segment's memory
// is taken whole when it starts, so with a budget of a gigabyte (sort
// memory auto) a segment of an eighth of it made tail -n 5 cost 128 MiB;
// smaller segments cost only more of them on disk, where they share files.
const fifoSegMax = 1 << 20

// Len returns the number of records held.
func (q *FIFO) Len() int64 { return q.n }

// Bytes returns the total length of the records held.
func (q *FIFO) Bytes() int64 { return q.bytes }

// Spilled returns the bytes of records written to disk so far.
func (q *FIFO) Spilled() int64 { return q.spilled }

// Push appends a copy of rec as the newest record.
func (q *FIFO) Push(rec []byte) error {
	if q.err != nil {
		return q.err
	}
	last := q.last()
	if last == nil || last.file != nil || len(last.data) > 0 && len(last.data)+len(rec) > q.seg {
		last = q.newSeg()
	}
	last.data = append(last.data, rec...)
	last.ends = append(last.ends, len(last.data))
	last.count++
	last.size += int64(len(rec))
	q.n++
	q.bytes += int64(len(rec))
	q.mem += len(rec)
	for q.mem > q.budget {
		if err := q.spillOne(); err != nil {
			q.err = err
			return err
		}
	}
	return nil
}

func (q *FIFO) last() *fifoSeg {
	if len(q.segs) == 0 {
		return nil
	}
	return q.segs[len(q.segs)-1]
}

func (q *FIFO) newSeg() *fifoSeg {
	s := q.spare
	q.spare = nil
	if s == nil {
		s = &fifoSeg{data: make([]byte, 0, q.seg)}
	}
	q.segs = append(q.segs, s)
	return s
}

// spillOne appends a memory segment to the current file (a new one when
// there is none or it is full): the newest whole one, not the one being
// filled unless it is the only one in memory (one record larger than the
// budget then goes to disk). The newest rather than the oldest: a FIFO
// that slides over more than its budget (tail -n) drops its oldest
// segments soon, and they free memory for the segments that follow, so
// only about the part of the window past the budget goes to disk; spilling
// the oldest wrote nearly every segment once the window was full.
func (q *FIFO) spillOne() error {
	var filling *fifoSeg
	for i := len(q.segs) - 1; i >= 0; i-- {
		s := q.segs[i]
		if s.file != nil {
			continue
		}
		if i == len(q.segs)-1 {
			filling = s
			continue
		}
		return q.spill(s)
	}
	if filling != nil {
		return q.spill(filling)
	}
	return errors.New("recfile: FIFO: nothing in memory to spill")
}

// spill appends memory segment s to the current file.
func (q *FIFO) spill(s *fifoSeg) error {
	ff := q.file
	if ff == nil || ff.size >= fifoFileSize {
		f, err := CreateTemp(q.dir)
		if err != nil {
			return err
		}
		ff = &fifoFile{f: f}
		q.file = ff
	}
	// The file's offset stays at its end: segments are read with
	// ReadAt.
	// One writer for every spill, and the segment's memory kept for
	// the next: a FIFO that holds more than its budget spills a
	// segment for each it takes in (tail -n of more than fits), and
	// fresh memory for each was most of its time.
	if q.w == nil {
		q.w = NewWriter(ff.f, S2, 0)
	} else {
		q.w.Reset(ff.f)
	}
	w := q.w
	start := 0
	if s.next > 0 {
		start = s.ends[s.next-1]
	}
	for i := s.next; i < len(s.ends); i++ {
		if err := w.Add(s.data[start:s.ends[i]]); err != nil {
			return err
		}
		start = s.ends[i]
	}
	if err := w.Close(); err != nil {
		return err
	}
	q.mem -= int(s.size)
	q.spilled += s.size
	if q.spare == nil && cap(s.data) <= 2*q.seg {
		q.spare = &fifoSeg{data: s.data[:0], ends: s.ends[:0]}
	}
	s.data, s.ends, s.next = nil, nil, 0
	s.file, s.r = ff, NewReader(io.NewSectionReader(ff.f, ff.size, w.Written()), 0)
	ff.size += w.Written()
	ff.segs++
	return nil
}

// Front returns the oldest record, valid until the next call on q. It
// returns io.EOF if q is empty.
func (q *FIFO) Front() ([]byte, error) {
	if q.err != nil {
		return nil, q.err
	}
	if q.n == 0 {
		return nil, io.EOF
	}
	s := q.segs[0]
	if s.file == nil {
		start := 0
		if s.next > 0 {
			start = s.ends[s.next-1]
		}
		return s.data[start:s.ends[s.next]], nil
	}
	if !s.have {
		for ; s.skip > 0; s.skip-- {
			rec, err := s.r.Next()
			if err != nil {
				q.err = fifoReadErr(err)
				return nil, q.err
			}
			q.bytes -= int64(len(rec))
			s.size -= int64(len(rec))
		}
		rec, err := s.r.Next()
		if err != nil {
			q.err = fifoReadErr(err)
			return nil, q.err
		}
		s.cur, s.have = rec, true
	}
	return s.cur, nil
}

func fifoReadErr(err error) error {
	if err == io.EOF {
		return errors.New("recfile: FIFO: a spilled segment ended early")
	}
	return err
}

// Pop removes the oldest record. Front must have returned it first.
func (q *FIFO) Pop() error {
	rec, err := q.Front()
	if err != nil {
		return err
	}
	s := q.segs[0]
	q.n--
	q.bytes -= int64(len(rec))
	s.count--
	s.size -= int64(len(rec))
	if s.file == nil {
		s.next++
		q.mem -= len(rec)
	} else {
		s.have = false
	}
	if s.count == 0 {
		q.dropFront()
	}
	return nil
}

// Drop removes the k oldest records (all of them if k >= Len). Whole
// segments on disk are closed unread; a part of one is read past only
// when a later Front needs what follows it. Bytes stays exact for memory
// segments; for a part of a disk segment it goes down when the next Front
// reads past the dropped records.
func (q *FIFO) Drop(k int64) error {
	if q.err != nil {
		return q.err
	}
	for k > 0 && q.n > 0 {
		s := q.segs[0]
		if k >= s.count {
			k -= s.count
			q.n -= s.count
			q.bytes -= s.size
			if s.file == nil {
				q.mem -= int(s.size)
			}
			s.count, s.size = 0, 0
			q.dropFront()
			continue
		}
		if s.file != nil {
			// Read past them later; their bytes are not known yet.
			if s.have {
				s.have = false
				q.n--
				q.bytes -= int64(len(s.cur))
				s.size -= int64(len(s.cur))
				s.count--
				k--
			}
			s.skip += k
			s.count -= k
			q.n -= k
			return nil
		}
		// Part of a memory segment: k < s.count, so it stays.
		start := 0
		if s.next > 0 {
			start = s.ends[s.next-1]
		}
		s.next += int(k)
		size := s.ends[s.next-1] - start
		s.count -= k
		s.size -= int64(size)
		q.n -= k
		q.bytes -= int64(size)
		q.mem -= size
		return nil
	}
	return nil
}

// dropFront forgets the front segment, which holds no record now.
func (q *FIFO) dropFront() {
	s := q.segs[0]
	q.segs[0] = nil
	q.segs = q.segs[1:]
	if ff := s.file; ff != nil {
		s.file, s.r = nil, nil
		// A file goes once no segment in it is left; the current one
		// too, the next spill starting a new file.
		if ff.segs--; ff.segs == 0 {
			ff.close()
			if q.file == ff {
				q.file = nil
			}
		}
		return
	}
	if q.spare == nil && cap(s.data) <= 2*q.seg {
		s.data, s.ends, s.next, s.count, s.size = s.data[:0], s.ends[:0], 0, 0, 0
		q.spare = s
	}
}

// Close releases every file q holds; q is empty afterwards.
func (q *FIFO) Close() error {
	for _, s := range q.segs {
		if s.file != nil {
			s.file.close()
		}
	}
	if q.file != nil {
		q.file.close()
	}
	q.segs, q.n, q.bytes, q.mem, q.file = nil, 0, 0, 0, nil
	return nil
}
