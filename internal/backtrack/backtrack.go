// Package backtrack runs POSIX regular expressions with back-references
// (\1 to \9), which Go's RE2 engine cannot: grep and sed use it only for
// the patterns that need it, and RE2 for all others.
//
// A pattern is read by package posixre, in the same dialects (Basic,
// Extended, the Sed flag, IgnoreCase, and Newline and Multiline, which
// are sed's M) and with the same errors, and translated with
// posixre.BackRefs; the translation is parsed by regexp/syntax and
// compiled into a small tree that a depth-first search walks over the
// input, trying every way to match, greedy ones first.
// Input is read as Go's regexp reads it (UTF-8, a stray byte as U+FFFD),
// so that both engines agree on everything but back-references; with
// posixre.Bytes, the caller hands both the text through posixre.Encode.
//
// What a match is, as in POSIX: the leftmost start, and at that start the
// longest match. Among the ways to match that longest text, the groups
// get the first found: greedy repetitions first, alternatives in order,
// which gives the earlier groups the longer text, as POSIX asks, in the
// usual cases. A back-reference to a group that took no part in the match
// fails, as in GNU.
//
// The cost: a search tries ways to match one after another, so a pattern
// with nested repetitions can take time exponential in the length of the
// line, as back-references can in any engine. There is no limit on the
// steps taken; a caller that runs patterns from untrusted input on long
// lines should bound its own time.
//
// A Regexp is safe for concurrent use: each search has its own state.
package backtrack

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/tpipe/tpipe/internal/posixre"
)

// Regexp is a compiled pattern. The zero Regexp is not usable; see
// Compile.
type Regexp struct {
	pre    *regexp.Regexp // see Prefilter
	prog   *node
	nsub   int
	fold   bool // back-references compare ASCII letters of either case
	anchor bool // the pattern can match only at the start of the text
	// first, when set, holds the bytes a match can start with: a search
	// skips the other starts without a step (a pattern that can match
	// the empty string has none).
	first   *[256]bool
	pattern string
}

// op is what a node matches.
type op uint8

const (
	opEmpty     op = iota
	opNone         // matches nothing
	opRunes        // a literal string of runes (fold: ASCII either case)
	opClass        // one rune in ranges
	opAny          // any rune
	opAnyNotNL     // any rune but '\n'
	opBeginText    // ^ (and \`)
	opEndText      // $ (and \')
	opBeginLine    // ^ with Multiline: at the start or after a newline
	opEndLine      // $ with Multiline: at the end or before a newline
	opWordB        // \b
	opNoWordB      // \B
	opWordStart    // \<
	opWordEnd      // \>
	opCapture      // group index: subs[0]
	opBackRef      // the text group index matched
	opConcat
	opAlt
	opRepeat // subs[0] min to max times (max -1: no limit)
)

// node is one piece of the compiled tree.
type node struct {
	op       op
	runes    []rune // opRunes: the string; opClass: ranges lo, hi, ...
	fold     bool
	index    int // opCapture, opBackRef: the group, from 1
	min, max int
	groups   bool // opRepeat: subs[0] holds a group
	// ways marks an unbounded opRepeat whose piece can match in more
	// than one way at a place (see oneWay): the ways to cut a text into
	// its passes grow exponentially, so the search remembers where it
	// failed (see failures).
	ways bool
	subs []*node
}

// Compile reads the POSIX pattern pat in the dialect syn, with flags fl
// (IgnoreCase, Sed, and sed's M flag as Newline and Multiline), and
// compiles it. Its error is posixre's *Error.
func Compile(pat string, syn posixre.Syntax, fl posixre.Flags) (*Regexp, error) {
	src, err := posixre.Translate(pat, syn, fl|posixre.BackRefs)
	if err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		// posixre's translations are valid RE2; what fails is a limit.
		return nil, &posixre.Error{Offset: -1, Msg: strings.TrimPrefix(err.Error(), "error parsing regexp: ")}
	}
	// The groups are numbered before Simplify, which drops a group
	// repeated zero times (\(a\)\{0\}): it still counts, as in POSIX,
	// and a back-reference to it never matches.
	c := &compiler{groups: map[int]int{}, texts: map[int]*syntax.Regexp{}}
	c.number(parsed)
	// Simplify writes counted repetitions out and folds x** into x*, a
	// repetition of a repetition that would multiply the ways to match.
	parsed = parsed.Simplify()
	re := &Regexp{prog: c.compile(parsed), nsub: c.n, fold: fl&posixre.IgnoreCase != 0, pattern: pat}
	re.anchor = anchored(re.prog)
	var first [256]bool
	if !firstBytes(re.prog, &first) {
		re.first = &first
	}
	if pre, err := regexp.Compile(c.loosen(parsed).String()); err == nil {
		re.pre = pre
	}
	return re, nil
}

// Prefilter returns a regexp for Go's RE2 engine that matches every line
// re matches, and maybe more, or nil: a caller runs it first, and the
// backtracker only on the lines it lets through. It is the pattern with
// each back-reference replaced by a copy of its group (or by .* where the
// group tests its surroundings, as ^ or \< do, which a copy elsewhere
// might fail) and \< \> dropped.
func (re *Regexp) Prefilter() *regexp.Regexp { return re.pre }

// loosen returns the superset of re that Prefilter describes.
func (c *compiler) loosen(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		if n := backRef(re); n > 0 {
			if g := c.texts[n]; g != nil && !contextual(g) {
				return &syntax.Regexp{Op: syntax.OpCapture, Sub: []*syntax.Regexp{c.loosen(g)}, Flags: g.Flags}
			}
			return &syntax.Regexp{Op: syntax.OpStar, Sub: []*syntax.Regexp{{Op: syntax.OpAnyChar}}}
		}
		if re.Name == posixre.WordStartName || re.Name == posixre.WordEndName {
			return &syntax.Regexp{Op: syntax.OpEmptyMatch}
		}
	}
	out := *re
	out.Name = "" // RE2 rejects a group name used twice
	out.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		out.Sub[i] = c.loosen(s)
	}
	return &out
}

// contextual reports whether re tests what lies around its match.
func contextual(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpCapture:
		if re.Name == posixre.WordStartName || re.Name == posixre.WordEndName {
			return true
		}
	}
	for _, s := range re.Sub {
		if contextual(s) {
			return true
		}
	}
	return false
}

// MustCompile is Compile for patterns known to be valid; it panics on an
// error. For tests and fixed patterns.
func MustCompile(pat string, syn posixre.Syntax, fl posixre.Flags) *Regexp {
	re, err := Compile(pat, syn, fl)
	if err != nil {
		panic(fmt.Sprintf("backtrack: Compile(%q): %v", pat, err))
	}
	return re
}

// String returns the pattern as given to Compile.
func (re *Regexp) String() string { return re.pattern }

// NumSubexp is the number of groups of the pattern (the back-references
// excepted).
func (re *Regexp) NumSubexp() int { return re.nsub }

// compiler numbers the groups of a parsed translation as POSIX numbers
// them, leaving out the empty groups that stand for back-references.
type compiler struct {
	groups map[int]int // syntax's capture index -> POSIX group
	texts  map[int]*syntax.Regexp
	n      int
}

func (c *compiler) number(re *syntax.Regexp) {
	if re.Op == syntax.OpCapture && re.Name == "" && c.groups[re.Cap] == 0 {
		c.n++
		c.groups[re.Cap] = c.n
		c.texts[c.n] = re.Sub[0]
	}
	for _, s := range re.Sub {
		c.number(s)
	}
}

// backRef returns the group a back-reference marker names, or 0.
func backRef(re *syntax.Regexp) int {
	var n int
	if re.Op != syntax.OpCapture || !strings.HasPrefix(re.Name, "tpipebackref") {
		return 0
	}
	fmt.Sscanf(re.Name[len("tpipebackref"):], "%d", &n)
	return n
}

func (c *compiler) compile(re *syntax.Regexp) *node {
	subs := func() []*node {
		out := make([]*node, len(re.Sub))
		for i, s := range re.Sub {
			out[i] = c.compile(s)
		}
		return out
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return &node{op: opNone}
	case syntax.OpEmptyMatch:
		return &node{op: opEmpty}
	case syntax.OpLiteral:
		return &node{op: opRunes, runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0}
	case syntax.OpCharClass:
		return &node{op: opClass, runes: re.Rune}
	case syntax.OpAnyCharNotNL:
		return &node{op: opAnyNotNL}
	case syntax.OpAnyChar:
		return &node{op: opAny}
	case syntax.OpBeginText:
		return &node{op: opBeginText}
	case syntax.OpEndText:
		return &node{op: opEndText}
	case syntax.OpBeginLine: // only in a translation with Multiline
		return &node{op: opBeginLine}
	case syntax.OpEndLine:
		return &node{op: opEndLine}
	case syntax.OpWordBoundary:
		return &node{op: opWordB}
	case syntax.OpNoWordBoundary:
		return &node{op: opNoWordB}
	case syntax.OpCapture:
		if n := backRef(re); n > 0 {
			return &node{op: opBackRef, index: n}
		}
		switch re.Name {
		case posixre.WordStartName:
			return &node{op: opWordStart}
		case posixre.WordEndName:
			return &node{op: opWordEnd}
		}
		// Simplify's copies of a group (\(a\)\{2\}) keep its Cap:
		// they are the one group.
		return &node{op: opCapture, index: c.groups[re.Cap], subs: subs()}
	case syntax.OpStar:
		return repeat(0, -1, subs()[0])
	case syntax.OpPlus:
		return repeat(1, -1, subs()[0])
	case syntax.OpQuest:
		return repeat(0, 1, subs()[0])
	case syntax.OpRepeat:
		sub := subs()
		return &node{op: opRepeat, min: re.Min, max: re.Max, groups: hasGroup(sub[0]), ways: re.Max < 0 && !oneWay(sub[0]), subs: sub}
	case syntax.OpConcat:
		return &node{op: opConcat, subs: subs()}
	case syntax.OpAlternate:
		return &node{op: opAlt, subs: subs()}
	}
	// regexp/syntax has no other operator in a Perl-flags parse.
	panic(fmt.Sprintf("backtrack: unexpected operator %v", re.Op))
}

// repeat is sub repeated min to max times. A repetition of *, + or ? of
// another becomes one ((x*)+ is x*): nested, they would multiply the ways
// to match a line past any use (.*+* on a short line took minutes).
func repeat(min, max int, sub *node) *node {
	if sub.op == opRepeat && sub.min <= 1 && (sub.max == 1 || sub.max == -1) {
		lo, hi := min*sub.min, 1
		if max < 0 || sub.max < 0 {
			hi = -1
		}
		return &node{op: opRepeat, min: lo, max: hi, groups: sub.groups, ways: hi < 0 && !oneWay(sub.subs[0]), subs: sub.subs}
	}
	return &node{op: opRepeat, min: min, max: max, groups: hasGroup(sub), ways: max < 0 && !oneWay(sub), subs: []*node{sub}}
}

// oneWay reports whether n matches in at most one way at a place: a
// string, a character, a back-reference, in groups and one after
// another. A repetition of it has one way to take each pass.
func oneWay(n *node) bool {
	switch n.op {
	case opRunes, opClass, opAny, opAnyNotNL, opBackRef:
		return true
	case opCapture, opConcat:
		for _, s := range n.subs {
			if !oneWay(s) {
				return false
			}
		}
		return true
	}
	return false
}

// hasGroup reports whether n holds a group.
func hasGroup(n *node) bool {
	if n.op == opCapture {
		return true
	}
	for _, s := range n.subs {
		if hasGroup(s) {
			return true
		}
	}
	return false
}

// anchored reports whether every match of n starts at the start of the
// text.
func anchored(n *node) bool {
	switch n.op {
	case opBeginText:
		return true
	case opConcat:
		return len(n.subs) > 0 && anchored(n.subs[0])
	case opCapture:
		return anchored(n.subs[0])
	case opAlt:
		for _, s := range n.subs {
			if !anchored(s) {
				return false
			}
		}
		return len(n.subs) > 0
	}
	return false
}

// search is the state of one search of one text.
type search struct {
	re   *Regexp
	in   []byte
	caps []int // 2 per group, from group 0; -1 where unset
	// empties counts the empty passes of a repeated group on the way
	// being tried that POSIX allows only as a last resort (see repeat);
	// with strict set, none is tried.
	empties int
	strict  bool
}

func (re *Regexp) newSearch(b []byte) *search {
	s := &search{re: re, in: b, caps: make([]int, 2*(re.nsub+1))}
	for i := range s.caps {
		s.caps[i] = -1
	}
	return s
}

// Match reports whether b holds a match.
func (re *Regexp) Match(b []byte) bool {
	first := 0
	if re.pre != nil {
		// No match starts before the prefilter's first.
		loc := re.pre.FindIndex(b)
		if loc == nil {
			return false
		}
		first = loc[0]
	}
	s := re.newSearch(b)
	for start := first; start <= len(b); start = next(b, start) {
		if re.cannotStart(b, start) {
			continue
		}
		if s.at(start, func(int) bool { return true }) {
			return true
		}
		if re.anchor {
			break
		}
	}
	return false
}

// cannotStart reports whether no match can start at start, by its first
// byte.
func (re *Regexp) cannotStart(b []byte, start int) bool {
	return re.first != nil && (start >= len(b) || !re.first[b[start]])
}

// firstBytes adds to set the bytes a match of n can start with and
// reports whether n can match the empty string, when what follows it
// may start the match. Where it cannot tell (a back-reference), it adds
// every byte. A rune past ASCII adds every byte from 0x80, as a
// search reads stray bytes as runes too.
func firstBytes(n *node, set *[256]bool) (empty bool) {
	addRune := func(r rune) {
		if r >= utf8.RuneSelf {
			for c := 0x80; c < 256; c++ {
				set[c] = true
			}
			return
		}
		set[r] = true
	}
	switch n.op {
	case opRunes:
		if len(n.runes) == 0 {
			return true
		}
		r := n.runes[0]
		addRune(r)
		if n.fold && r < utf8.RuneSelf {
			set[lower(byte(r))], set[upper(byte(r))] = true, true
		}
		return false
	case opClass:
		for i := 0; i+1 < len(n.runes); i += 2 {
			for r := n.runes[i]; r <= n.runes[i+1]; r++ {
				if r >= utf8.RuneSelf {
					addRune(r)
					break
				}
				set[r] = true
			}
		}
		return false
	case opAny, opAnyNotNL:
		for c := range set {
			if c != '\n' || n.op == opAny {
				set[c] = true
			}
		}
		return false
	case opNone:
		return false
	case opBackRef:
		for c := range set {
			set[c] = true
		}
		return true
	case opCapture:
		return firstBytes(n.subs[0], set)
	case opConcat:
		for _, sub := range n.subs {
			if !firstBytes(sub, set) {
				return false
			}
		}
		return true
	case opAlt:
		empty := false
		for _, sub := range n.subs {
			empty = firstBytes(sub, set) || empty
		}
		return empty
	case opRepeat:
		return firstBytes(n.subs[0], set) || n.min == 0
	}
	return true // the empty string and the assertions: ^ $ \b \< ...
}

// next is the start after start: a search moves a rune at a time, as Go's
// regexp does, so that both agree on where matches may start.
func next(b []byte, start int) int {
	if start >= len(b) {
		return start + 1
	}
	_, w := utf8.DecodeRune(b[start:])
	return start + w
}

// FindSubmatchIndex returns the leftmost-longest match in b and its
// groups as offsets in b, in the layout of regexp's: pairs for the match
// and each group, -1 for a group that took no part; nil if none.
func (re *Regexp) FindSubmatchIndex(b []byte) []int {
	return re.FindSubmatchIndexAt(b, 0)
}

// FindSubmatchIndexAt is FindSubmatchIndex for the matches that start at
// or after from. What comes before from is context: '^' does not match
// at from unless from is 0, and \b, \< and \> look at the byte before,
// as sed's s///g needs for its second and later matches.
func (re *Regexp) FindSubmatchIndexAt(b []byte, from int) []int {
	s := re.newSearch(b)
	for start := from; start <= len(b); start = next(b, start) {
		if re.cannotStart(b, start) {
			continue
		}
		if m := s.longest(start, nil); m != nil {
			return m
		}
		if re.anchor {
			break
		}
	}
	return nil
}

// MatchAt calls accept with the end of each way a match can start at
// start, longest first where the pattern's greedy operators say so,
// until accept returns true; it reports whether one did. A caller that
// wants more than the longest match (grep -w, which wants the longest
// one that ends at a word's end) chooses among the ends with it.
func (re *Regexp) MatchAt(b []byte, start int, accept func(end int) bool) bool {
	return re.newSearch(b).at(start, accept)
}

// longest returns the longest match at start with its groups, or nil.
// accept, if set, must also accept the end.
func (s *search) longest(start int, accept func(end int) bool) []int {
	best, lastResort := -1, false
	var caps []int
	s.at(start, func(end int) bool {
		if end > best && (accept == nil || accept(end)) {
			best, lastResort = end, s.empties > 0
			caps = append(caps[:0], s.caps...)
			caps[0], caps[1] = start, end
		}
		return end == len(s.in) // nothing can be longer
	})
	if best < 0 {
		return nil
	}
	if lastResort {
		// The way found sets a group by an empty pass: look for one
		// that matches as much without (\(b*\)*\1 on "bb" keeps "b").
		for i := range s.caps {
			s.caps[i] = -1
		}
		s.strict = true
		s.at(start, func(end int) bool {
			if end != best {
				return false
			}
			copy(caps, s.caps)
			caps[0], caps[1] = start, end
			return true
		})
		s.strict = false
	}
	return caps
}

// at tries every way to match the whole pattern at start.
func (s *search) at(start int, accept func(end int) bool) bool {
	return s.match(s.re.prog, start, accept)
}

// match tries every way for n to match at pos, each followed by k on
// the position after it; it reports whether one of them made k true.
// Group offsets set on the way are undone when a way fails.
func (s *search) match(n *node, pos int, k func(int) bool) bool {
	in := s.in
	switch n.op {
	case opEmpty:
		return k(pos)
	case opNone:
		return false
	case opRunes:
		for _, r := range n.runes {
			c, w := decode(in, pos)
			if w == 0 || !(c == r || n.fold && foldEq(c, r)) {
				return false
			}
			pos += w
		}
		return k(pos)
	case opClass:
		c, w := decode(in, pos)
		if w == 0 || !inClass(n.runes, c) {
			return false
		}
		return k(pos + w)
	case opAny, opAnyNotNL:
		c, w := decode(in, pos)
		if w == 0 || n.op == opAnyNotNL && c == '\n' {
			return false
		}
		return k(pos + w)
	case opBeginText:
		return pos == 0 && k(pos)
	case opEndText:
		return pos == len(in) && k(pos)
	case opBeginLine:
		return (pos == 0 || in[pos-1] == '\n') && k(pos)
	case opEndLine:
		return (pos == len(in) || in[pos] == '\n') && k(pos)
	case opWordB, opNoWordB:
		if s.wordBoundary(pos) != (n.op == opWordB) {
			return false
		}
		return k(pos)
	case opWordStart, opWordEnd:
		before := pos > 0 && isWord(in[pos-1])
		after := pos < len(in) && isWord(in[pos])
		if n.op == opWordStart && (before || !after) || n.op == opWordEnd && (!before || after) {
			return false
		}
		return k(pos)
	case opCapture:
		i := 2 * n.index
		old0, old1 := s.caps[i], s.caps[i+1]
		if s.match(n.subs[0], pos, func(end int) bool {
			in0, in1 := s.caps[i], s.caps[i+1]
			s.caps[i], s.caps[i+1] = pos, end
			if k(end) {
				return true
			}
			s.caps[i], s.caps[i+1] = in0, in1
			return false
		}) {
			return true
		}
		s.caps[i], s.caps[i+1] = old0, old1
		return false
	case opBackRef:
		i := 2 * n.index
		from, to := s.caps[i], s.caps[i+1]
		if from < 0 || to < 0 {
			return false
		}
		size := to - from
		if pos+size > len(in) || !s.sameText(in[from:to], in[pos:pos+size]) {
			return false
		}
		return k(pos + size)
	case opConcat:
		return s.concat(n.subs, pos, k)
	case opAlt:
		for _, sub := range n.subs {
			if s.match(sub, pos, k) {
				return true
			}
		}
		return false
	case opRepeat:
		var memo *failures
		if n.ways {
			memo = &failures{}
		}
		return s.repeat(n, 0, pos, k, memo)
	}
	return false
}

func (s *search) concat(subs []*node, pos int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(pos)
	}
	return s.match(subs[0], pos, func(p int) bool { return s.concat(subs[1:], p, k) })
}

// repeat matches n.subs[0] again after count matches, greedily: one more
// pass that moves on first, then stopping, and last a pass that matches
// the empty string. POSIX lets a repeated group match the empty string
// only where nothing else will do: to reach the minimum count, or because
// what follows needs the groups it sets, as a back-reference may
// (\(a*\)*b\1 matches "aab" with the group empty; \(b*\)* on "b" keeps
// "b" in its group, as GNU has it). An empty pass ends the repetition,
// or a pattern such as \(a*\)* would loop; it still counts, so that its
// groups are set.
//
// memo, when set, holds the states of this repetition (with this k) from
// which no way was found, so that a state reached again by another path
// is not searched again (see node.ways).
func (s *search) repeat(n *node, count, pos int, k func(int) bool, memo *failures) bool {
	if memo == nil {
		return s.pass(n, count, pos, k, nil)
	}
	if memo.seen(s, min(count, n.min), pos) {
		return false
	}
	if s.pass(n, count, pos, k, memo) {
		return true // the search is over
	}
	// A failed way has undone its groups: the state is as it was.
	memo.add(s, min(count, n.min), pos)
	return false
}

// pass is repeat's search from one state.
func (s *search) pass(n *node, count, pos int, k func(int) bool, memo *failures) bool {
	more := n.max < 0 || count < n.max
	if more && s.match(n.subs[0], pos, func(p int) bool {
		return p != pos && s.repeat(n, count+1, p, k, memo)
	}) {
		return true
	}
	if count >= n.min && k(pos) {
		return true
	}
	// Past the minimum, an empty pass is a last resort, and one that
	// sets no group would only repeat what k has refused.
	lastResort := count >= n.min
	if !more || lastResort && (!n.groups || s.strict) {
		return false
	}
	return s.match(n.subs[0], pos, func(p int) bool {
		switch {
		case p != pos:
			return false // tried above
		case lastResort:
			s.empties++
			ok := k(p)
			s.empties--
			return ok
		case count+1 >= n.min:
			return k(p)
		}
		return s.repeat(n, count+1, p, k, memo)
	})
}

// failures is a set of states of one repetition from which the search
// failed: the position, the count (up to the minimum, past which counts
// do not differ), whether the way there took a last-resort empty pass,
// and every group's offsets, which what follows may read. The same state
// with the same continuation fails again, so it is not searched twice:
// without this, \(.*\)*x\1 tries every way to cut a line into pieces,
// 2^n of them, where the states are n^2.
type failures struct {
	set map[string]struct{}
	key []byte
}

func (f *failures) makeKey(s *search, count, pos int) []byte {
	k := binary.AppendUvarint(f.key[:0], uint64(pos))
	k = binary.AppendUvarint(k, uint64(count))
	k = append(k, byte(min(s.empties, 1)))
	for _, c := range s.caps[2:] {
		k = binary.AppendUvarint(k, uint64(c+1))
	}
	f.key = k
	return k
}

func (f *failures) seen(s *search, count, pos int) bool {
	_, ok := f.set[string(f.makeKey(s, count, pos))]
	return ok
}

func (f *failures) add(s *search, count, pos int) {
	if f.set == nil {
		f.set = map[string]struct{}{}
	}
	f.set[string(f.makeKey(s, count, pos))] = struct{}{}
}

// sameText compares a group's text with the input at a back-reference.
func (s *search) sameText(a, b []byte) bool {
	if !s.re.fold {
		return string(a) == string(b)
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// wordBoundary is Go's \b: an ASCII word byte on one side only.
func (s *search) wordBoundary(pos int) bool {
	before := pos > 0 && isWord(s.in[pos-1])
	after := pos < len(s.in) && isWord(s.in[pos])
	return before != after
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c &^ 0x20
	}
	return c
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c | 0x20
	}
	return c
}

func foldEq(a, b rune) bool {
	return a < utf8.RuneSelf && b < utf8.RuneSelf && lower(byte(a)) == lower(byte(b))
}

// decode reads the rune at pos as Go's regexp does; w is 0 at the end.
func decode(b []byte, pos int) (r rune, w int) {
	if pos >= len(b) {
		return 0, 0
	}
	if c := b[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRune(b[pos:])
}

// inClass reports whether r is in the sorted ranges lo, hi, lo, hi, ...
func inClass(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if r < ranges[i] {
			return false
		}
		if r <= ranges[i+1] {
			return true
		}
	}
	return false
}
