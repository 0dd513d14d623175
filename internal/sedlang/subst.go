package sedlang

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/tpipe/tpipe/internal/posixre"
)

// fast is a way to find the matches of a regex without Go's regexp, for
// the shapes scripts use most: Go's regexp has no DFA and costs around a
// microsecond a line, where these cost what bytes.Index or a scan of the
// line's end does. Each kind finds exactly the regexp's leftmost-longest
// matches; fastOf picks one only where that is sure.
type fast struct {
	kind     fastKind
	lit      []byte     // plain, prefix, suffix, whole
	set      *[256]bool // head, tail: the bytes of the class
	min, max int        // head, tail: how many of them (max -1: no limit)
}

type fastKind uint8

const (
	fastNone   fastKind = iota // the regexp
	fastPlain                  // a string anywhere
	fastPrefix                 // ^STRING
	fastSuffix                 // STRING$
	fastWhole                  // ^STRING$
	fastHead                   // ^C{min,max}: a run of a class at the start
	fastTail                   // C{min,max}$: a run of a class at the end
)

// fastOf returns the fast way for re, a translation of posixre's in sed
// mode; none for multiline, where ^ and $ hold at newlines too.
func fastOf(re *regexp.Regexp, multiline bool) fast {
	if multiline {
		return fast{}
	}
	// Not simplified: Simplify would spell a{2,3} as aa(?:a)?.
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return fast{}
	}
	items := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpConcat {
		items = parsed.Sub
	}
	begin := len(items) > 0 && items[0].Op == syntax.OpBeginText
	if begin {
		items = items[1:]
	}
	end := len(items) > 0 && items[len(items)-1].Op == syntax.OpEndText
	if end {
		items = items[:len(items)-1]
	}
	switch len(items) {
	case 0:
		switch {
		case begin && end:
			return fast{kind: fastWhole, lit: []byte{}}
		case begin:
			return fast{kind: fastPrefix, lit: []byte{}}
		case end:
			return fast{kind: fastSuffix, lit: []byte{}}
		}
	case 1:
		it := items[0]
		if lit, ok := literal(it); ok {
			switch {
			case begin && end:
				return fast{kind: fastWhole, lit: lit}
			case begin:
				return fast{kind: fastPrefix, lit: lit}
			case end:
				return fast{kind: fastSuffix, lit: lit}
			}
			return fast{kind: fastPlain, lit: lit}
		}
		if begin == end {
			return fast{} // both ends, or neither: the regexp
		}
		set, lo, hi, ok := run(it)
		if !ok {
			return fast{}
		}
		if begin {
			return fast{kind: fastHead, set: set, min: lo, max: hi}
		}
		return fast{kind: fastTail, set: set, min: lo, max: hi}
	}
	return fast{}
}

// literal returns the bytes of a case-sensitive string: ASCII, and the
// bytes >= 0x80 a translation with posixre.Bytes writes as runes.
func literal(re *syntax.Regexp) ([]byte, bool) {
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	b := make([]byte, 0, len(re.Rune))
	for _, r := range re.Rune {
		c, ok := byteOf(r)
		if !ok {
			return nil, false
		}
		b = append(b, c)
	}
	return b, true
}

// byteOf returns the byte the rune r of a translation stands for.
func byteOf(r rune) (byte, bool) {
	if r < utf8.RuneSelf {
		return byte(r), true
	}
	return posixre.RuneByte(r)
}

// run recognises a repeated class of ASCII bytes: C*, C+, C?, C{m,n},
// where C is a class, a letter in either case or one character.
func run(re *syntax.Regexp) (set *[256]bool, lo, hi int, ok bool) {
	switch re.Op {
	case syntax.OpStar:
		lo, hi = 0, -1
	case syntax.OpPlus:
		lo, hi = 1, -1
	case syntax.OpQuest:
		lo, hi = 0, 1
	case syntax.OpRepeat:
		lo, hi = re.Min, re.Max
	default:
		return nil, 0, 0, false
	}
	if re.Flags&syntax.NonGreedy != 0 {
		return nil, 0, 0, false
	}
	set = new([256]bool)
	switch sub := re.Sub[0]; sub.Op {
	case syntax.OpLiteral:
		if len(sub.Rune) != 1 {
			return nil, 0, 0, false
		}
		c, ok := byteOf(sub.Rune[0])
		if !ok {
			return nil, 0, 0, false
		}
		set[c] = true
		if sub.Flags&syntax.FoldCase != 0 {
			set[upper(c)], set[lower(c)] = true, true
		}
	case syntax.OpCharClass:
		// Each byte is one character (posixre.Bytes): a byte is in the
		// set if the rune that stands for it is in the class.
		for i := 0; i < len(sub.Rune); i += 2 {
			from, to := sub.Rune[i], sub.Rune[i+1]
			for c := range 256 {
				r := rune(c)
				if c >= utf8.RuneSelf {
					r = posixre.ByteRune(byte(c))
				}
				if from <= r && r <= to {
					set[c] = true
				}
			}
		}
	default:
		return nil, 0, 0, false
	}
	return set, lo, hi, true
}

// match reports whether b holds a match of re; enc is room for b as the
// regexp reads it.
func (re *regex) match(b []byte, enc *[]byte) bool {
	switch re.fast.kind {
	case fastNone:
	case fastPlain:
		return bytes.Contains(b, re.fast.lit)
	default:
		_, _, ok := re.fast.anchored(b)
		return ok
	}
	if !re.segments {
		return re.matchText(b, enc)
	}
	for beg := 0; ; {
		end := segmentEnd(b, beg)
		if re.matchText(b[beg:end], enc) {
			return true
		}
		if end == len(b) {
			return false
		}
		beg = end + 1
	}
}

// segmentEnd returns the end of the piece of b that starts at beg: the
// next NUL, or the end of b.
func segmentEnd(b []byte, beg int) int {
	if i := bytes.IndexByte(b[beg:], 0); i >= 0 {
		return beg + i
	}
	return len(b)
}

// matchText reports whether b holds a match of re, by the regexp or the
// backtracker.
func (re *regex) matchText(b []byte, enc *[]byte) bool {
	if posixre.HasHigh(b) {
		*enc = posixre.Encode((*enc)[:0], b)
		b = *enc
	}
	switch {
	case re.bt != nil:
		// Match runs the RE2 prefilter itself; the Matcher's
		// required string turns most lines away before it.
		return (re.m == nil || re.m.MayMatch(b)) && re.bt.Match(b)
	case re.newline:
		return re.m.MayMatch(b) && re.m.Regexp().Match(b)
	}
	return re.m.Match(b)
}

// findAll appends to spans the first limit matches of re in b (all of
// them for a negative limit), with their groups, as offsets into b, by
// the regexp or the backtracker. enc is room for b as they read it.
func (re *regex) findAll(b []byte, limit int, spans []int, enc *[]byte) []int {
	text := b
	if posixre.HasHigh(b) {
		*enc = posixre.Encode((*enc)[:0], b)
		text = *enc
	}
	n := len(spans)
	switch {
	case re.bt != nil:
		if from := re.firstStart(text); from >= 0 {
			spans = re.btFindAll(text, from, limit, spans)
		}
	case !re.m.MayMatch(text):
	case limit == 1:
		spans = append(spans, re.m.Regexp().FindSubmatchIndex(text)...)
	default:
		for _, m := range re.m.Regexp().FindAllSubmatchIndex(text, limit) {
			spans = append(spans, m...)
		}
	}
	if len(text) != len(b) {
		posixre.DecodeOffsets(text, spans[n:])
	}
	return spans
}

// firstStart returns the first offset of b where a match of the
// backtracker regex re may start, by its RE2 prefilter (which matches
// wherever re does, and maybe more), or -1 where the prefilter finds
// nothing: most lines are then turned away without a backtracking step.
func (re *regex) firstStart(b []byte) int {
	if re.m == nil {
		return 0
	}
	if !re.m.MayMatch(b) {
		return -1
	}
	loc := re.m.Regexp().FindIndex(b)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// btFindAll appends to spans the first limit matches of the backtracker
// regex re in b (all of them for a negative limit), with their groups, as
// regexp's FindAllSubmatchIndex finds them for the RE2 path: each search
// starts where the last match ended, with the text before it as context
// for ^ and word edges, and an empty match right after a match does not
// count. GNU sed counts and replaces the same matches. No match starts
// before from.
func (re *regex) btFindAll(b []byte, from, limit int, spans []int) []int {
	stride := 2 * (re.groups + 1)
	prevEnd := -1
	for pos, n := from, 0; pos <= len(b) && (limit < 0 || n < limit); {
		m := re.bt.FindSubmatchIndexAt(b, pos)
		if m == nil {
			break
		}
		accept := true
		if m[1] == pos {
			// An empty match: the next search starts a character on.
			accept = m[0] != prevEnd
			if pos < len(b) {
				_, w := utf8.DecodeRune(b[pos:])
				pos += w
			} else {
				pos++
			}
		} else {
			pos = m[1]
		}
		prevEnd = m[1]
		if accept {
			spans = append(spans, m[:stride]...)
			n++
		}
	}
	return spans
}

// anchored finds the one match of an anchored fast kind.
func (f *fast) anchored(b []byte) (start, end int, ok bool) {
	switch f.kind {
	case fastPrefix:
		return 0, len(f.lit), bytes.HasPrefix(b, f.lit)
	case fastSuffix:
		return len(b) - len(f.lit), len(b), bytes.HasSuffix(b, f.lit)
	case fastWhole:
		return 0, len(b), bytes.Equal(b, f.lit)
	case fastHead:
		n := 0
		for n < len(b) && (f.max < 0 || n < f.max) && f.set[b[n]] {
			n++
		}
		return 0, n, n >= f.min
	case fastTail:
		n := 0
		for n < len(b) && (f.max < 0 || n < f.max) && f.set[b[len(b)-1-n]] {
			n++
		}
		return len(b) - n, len(b), n >= f.min
	}
	return 0, 0, false
}

// subst runs an s command on the pattern space.
func (r *Run) subst(s *subst) error {
	re := r.regex(s.re)
	if re == nil {
		r.noPrevious()
		return nil
	}
	limit := s.nth
	if s.glob {
		limit = -1
	}
	// Matches go to r.spans, stride ints each: start and end of the match
	// and of each group. They are counted by division, never by
	// multiplying nth, which may be as large as an int holds.
	stride := 2
	r.spans = r.spans[:0]
	switch re.fast.kind {
	case fastNone:
		stride = 2 * (re.groups + 1)
		if !re.segments {
			r.spans = re.findAll(r.ps, limit, r.spans, &r.enc)
			break
		}
		for beg := 0; ; {
			end := segmentEnd(r.ps, beg)
			left := -1
			if limit >= 0 {
				left = limit - len(r.spans)/stride
			}
			n := len(r.spans)
			r.spans = re.findAll(r.ps[beg:end], left, r.spans, &r.enc)
			for i := n; i < len(r.spans); i++ {
				if r.spans[i] >= 0 {
					r.spans[i] += beg
				}
			}
			if end == len(r.ps) || limit >= 0 && len(r.spans)/stride >= limit {
				break
			}
			beg = end + 1
		}
	case fastPlain:
		for at := 0; limit < 0 || len(r.spans)/stride < limit; {
			i := bytes.Index(r.ps[at:], re.fast.lit)
			if i < 0 {
				break
			}
			at += i
			r.spans = append(r.spans, at, at+len(re.fast.lit))
			at += len(re.fast.lit)
		}
	default:
		if start, end, ok := re.fast.anchored(r.ps); ok {
			r.spans = append(r.spans, start, end)
		}
	}
	if len(r.spans)/stride < s.nth {
		return nil
	}
	out := r.tmp[:0]
	prev := 0
	var carry caseConv // a \u or \l waiting for a group that was empty
	for i := (s.nth - 1) * stride; i < len(r.spans); i += stride {
		m := r.spans[i : i+stride]
		out = append(out, r.ps[prev:m[0]]...)
		if s.simple {
			for _, p := range s.repl {
				out = append(out, p.text...)
				if p.group >= 0 && 2*p.group < stride {
					if g := m[2*p.group:]; g[0] >= 0 {
						out = append(out, r.ps[g[0]:g[1]]...)
					}
				}
			}
		} else {
			out = r.appendConv(out, s.repl, m, stride, &carry)
		}
		prev = m[1]
		if !s.glob {
			break
		}
	}
	out = append(out, r.ps[prev:]...)
	r.ps, r.tmp = out, r.ps
	r.replaced = true
	if s.print {
		if err := r.main.line(r.ps, r.psNL); err != nil {
			return err
		}
	}
	if s.write >= 0 {
		return r.writers[s.write].line(r.ps, r.psNL)
	}
	return nil
}

// appendConv appends the replacement for match m with GNU's case
// conversions: each part's own, or a \u or \l carried over from a group
// before it that matched nothing.
func (r *Run) appendConv(out []byte, parts []replPart, m []int, stride int, carry *caseConv) []byte {
	*carry = 0
	for _, p := range parts {
		conv := p.conv
		if conv&caseOneShot == 0 {
			conv |= *carry
		}
		*carry = 0
		if len(p.text) > 0 {
			out = appendConv(out, p.text, conv)
			conv &^= caseOneShot
		}
		if p.group < 0 || 2*p.group >= stride {
			continue
		}
		g := m[2*p.group:]
		if g[0] < 0 || g[0] == g[1] {
			if p.conv&caseOneShot != 0 {
				*carry = conv & caseOneShot
			}
			continue
		}
		out = appendConv(out, r.ps[g[0]:g[1]], conv)
	}
	return out
}
