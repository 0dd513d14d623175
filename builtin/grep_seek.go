package builtin

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// Searching whole buffers. grep spends its time looking for a string in
// many lines at once; where it looks, and how, decides its speed:
//
//   - grepNeedle finds a string by its rarest byte, with bytes.IndexByte
//     (vector instructions) and a compare at each hit, as GNU grep and
//     ripgrep do. bytes.Index looks for the first byte, and on a log line
//     such as " 404 " that byte is a space: it meets one every few bytes,
//     gives up on IndexByte and compares at every offset, three times
//     slower here than looking for the '4'.
//   - grepSeq is a pattern of fixed length made of literal bytes and
//     classes of ASCII bytes ("took [0-9]ms", `" [23]0[0-9] `): a needle
//     for its longest literal run, then the classes checked in place, so
//     that the regexp never runs.
//
// Both are read-only once made and safe for concurrent use.

// grepNeedle is a string to find; with fold, text is in lower case and
// matches ASCII letters of either case. The search looks for the byte at
// offset rare, the one of text least often seen in text at large (in its
// two cases lo and up under fold; lo == up for a byte without case).
type grepNeedle struct {
	text   []byte
	fold   bool
	rare   int
	lo, up byte
}

func newGrepNeedle(text []byte, fold bool) grepNeedle {
	n := grepNeedle{text: text, fold: fold}
	best := -1
	for i, c := range text {
		r := int(grepByteRank[c])
		if fold && 'a' <= c && c <= 'z' {
			// Either case may turn up: the commoner one counts.
			r = max(r, int(grepByteRank[c-'a'+'A']))
		}
		if best < 0 || r < best {
			best, n.rare = r, i
		}
	}
	if len(text) > 0 {
		n.lo, n.up = text[n.rare], text[n.rare]
		if fold && 'a' <= n.lo && n.lo <= 'z' {
			n.up = n.lo - 'a' + 'A'
		}
	}
	return n
}

// index returns the offset of the first instance of the needle in s, or
// -1.
func (n *grepNeedle) index(s []byte) int {
	m := len(n.text)
	switch {
	case m == 0:
		return 0
	case len(s) < m:
		return -1
	case !n.fold && len(s) <= 64:
		// bytes.Index compares at every offset of a short s, fast.
		return bytes.Index(s, n.text)
	}
	// Hits of the rare byte at i mean a start at i-rare; the last start
	// that fits is len(s)-m.
	last := len(s) - m + n.rare // the last offset of the rare byte worth a look
	if n.lo == n.up {
		for i := n.rare; i <= last; {
			j := bytes.IndexByte(s[i:last+1], n.lo)
			if j < 0 {
				return -1
			}
			start := i + j - n.rare
			if n.equal(s[start : start+m]) {
				return start
			}
			i += j + 1
		}
		return -1
	}
	// Two cases: the next place of each, searched only when passed.
	nextLo, nextUp := -2, -2 // -2: not yet searched; -1: none left
	for i := n.rare; i <= last; {
		if nextLo != -1 && nextLo < i {
			nextLo = indexFrom(s[:last+1], n.lo, i)
		}
		if nextUp != -1 && nextUp < i {
			nextUp = indexFrom(s[:last+1], n.up, i)
		}
		c := nextLo
		if c < 0 || nextUp >= 0 && nextUp < c {
			c = nextUp
		}
		if c < 0 {
			return -1
		}
		start := c - n.rare
		if n.equal(s[start : start+m]) {
			return start
		}
		i = c + 1
	}
	return -1
}

// indexFrom returns the offset of the first c in s at or after i, or -1.
func indexFrom(s []byte, c byte, i int) int {
	if j := bytes.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return -1
}

// equal reports whether s, as long as the needle, is an instance of it.
func (n *grepNeedle) equal(s []byte) bool {
	if !n.fold {
		return string(s) == string(n.text)
	}
	for i, c := range n.text {
		if grepLower[s[i]] != c {
			return false
		}
	}
	return true
}

// grepLower maps ASCII upper case letters to lower case and every other
// byte to itself.
var grepLower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// grepByteRank orders the bytes by how often they occur in text a grep
// meets, 0 the rarest and 255 the commonest: counted once over Go's
// source tree, the manual pages and licences of a Debian system, and its
// package logs, each kind weighing the same. Only the order matters, and
// only roughly: it picks the byte of a needle that IndexByte stops at
// least.
var grepByteRank = [256]uint8{
	0, 1, 2, 3, 4, 5, 6, 56, 7, 233, 244, 8, 154, 190, 9, 10,
	11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
	255, 170, 216, 161, 163, 174, 173, 172, 219, 215, 179, 194, 226, 237, 245, 218,
	241, 240, 242, 224, 231, 225, 227, 203, 204, 211, 232, 169, 183, 202, 180, 155,
	160, 208, 196, 201, 198, 207, 189, 186, 184, 213, 162, 171, 199, 191, 197, 200,
	206, 167, 217, 214, 209, 187, 188, 176, 195, 178, 165, 182, 223, 181, 157, 210,
	164, 252, 230, 238, 243, 254, 236, 229, 228, 251, 185, 212, 246, 235, 250, 248,
	234, 175, 247, 249, 253, 239, 220, 205, 222, 221, 177, 193, 168, 192, 166, 27,
	153, 140, 142, 115, 108, 127, 151, 73, 143, 123, 126, 70, 114, 67, 116, 66,
	128, 110, 149, 132, 144, 125, 91, 134, 136, 148, 71, 68, 138, 141, 119, 84,
	94, 112, 88, 98, 131, 122, 109, 130, 85, 147, 107, 113, 103, 104, 82, 79,
	76, 121, 133, 106, 81, 93, 92, 156, 90, 145, 120, 124, 137, 129, 139, 97,
	28, 29, 158, 146, 69, 83, 30, 101, 63, 95, 86, 77, 135, 117, 152, 118,
	89, 75, 31, 59, 61, 99, 65, 53, 96, 102, 49, 60, 62, 32, 54, 55,
	58, 150, 159, 87, 78, 64, 105, 72, 74, 57, 100, 50, 52, 47, 48, 80,
	111, 33, 34, 35, 51, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
}

// grepSet is a set of ASCII bytes, a bit each.
type grepSet [2]uint64

func (s *grepSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *grepSet) has(c byte) bool { return c < 0x80 && s[c>>6&1]&(1<<(c&63)) != 0 }

// letter reports whether a needle can stand for s: one byte, or one
// letter in both cases (fold set, c in lower case).
func (s *grepSet) letter() (c byte, ok, fold bool) {
	var members []byte
	for b := range byte(0x80) {
		if s.has(b) {
			if members = append(members, b); len(members) > 2 {
				return 0, false, false
			}
		}
	}
	switch {
	case len(members) == 1:
		return members[0], true, false
	case len(members) == 2 && 'A' <= members[0] && members[0] <= 'Z' && members[1] == members[0]+'a'-'A':
		return members[1], true, true
	}
	return 0, false, false
}

// grepSeq matches a pattern of fixed length whose every character is a
// set of ASCII bytes, maybe anchored at the start or the end of the
// line. Such a match is a run of ASCII bytes, which Go's regexp (reading
// UTF-8) and GNU grep (reading bytes) find alike, so deciding it a byte
// at a time says what the regexp says. A needle, the run of sets of one
// byte (or one letter in two cases) with the rarest byte, finds where a
// match may start; the sets are then checked in place.
type grepSeq struct {
	sets       []grepSet
	needle     grepNeedle
	at         int // where the needle starts in sets
	begin, end bool
	mode       grepMode
}

// grepSeqMaxLen bounds the sequences grepSeqOf takes: longer ones come
// from large intervals, where the regexp does as well.
const grepSeqMaxLen = 256

// grepSeqOf returns the sequence that the RE2 source src (a translation
// by posixre) matches, or false when src is not of that shape or has no
// byte to search for.
func grepSeqOf(src string, mode grepMode) (*grepSeq, bool) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	s := &grepSeq{mode: mode}
	items := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		items = re.Sub
	}
	if len(items) > 0 && items[0].Op == syntax.OpBeginText {
		s.begin, items = true, items[1:]
	}
	if len(items) > 0 && items[len(items)-1].Op == syntax.OpEndText {
		s.end, items = true, items[:len(items)-1]
	}
	for _, it := range items {
		if !s.add(it) {
			return nil, false
		}
	}
	if len(s.sets) == 0 {
		return nil, false
	}
	// The needle: of the runs of sets that a needle can stand for, the
	// one whose rarest byte is rarest, the longer on a tie.
	bestRank, bestLen := 256, 0
	for i := 0; i < len(s.sets); {
		j, fold := i, false
		var text []byte
		for ; j < len(s.sets); j++ {
			c, ok, f := s.sets[j].letter()
			if !ok {
				break
			}
			text, fold = append(text, c), fold || f
		}
		if j > i {
			n := newGrepNeedle(text, fold)
			r := int(grepByteRank[n.lo])
			if fold {
				r = max(r, int(grepByteRank[n.up]))
			}
			if r < bestRank || r == bestRank && len(text) > bestLen {
				bestRank, bestLen, s.needle, s.at = r, len(text), n, i
			}
		}
		i = j + 1
	}
	return s, bestLen > 0
}

// add appends the sets re matches, and reports whether re is a fixed
// run of ASCII sets.
func (s *grepSeq) add(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			var set grepSet
			for f := r; ; {
				if f >= utf8.RuneSelf {
					return false
				}
				set.add(byte(f))
				if re.Flags&syntax.FoldCase == 0 {
					break
				}
				if f = unicode.SimpleFold(f); f == r {
					break
				}
			}
			s.push(set)
		}
	case syntax.OpCharClass:
		var set grepSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return false
			}
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				set.add(byte(c))
			}
		}
		s.push(set)
	case syntax.OpCapture:
		return s.add(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !s.add(sub) {
				return false
			}
		}
	case syntax.OpRepeat:
		if re.Min != re.Max || re.Min > grepSeqMaxLen {
			return false
		}
		for range re.Min {
			if !s.add(re.Sub[0]) {
				return false
			}
		}
	default:
		return false
	}
	return len(s.sets) <= grepSeqMaxLen
}

// push appends set without '\n': no line holds one, so that a match never
// spans two lines of a buffer.
func (s *grepSeq) push(set grepSet) {
	set[0] &^= 1 << '\n'
	s.sets = append(s.sets, set)
}

// matchAt reports whether the sets match line (one line, no '\n') at offset i.
func (s *grepSeq) matchAt(line []byte, i int) bool {
	if i < 0 || i+len(s.sets) > len(line) {
		return false
	}
	for k := range s.sets {
		if !s.sets[k].has(line[i+k]) {
			return false
		}
	}
	return true
}

// placed reports whether a match at [i, i+len(sets)) of line also meets
// the anchors and the mode.
func (s *grepSeq) placed(line []byte, i int) bool {
	e := i + len(s.sets)
	switch {
	case s.begin && i != 0, s.end && e != len(line):
		return false
	case s.mode == grepLine:
		return i == 0 && e == len(line)
	case s.mode == grepWord:
		return wordStartOK(line, i) && wordEndOK(line, e)
	}
	return true
}

// next returns the offset of the first match at or after from in line
// that meets the anchors and the mode, or -1.
func (s *grepSeq) next(line []byte, from int) int {
	for from <= len(line) {
		j := s.needle.index(line[from:])
		if j < 0 {
			return -1
		}
		i := from + j - s.at
		if s.matchAt(line, i) && s.placed(line, i) {
			return i
		}
		from += j + 1
	}
	return -1
}

func (s *grepSeq) match(line []byte) bool {
	if s.begin || s.mode == grepLine {
		// Only a match at the start counts.
		return s.matchAt(line, 0) && s.placed(line, 0)
	}
	if s.end {
		i := len(line) - len(s.sets)
		return s.matchAt(line, i) && s.placed(line, i)
	}
	return s.next(line, 0) >= 0
}

// seek finds the first line of data that holds a match: the lines of
// data are searched as one string, and a match found is checked against
// the line it lies in. A match anchored at the start can only be at a
// line's start: those are looked at, one per line, where the needle
// may turn up many times a line.
func (s *grepSeq) seek(data []byte) (int, bool) {
	if s.begin {
		for start := 0; start < len(data); {
			end := len(data)
			if k := bytes.IndexByte(data[start:], '\n'); k >= 0 {
				end = start + k
			}
			if s.matchAt(data[:end], start) && s.placed(data[start:end], 0) {
				return start, true
			}
			start = end + 1
		}
		return -1, false
	}
	for from := 0; from < len(data); {
		j := s.needle.index(data[from:])
		if j < 0 {
			return -1, false
		}
		i := from + j - s.at
		from += j + 1
		if !s.matchAt(data, i) {
			continue
		}
		if !s.begin && !s.end && s.mode == grepAny {
			return i, true
		}
		// No set holds '\n': the match lies in one line, whose ends the
		// anchors and the mode look at.
		ls := bytes.LastIndexByte(data[:i], '\n') + 1
		le := len(data)
		if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
			le = i + k
		}
		if s.placed(data[ls:le], i-ls) {
			return i, true
		}
	}
	return -1, false
}

// grepLiteralsMax bounds the strings grepLiteralsOf spells out.
const grepLiteralsMax = 64

// grepLiteralsOf returns the strings the RE2 source src matches when they
// are few and of ASCII letters (-E 'ERROR|WARN', 'WARN\|ERR[OE]R'): then
// the pattern is those strings, searched as grep -F searches. With fold,
// every letter matches in either case and the strings are in lower case;
// a pattern that folds some letters and not others is not taken.
func grepLiteralsOf(src string) (strs [][]byte, fold bool, ok bool) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, false, false
	}
	re = re.Simplify()
	folds, exact := false, false
	var spell func(re *syntax.Regexp) ([][]byte, bool)
	spell = func(re *syntax.Regexp) ([][]byte, bool) {
		switch re.Op {
		case syntax.OpEmptyMatch:
			return [][]byte{nil}, true
		case syntax.OpLiteral:
			b := make([]byte, 0, len(re.Rune))
			for _, r := range re.Rune {
				if r >= utf8.RuneSelf {
					return nil, false
				}
				c := byte(r)
				if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' {
					if re.Flags&syntax.FoldCase != 0 {
						folds = true
						c = grepLower[c]
					} else {
						exact = true
					}
				}
				b = append(b, c)
			}
			return [][]byte{b}, true
		case syntax.OpCharClass:
			var set grepSet
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i+1] >= utf8.RuneSelf || re.Rune[i+1]-re.Rune[i] > grepLiteralsMax {
					return nil, false
				}
				for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
					set.add(byte(c))
				}
			}
			if c, ok, f := set.letter(); ok && f {
				folds = true
				return [][]byte{{c}}, true
			}
			var out [][]byte
			for c := range 128 {
				if set.has(byte(c)) {
					if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' {
						exact = true
					}
					out = append(out, []byte{byte(c)})
				}
			}
			return out, len(out) <= grepLiteralsMax
		case syntax.OpCapture:
			return spell(re.Sub[0])
		case syntax.OpAlternate:
			var out [][]byte
			for _, sub := range re.Sub {
				s, ok := spell(sub)
				if !ok || len(out)+len(s) > grepLiteralsMax {
					return nil, false
				}
				out = append(out, s...)
			}
			return out, true
		case syntax.OpConcat:
			out := [][]byte{nil}
			for _, sub := range re.Sub {
				s, ok := spell(sub)
				if !ok || len(out)*len(s) > grepLiteralsMax {
					return nil, false
				}
				var next [][]byte
				for _, a := range out {
					for _, b := range s {
						next = append(next, append(append([]byte(nil), a...), b...))
					}
				}
				out = next
			}
			return out, true
		}
		return nil, false
	}
	strs, ok = spell(re)
	if !ok || folds && exact {
		return nil, false, false
	}
	return strs, folds, true
}
