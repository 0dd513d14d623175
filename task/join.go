package task

import (
	"cmp"
	"context"
	"encoding/binary"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/tpipe/tpipe/buffer"
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
// outside the pool's B buffers (as sort's runs are). Once they pass half
// of o.Memory, Join stops matching in memory: every waiting record and every
// later one goes to one of several partition files by a hash of its key,
// and when the inputs end each partition is matched on its own (split
// again if it is still too large). Each match remembers the arrival number
// of the record that completed it, and the partitions' matches are merged
// in that order, so the output is the same as if everything had stayed in
// memory. Only one key with more waiting records than o.Memory can make
// Join hold more than that.
//
// Half, not all of o.Memory, because a table of millions of keys is slow
// to add to (each add waits on cache misses, single-threaded), while the
// partitions are matched on every core, each in a table a sixteenth the
// size: the 3M-key join of bench/README.md took 2.5 s spilling at half its
// 96 MiB against 3.1 s at all of it, and peaked 40 MB lower. A hybrid
// that kept half the partitions matching in memory was slower still (3.9
// s): it moved matching from the cores back to the one task.
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

// join is the state of one run of Join.
type join struct {
	key   func(rec []byte) ([]byte, bool)
	n     int
	o     JoinOptions
	emit  func(seq int64, joined []byte) error
	tab   *joinTable // the waiting records, until a spill
	seq   int64      // arrival number of the next record
	tmp   []byte     // an entry being written to a partition
	parts *joinParts // set once the waiting records went to disk
}

func newJoin(key func([]byte) ([]byte, bool), n int, o JoinOptions, emit func(int64, []byte) error) *join {
	return &join{key: key, n: n, o: o, emit: emit, tab: newJoinTable(n)}
}

// add takes record rec of input i, whose key is k, with the next arrival
// number: it joins it with the oldest waiting record of its key on every
// other input, or keeps it.
func (j *join) add(i int, k, rec []byte) error {
	seq := j.seq
	j.seq++
	if j.parts != nil {
		j.tmp = appendEntry(j.tmp[:0], seq, i, rec, k)
		return j.parts.add(k, j.tmp)
	}
	if err := j.tab.add(seq, i, k, rec, nil, j.emit); err != nil {
		return err
	}
	if j.o.Memory > 0 && j.tab.mem() > j.o.Memory/2 {
		return j.spill()
	}
	return nil
}

// report passes the entry of every record still waiting in t to fn,
// input by input, in arrival order.
func report(t *joinTable, fn func(stored []byte, e joinEntry) error) error {
	type waiting struct {
		seq   int64
		input int32
		node  uint32
	}
	all := make([]waiting, 0, t.waited)
	err := t.eachNode(func(x uint32, e joinEntry) error {
		all = append(all, waiting{e.seq, int32(e.input), x})
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b waiting) int {
		if a.input != b.input {
			return cmp.Compare(a.input, b.input)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, w := range all {
		b, e := t.stored(w.node)
		if err := fn(b, e); err != nil {
			return err
		}
	}
	return nil
}

// spill moves every waiting record to partition files, in the order
// they arrived; from now on add sends records there too. (Only the order
// among the records of one key and one input matters: none waiting now
// completes a match with another waiting now. A compaction keeps that
// order.)
func (j *join) spill() error {
	parts, err := newJoinParts(j.o.Dir)
	if err != nil {
		return err
	}
	j.parts = parts
	err = j.tab.arena.each(func(b []byte, e joinEntry) error { return parts.add(e.key, b) })
	j.tab = nil
	return err
}

func (j *join) close() {
	if j.parts != nil {
		j.parts.close()
	}
}

// joinFanout is how many partitions a spill or a split makes, and
// joinMaxDepth how many times a partition is split at most: a partition
// still too large after that is one key's records, which no split helps.
// joinNodeCost is about the bytes of memory a waiting record takes beyond
// its entry (its node and its share of the table of keys).
const (
	joinFanout    = 16
	joinMaxDepth  = 4
	joinBlockSize = 64 << 10
	joinNodeCost  = 40
	joinWorkers   = 4
)

// joinParts are partition files being written, of entries.
type joinParts struct {
	seed  maphash.Seed
	files [joinFanout]*os.File
	w     [joinFanout]*recfile.Writer
	size  [joinFanout]int64 // bytes of memory a partition's records would take
	count [joinFanout]int   // a partition's records
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

// add writes entry, of a record whose key is k, to its partition.
func (p *joinParts) add(k, entry []byte) error {
	i := maphash.Bytes(p.seed, k) % joinFanout
	p.size[i] += int64(len(entry) + joinNodeCost)
	p.count[i]++
	return p.w[i].Add(entry)
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

// end is called when every input has ended: it passes every record still
// waiting to unmatched (if not nil). After a spill, it first matches each
// partition on its own and writes the matches to out in the order they
// would have been made in memory.
func (j *join) end(ctx context.Context, out func([]byte) error, unmatched func(int, []byte)) error {
	left := func(_ []byte, e joinEntry) error {
		if unmatched != nil {
			unmatched(e.input, e.rec)
		}
		return nil
	}
	if j.parts == nil {
		return report(j.tab, left)
	}
	if err := j.parts.finish(); err != nil {
		return err
	}
	return j.matchParts(ctx, j.parts, 1, func(b []byte) error {
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return errJoinCorrupt
		}
		return out(b[n:])
	}, func(b []byte) error {
		e, err := decodeEntry(b)
		if err != nil {
			return err
		}
		return left(b, e)
	})
}

// matchParts matches each finished partition of p on its own (matchPart)
// and merges the results: the matches by arrival number into out, the
// records left waiting by input and arrival number into left. out gets
// each match after its arrival number (a uvarint), left entries.
//
// The partitions of the first spill are matched by as many goroutines as
// there are cores (at most joinWorkers), each with its own table, and a
// partition is split when it would take more than its share of the budget;
// the partitions of a split are matched one at a time.
func (j *join) matchParts(ctx context.Context, p *joinParts, depth int, out, left func([]byte) error) error {
	outs := make([]*os.File, len(p.files))
	lefts := make([]*os.File, len(p.files))
	defer func() {
		for _, f := range slices.Concat(outs, lefts) {
			if f != nil {
				f.Close()
			}
		}
	}()
	workers := 1
	if depth == 1 {
		workers = min(runtime.GOMAXPROCS(0), joinWorkers)
	}
	errs := make([]error, len(p.files))
	next := make(chan int, len(p.files))
	for i := range p.files {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				outs[i], lefts[i], errs[i] = j.matchPart(ctx, p.files[i], p.size[i], p.count[i], depth, int64(j.o.Memory)/int64(workers))
				p.files[i].Close()
				p.files[i] = nil
			}
		})
	}
	wg.Wait()
	// The first error, as one line: after a cancel every partition has
	// the same.
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := joinMerge(outs, seqOf, out); err != nil {
		return err
	}
	return joinMerge(lefts, inputSeqOf, left)
}

// eachStored calls fn with the entries of partition file f, a block at a
// time: stored[i] is an entry's bytes and es[i] the entry decoded, valid
// during the call.
func (j *join) eachStored(f *os.File, fn func(stored [][]byte, es []joinEntry) error) error {
	r := recfile.NewReader(f, 0)
	var blk recfile.Block
	var stored [][]byte
	var es []joinEntry
	for {
		err := r.ReadBlock(&blk)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		stored, es = stored[:0], es[:0]
		for i := range blk.Len() {
			b := blk.Record(i)
			e, err := decodeEntry(b)
			if err != nil {
				return err
			}
			if e.size != len(b) || e.input >= j.n {
				return errJoinCorrupt
			}
			stored, es = append(stored, b), append(es, e)
		}
		if err := fn(stored, es); err != nil {
			return err
		}
	}
}

// matchPart matches the records of partition file f (which would take
// size bytes in memory, of the memory it may use) and returns two files: the matches, each after
// the arrival number of the record that completed it, in that order; and
// the entries of the records left waiting, in input then arrival order. A
// partition larger than the budget is split first, by another hash, and
// its parts' results merged.
func (j *join) matchPart(ctx context.Context, f *os.File, size int64, count int, depth int, memory int64) (outF, leftF *os.File, err error) {
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
	if size > memory && depth < joinMaxDepth {
		err = j.splitPart(ctx, f, depth, ow, lw)
	} else {
		err = j.matchInMemory(f, count, ow, lw)
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

// matchInMemory replays partition file f, of count entries, through a
// table in memory sized for them. The table is far larger than the
// processor's caches, so each block of entries is first looked up without
// being added (joinTable.warm): those loads do not wait on each other, and
// the adds that follow find their slots, nodes and keys in the cache.
func (j *join) matchInMemory(f *os.File, count int, ow, lw *recfile.Writer) error {
	var tmp []byte
	emit := func(seq int64, joined []byte) error {
		tmp = binary.AppendUvarint(tmp[:0], uint64(seq))
		return ow.Add(append(tmp, joined...))
	}
	t := newJoinTableFor(j.n, count)
	var fps []uint32
	err := j.eachStored(f, func(stored [][]byte, es []joinEntry) error {
		fps = t.warm(fps[:0], es)
		for i, e := range es {
			if err := t.addFP(fps[i], e.seq, e.input, e.key, e.rec, stored[i], emit); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return report(t, func(b []byte, _ joinEntry) error { return lw.Add(b) })
}

// splitPart splits partition file f by a new hash and matches each part.
func (j *join) splitPart(ctx context.Context, f *os.File, depth int, ow, lw *recfile.Writer) error {
	p, err := newJoinParts(j.o.Dir)
	if err != nil {
		return err
	}
	defer p.close()
	err = j.eachStored(f, func(stored [][]byte, es []joinEntry) error {
		for i, e := range es {
			if err := p.add(e.key, stored[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := p.finish(); err != nil {
		return err
	}
	return j.matchParts(ctx, p, depth+1, ow.Add, lw.Add)
}

// seqOf is the order of matches: by arrival number. inputSeqOf is the
// order of entries: by input, then arrival number.
func seqOf(b []byte) (uint64, uint64) {
	seq, _ := binary.Uvarint(b)
	return seq, 0
}

func inputSeqOf(b []byte) (uint64, uint64) {
	e, _ := decodeEntry(b)
	return uint64(e.input), uint64(e.seq)
}

// joinMerge merges record files, each sorted by the key that order reads
// from a record, into emit. Each record's key is read once, as it comes
// to the head of its file.
func joinMerge(files []*os.File, order func([]byte) (uint64, uint64), emit func([]byte) error) error {
	var h []joinHead
	for _, f := range files {
		if f == nil {
			continue // an empty partition
		}
		hd := joinHead{r: recfile.NewReader(f, 0)}
		if ok, err := hd.next(order); err != nil {
			return err
		} else if ok {
			h = append(h, hd)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		joinDown(h, i)
	}
	for len(h) > 0 {
		if err := emit(h[0].rec); err != nil {
			return err
		}
		ok, err := h[0].next(order)
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		joinDown(h, 0)
	}
	return nil
}

// joinHead is the next record of a file being merged, and its key.
type joinHead struct {
	r      *recfile.Reader
	rec    []byte
	k1, k2 uint64
}

// next reads the file's next record; false at its end.
func (hd *joinHead) next(order func([]byte) (uint64, uint64)) (bool, error) {
	rec, err := hd.r.Next()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	hd.rec = rec
	hd.k1, hd.k2 = order(rec)
	return true, nil
}

func (hd *joinHead) less(o *joinHead) bool {
	return hd.k1 < o.k1 || hd.k1 == o.k1 && hd.k2 < o.k2
}

// joinDown restores the heap order of h below i.
func joinDown(h []joinHead, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].less(&h[c]) {
			c++
		}
		if !h[c].less(&h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
