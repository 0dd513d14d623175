package task

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"slices"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
)

// JoinOptions bound the memory of Join.
type JoinOptions struct {
	// Memory is about the bytes of waiting records Join keeps in memory;
	// past it, Join moves them to partition files on disk. 0 means no
	// bound.
	Memory int
	// Dir is where the partition files go ("" for os.TempDir()). They are
	// unlinked as soon as they are created.
	Dir string
}

// Join is the and-merge of pmjq: it reads its inputs as records arrive
// (buffer.Ports.Ready) and, once a record with the same key has arrived on
// every input, writes one record to output 0: those records in input
// order, each without its trailing '\n', separated by tabs and ended by
// '\n'. Records with the same key on one input are matched first come,
// first served. A joined record longer than the record size goes out as a
// chain of buffers, like any long record.
//
// key returns a record's key, or ok false for a record without one; the
// key may be part of rec and is not retained. A record without a key is
// passed at once to unmatched (if not nil); a record still waiting for its
// partners when every input has ended is passed to it then, input by input
// and in arrival order within an input. Either way rec is the record as
// read, valid only during the call. Which records are unmatched does not
// depend on how the inputs interleave. If the reader of the output stops,
// Join returns at once and reports nothing.
//
// The records waiting for their partners are copies held by the task,
// outside the pool's B buffers (as sort's runs are). Once they pass
// o.Memory, Join stops matching in memory: every waiting record and every
// later one goes to one of several partition files by a hash of its key,
// and when the inputs end each partition is matched on its own (split
// again if it is still too large). Each match remembers the arrival number
// of the record that completed it, and the partitions' matches are merged
// in that order, so the output is the same as if everything had stayed in
// memory. Only one key with more waiting records than o.Memory can make
// Join hold more than that.
func Join(key func(rec []byte) ([]byte, bool), unmatched func(input int, rec []byte), o JoinOptions) Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		j := newJoin(key, p.NumIn(), o, func(_ int64, joined []byte) error { return out.Write(joined) })
		defer j.close()
		for {
			i, err := p.Ready()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			// The records of the current buffer are read without waiting;
			// then Ready looks at the other inputs.
			in := p.In(i)
			for {
				rec, err := in.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				k, ok := key(rec)
				if !ok {
					if unmatched != nil {
						unmatched(i, rec)
					}
					continue
				}
				if err := j.add(i, k, rec); err != nil {
					return err
				}
				if in.Buffered() == 0 {
					break
				}
			}
		}
		return j.end(ctx, out.Write, unmatched)
	}
}

// join is the state of one run of Join, or of the matching of one
// partition after a spill.
type join struct {
	key   func(rec []byte) ([]byte, bool)
	n     int
	o     JoinOptions
	emit  func(seq int64, joined []byte) error
	slots map[string]*joinSlot
	seq   int64  // arrival number of the next record
	held  int    // about the bytes that slots take
	buf   []byte // the joined record being built

	parts *joinParts // set once the waiting records went to disk
	depth int        // 0 for Join's own state, then one more per split
}

// joinSlot holds the records of one key waiting for their partners: a
// FIFO per input. At most n-1 FIFOs are non-empty, or they would have
// been joined.
type joinSlot struct {
	fifo     [][]joinRec
	nonEmpty int
}

type joinRec struct {
	seq int64
	rec []byte
}

// Costs in bytes, beyond the records' own, of a waiting record and of a
// key's slot: a rough measure so that Memory means about what it says.
const (
	joinRecCost  = 48
	joinSlotCost = 160
)

func newJoin(key func([]byte) ([]byte, bool), n int, o JoinOptions, emit func(int64, []byte) error) *join {
	return &join{key: key, n: n, o: o, emit: emit, slots: map[string]*joinSlot{}}
}

// add takes record rec of input i, whose key is k, with the next arrival
// number: it joins it with the oldest waiting record of its key on every
// other input, or keeps it.
func (j *join) add(i int, k, rec []byte) error {
	seq := j.seq
	j.seq++
	if j.parts != nil {
		return j.parts.add(k, seq, i, rec)
	}
	if err := j.match(seq, i, k, rec); err != nil {
		return err
	}
	if j.o.Memory > 0 && j.held > j.o.Memory {
		return j.spill()
	}
	return nil
}

// match is add in memory.
func (j *join) match(seq int64, i int, k, rec []byte) error {
	s := j.slots[string(k)]
	if s == nil {
		s = &joinSlot{fifo: make([][]joinRec, j.n)}
		j.slots[string(k)] = s
		j.held += len(k) + joinSlotCost
	}
	if len(s.fifo[i]) > 0 || s.nonEmpty < j.n-1 {
		if len(s.fifo[i]) == 0 {
			s.nonEmpty++
		}
		s.fifo[i] = append(s.fifo[i], joinRec{seq, slices.Clone(rec)})
		j.held += len(rec) + joinRecCost
		return nil
	}
	b := j.buf[:0]
	for x := range j.n {
		if x > 0 {
			b = append(b, '\t')
		}
		if x == i {
			b = append(b, record.TrimEOL(rec)...)
			continue
		}
		f := s.fifo[x]
		b = append(b, record.TrimEOL(f[0].rec)...)
		j.held -= len(f[0].rec) + joinRecCost
		f[0] = joinRec{}
		if s.fifo[x] = f[1:]; len(f) == 1 {
			s.fifo[x] = nil
			s.nonEmpty--
		}
	}
	if s.nonEmpty == 0 {
		delete(j.slots, string(k))
		j.held -= len(k) + joinSlotCost
	}
	j.buf = append(b, '\n')
	return j.emit(seq, j.buf)
}

// waiting is a record still waiting for its partners.
type waiting struct {
	input int
	joinRec
}

// left returns every waiting record, input by input, in arrival order.
func (j *join) left() []waiting {
	var all []waiting
	for _, s := range j.slots {
		for x, f := range s.fifo {
			for _, r := range f {
				all = append(all, waiting{x, r})
			}
		}
	}
	slices.SortFunc(all, func(a, b waiting) int {
		if a.input != b.input {
			return a.input - b.input
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return all
}

// report passes every record still waiting to fn, input by input, in
// arrival order.
func (j *join) report(fn func(input int, seq int64, rec []byte) error) error {
	for _, w := range j.left() {
		if err := fn(w.input, w.seq, w.rec); err != nil {
			return err
		}
	}
	return nil
}

// spill moves every waiting record to partition files, in arrival order;
// from now on add sends records there too.
func (j *join) spill() error {
	parts, err := newJoinParts(j.o.Dir)
	if err != nil {
		return err
	}
	j.parts = parts
	all := j.left()
	slices.SortFunc(all, func(a, b waiting) int { return cmp.Compare(a.seq, b.seq) })
	for _, w := range all {
		k, _ := j.key(w.rec)
		if err := parts.add(k, w.seq, w.input, w.rec); err != nil {
			return err
		}
	}
	clear(j.slots)
	j.held = 0
	return nil
}

func (j *join) close() {
	if j.parts != nil {
		j.parts.close()
	}
}

// joinFanout is how many partitions a spill or a split makes, and
// joinMaxDepth how many times a partition is split at most: a partition
// still too large after that is one key's records, which no split helps.
const (
	joinFanout    = 16
	joinMaxDepth  = 4
	joinBlockSize = 64 << 10
)

// joinParts are partition files being written. Each record is stored
// with its arrival number and input (see joinEncode).
type joinParts struct {
	seed  maphash.Seed
	files [joinFanout]*os.File
	w     [joinFanout]*recfile.Writer
	size  [joinFanout]int64
	tmp   []byte
}

func newJoinParts(dir string) (*joinParts, error) {
	p := &joinParts{seed: maphash.MakeSeed()}
	for i := range p.files {
		f, err := recfile.CreateTemp(dir)
		if err != nil {
			p.close()
			return nil, err
		}
		p.files[i] = f
		p.w[i] = recfile.NewWriter(f, recfile.S2, joinBlockSize)
	}
	return p, nil
}

func (p *joinParts) add(k []byte, seq int64, input int, rec []byte) error {
	i := maphash.Bytes(p.seed, k) % joinFanout
	p.tmp = joinEncode(p.tmp[:0], seq, input, rec)
	p.size[i] += int64(len(p.tmp))
	return p.w[i].Add(p.tmp)
}

// finish ends every file and rewinds it for reading.
func (p *joinParts) finish() error {
	for i, w := range p.w {
		if err := w.Close(); err != nil {
			return err
		}
		if _, err := p.files[i].Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	return nil
}

func (p *joinParts) close() {
	for i, f := range p.files {
		if f != nil {
			f.Close()
			p.files[i] = nil
		}
	}
}

// joinEncode appends to b a record stored with its arrival number and its
// input.
func joinEncode(b []byte, seq int64, input int, rec []byte) []byte {
	b = binary.AppendUvarint(b, uint64(seq))
	b = binary.AppendUvarint(b, uint64(input))
	return append(b, rec...)
}

var errJoinCorrupt = errors.New("join: a partition file is damaged")

func joinDecode(b []byte) (seq int64, input int, rec []byte, err error) {
	s, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, errJoinCorrupt
	}
	in, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return 0, 0, nil, errJoinCorrupt
	}
	return int64(s), int(in), b[n+m:], nil
}

// end is called when every input has ended: it passes every record still
// waiting to unmatched (if not nil). After a spill, it first matches each
// partition on its own and writes the matches to out in the order they
// would have been made in memory.
func (j *join) end(ctx context.Context, out func([]byte) error, unmatched func(int, []byte)) error {
	if j.parts == nil {
		return j.report(func(input int, _ int64, rec []byte) error {
			if unmatched != nil {
				unmatched(input, rec)
			}
			return nil
		})
	}
	if err := j.parts.finish(); err != nil {
		return err
	}
	return j.matchParts(ctx, j.parts, j.depth+1, func(rec []byte) error {
		_, _, joined, err := joinDecode(rec)
		if err != nil {
			return err
		}
		return out(joined)
	}, func(rec []byte) error {
		_, input, r, err := joinDecode(rec)
		if err == nil && unmatched != nil {
			unmatched(input, r)
		}
		return err
	})
}

// matchParts matches each finished partition of p on its own (matchPart)
// and merges the results: the matches by arrival number into out, the
// records left waiting by input and arrival number into left. Both get
// records as stored (joinEncode).
func (j *join) matchParts(ctx context.Context, p *joinParts, depth int, out, left func([]byte) error) error {
	var outs, lefts []*os.File
	defer func() {
		for _, f := range slices.Concat(outs, lefts) {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i, f := range p.files {
		o, l, err := j.matchPart(ctx, f, p.size[i], depth)
		if err != nil {
			return err
		}
		f.Close()
		p.files[i] = nil
		outs, lefts = append(outs, o), append(lefts, l)
	}
	if err := joinMerge(outs, bySeq, out); err != nil {
		return err
	}
	return joinMerge(lefts, byInputSeq, left)
}

// eachStored calls fn with every record of partition file f: as stored,
// and decoded, with its key.
func (j *join) eachStored(f *os.File, fn func(stored []byte, seq int64, input int, rec, k []byte) error) error {
	r := recfile.NewReader(f, 0)
	for {
		b, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		seq, input, rec, err := joinDecode(b)
		if err != nil {
			return err
		}
		k, ok := j.key(rec)
		if !ok || input >= j.n {
			return errJoinCorrupt
		}
		if err := fn(b, seq, input, rec, k); err != nil {
			return err
		}
	}
}

// matchPart matches the records of partition file f (size bytes stored)
// and returns two files: the matches, each stored with the arrival number
// of the record that completed it, in that order; and the records left
// waiting, in input then arrival order. A partition larger than the
// budget is split first, by another hash, and its parts' results merged.
func (j *join) matchPart(ctx context.Context, f *os.File, size int64, depth int) (outF, leftF *os.File, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if size == 0 {
		return nil, nil, nil
	}
	outF, err = recfile.CreateTemp(j.o.Dir)
	if err != nil {
		return nil, nil, err
	}
	leftF, err = recfile.CreateTemp(j.o.Dir)
	if err != nil {
		outF.Close()
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			outF.Close()
			leftF.Close()
		}
	}()
	ow := recfile.NewWriter(outF, recfile.S2, joinBlockSize)
	lw := recfile.NewWriter(leftF, recfile.S2, joinBlockSize)
	if size > int64(j.o.Memory) && depth < joinMaxDepth {
		err = j.splitPart(ctx, f, depth, ow, lw)
	} else {
		err = j.matchInMemory(f, ow, lw)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, c := range []struct {
		w *recfile.Writer
		f *os.File
	}{{ow, outF}, {lw, leftF}} {
		if err := c.w.Close(); err != nil {
			return nil, nil, err
		}
		if _, err := c.f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, err
		}
	}
	return outF, leftF, nil
}

// matchInMemory replays partition file f through an in-memory join.
func (j *join) matchInMemory(f *os.File, ow, lw *recfile.Writer) error {
	var tmp []byte
	sub := newJoin(j.key, j.n, JoinOptions{}, func(seq int64, joined []byte) error {
		tmp = binary.AppendUvarint(tmp[:0], uint64(seq))
		tmp = binary.AppendUvarint(tmp, 0)
		return ow.Add(append(tmp, joined...))
	})
	err := j.eachStored(f, func(_ []byte, seq int64, input int, rec, k []byte) error {
		return sub.match(seq, input, k, rec)
	})
	if err != nil {
		return err
	}
	return sub.report(func(input int, seq int64, rec []byte) error {
		tmp = joinEncode(tmp[:0], seq, input, rec)
		return lw.Add(tmp)
	})
}

// splitPart splits partition file f by a new hash and matches each part.
func (j *join) splitPart(ctx context.Context, f *os.File, depth int, ow, lw *recfile.Writer) error {
	p, err := newJoinParts(j.o.Dir)
	if err != nil {
		return err
	}
	defer p.close()
	err = j.eachStored(f, func(stored []byte, _ int64, _ int, _, k []byte) error {
		i := maphash.Bytes(p.seed, k) % joinFanout
		p.size[i] += int64(len(stored))
		return p.w[i].Add(stored)
	})
	if err != nil {
		return err
	}
	if err := p.finish(); err != nil {
		return err
	}
	return j.matchParts(ctx, p, depth+1, ow.Add, lw.Add)
}

// bySeq and byInputSeq order stored records (joinEncode) by arrival
// number, and by input and then arrival number.
func bySeq(a, b []byte) bool {
	sa, _ := binary.Uvarint(a)
	sb, _ := binary.Uvarint(b)
	return sa < sb
}

func byInputSeq(a, b []byte) bool {
	sa, ia, _, _ := joinDecode(a)
	sb, ib, _, _ := joinDecode(b)
	if ia != ib {
		return ia < ib
	}
	return sa < sb
}

// joinMerge merges the sorted record files files by less into emit.
func joinMerge(files []*os.File, less func(a, b []byte) bool, emit func([]byte) error) error {
	h := &joinHeap{less: less}
	for _, f := range files {
		if f == nil {
			continue // an empty partition
		}
		r := recfile.NewReader(f, 0)
		rec, err := r.Next()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return err
		}
		h.items = append(h.items, joinHead{r, rec})
	}
	heap.Init(h)
	for len(h.items) > 0 {
		top := &h.items[0]
		if err := emit(top.rec); err != nil {
			return err
		}
		rec, err := top.r.Next()
		switch {
		case err == io.EOF:
			heap.Pop(h)
		case err != nil:
			return err
		default:
			top.rec = rec
			heap.Fix(h, 0)
		}
	}
	return nil
}

type joinHead struct {
	r   *recfile.Reader
	rec []byte
}

type joinHeap struct {
	items []joinHead
	less  func(a, b []byte) bool
}

func (h *joinHeap) Len() int           { return len(h.items) }
func (h *joinHeap) Less(a, b int) bool { return h.less(h.items[a].rec, h.items[b].rec) }
func (h *joinHeap) Swap(a, b int)      { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *joinHeap) Push(x any)         { h.items = append(h.items, x.(joinHead)) }
func (h *joinHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
