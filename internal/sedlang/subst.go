package sedlang

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
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

// literal returns the bytes of a case-sensitive ASCII string.
func literal(re *syntax.Regexp) ([]byte, bool) {
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	b := make([]byte, 0, len(re.Rune))
	for _, r := range re.Rune {
		if r >= utf8.RuneSelf {
			return nil, false
		}
		b = append(b, byte(r))
	}
	return b, true
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
		if len(sub.Rune) != 1 || sub.Rune[0] >= utf8.RuneSelf {
			return nil, 0, 0, false
		}
		c := byte(sub.Rune[0])
		set[c] = true
		if sub.Flags&syntax.FoldCase != 0 {
			set[upper(c)], set[lower(c)] = true, true
		}
	case syntax.OpCharClass:
		for i := 0; i < len(sub.Rune); i += 2 {
			from, to := sub.Rune[i], sub.Rune[i+1]
			if to >= utf8.RuneSelf {
				// A class with non-ASCII characters matches runes, which
				// a scan of bytes cannot count.
				return nil, 0, 0, false
			}
			for c := from; c <= to; c++ {
				set[c] = true
			}
		}
	default:
		return nil, 0, 0, false
	}
	return set, lo, hi, true
}

// match reports whether b holds a match of re.
func (re *regex) match(b []byte) bool {
	switch re.fast.kind {
	case fastNone:
		switch {
		case re.bt != nil:
			// Match runs the RE2 prefilter itself; the Matcher's
			// required string turns most lines away before it.
			return (re.m == nil || re.m.MayMatch(b)) && re.bt.Match(b)
		case re.newline:
			return re.m.MayMatch(b) && re.m.Regexp().Match(b)
		}
		return re.m.Match(b)
	case fastPlain:
		return bytes.Contains(b, re.fast.lit)
	}
	_, _, ok := re.fast.anchored(b)
	return ok
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

// findAll appends to spans the first limit matches of the backtracker
// regex re in b (all of them for a negative limit), with their groups, as
// regexp's FindAllSubmatchIndex finds them for the RE2 path: each search
// starts where the last match ended, with the text before it as context
// for ^ and word edges, and an empty match right after a match does not
// count. GNU sed counts and replaces the same matches. No match starts
// before from.
func (re *regex) findAll(b []byte, from, limit int, spans []int) []int {
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
	switch {
	case re.bt != nil:
		from := re.firstStart(r.ps)
		if from < 0 {
			return nil
		}
		stride = 2 * (re.groups + 1)
		r.spans = re.findAll(r.ps, from, limit, r.spans)
	case re.fast.kind == fastNone:
		if !re.m.MayMatch(r.ps) {
			return nil
		}
		stride = 2 * (re.groups + 1)
		if limit == 1 {
			r.spans = append(r.spans, re.m.Regexp().FindSubmatchIndex(r.ps)...)
		} else {
			for _, m := range re.m.Regexp().FindAllSubmatchIndex(r.ps, limit) {
				r.spans = append(r.spans, m...)
			}
		}
	case re.fast.kind == fastPlain:
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
