package builtin

// Folding identical lines. A sort whose input repeats itself (`cut -f1 |
// sort | uniq -c`, the words of a text) holds each distinct line once with
// a count of its copies, found through a hash table as the lines are read,
// and sorts the distinct lines only. The output is the same: wherever two
// lines compare equal only when they are the same bytes (a sort with the
// last-resort comparison of whole lines, which is every sort but -s), the
// copies of a line come out together whatever their input order, and with
// -u only the first of each group comes out, which folding keeps first.
// Under -s without -u, lines that tie on the keys but differ keep their
// input order, which folding would lose: that sort does not fold.
//
// Hashing costs a little on every line and saves the sorting of each
// folded one (its entry, its abbreviations, its radix passes, and a write
// from a random place in memory). When few lines fold, the table is
// dropped: sortFoldCheck lines after the first check, and at every doubling
// of the lines offered since, a table that folded fewer than one line in
// sortFoldMin stops. Its memory is part of the sort's budget: a table that
// would take the buffer past it is dropped rather than grown.

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

const (
	sortFoldCheck = 1 << 15                                        // lines offered before the first check
	sortFoldMin   = 8                                              // a table must fold at least 1 line in this many
	sortFoldSlots = 1 << 8                                         // the table's first size (it doubles as lines come: a sort of a few lines clears 6 KiB, not 96)
	sortFoldShare = 8                                              // a sort folds only if its table's first size is at most 1/8 of its budget
	sortFoldFirst = sortFoldSlots * int(unsafe.Sizeof(sortSlot{})) // bytes of the table's first size
)

// sortFold is the hash table of a sortBuffer's distinct lines. A slot
// holds where its line is and counts its copies itself, so that finding a
// copy reads the slot and the line's bytes and nothing else (the table of
// a text's half a million distinct words is larger than the caches, and
// each further place read is another wait on memory); the counts go to
// the lines' refs when the buffer is sorted (settle). A line's first slot
// is the top bits of its hash, kept in the slot, so the table grows
// without hashing any line again. It is owned by its sortBuffer.
type sortFold struct {
	seed    maphash.Seed
	slots   []sortSlot
	bits    int // len(slots) is 1<<bits
	offered int // lines offered since the table was made
	folded  int // of which, copies of a line held
	check   int // offered at the next check
}

// sortSlot is a line in the table: the top 32 bits of its hash, its index
// plus one (0: an empty slot), its place in the slabs (as its sortRef),
// and its copies beyond the first not yet settled.
type sortSlot struct {
	tag, idx     uint32
	slab, off, n uint32
	more         uint32
}

func newSortFold() *sortFold {
	return &sortFold{seed: maphash.MakeSeed(), slots: make([]sortSlot, sortFoldSlots),
		bits: bits.TrailingZeros(sortFoldSlots), check: sortFoldCheck}
}

// bytes is the table's memory.
func (f *sortFold) bytes() int { return int(unsafe.Sizeof(sortSlot{})) * len(f.slots) }

// find looks line up among b's lines: it counts a copy and reports true
// if it is there, else returns the slot where it goes and its tag.
func (f *sortFold) find(b *sortBuffer, line []byte) (slot int, tag uint32, found bool) {
	f.offered++
	tag = uint32(maphash.Bytes(f.seed, line) >> 32)
	mask := len(f.slots) - 1
	for i := int(tag >> (32 - f.bits)); ; i = (i + 1) & mask {
		s := &f.slots[i]
		if s.idx == 0 {
			return i, tag, false
		}
		if s.tag != tag || s.n != uint32(len(line)) || s.more == ^uint32(0) {
			continue
		}
		if bytes.Equal(b.slabs[s.slab][s.off:s.off+s.n], line) {
			s.more++
			f.folded++
			return 0, 0, true
		}
	}
}

// worth reports whether the table still pays for itself; it is asked
// after every line offered.
func (f *sortFold) worth() bool {
	if f.offered < f.check {
		return true
	}
	f.check *= 2
	return f.folded*sortFoldMin >= f.offered
}

// put fills slot with line i, held at r, and reports whether the table
// needs to grow (it is half full).
func (f *sortFold) put(slot int, tag uint32, i int, r sortRef) (grow bool) {
	f.slots[slot] = sortSlot{tag: tag, idx: uint32(i + 1), slab: r.slab, off: r.off, n: r.n}
	return i+1 >= len(f.slots)/2
}

// grow doubles the table.
func (f *sortFold) grow() {
	old := f.slots
	f.bits++
	f.slots = make([]sortSlot, 2*len(old))
	mask := len(f.slots) - 1
	for _, s := range old {
		if s.idx == 0 {
			continue
		}
		i := int(s.tag >> (32 - f.bits))
		for f.slots[i].idx != 0 {
			i = (i + 1) & mask
		}
		f.slots[i] = s
	}
}

// settle adds the copies counted in the table to the lines' refs.
func (f *sortFold) settle(b *sortBuffer) {
	for i := range f.slots {
		if s := &f.slots[i]; s.more > 0 {
			r := b.ref(int(s.idx) - 1)
			r.more += s.more
			s.more = 0
		}
	}
}

// reset empties the table for the next run, keeping its memory.
func (f *sortFold) reset() {
	clear(f.slots)
}
