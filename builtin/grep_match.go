package builtin

import (
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/tpipe/tpipe/internal/backtrack"
	"github.com/tpipe/tpipe/internal/posixre"
)

// grep's matchers. A pattern list becomes one of three, the cheapest that
// can run it:
//
//   - grepLiteral: patterns without a special character (or -F), found
//     with bytes.Index: no regexp runs;
//   - grepRegex: one RE2 regexp for all the patterns, behind posixre's
//     Matcher, which decides most lines with bytes.Index too;
//   - grepBacktrack: patterns that RE2 cannot run (a back-reference, a \<
//     or \> next to a non-word character), one backtracking matcher each.
//
// With -x (grepLine) a match must be the whole line; with -w (grepWord)
// it must be a whole word: preceded by the start of the line or a
// non-word character, and followed by the end of the line or one. Word
// characters are letters, digits and '_', as in GNU's C locale. Like GNU,
// grep -w tries, at each start, every length a match can have there,
// longest first, so that "a-\|a" on "a-b" finds "a".

// grepMode is how much of the line a match must cover.
type grepMode uint8

const (
	grepAny  grepMode = iota
	grepWord          // -w
	grepLine          // -x
)

// grepMatcher finds a pattern in a line (without its '\n'). No method
// keeps its argument.
type grepMatcher interface {
	match(line []byte) bool
	// find appends to dst the non-empty matches of line, leftmost-longest
	// and not overlapping, as [start, end) offsets.
	find(line []byte, dst [][2]int) [][2]int
	// seek looks through data, whole lines back to back, for the first
	// line that may match: it returns an offset inside that line, or -1
	// when no line of data matches. The lines before that offset do not
	// match; the line holding it surely does if sure is set, and match
	// must decide it if not.
	seek(data []byte) (at int, sure bool)
	// seeks reports whether seek does better than offset 0, the first
	// line, every time: whether it is worth calling at all.
	seeks() bool
}

// grepNewMatcher compiles the patterns. Patterns without any special
// character are searched as strings; the others become one regexp.
func grepNewMatcher(patterns []string, matcher byte, icase bool, mode grepMode) (grepMatcher, error) {
	syn := posixre.Basic
	if matcher == 'E' {
		syn = posixre.Extended
	}
	literal := matcher == 'F'
	if !literal {
		literal = true
		for _, p := range patterns {
			if !posixre.IsLiteral(p, syn) {
				literal = false
				break
			}
		}
	}
	if literal {
		pats := make([][]byte, len(patterns))
		for i, p := range patterns {
			pats[i] = []byte(p)
			if icase {
				posixre.LowerASCII(pats[i])
			}
		}
		return newGrepLiteral(pats, icase, mode), nil
	}
	// Every byte is a character, as in GNU's C locale: a line with bytes
	// >= 0x80 is matched through posixre.Encode (grepText).
	fl := posixre.Bytes
	if icase {
		fl |= posixre.IgnoreCase
	}
	srcs := make([]string, len(patterns))
	for i, p := range patterns {
		src, err := posixre.Translate(p, syn, fl)
		var pe *posixre.Error
		if errors.As(err, &pe) && pe.Backtrack {
			return grepNewBacktrack(patterns, syn, fl, mode)
		}
		if err != nil {
			return nil, &UsageError{Cmd: "grep", Msg: err.Error(), Status: 2}
		}
		srcs[i] = src
	}
	all := "(?:" + strings.Join(srcs, ")|(?:") + ")"
	wrapped := all
	switch mode {
	case grepLine:
		wrapped = "^(?:" + all + ")$"
	case grepWord:
		wrapped = `(?:^|[^0-9A-Z_a-z])(?:` + all + `)(?:[^0-9A-Z_a-z]|$)`
	}
	re, err := regexp.Compile(wrapped)
	if err != nil {
		// The translations are valid RE2: what fails is a limit, such
		// as the size of a pattern once its intervals are expanded.
		return nil, &UsageError{Cmd: "grep", Msg: strings.TrimPrefix(err.Error(), "error parsing regexp: "), Status: 2}
	}
	m := &grepRegex{Matcher: posixre.NewMatcher(re), mode: mode}
	if text, fold := m.Need(); text != nil {
		m.need = newGrepNeedle(text, fold)
	}
	switch mode {
	case grepAny:
		m.longest = regexp.MustCompile(all)
		m.longest.Longest()
	case grepWord:
		// Where the words are, -o asks GNU's question, which a
		// backtracker answers for any pattern.
		bt, err := grepNewBacktrack(patterns, syn, fl, mode)
		if err != nil {
			return nil, err
		}
		m.words = bt.(*grepBacktrack)
	}
	if len(srcs) == 1 {
		if seq, ok := grepSeqOf(srcs[0], mode); ok {
			// The regexp stays for -o, which asks where the matches are.
			return &grepSeqRegex{grepRegex: m, seq: seq}, nil
		}
	}
	if l := grepLiteralsAll(srcs, mode); l != nil {
		return l, nil
	}
	return m, nil
}

// grepLiteralsAll returns the fixed strings that the translated patterns
// srcs stand for, when each is a few strings (grepLiteralsOf) and all
// fold alike, or nil.
func grepLiteralsAll(srcs []string, mode grepMode) *grepLiteral {
	var strs [][]byte
	fold := false
	for i, src := range srcs {
		s, f, ok := grepLiteralsOf(src)
		if !ok || i > 0 && f != fold || len(strs)+len(s) > grepLiteralsMax {
			return nil
		}
		strs, fold = append(strs, s...), f
	}
	return newGrepLiteral(strs, fold, mode)
}

// newGrepLiteral makes the matcher of the strings pats, in lower case
// with fold.
func newGrepLiteral(pats [][]byte, fold bool, mode grepMode) *grepLiteral {
	l := &grepLiteral{fold: fold, mode: mode}
	for _, p := range pats {
		l.pats = append(l.pats, newGrepNeedle(p, fold))
	}
	l.empty = slices.ContainsFunc(pats, func(p []byte) bool { return len(p) == 0 })
	if len(pats) >= grepACMin && !l.empty {
		l.ac = newGrepAC(pats, fold)
	}
	return l
}

func grepNewBacktrack(patterns []string, syn posixre.Syntax, fl posixre.Flags, mode grepMode) (grepMatcher, error) {
	b := &grepBacktrack{mode: mode}
	for _, p := range patterns {
		re, err := backtrack.Compile(p, syn, fl)
		if err != nil {
			return nil, &UsageError{Cmd: "grep", Msg: err.Error(), Status: 2}
		}
		b.res = append(b.res, re)
		var pre *posixre.Matcher
		if p := re.Prefilter(); p != nil {
			pre = posixre.NewMatcher(p)
		}
		b.pre = append(b.pre, pre)
	}
	if len(b.pre) == 1 && b.pre[0] != nil {
		if text, fold := b.pre[0].Need(); text != nil {
			b.need = newGrepNeedle(text, fold)
		}
	}
	return b, nil
}

// isWordByte reports whether c is a word character for -w and \w.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// wordStartOK and wordEndOK report whether a match of grep -w may start
// (end) at offset i of line.
func wordStartOK(line []byte, i int) bool { return i == 0 || !isWordByte(line[i-1]) }
func wordEndOK(line []byte, i int) bool   { return i == len(line) || !isWordByte(line[i]) }

// grepLiteral matches fixed strings; with fold, the strings are in lower
// case and match ASCII letters of either case.
type grepLiteral struct {
	pats []grepNeedle
	fold bool
	mode grepMode
	// ac finds the patterns all at once, when there are grepACMin or
	// more (and none is empty): the table costs more than a needle's
	// IndexByte for one or two, less than a pass over the buffer for
	// each of many.
	ac *grepAC
	// empty is set when a pattern is empty: it matches every line.
	empty bool
}

// grepACMin is the number of patterns from which they are searched with
// an Aho-Corasick automaton.
const grepACMin = 4

func (l *grepLiteral) seeks() bool { return true }

// seek finds the first match of any pattern in data. No pattern holds
// '\n', so a match lies inside one line. With several patterns, data is
// searched a window at a time, so that a rare pattern is not searched to
// the end for each match of a frequent one. An empty pattern matches at
// 0, in every line. Under -w or -x a match found is only where a match may be: the line
// that holds it must still be decided by match.
func (l *grepLiteral) seek(data []byte) (int, bool) {
	sure := l.mode == grepAny
	if l.empty {
		// Every line holds the empty string.
		return min(0, len(data)-1), sure && len(data) > 0
	}
	if l.ac != nil {
		if end := l.ac.end(data); end > 0 {
			return end - 1, sure
		}
		return -1, false
	}
	if len(l.pats) == 1 {
		return l.pats[0].index(data), sure
	}
	const window = 16 << 10
	longest := 0
	for _, p := range l.pats {
		longest = max(longest, len(p.text))
	}
	for s := 0; s < len(data); s += window {
		w := data[s:min(len(data), s+window+longest-1)]
		best := -1
		for i := range l.pats {
			p := &l.pats[i]
			if best >= 0 {
				// Only a match before the best so far matters.
				w = w[:min(len(w), best+len(p.text)-1)]
			}
			if i := p.index(w); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return s + best, sure
		}
	}
	return -1, false
}

func (l *grepLiteral) match(line []byte) bool {
	if l.ac != nil {
		switch l.mode {
		case grepLine:
			return l.ac.whole(line)
		case grepWord:
			return l.ac.word(line)
		}
		return l.ac.end(line) >= 0
	}
	for i := range l.pats {
		p := &l.pats[i]
		switch l.mode {
		case grepLine:
			if len(line) == len(p.text) && p.equal(line) {
				return true
			}
		case grepWord:
			if l.wordAt(line, p, 0) >= 0 {
				return true
			}
		default:
			if p.index(line) >= 0 {
				return true
			}
		}
	}
	return false
}

// wordAt returns the first offset at or after from where p occurs as a
// whole word of line, or -1.
func (l *grepLiteral) wordAt(line []byte, p *grepNeedle, from int) int {
	for from <= len(line) {
		i := p.index(line[from:])
		if i < 0 {
			return -1
		}
		i += from
		if wordStartOK(line, i) && wordEndOK(line, i+len(p.text)) {
			return i
		}
		from = i + 1
	}
	return -1
}

func (l *grepLiteral) find(line []byte, dst [][2]int) [][2]int {
	if l.mode == grepLine {
		if len(line) > 0 && l.match(line) {
			dst = append(dst, [2]int{0, len(line)})
		}
		return dst
	}
	for pos := 0; pos <= len(line); {
		start, size := -1, 0
		for k := range l.pats {
			p := &l.pats[k]
			var i int
			if l.mode == grepWord {
				i = l.wordAt(line, p, pos)
			} else if i = p.index(line[pos:]); i >= 0 {
				i += pos
			}
			if i < 0 {
				continue
			}
			if start < 0 || i < start || i == start && len(p.text) > size {
				start, size = i, len(p.text)
			}
		}
		switch {
		case start < 0:
			return dst
		case size == 0:
			// An empty pattern matches everywhere but shows nothing.
			pos = start + 1
		default:
			dst = append(dst, [2]int{start, start + size})
			pos = start + size
		}
	}
	return dst
}

// grepRegex matches a regexp, searching first for the strings it needs.
// Under -x and -w the regexp is the patterns wrapped to say so, which
// decides a line exactly; where the matches are is longest's question
// (any mode) or words' (-w).
type grepRegex struct {
	*posixre.Matcher
	mode    grepMode
	longest *regexp.Regexp // the patterns, leftmost-longest
	words   *grepBacktrack // the patterns as -w finds them
	need    grepNeedle     // a string every match holds, if any
}

func (g *grepRegex) match(line []byte) bool { return g.Match(grepText(line)) }

// grepText returns line as a regexp translated with posixre.Bytes reads
// it: line itself if it is ASCII, or a new encoding of it.
func grepText(line []byte) []byte {
	if posixre.HasHigh(line) {
		return posixre.Encode(nil, line)
	}
	return line
}

// grepDecode takes the spans dst[from:], found in text, the encoding of
// line (grepText), back to offsets into line.
func grepDecode(line, text []byte, dst [][2]int, from int) {
	if len(text) == len(line) || from == len(dst) {
		return
	}
	offs := make([]int, 0, 2*(len(dst)-from))
	for _, m := range dst[from:] {
		offs = append(offs, m[0], m[1])
	}
	posixre.DecodeOffsets(text, offs)
	for i := range dst[from:] {
		dst[from+i] = [2]int{offs[2*i], offs[2*i+1]}
	}
}

// grepMidChar reports whether offset i of text, an encoding made by
// grepText, falls inside a character: its second byte.
func grepMidChar(text []byte, i int) bool {
	return i < len(text) && text[i] >= 0x80 && text[i] < 0xC0
}

func (g *grepRegex) seeks() bool { return g.need.text != nil }

// seek finds the string every match holds; without one, every line may
// match.
func (g *grepRegex) seek(data []byte) (int, bool) {
	if g.need.text == nil {
		return min(0, len(data)-1), false
	}
	return g.need.index(data), false
}

// grepSeqRegex is a regexp of fixed length over sets of ASCII bytes,
// decided by a grepSeq; the regexp finds the matches for -o.
type grepSeqRegex struct {
	*grepRegex
	seq *grepSeq
}

func (g *grepSeqRegex) match(line []byte) bool       { return g.seq.match(line) }
func (g *grepSeqRegex) seeks() bool                  { return true }
func (g *grepSeqRegex) seek(data []byte) (int, bool) { return g.seq.seek(data) }

func (g *grepRegex) find(line []byte, dst [][2]int) [][2]int {
	if !g.MayMatch(line) {
		return dst
	}
	switch g.mode {
	case grepLine:
		if len(line) > 0 && g.match(line) {
			dst = append(dst, [2]int{0, len(line)})
		}
		return dst
	case grepWord:
		return g.words.find(line, dst)
	}
	text, from := grepText(line), len(dst)
	for _, m := range g.longest.FindAllIndex(text, -1) {
		if m[1] > m[0] {
			dst = append(dst, [2]int{m[0], m[1]})
		}
	}
	grepDecode(line, text, dst, from)
	return dst
}

// grepBacktrack runs patterns that RE2 cannot, one backtracker each,
// behind its prefilter: most lines are turned away by RE2 (or a string
// search) without a backtracking step.
type grepBacktrack struct {
	res  []*backtrack.Regexp
	pre  []*posixre.Matcher // per pattern; nil where there is none
	mode grepMode
	need grepNeedle // with one pattern, a string its matches hold, if any
}

func (b *grepBacktrack) seeks() bool { return b.need.text != nil }

func (b *grepBacktrack) seek(data []byte) (int, bool) {
	if b.need.text == nil {
		return min(0, len(data)-1), false
	}
	return b.need.index(data), false
}

// mayMatch reports whether pattern i may match line.
func (b *grepBacktrack) mayMatch(i int, line []byte) bool {
	return b.pre[i] == nil || b.pre[i].Match(line)
}

func (b *grepBacktrack) match(line []byte) bool {
	line = grepText(line)
	for i, re := range b.res {
		if !b.mayMatch(i, line) {
			continue
		}
		switch b.mode {
		case grepAny:
			if re.Match(line) {
				return true
			}
		case grepLine:
			if re.MatchAt(line, 0, func(end int) bool { return end == len(line) }) {
				return true
			}
		case grepWord:
			for i := 0; i <= len(line); i++ {
				if !grepMidChar(line, i) && wordStartOK(line, i) && re.MatchAt(line, i, func(end int) bool { return wordEndOK(line, end) }) {
					return true
				}
			}
		}
	}
	return false
}

// find looks for the next match from each start in turn: at a start, the
// longest match of any pattern (that ends a word, under -w).
func (b *grepBacktrack) find(line []byte, dst [][2]int) [][2]int {
	if b.mode == grepLine {
		if len(line) > 0 && b.match(line) {
			dst = append(dst, [2]int{0, len(line)})
		}
		return dst
	}
	text, from := grepText(line), len(dst)
	dst = b.findText(text, dst)
	grepDecode(line, text, dst, from)
	return dst
}

// findText is find on line as grepText encoded it.
func (b *grepBacktrack) findText(line []byte, dst [][2]int) [][2]int {
	var res []*backtrack.Regexp
	for i, re := range b.res {
		if b.mayMatch(i, line) {
			res = append(res, re)
		}
	}
	for pos := 0; pos <= len(line) && len(res) > 0; {
		start, end := -1, -1
		for i := pos; i <= len(line) && start < 0; i++ {
			if grepMidChar(line, i) || b.mode == grepWord && !wordStartOK(line, i) {
				continue
			}
			for _, re := range res {
				re.MatchAt(line, i, func(e int) bool {
					if e > end && (b.mode != grepWord || wordEndOK(line, e)) {
						start, end = i, e
					}
					return e == len(line)
				})
			}
		}
		switch {
		case start < 0:
			return dst
		case end == start:
			pos = start + 1
		default:
			dst = append(dst, [2]int{start, end})
			pos = end
		}
	}
	return dst
}
