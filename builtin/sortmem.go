package builtin

// sort in memory: the lines of a run packed in slabs, and how they are put
// in order. Each line gets an entry: where it is, and the abbreviated key
// of the level being sorted (see sortkey.go). A level is a key and a depth
// into it; the entries are put in order of their abbreviations by an MSD
// radix sort, and each group of equal abbreviations is sorted again at the
// next level: deeper into the same text key if the abbreviation was not
// exact, else by the next key, and finally by the whole line when neither
// -s nor -u is given. Keys without abbreviations (-h, -V, d, i), and
// groups whose abbreviation was not exact at a key that has no deeper
// level, are sorted by comparing lines. Every step is stable, so lines
// that compare equal keep their input order (-s, -u).
//
// Two cores share the work: the abbreviations of the first level are
// computed in halves, and the groups of a level are sorted by a pool of
// goroutines (one per GOMAXPROCS, at most --parallel).

import (
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// sortRef locates a held line in the slabs of a sortBuffer. Sorting moves
// these small pointer-free values rather than slice headers, so the
// garbage collector neither scans the array nor sees the swaps.
type sortRef struct {
	slab, off, n uint32
	more         uint32 // copies of the line beyond the first (see sortfold.go)
}

// sortEntry is a line being sorted: where it is, and its abbreviated key
// at the level being sorted.
type sortEntry struct {
	key uint64
	ref sortRef
}

// sortLineCost is what a held line costs beyond its bytes: its ref as it
// is read, and two entries (one of them scratch) as it is sorted.
const sortLineCost = int(unsafe.Sizeof(sortRef{})) + 2*int(unsafe.Sizeof(sortEntry{}))

// sortRefChunk is the refs in one chunk of sortBuffer.refs: chunks rather
// than one growing slice, whose every growth would copy all refs so far.
const sortRefChunk = 1 << 15

// sortFirstSlab is the size of a sortBuffer's first slab; each next one
// is twice the last, up to 1 MiB.
const sortFirstSlab = 4 << 10

// sortBuffer holds the lines of one run, packed in large slabs rather than
// allocated one by one. Slabs are kept from run to run. The zero value
// holds nothing; set budget.
type sortBuffer struct {
	slabs  [][]byte
	cur    int         // the slab being filled
	refs   [][]sortRef // the lines in input order, in chunks of sortRefChunk
	n      int         // lines held
	lines  []sortEntry // the lines in order, once sorted (see sorter)
	used   int         // bytes of lines plus sortLineCost per line, and the fold's table
	budget int
	// fold, if set, folds copies of a line held into its count
	// (sortRef.more); see sortfold.go. Set it before the first add.
	fold *sortFold
}

// newSortBuffer returns an empty buffer of budget bytes, folding copies
// of a line if fold is set.
func newSortBuffer(budget int, fold bool) *sortBuffer {
	b := &sortBuffer{budget: budget}
	// A table that takes much of a small budget (sort -S 64K) would leave
	// room for a few lines a run, and spill them one run at a time.
	if fold && sortFoldShare*sortFoldFirst <= budget {
		b.fold = newSortFold()
		b.used = b.fold.bytes()
	}
	return b
}

// ref returns the i-th line held, in input order.
func (b *sortBuffer) ref(i int) *sortRef {
	return &b.refs[i/sortRefChunk][i%sortRefChunk]
}

// times is how many lines an entry stands for in the output: its copies,
// or one when a sort keeps one line of each group (-u).
func (b *sortBuffer) times(r sortRef, unique bool) int {
	if unique {
		return 1
	}
	return int(r.more) + 1
}

// at returns the line r locates; it is valid until reset.
func (b *sortBuffer) at(r sortRef) []byte {
	return b.slabs[r.slab][r.off : r.off+r.n : r.off+r.n]
}

// add copies line into the buffer. It reports false, adding nothing, when
// the line would take the buffer past its budget; the buffer then needs
// to be spilled. A buffer with no line takes any line.
func (b *sortBuffer) add(line []byte) bool {
	f := b.fold
	var slot int
	var tag uint32
	if f != nil {
		var found bool
		if slot, tag, found = f.find(b, line); found {
			if !f.worth() {
				b.dropFold()
			}
			return true
		}
	}
	cost := len(line) + sortLineCost
	if b.n > 0 && b.used+cost > b.budget {
		return false
	}
	b.used += cost
	r := b.hold(line)
	if f != nil {
		switch {
		case !f.worth():
			b.dropFold()
		case f.put(slot, tag, b.n-1, r):
			if b.used+f.bytes() > b.budget {
				b.dropFold()
			} else {
				b.used += f.bytes()
				f.grow()
			}
		}
	}
	return true
}

// hold copies line into the slabs and returns its ref.
func (b *sortBuffer) hold(line []byte) sortRef {
	for {
		if b.cur == len(b.slabs) {
			// Slabs of at most 1 MiB: large enough that lines share them, small
			// enough that the last one is not mostly empty. They start at 4 KiB
			// and double: a sort of a few lines (a job of tpipe pmjq, run
			// thousands of times a second) allocates and clears a page, not
			// a MiB.
			size := min(b.budget, sortFirstSlab<<min(len(b.slabs), 8), 1<<20)
			b.slabs = append(b.slabs, make([]byte, 0, max(size, len(line))))
		}
		s := b.slabs[b.cur]
		if cap(s)-len(s) >= len(line) {
			c := b.n / sortRefChunk
			if c == len(b.refs) {
				// The first chunk grows by append from a few refs (a small
				// sort's are few); the others are made whole.
				first := sortRefChunk
				if c == 0 {
					first = 256
				}
				b.refs = append(b.refs, make([]sortRef, 0, first))
			}
			r := sortRef{slab: uint32(b.cur), off: uint32(len(s)), n: uint32(len(line))}
			b.refs[c] = append(b.refs[c], r)
			b.n++
			b.slabs[b.cur] = append(s, line...)
			return r
		}
		if len(s) == 0 {
			// A line longer than the slab: give it a slab of its own size.
			b.slabs[b.cur] = make([]byte, 0, len(line))
			continue
		}
		b.cur++
	}
}

// settle puts the copies the fold has counted into the lines' refs; the
// buffer's lines are then ready to sort.
func (b *sortBuffer) settle() {
	if b.fold != nil {
		b.fold.settle(b)
	}
}

// dropFold stops folding: the lines held keep their counts, lines added
// from now on are held one by one.
func (b *sortBuffer) dropFold() {
	b.settle()
	b.used -= b.fold.bytes()
	b.fold = nil
}

// inOrder returns the lines held as entries in input order, in dst if it
// has room.
func (b *sortBuffer) inOrder(dst []sortEntry) []sortEntry {
	if cap(dst) < b.n {
		dst = make([]sortEntry, b.n)
	}
	e := dst[:b.n]
	i := 0
	for _, c := range b.refs {
		for _, r := range c {
			e[i] = sortEntry{ref: r}
			i++
		}
	}
	return e
}

// reset empties the buffer, keeping its memory.
func (b *sortBuffer) reset() {
	for i := range b.slabs {
		b.slabs[i] = b.slabs[i][:0]
	}
	for i := range b.refs {
		b.refs[i] = b.refs[i][:0]
	}
	b.lines, b.cur, b.used, b.n = b.lines[:0], 0, 0, 0
	if b.fold != nil {
		b.fold.reset()
		b.used = b.fold.bytes()
	}
}

// sortLevel is what a group of entries is sorted by: key (len(keys) for
// the whole line, the last resort) from depth bytes into its text.
type sortLevel struct {
	key, depth int
}

// sorter sorts the entries of one sortBuffer. It is used by one run at a
// time; during sortBuffer its groups are shared out to workers, each
// owning the entries of its group.
type sorter struct {
	c       *sortCmd
	buf     *sortBuffer
	whole   sortKey     // the last resort: the whole line, bytewise, -r
	entries []sortEntry // kept from run to run, as tmp
	tmp     []sortEntry
	workers int
}

func newSorter(c *sortCmd) *sorter {
	s := &sorter{c: c, workers: max(1, min(runtime.GOMAXPROCS(0), c.parallel))}
	s.whole = sortKey{reverse: c.global.reverse}
	return s
}

// levelKey returns the key of a level.
func (s *sorter) levelKey(l sortLevel) *sortKey {
	if l.key == len(s.c.keys) {
		return &s.whole
	}
	return &s.c.keys[l.key]
}

// order is the order runs merge in: the sort's comparison, and the first
// level's abbreviation when it has one.
func (s *sorter) order() spillOrder {
	ord := spillOrder{cmp: s.c.compare}
	l := sortLevel{}
	if k := s.levelKey(l); k.abbreviates() {
		ord.abbrev = func(line []byte) uint64 { return k.abbrev(s.text(line, l), 0) }
	}
	return ord
}

// wholeLevel reports whether l sorts by the whole line.
func (s *sorter) wholeLevel(l sortLevel) bool { return l.key == len(s.c.keys) }

// next returns the level that sorts a group whose abbreviations at l are
// all equal to v, and ok false when the group is sorted already.
func (s *sorter) next(l sortLevel, v uint64) (next sortLevel, ok bool) {
	k := s.levelKey(l)
	if !k.abbrevExact(v) {
		if k.kind == kindText && k.abbreviates() {
			return sortLevel{l.key, l.depth + 7}, true
		}
		return l, true // compared line by line at this key
	}
	if l.key+1 < len(s.c.keys) || l.key+1 == len(s.c.keys) && s.c.lastCmp {
		return sortLevel{l.key + 1, 0}, true
	}
	return l, false
}

// text returns the text a level abbreviates in a line.
func (s *sorter) text(line []byte, l sortLevel) []byte {
	if s.wholeLevel(l) {
		return line
	}
	return s.c.key(line, &s.c.keys[l.key])
}

// sortBuffer sorts b.lines and, with -u, keeps the first of each group of
// equal lines.
func (s *sorter) sortBuffer(b *sortBuffer) {
	b.settle()
	s.buf = b
	if cap(s.entries) < b.n {
		s.entries = make([]sortEntry, b.n)
		s.tmp = make([]sortEntry, b.n)
	}
	e := b.inOrder(s.entries)
	b.lines = e
	// The first level is the first key, or the whole line when there is
	// none (key 0 is then len(keys)).
	s.sortLevel(e, s.tmp[:len(e)], sortLevel{}, true)
}

// each calls f with the lines of b in order, once sorted, and the number
// of times each is written: its copies, or, with -u, once for the first of
// each group of lines that compare equal, the others skipped. Skipping as
// the lines are written rather than in a pass of its own reads each line
// from its random place in the slabs once, not twice.
func (s *sorter) each(b *sortBuffer, f func(line []byte, n int) error) error {
	var prev []byte
	for i, e := range b.lines {
		line := b.at(e.ref)
		if s.c.unique {
			if i > 0 && s.c.compare(prev, line) == 0 {
				continue
			}
			prev = line
		}
		if err := f(line, b.times(e.ref, s.c.unique)); err != nil {
			return err
		}
	}
	return nil
}

// sortGroup is a slice of entries still to sort at a level, and the
// scratch space of its size. compare marks a group whose abbreviations at
// the level tied without being exact, to be sorted by comparing lines.
type sortGroup struct {
	e, tmp  []sortEntry
	level   sortLevel
	compare bool
}

// sortLevel sorts e at level l and its groups at the levels below. At the
// top (top set) the work is shared among s.workers goroutines.
func (s *sorter) sortLevel(e, tmp []sortEntry, l sortLevel, top bool) {
	if len(e) < 2 {
		return
	}
	if top && s.workers > 1 && len(e) >= 1<<14 {
		s.parallel(e, tmp, l)
		return
	}
	s.drain(sortGroup{e: e, tmp: tmp, level: l})
}

// drain sorts g and the groups it leads to, depth first.
func (s *sorter) drain(g sortGroup) {
	stack := []sortGroup{g}
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		stack = s.sortOne(g, stack)
	}
}

// sortOne sorts the entries of g by g's level and appends the groups that
// need a further level to stack.
func (s *sorter) sortOne(g sortGroup, stack []sortGroup) []sortGroup {
	k := s.levelKey(g.level)
	if g.compare || !k.abbreviates() {
		s.compareSort(g.e, g.level.key)
		return stack
	}
	for i := range g.e {
		g.e[i].key = k.abbrev(s.text(s.buf.at(g.e[i].ref), g.level), g.level.depth)
	}
	return s.radixGroups(g, stack)
}

// radixGroups sorts g.e by the abbreviations already in it and pushes its
// groups of equal abbreviations that need another level.
func (s *sorter) radixGroups(g sortGroup, stack []sortGroup) []sortGroup {
	sortByKey(g.e, g.tmp)
	return s.groupsOf(g, stack)
}

// groupsOf pushes the groups of equal abbreviations of g.e, sorted by
// them, that need another level.
func (s *sorter) groupsOf(g sortGroup, stack []sortGroup) []sortGroup {
	for i := 0; i < len(g.e); {
		j := i + 1
		for j < len(g.e) && g.e[j].key == g.e[i].key {
			j++
		}
		if j-i > 1 {
			if next, ok := s.next(g.level, g.e[i].key); ok {
				stack = append(stack, sortGroup{g.e[i:j], g.tmp[i:j], next, next == g.level})
			}
		}
		i = j
	}
	return stack
}

// compareSort sorts e by comparing lines from key i on, stably.
func (s *sorter) compareSort(e []sortEntry, i int) {
	b := s.buf
	slices.SortStableFunc(e, func(x, y sortEntry) int {
		return s.c.compareFrom(b.at(x.ref), b.at(y.ref), i)
	})
}

// parallel is sortLevel at the top with several workers: the first
// level's abbreviations are computed in parts, one a worker; radix passes
// split the entries into buckets by their leading bytes (sortBuckets),
// and the workers sort the buckets, each with the groups it leads to.
func (s *sorter) parallel(e, tmp []sortEntry, l sortLevel) {
	k := s.levelKey(l)
	if !s.wholeLevel(l) && !k.abbreviates() {
		// Nothing to abbreviate: sort halves by comparison, then merge.
		s.parallelCompare(e, tmp, l.key)
		return
	}
	var wg sync.WaitGroup
	part := (len(e) + s.workers - 1) / s.workers
	for w := range s.workers {
		lo, hi := min(w*part, len(e)), min((w+1)*part, len(e))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				e[i].key = k.abbrev(s.text(s.buf.at(e[i].ref), l), l.depth)
			}
		})
	}
	wg.Wait()
	buckets := sortBuckets(e, tmp, len(e)/(4*s.workers))
	// Largest buckets first, so that the last to finish is small.
	slices.SortFunc(buckets, func(a, b sortBucket) int { return (b.hi - b.lo) - (a.hi - a.lo) })
	work := make(chan sortBucket)
	for range s.workers {
		wg.Go(func() {
			for b := range work {
				g := sortGroup{e: e[b.lo:b.hi], tmp: tmp[b.lo:b.hi], level: l}
				if b.shift >= 0 {
					sortByKeyBelow(g.e, g.tmp, b.shift)
				}
				for _, g := range s.groupsOf(g, nil) {
					s.drain(g)
				}
			}
		})
	}
	for _, b := range buckets {
		work <- b
	}
	close(work)
	wg.Wait()
}

// sortBucket is a run of entries that are in place relative to the rest:
// their keys share the bytes above shift+8, and differ from the others'
// there; shift -8 when they are all equal.
type sortBucket struct {
	lo, hi, shift int
}

// sortBuckets puts e in order of the leading bytes of its keys, one radix
// pass at a time, until no bucket holds more than most entries (or can be
// split further), and returns the buckets, for workers to sort apart.
func sortBuckets(e, tmp []sortEntry, most int) []sortBucket {
	todo := []sortBucket{{0, len(e), 56}}
	var done []sortBucket
	for len(todo) > 0 {
		b := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if b.hi-b.lo <= max(most, 32) || b.shift < 0 {
			done = append(done, b)
			continue
		}
		shift, ok := sortTopByte(e[b.lo:b.hi], b.shift)
		if !ok {
			done = append(done, sortBucket{b.lo, b.hi, -8})
			continue
		}
		start := radixSplit(e[b.lo:b.hi], tmp[b.lo:b.hi], shift)
		for c := range 256 {
			if lo, hi := b.lo+start[c], b.lo+start[c+1]; hi > lo {
				todo = append(todo, sortBucket{lo, hi, shift - 8})
			}
		}
	}
	return done
}

// sortTopByte returns the shift of the most significant byte, at shift or
// below, in which keys of e differ, and ok false when they are all equal.
func sortTopByte(e []sortEntry, shift int) (int, bool) {
	var or, and uint64 = 0, ^uint64(0)
	for i := range e {
		or |= e[i].key
		and &= e[i].key
	}
	diff := (or ^ and) & (1<<(shift+8) - 1)
	if diff == 0 {
		return 0, false
	}
	for diff>>shift&0xff == 0 {
		shift -= 8
	}
	return shift, true
}

// parallelCompare sorts e from key i by comparison on two workers, a half
// each, and merges the halves into tmp and back.
func (s *sorter) parallelCompare(e, tmp []sortEntry, i int) {
	mid := len(e) / 2
	var wg sync.WaitGroup
	wg.Go(func() { s.compareSort(e[:mid], i) })
	s.compareSort(e[mid:], i)
	wg.Wait()
	b := s.buf
	x, y, o := 0, mid, 0
	for x < mid && y < len(e) {
		// Ties take the first half's line: the merge is stable.
		if s.c.compareFrom(b.at(e[y].ref), b.at(e[x].ref), i) < 0 {
			tmp[o] = e[y]
			y++
		} else {
			tmp[o] = e[x]
			x++
		}
		o++
	}
	o += copy(tmp[o:], e[x:mid])
	copy(tmp[o:], e[y:])
	copy(e, tmp)
}

// sortByKey sorts e by key, stably, using tmp (as long as e) as scratch:
// a most-significant-byte-first radix sort, insertion sort for short
// slices.
func sortByKey(e, tmp []sortEntry) { sortByKeyBelow(e, tmp, 56) }

// radixPass sorts e by the byte at shift and the bytes below it.
func radixPass(e, tmp []sortEntry, shift int) {
	start := radixSplit(e, tmp, shift)
	if shift == 0 {
		return
	}
	for b := range 256 {
		lo, hi := start[b], start[b+1]
		if hi-lo > 1 {
			sortByKeyBelow(e[lo:hi], tmp[lo:hi], shift-8)
		}
	}
}

// radixSplit puts e in order of the byte at shift, stably, and returns
// where each value's entries start (start[256] is len(e)).
func radixSplit(e, tmp []sortEntry, shift int) *[257]int {
	var count [256]int
	for i := range e {
		count[e[i].key>>shift&0xff]++
	}
	var start [257]int
	for b := range 256 {
		start[b+1] = start[b] + count[b]
	}
	pos := start
	for i := range e {
		b := e[i].key >> shift & 0xff
		tmp[pos[b]] = e[i]
		pos[b]++
	}
	copy(e, tmp)
	return &start
}

// sortByKeyBelow is sortByKey for entries that share the bytes above
// shift+8. Bytes that every key shares need no pass: it starts at the
// first that differs.
func sortByKeyBelow(e, tmp []sortEntry, shift int) {
	if len(e) <= 32 {
		insertionByKey(e)
		return
	}
	if shift, ok := sortTopByte(e, shift); ok {
		radixPass(e, tmp, shift)
	}
}

func insertionByKey(e []sortEntry) {
	for i := 1; i < len(e); i++ {
		x := e[i]
		j := i
		for j > 0 && e[j-1].key > x.key {
			e[j] = e[j-1]
			j--
		}
		e[j] = x
	}
}
