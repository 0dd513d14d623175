package posixre

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Matcher decides whether a line matches a compiled pattern, running
// the regexp only when it must. Go's regexp has no DFA and costs around a
// microsecond a line, where the strings a pattern needs can be searched
// with bytes.Index at memory speed:
//
//   - A pattern made only of strings joined by ".*", maybe anchored, as
//     "ERROR.*timeout" or "^foo", is decided by searching the strings in
//     order (chain): the regexp never runs.
//   - Otherwise need, when set, is a string every match contains: a line
//     without it cannot match.
//
// A zero Matcher is not usable; see NewMatcher. It is safe for concurrent
// use, as is a regexp.
type Matcher struct {
	re         *regexp.Regexp
	chained    bool
	chain      []lit
	begin, end bool // chain is anchored at the start, the end
	need       lit
}

// lit is a string to search for; with fold, it is in lower case and
// matches ASCII letters of either case.
type lit struct {
	text []byte
	fold bool
}

func (l lit) index(b []byte) int {
	if l.fold {
		return IndexFold(b, l.text)
	}
	return bytes.Index(b, l.text)
}

// NewMatcher analyses the source of re, as Compile made it. The Matcher
// uses re as it is: leftmost-first or, after re.Longest, leftmost-longest.
func NewMatcher(re *regexp.Regexp) *Matcher {
	m := &Matcher{re: re}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return m
	}
	parsed = parsed.Simplify()
	m.chain, m.begin, m.end, m.chained = chainOf(parsed)
	if r := requiredOf(parsed); len(r.text) >= 2 {
		m.need = r
	}
	return m
}

// Regexp returns the regexp m was made from.
func (m *Matcher) Regexp() *regexp.Regexp { return m.re }

// Match reports whether b holds a match. It does not keep b.
func (m *Matcher) Match(b []byte) bool {
	if m.chained {
		return m.matchChain(b)
	}
	return m.MayMatch(b) && m.re.Match(b)
}

// MayMatch is false when b surely holds no match: a caller about to run
// the regexp for more than a yes or no (where the matches are) asks first.
func (m *Matcher) MayMatch(b []byte) bool {
	return m.need.text == nil || m.need.index(b) >= 0
}

// Need returns a string that every match holds, or nil when the Matcher
// knows of none: a caller may search a whole buffer of lines for it and
// run Match only on the lines it lies in. With fold set, text is in lower
// case and stands for ASCII letters of either case. text must not be
// written.
func (m *Matcher) Need() (text []byte, fold bool) {
	return m.need.text, m.need.fold
}

// matchChain finds the strings of the chain in order, each as early as it
// can be: if any placement works, this one does.
func (m *Matcher) matchChain(b []byte) bool {
	n := len(m.chain)
	if n == 0 {
		return !(m.begin && m.end) || len(b) == 0 // "^$" or always
	}
	pos := 0
	for i, l := range m.chain {
		switch {
		case i == n-1 && m.end:
			at := len(b) - len(l.text)
			if at < pos || l.index(b[at:]) != 0 {
				return false
			}
			return !(n == 1 && m.begin) || at == 0
		case i == 0 && m.begin:
			if len(b) < len(l.text) || l.index(b[:len(l.text)]) != 0 {
				return false
			}
			pos = len(l.text)
		default:
			j := l.index(b[pos:])
			if j < 0 {
				return false
			}
			pos += j + len(l.text)
		}
	}
	return true
}

// chainOf recognises a pattern made of strings joined by ".*", maybe
// with "^" and "$" at its ends. Letters are matched exactly, or all
// folded (-i). begin and end are set when the first and last strings are
// anchored; with no string at all, they are both set for "^$" (only the
// empty line matches) and both clear for a pattern that matches anything.
func chainOf(re *syntax.Regexp) (chain []lit, begin, end, ok bool) {
	items := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		items = re.Sub
	}
	hasBegin, hasEnd := false, false
	if len(items) > 0 && items[0].Op == syntax.OpBeginText {
		hasBegin, items = true, items[1:]
	}
	if len(items) > 0 && items[len(items)-1].Op == syntax.OpEndText {
		hasEnd, items = true, items[:len(items)-1]
	}
	var cur lit
	curLetters := false
	firstGap, lastGap := false, false // a ".*" before the first string, after the last
	for _, it := range items {
		switch {
		case it.Op == syntax.OpEmptyMatch:
		case it.Op == syntax.OpStar && (it.Sub[0].Op == syntax.OpAnyCharNotNL || it.Sub[0].Op == syntax.OpAnyChar):
			if cur.text != nil {
				chain = append(chain, cur)
				cur, curLetters = lit{}, false
			}
			if len(chain) == 0 {
				firstGap = true
			}
			lastGap = true
		default:
			l := requiredOf(it)
			if l.text == nil || !exact(it) {
				return nil, false, false, false
			}
			letters := bytes.ContainsFunc(l.text, func(r rune) bool { return r < utf8.RuneSelf && isLetter(byte(r)) })
			if cur.text != nil && l.fold != cur.fold && (l.fold && curLetters || !l.fold && letters) {
				return nil, false, false, false // "a[Bb]": some letters folded, some not
			}
			cur.text = append(cur.text, l.text...)
			cur.fold = cur.fold || l.fold
			curLetters = curLetters || letters
			lastGap = false
		}
	}
	if cur.text != nil {
		chain = append(chain, cur)
	}
	if len(chain) == 0 {
		empty := hasBegin && hasEnd && !firstGap
		return nil, empty, empty, true
	}
	return chain, hasBegin && !firstGap, hasEnd && !lastGap, true
}

// exact reports whether re matches exactly the string requiredOf
// gives for it (a literal, or a class of one letter in two cases).
func exact(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return false
			}
		}
		return true
	case syntax.OpCharClass:
		_, ok := foldPair(re.Rune)
		return ok
	}
	return false
}

// requiredOf walks a parsed pattern: the longest required run of
// characters in a concatenation, looking through captures and repeats that
// must happen at least once. It returns a nil text when there is none.
func requiredOf(re *syntax.Regexp) lit {
	switch re.Op {
	case syntax.OpLiteral:
		var b []byte
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return lit{}
			}
			b = append(b, byte(r))
		}
		if re.Flags&syntax.FoldCase != 0 {
			return lit{text: LowerASCII(b), fold: true}
		}
		return lit{text: b}
	case syntax.OpCharClass:
		if c, ok := foldPair(re.Rune); ok {
			return lit{text: []byte{c}, fold: true}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredOf(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literal runs join, folded if either is (a prefilter
		// may match more than the pattern); anything else ends a run.
		var best, cur lit
		flush := func() {
			if len(cur.text) > len(best.text) {
				best = cur
			}
			cur = lit{}
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral || sub.Op == syntax.OpCharClass {
				l := requiredOf(sub)
				if l.text == nil {
					flush()
					continue
				}
				if l.fold || cur.fold {
					cur.text, l.text = LowerASCII(cur.text), LowerASCII(l.text)
				}
				cur.text = append(cur.text, l.text...)
				cur.fold = cur.fold || l.fold
				continue
			}
			flush()
			if l := requiredOf(sub); len(l.text) > len(best.text) {
				best = l
			}
		}
		flush()
		return best
	}
	return lit{}
}

// LowerASCII turns the ASCII letters of b to lower case, in place, and
// returns b: a pattern for IndexFold.
func LowerASCII(b []byte) []byte {
	for i, c := range b {
		b[i] = lower[c]
	}
	return b
}

// foldPair recognises the class [Aa] of one letter in both cases and
// returns the lower case letter.
func foldPair(ranges []rune) (byte, bool) {
	if len(ranges) == 4 && ranges[0] == ranges[1] && ranges[2] == ranges[3] &&
		ranges[0] < utf8.RuneSelf && isLetter(byte(ranges[0])) && ranges[2] == ranges[0]|0x20 {
		return byte(ranges[2]), true
	}
	return 0, false
}

// lower maps ASCII upper case letters to lower case and every other byte
// to itself.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) | 0x20
		}
	}
	return t
}()

// IndexFold returns the index of the first instance of pat in s, ignoring
// the case of ASCII letters, or -1. pat must be in lower case (LowerASCII).
func IndexFold(s, pat []byte) int {
	if len(pat) == 0 {
		return 0
	}
	lo, up := pat[0], pat[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo &^ 0x20
	}
	// The next place of each case of the first byte at or after i; -1 is
	// none left, and -2 is not yet searched.
	nextLo, nextUp := -2, -2
	if lo == up {
		nextUp = -1
	}
	for i := 0; i+len(pat) <= len(s); {
		if nextLo != -1 && nextLo < i {
			if j := bytes.IndexByte(s[i:], lo); j >= 0 {
				nextLo = i + j
			} else {
				nextLo = -1
			}
		}
		if nextUp != -1 && nextUp < i {
			if j := bytes.IndexByte(s[i:], up); j >= 0 {
				nextUp = i + j
			} else {
				nextUp = -1
			}
		}
		c := nextLo
		if c < 0 || nextUp >= 0 && nextUp < c {
			c = nextUp
		}
		if c < 0 || c+len(pat) > len(s) {
			return -1
		}
		if foldEqual(s[c+1:c+len(pat)], pat[1:]) {
			return c
		}
		i = c + 1
	}
	return -1
}

// foldEqual reports whether s equals the lower case pat ignoring ASCII
// case; len(s) == len(pat).
func foldEqual(s, pat []byte) bool {
	for i, c := range pat {
		if lower[s[i]] != c {
			return false
		}
	}
	return true
}
