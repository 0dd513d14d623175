package builtin

import "bytes"

// grepAC finds many fixed strings at once: the automaton of Aho and
// Corasick ("Efficient string matching: an aid to bibliographic search",
// 1975) with its failure links folded into a full transition table, so
// that a search is one table lookup a byte whatever the number of
// strings. grep -F -f FILE with a hundred strings searched each string in
// turn, a hundred passes over every buffer; GNU grep builds the same kind
// of automaton.
//
// Bytes are mapped to classes first: every byte that no string holds is
// class 0, so a row of the table is as wide as the strings' alphabet, not
// 256. With fold, the strings are in lower case and an upper case letter
// maps to its lower case's class.
//
// A grepAC is read-only once made and safe for concurrent use.
type grepAC struct {
	class [256]uint16
	width int     // classes, the width of a row of next
	next  []int32 // next[s*width+class]: the state after state s reads a byte of that class
	// depth is the length of the path from the root to each state: the
	// length of the string a terminal state ends.
	depth []int32
	// term marks the states at which a string ends: the state's own, or
	// one of its suffixes'.
	term []bool
	// own marks the states that end a string of their own; out links each
	// state to its longest proper suffix that does (-1 for none), so that
	// every string ending at a place can be listed.
	own []bool
	out []int32
	// fast is next for the search: each cell holds the next state's row
	// (state*width) shifted left by one, its low bit set when a string
	// ends there, so that a byte costs two loads and no multiply.
	fast []int32
	// starts are the bytes a string can start with (both cases under
	// fold), when they are few: at the root, the search skips to the next
	// of them with bytes.IndexByte.
	starts []byte
}

// grepACMaxCells bounds the tables (two of 4 bytes a cell): beyond it,
// the strings are searched one by one.
const grepACMaxCells = 4 << 20

// newGrepAC builds the automaton of pats, none empty; with fold, pats are
// in lower case. It returns nil when the table would be too large.
func newGrepAC(pats [][]byte, fold bool) *grepAC {
	a := &grepAC{}
	// Classes: 0 for bytes no string holds, then one for each byte that
	// one does.
	a.width = 1
	for _, p := range pats {
		for _, c := range p {
			if a.class[c] == 0 {
				a.class[c] = uint16(a.width)
				a.width++
			}
		}
	}
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			a.class[c] = a.class[c+'a'-'A']
		}
	}
	// The trie, with its transitions in next (0 is "none yet": no edge
	// leads back to the root).
	states := 1
	for _, p := range pats {
		states += len(p)
	}
	if states*a.width > grepACMaxCells {
		return nil
	}
	a.next = make([]int32, a.width)
	a.depth = []int32{0}
	a.own = []bool{false}
	for _, p := range pats {
		s := int32(0)
		for _, c := range p {
			cell := int(s)*a.width + int(a.class[c])
			if a.next[cell] == 0 {
				a.next[cell] = int32(len(a.depth))
				a.next = append(a.next, make([]int32, a.width)...)
				a.depth = append(a.depth, a.depth[s]+1)
				a.own = append(a.own, false)
			}
			s = a.next[cell]
		}
		a.own[s] = true
	}
	// Breadth first, each state's missing transitions are its failure
	// state's, which is nearer the root and so already complete.
	n := len(a.depth)
	fail := make([]int32, n)
	a.term = make([]bool, n)
	a.out = make([]int32, n)
	a.out[0] = -1
	queue := make([]int32, 0, n)
	for k := range a.width {
		if t := a.next[k]; t != 0 {
			fail[t] = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		a.term[s] = a.own[s] || a.term[f]
		a.out[s] = -1
		if a.own[f] {
			a.out[s] = f
		} else if f != 0 {
			a.out[s] = a.out[f]
		}
		row, frow := int(s)*a.width, int(f)*a.width
		for k := range a.width {
			if t := a.next[row+k]; t != 0 {
				fail[t] = a.next[frow+k]
				queue = append(queue, t)
			} else {
				a.next[row+k] = a.next[frow+k]
			}
		}
	}
	a.fast = make([]int32, len(a.next))
	for i, t := range a.next {
		a.fast[i] = t * int32(a.width) << 1
		if a.term[t] {
			a.fast[i] |= 1
		}
	}
	// The bytes strings start with, if few enough for IndexByte to pay.
	for _, p := range pats {
		for _, c := range []byte{p[0], p[0] - 'a' + 'A'} {
			if c != p[0] && !(fold && 'a' <= p[0] && p[0] <= 'z') {
				continue
			}
			if bytes.IndexByte(a.starts, c) < 0 {
				a.starts = append(a.starts, c)
			}
		}
	}
	if len(a.starts) > 3 {
		a.starts = nil
	}
	return a
}

// step returns the state after s reads c.
func (a *grepAC) step(s int32, c byte) int32 {
	return a.next[int(s)*a.width+int(a.class[c])]
}

// end returns the offset just past the first place in data where a
// string ends, or -1. The string lies in data[end-len:end] for the length
// of one of the strings ending there.
func (a *grepAC) end(data []byte) int {
	row := int32(0)
	for i := 0; i < len(data); i++ {
		if row == 0 && a.starts != nil {
			// At the root nothing is under way: skip to the next byte
			// that starts a string.
			j := a.nextStart(data, i)
			if j < 0 {
				return -1
			}
			i = j
		}
		v := a.fast[row+int32(a.class[data[i]])]
		if v&1 != 0 {
			return i + 1
		}
		row = v >> 1
	}
	return -1
}

// nextStart returns the offset of the first byte at or after i that a
// string starts with, or -1.
func (a *grepAC) nextStart(data []byte, i int) int {
	best := -1
	for _, c := range a.starts {
		hay := data[i:]
		if best >= 0 {
			hay = data[i:best]
		}
		if j := bytes.IndexByte(hay, c); j >= 0 {
			best = i + j
		}
	}
	return best
}

// whole reports whether line is one of the strings.
func (a *grepAC) whole(line []byte) bool {
	s := int32(0)
	for i, c := range line {
		s = a.step(s, c)
		if int(a.depth[s]) != i+1 {
			return false // fell off the path of the line's own prefix
		}
	}
	return a.own[s]
}

// word reports whether one of the strings is a whole word of line.
func (a *grepAC) word(line []byte) bool {
	s := int32(0)
	for i, c := range line {
		s = a.step(s, c)
		if !a.term[s] || !wordEndOK(line, i+1) {
			continue
		}
		for t := s; t >= 0; t = a.out[t] {
			if a.own[t] && wordStartOK(line, i+1-int(a.depth[t])) {
				return true
			}
		}
	}
	return false
}
