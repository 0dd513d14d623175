package task

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"slices"

	"github.com/tpipe/tpipe/record"
)

// A waiting record is kept, in memory and in partition files alike, as
// one entry of bytes:
//
//	entry = seq input keyAt keyLen recLen rec [key]
//
// every number a uvarint: seq the arrival number, input the input it came
// on, keyAt the key's offset in rec times 2 (plus 1 when the key is not a
// part of rec and follows it instead). A key found inside its record,
// which is the usual case, costs nothing more.

var errJoinCorrupt = errors.New("join: a partition file is damaged")

// appendEntry appends to b the entry of record rec of input, arrival seq,
// whose key is k.
func appendEntry(b []byte, seq int64, input int, rec, k []byte) []byte {
	at, outside := keyIn(rec, k), 0
	if at < 0 {
		at, outside = len(rec), 1
	}
	b = binary.AppendUvarint(b, uint64(seq))
	b = binary.AppendUvarint(b, uint64(input))
	b = binary.AppendUvarint(b, uint64(at)<<1|uint64(outside))
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = binary.AppendUvarint(b, uint64(len(rec)))
	b = append(b, rec...)
	if outside == 1 {
		b = append(b, k...)
	}
	return b
}

// keyIn returns where k is in rec, or -1. A key function most often
// returns a part of its record, found at once when it starts the record.
func keyIn(rec, k []byte) int {
	if bytes.HasPrefix(rec, k) {
		return 0
	}
	return bytes.Index(rec, k)
}

// joinEntry is a decoded entry; rec and key are parts of the entry's
// bytes.
type joinEntry struct {
	seq      int64
	input    int
	rec, key []byte
	size     int // bytes of the whole entry
}

// decodeEntry decodes the entry that b starts with.
func decodeEntry(b []byte) (e joinEntry, err error) {
	var v [5]uint64
	n := 0
	for i := range v {
		x, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return e, errJoinCorrupt
		}
		v[i], n = x, n+m
	}
	at, outside, klen, rlen := v[2]>>1, v[2]&1, v[3], v[4]
	end := uint64(n) + rlen
	if end > uint64(len(b)) {
		return e, errJoinCorrupt
	}
	e.seq, e.input, e.rec = int64(v[0]), int(v[1]), b[n:end]
	if outside == 1 {
		if klen > uint64(len(b))-end {
			return e, errJoinCorrupt
		}
		e.key, end = b[end:end+klen], end+klen
	} else {
		if at > rlen || klen > rlen-at {
			return e, errJoinCorrupt
		}
		e.key = e.rec[at : at+klen]
	}
	e.size = int(end)
	return e, nil
}

// joinTable holds the records of a join waiting for their partners with
// no Go pointer per record, so that millions of them cost the garbage
// collector nothing and memory about what they are:
//
//   - the entries live in an arena of chunks (joinArena);
//   - a node per record says where its entry is, and links the records of
//     one key and one input in a circular list whose tail is kept, so
//     that the head (the oldest) is the tail's next;
//   - a slot per key, in a table with open addressing and linear probing,
//     holds a fingerprint of the key's hash and the tail of each input's
//     list. The key itself is read from the entry of any of its records.
//
// A slot is removed when its last record goes (by backward shifting, so
// the table has no tombstones). The zero joinTable is not usable; call
// newJoinTable. It is not safe for concurrent use.
type joinTable struct {
	n      int
	seed   maphash.Seed
	slots  []uint32     // stride n+1: fingerprint (0 for a free slot), then n tails (node+1, or 0)
	shift  uint         // 32 - log2(number of slots)
	used   int          // slots in use
	pages  [][]joinNode // the nodes, in pages of joinPage: they grow without a copy
	count  uint32       // nodes made
	free   uint32       // first free node (node+1), linked through next; 0 for none
	arena  joinArena
	buf    []byte   // the joined record being built
	waited int      // records waiting
	packed int      // compactions, for tests
	sink   uint32   // what warm read, kept so that its reads are not optimized away
	tails  []uint32 // warm's scratch
}

// joinNode is where a record's entry is in the arena, and the next node
// of its list (or of the free nodes).
type joinNode struct {
	chunk, off, next uint32
}

const (
	joinMinSlots = 16
	joinPage     = 1 << 13
)

// node returns node x.
func (t *joinTable) node(x uint32) *joinNode { return &t.pages[x/joinPage][x%joinPage] }

func newJoinTable(n int) *joinTable { return newJoinTableFor(n, 0) }

// newJoinTableFor returns a table for n inputs with room for count keys
// before it grows.
func newJoinTableFor(n, count int) *joinTable {
	t := &joinTable{n: n, seed: maphash.MakeSeed()}
	slots := joinMinSlots
	for slots*3 < count*4 {
		slots *= 2
	}
	t.resize(slots)
	return t
}

// mem returns the bytes the table holds.
func (t *joinTable) mem() int {
	return t.arena.size + 4*cap(t.slots) + 12*joinPage*len(t.pages) + cap(t.buf)
}

func (t *joinTable) home(fp uint32) uint32 { return (fp * 0x9e3779b1) >> t.shift }

func (t *joinTable) resize(count int) {
	old, s := t.slots, t.n+1
	t.slots = make([]uint32, count*s)
	t.shift = uint(32 - bits.TrailingZeros(uint(count)))
	mask := uint32(count - 1)
	for i := 0; i < len(old); i += s {
		if old[i] == 0 {
			continue
		}
		j := t.home(old[i])
		for t.slots[int(j)*s] != 0 {
			j = (j + 1) & mask
		}
		copy(t.slots[int(j)*s:int(j)*s+s], old[i:i+s])
	}
}

// entry returns the entry of node x.
func (t *joinTable) entry(x uint32) joinEntry {
	nd := *t.node(x)
	e, _ := decodeEntry(t.arena.at(nd.chunk, nd.off))
	return e
}

// find returns the slot of key k, whose fingerprint is fp, and true; or
// the free slot where it would go, and false.
func (t *joinTable) find(fp uint32, k []byte) (int, bool) {
	s, mask := t.n+1, uint32(len(t.slots)/(t.n+1)-1)
	for j := t.home(fp); ; j = (j + 1) & mask {
		at := int(j) * s
		switch t.slots[at] {
		case 0:
			return at, false
		case fp:
			for _, tail := range t.slots[at+1 : at+s] {
				if tail != 0 {
					if bytes.Equal(t.entry(tail-1).key, k) {
						return at, true
					}
					break
				}
			}
		}
	}
}

// remove empties the slot at, moving later slots of its run back so that
// every slot stays reachable from its home.
func (t *joinTable) remove(at int) {
	s, mask := t.n+1, uint32(len(t.slots)/(t.n+1)-1)
	i := uint32(at / s)
	for j := (i + 1) & mask; t.slots[int(j)*s] != 0; j = (j + 1) & mask {
		h := t.home(t.slots[int(j)*s])
		// Slot j stays if its home is cyclically in (i, j].
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		copy(t.slots[int(i)*s:int(i)*s+s], t.slots[int(j)*s:int(j)*s+s])
		i = j
	}
	clear(t.slots[int(i)*s : int(i)*s+s])
	t.used--
}

// fingerprint returns the hash of k as a table fingerprint, never 0.
func (t *joinTable) fingerprint(k []byte) uint32 {
	fp := uint32(maphash.Bytes(t.seed, k) >> 32)
	if fp == 0 {
		fp = 1
	}
	return fp
}

// add takes the record of input i, arrival seq, whose key is k: it joins
// it with the oldest waiting record of its key on every other input and
// calls emit with the joined record (tab-separated, ended by '\n', valid
// during the call), or keeps it. entry, when not nil, is the record's
// entry already encoded (a partition file's), which saves encoding it.
func (t *joinTable) add(seq int64, i int, k, rec, entry []byte, emit func(seq int64, joined []byte) error) error {
	return t.addFP(t.fingerprint(k), seq, i, k, rec, entry, emit)
}

// warm appends to fps the fingerprint of each entry's key, and reads what
// adding the entries would read first: the home slot of each, then the
// node and the key of the first record in that slot when its fingerprint
// matches. It changes nothing. Each pass's loads are independent, so the
// processor has many cache misses in flight at once, where add has one.
func (t *joinTable) warm(fps []uint32, es []joinEntry) []uint32 {
	s := t.n + 1
	var sink uint32
	for _, e := range es {
		fp := t.fingerprint(e.key)
		fps = append(fps, fp)
		sink += t.slots[int(t.home(fp))*s]
	}
	tails := t.tails[:0]
	for _, fp := range fps {
		at := int(t.home(fp)) * s
		if t.slots[at] != fp {
			continue
		}
		for _, tail := range t.slots[at+1 : at+s] {
			if tail != 0 {
				tails = append(tails, tail-1)
				sink += t.node(tail - 1).off
				break
			}
		}
	}
	for _, x := range tails {
		nd := t.node(x)
		sink += uint32(t.arena.chunks[nd.chunk][nd.off])
	}
	t.sink, t.tails = sink, tails
	return fps
}

// addFP is add with the fingerprint of k already computed.
func (t *joinTable) addFP(fp uint32, seq int64, i int, k, rec, entry []byte, emit func(seq int64, joined []byte) error) error {
	at, found := t.find(fp, k)
	complete := t.n == 1
	if found {
		tails := t.slots[at+1 : at+1+t.n]
		complete = tails[i] == 0
		for x, tail := range tails {
			if x != i && tail == 0 {
				complete = false
			}
		}
	}
	if !complete {
		if !found {
			if (t.used+1)*4 > len(t.slots)/(t.n+1)*3 {
				t.resize(2 * len(t.slots) / (t.n + 1))
				at, _ = t.find(fp, k)
			}
			t.slots[at] = fp
			t.used++
		}
		if entry == nil {
			t.buf = appendEntry(t.buf[:0], seq, i, rec, k)
			entry = t.buf
		}
		t.push(at, i, entry)
		return nil
	}
	b := t.buf[:0]
	for x := range t.n {
		if x > 0 {
			b = append(b, '\t')
		}
		if x == i {
			b = append(b, record.TrimEOL(rec)...)
			continue
		}
		h := t.pop(at, x)
		b = append(b, record.TrimEOL(t.entry(h).rec)...)
		t.release(h)
	}
	if found && t.empty(at) {
		t.remove(at)
	}
	t.buf = append(b, '\n')
	return emit(seq, t.buf)
}

// empty reports whether slot at has no record left.
func (t *joinTable) empty(at int) bool {
	for _, tail := range t.slots[at+1 : at+1+t.n] {
		if tail != 0 {
			return false
		}
	}
	return true
}

// push appends a copy of entry to the list of input i in slot at.
func (t *joinTable) push(at, i int, entry []byte) {
	chunk, off := t.arena.put(entry, t)
	var x uint32
	if t.free != 0 {
		x, t.free = t.free-1, t.node(t.free-1).next
	} else {
		x = t.count
		if x%joinPage == 0 {
			t.pages = append(t.pages, make([]joinNode, joinPage))
		}
		t.count++
	}
	*t.node(x) = joinNode{chunk: chunk, off: off, next: x}
	if tail := t.slots[at+1+i]; tail != 0 {
		t.node(x).next = t.node(tail - 1).next
		t.node(tail - 1).next = x
	}
	t.slots[at+1+i] = x + 1
	t.waited++
}

// pop unlinks the oldest node of input x's list in slot at and returns
// it; the caller releases it.
func (t *joinTable) pop(at, x int) uint32 {
	tail := t.slots[at+1+x] - 1
	head := t.node(tail).next
	if head == tail {
		t.slots[at+1+x] = 0
	} else {
		t.node(tail).next = t.node(head).next
	}
	return head
}

// release frees node x and its entry.
func (t *joinTable) release(x uint32) {
	nd := *t.node(x)
	t.arena.release(nd.chunk, nd.off)
	*t.node(x) = joinNode{next: t.free}
	t.free = x + 1
	t.waited--
}

// stored returns the entry of node x, as bytes and decoded. It is the
// table's memory, valid until the next change.
func (t *joinTable) stored(x uint32) ([]byte, joinEntry) {
	nd := *t.node(x)
	b := t.arena.at(nd.chunk, nd.off)
	e, _ := decodeEntry(b)
	return b[:e.size], e
}

// eachNode calls fn with every waiting record's node and entry: key by
// key in table order, and within a key input by input, oldest first.
func (t *joinTable) eachNode(fn func(x uint32, e joinEntry) error) error {
	return t.walk(func(x uint32) error { return fn(x, t.entry(x)) })
}

// walk calls fn with every waiting record's node, in eachNode's order.
func (t *joinTable) walk(fn func(x uint32) error) error {
	s := t.n + 1
	for at := 0; at < len(t.slots); at += s {
		if t.slots[at] == 0 {
			continue
		}
		for _, tail := range t.slots[at+1 : at+s] {
			if tail == 0 {
				continue
			}
			for x := t.node(tail - 1).next; ; x = t.node(x).next {
				if err := fn(x); err != nil {
					return err
				}
				if x == tail-1 {
					break
				}
			}
		}
	}
	return nil
}

// compact copies every waiting entry to new chunks, leaving out the
// space of those released.
func (t *joinTable) compact() {
	old := t.arena
	t.arena = joinArena{}
	t.packed++
	t.walk(func(x uint32) error {
		nd := t.node(x)
		b := old.at(nd.chunk, nd.off)
		e, _ := decodeEntry(b)
		nd.chunk, nd.off = t.arena.put(b[:e.size], nil)
		return nil
	})
}

// joinArena is the entries' memory: chunks filled one after another,
// each entry after a byte that is 1 while it is live and 0 once released. A
// chunk whose entries are all released is dropped (or, the one being
// filled, reused); when more than half of the arena's bytes are released
// ones, the table compacts it.
type joinArena struct {
	chunks [][]byte
	live   []int    // bytes of live entries per chunk
	gen    []int    // per chunk, the order in which it was started
	made   int      // chunks started
	spare  []uint32 // dropped chunks' numbers, to reuse
	cur    int      // the chunk being filled, if any chunk is
	size   int      // bytes of every chunk
	used   int      // bytes of live entries
}

const (
	joinMinChunk = 4 << 10
	joinMaxChunk = 1 << 20
)

// put copies entry to the arena and returns where. t, if not nil, is
// compacted first when the arena is mostly released space.
func (a *joinArena) put(entry []byte, t *joinTable) (chunk, off uint32) {
	if len(a.chunks) == 0 || len(a.chunks[a.cur])+1+len(entry) > cap(a.chunks[a.cur]) {
		if t != nil && a.size > 8*joinMinChunk && a.size-a.used > a.used {
			t.compact()
			return t.arena.put(entry, nil)
		}
		a.grow(1 + len(entry))
	}
	c := a.chunks[a.cur]
	off = uint32(len(c))
	c = append(c, 1)
	a.chunks[a.cur] = append(c, entry...)
	a.live[a.cur] += 1 + len(entry)
	a.used += 1 + len(entry)
	return uint32(a.cur), off
}

// grow starts a new chunk for an entry of n bytes: chunks grow with the
// arena, from joinMinChunk to joinMaxChunk, so that a small join holds
// little; a larger entry has a chunk of its own size.
func (a *joinArena) grow(n int) {
	size := max(joinMinChunk, min(joinMaxChunk, a.size/4), n)
	c := make([]byte, 0, size)
	a.size += size
	if k := len(a.spare); k > 0 {
		a.cur, a.spare = int(a.spare[k-1]), a.spare[:k-1]
		a.chunks[a.cur], a.live[a.cur], a.gen[a.cur] = c, 0, a.made
	} else {
		a.cur = len(a.chunks)
		a.chunks = append(a.chunks, c)
		a.live = append(a.live, 0)
		a.gen = append(a.gen, a.made)
	}
	a.made++
}

// at returns the entry at chunk, off (and the bytes after it).
func (a *joinArena) at(chunk, off uint32) []byte { return a.chunks[chunk][off+1:] }

// each calls fn with every live entry, in the order they were put: the
// chunks by age, each from its start. It reads memory in order, where
// following the table's lists would jump from one cache miss to the next.
func (a *joinArena) each(fn func(entry []byte, e joinEntry) error) error {
	order := make([]int, 0, len(a.chunks))
	for c, b := range a.chunks {
		if b != nil {
			order = append(order, c)
		}
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(a.gen[x], a.gen[y]) })
	for _, c := range order {
		b := a.chunks[c]
		for off := 0; off < len(b); {
			e, err := decodeEntry(b[off+1:])
			if err != nil {
				return err
			}
			if b[off] == 1 {
				if err := fn(b[off+1:off+1+e.size], e); err != nil {
					return err
				}
			}
			off += 1 + e.size
		}
	}
	return nil
}

// release frees the entry at chunk, off.
func (a *joinArena) release(chunk, off uint32) {
	e, _ := decodeEntry(a.at(chunk, off))
	a.chunks[chunk][off] = 0
	a.live[chunk] -= 1 + e.size
	a.used -= 1 + e.size
	if a.live[chunk] > 0 {
		return
	}
	if int(chunk) == a.cur {
		a.chunks[chunk] = a.chunks[chunk][:0]
		return
	}
	a.size -= cap(a.chunks[chunk])
	a.chunks[chunk] = nil
	a.spare = append(a.spare, chunk)
}
