package builtin

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/internal/posixre"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "tr",
		Usage: "tr [-cdst] SET1 [SET2]",
		Help: "Translate, squeeze and delete bytes: each byte of SET1 becomes the byte " +
			"at the same place in SET2 (padded with its last byte). -d deletes the bytes " +
			"of SET1, -s squeezes runs of a repeated byte of the last SET given into " +
			"one, -c complements SET1 and -t truncates SET1 to the length of SET2. SETs " +
			"take ranges (a-z), escapes (\\n \\t \\\\ \\NNN), classes ([:alpha:] " +
			"[:digit:] ...), [=c=] and, in SET2, [c*N] and [c*].",
		New: newTr,
	})
}

var trLongs = []longOpt{
	{"complement", 'c', false},
	{"delete", 'd', false},
	{"squeeze-repeats", 's', false},
	{"truncate-set1", 't', false},
}

// trCmd is what tr does to each byte: delete it, translate it, and squeeze
// runs of the result.
type trCmd struct {
	del     [256]bool
	xlate   [256]byte
	squeeze [256]bool
}

func newTr(env *Env, args []string) (*Cmd, error) {
	var complement, del, squeeze, truncate bool
	// tr stops at its first operand: "tr a -d" translates a to -.
	sets, err := getopt{cmd: "tr", shorts: "cCdst", longs: trLongs, inOrder: true}.parse(args, func(c byte, _ string) error {
		switch c {
		case 'c', 'C':
			complement = true
		case 'd':
			del = true
		case 's':
			squeeze = true
		case 't':
			truncate = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	translate := !del && len(sets) == 2
	switch {
	case len(sets) == 0:
		return nil, usagef("tr", "missing operand")
	case len(sets) > 2:
		return nil, usagef("tr", "extra operand '%s'", sets[2])
	case del && squeeze && len(sets) == 1:
		return nil, usagef("tr", "missing operand after '%s'", sets[0])
	case del && !squeeze && len(sets) == 2:
		return nil, usagef("tr", "extra operand '%s'", sets[1])
	case !del && !squeeze && len(sets) == 1:
		return nil, usagef("tr", "missing operand after '%s'", sets[0])
	}
	s1, err := trParse(sets[0])
	if err != nil {
		return nil, err
	}
	if s1.has('*', -1) {
		return nil, usagef("tr", "the [c*] repeat construct may not appear in string1")
	}
	set1, _ := s1.expand(0)
	if complement {
		set1 = trComplement(set1)
	}
	var s2 trSet
	if len(sets) == 2 {
		if s2, err = trParse(sets[1]); err != nil {
			return nil, err
		}
		switch {
		case !translate && s2.has('*', -1):
			return nil, usagef("tr", "the [c*] construct may appear in string2 only when translating")
		case translate && s2.has('=', 0):
			return nil, usagef("tr", "[=c=] expressions may not appear in string2 when translating")
		}
	}
	t := &trCmd{}
	for i := range t.xlate {
		t.xlate[i] = byte(i)
	}
	if del {
		for _, c := range set1 {
			t.del[c] = true
		}
	}
	switch {
	case translate:
		// A [c*] fills SET2 up to the length of SET1, then -t cuts SET1
		// to the length of SET2.
		set2, classAt, err := s2.expandChecked(len(set1))
		if err != nil {
			return nil, err
		}
		if truncate && len(set2) < len(set1) {
			set1 = set1[:len(set2)]
		}
		if err := trCheck(s1, s2, len(set1), set2, classAt, complement); err != nil {
			return nil, err
		}
		for len(set2) < len(set1) {
			set2 = append(set2, set2[len(set2)-1])
		}
		for i, c := range set1 {
			t.xlate[c] = set2[i]
		}
		if squeeze {
			for _, c := range set2 {
				t.squeeze[c] = true
			}
		}
	case squeeze && len(sets) == 2: // -ds: squeeze SET2
		set2, _ := s2.expand(0)
		for _, c := range set2 {
			t.squeeze[c] = true
		}
	case squeeze:
		for _, c := range set1 {
			t.squeeze[c] = true
		}
	}
	return &Cmd{Name: "tr", ReadsInput: true, Rec: t.perRecord()}, nil
}

// perRecord is tr's per-record form. A squeeze spans records, so the last
// byte written is carried over. The output of a record is passed on split
// at its newlines, one line per record, so that a '\n' that tr makes
// (tr ' ' '\n') starts a new record. A record that loses its newline
// (tr -d '\n', tr '\n' ' ') is the start of a line the next record's
// output goes on with (PerRecord.Text), so that seq 5 | tr '\n' ' ' | sort
// sorts one line, as after a pipe.
func (t *trCmd) perRecord() *task.PerRecord {
	var (
		buf     []byte
		last    int // the last byte written, or -1
		squeeze = t.squeeze != [256]bool{}
		// Translating alone is a table lookup per byte, in a loop the
		// compiler keeps tight.
		mapOnly = !squeeze && t.del == [256]bool{}
	)
	r := &task.PerRecord{
		Start: func(task.Emit) error {
			last = -1
			return nil
		},
		Each: func(rec []byte, emit task.Emit) error {
			if mapOnly {
				buf = slices.Grow(buf[:0], len(rec))[:len(rec)]
				for i, b := range rec {
					buf[i] = t.xlate[b]
				}
			} else {
				buf = buf[:0]
				for _, b := range rec {
					if t.del[b] {
						continue
					}
					c := t.xlate[b]
					if squeeze && t.squeeze[c] && int(c) == last {
						continue
					}
					buf = append(buf, c)
					last = int(c)
				}
			}
			out := buf
			for len(out) > 0 {
				i := bytes.IndexByte(out, '\n') + 1
				if i == 0 || i == len(out) {
					return emit(out)
				}
				if err := emit(out[:i]); err != nil {
					return err
				}
				out = out[i:]
			}
			return nil
		},
	}
	// A newline deleted or mapped away carries a line over to the next
	// record's output.
	r.Text = t.del['\n'] || t.xlate['\n'] != '\n'
	if !squeeze && !r.Text {
		// Without a squeeze no state spans records: copies may share them.
		r.Fresh = t.perRecord
	}
	return r
}

// trElem is one element of a SET: a byte, a range, a class, [=c=], or a
// repeat [c*n], with n -1 for [c*].
type trElem struct {
	kind   byte // 'c' char, '-' range, ':' class, '=' equivalence, '*' repeat
	lo, hi byte
	class  string
	n      int
}

type trSet []trElem

// has reports whether s holds an element of the kind; for a repeat, n -1
// asks for [c*] only.
func (s trSet) has(kind byte, n int) bool {
	for _, e := range s {
		if e.kind == kind && (kind != '*' || n == 0 || e.n == n) {
			return true
		}
	}
	return false
}

// trParse parses a SET.
func trParse(s string) (trSet, error) {
	var set trSet
	for i := 0; i < len(s); {
		if s[i] == '[' && i+1 < len(s) {
			if e, n, ok, err := trBracket(s[i:]); err != nil {
				return nil, err
			} else if ok {
				set = append(set, e)
				i += n
				continue
			}
		}
		c, n := trChar(s[i:])
		i += n
		if i+1 < len(s) && s[i] == '-' {
			hi, m := trChar(s[i+1:])
			if hi < c {
				return nil, usagef("tr", "range-endpoints of '%s' are in reverse collating sequence order", s[i-n:i+1+m])
			}
			set = append(set, trElem{kind: '-', lo: c, hi: hi})
			i += 1 + m
			continue
		}
		set = append(set, trElem{kind: 'c', lo: c})
	}
	return set, nil
}

// trChar reads one possibly escaped byte of a SET and says how many bytes
// of s it took.
func trChar(s string) (byte, int) {
	if s[0] != '\\' || len(s) == 1 {
		return s[0], 1
	}
	switch c := s[1]; c {
	case 'a':
		return '\a', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'v':
		return '\v', 2
	case '0', '1', '2', '3', '4', '5', '6', '7':
		// Up to three octal digits, as long as the value fits a byte.
		v, n := 0, 1
		for n < 4 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			w := v*8 + int(s[n]-'0')
			if w > 0xff {
				break
			}
			v = w
			n++
		}
		return byte(v), n
	default:
		return c, 2
	}
}

var trClassNames = []string{"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "xdigit"}

// trBracket parses [:class:], [=c=], or [c*n] at the start of s. ok is
// false when s does not start with one, and the '[' is then an ordinary
// byte.
func trBracket(s string) (e trElem, n int, ok bool, err error) {
	switch s[1] {
	case ':':
		end := strings.Index(s[2:], ":]")
		if end < 0 {
			break
		}
		name := s[2 : 2+end]
		for _, c := range trClassNames {
			if c == name {
				return trElem{kind: ':', class: name}, end + 4, true, nil
			}
		}
		if end > 0 {
			return e, 0, false, usagef("tr", "invalid character class '%s'", name)
		}
	case '=':
		end := strings.Index(s[2:], "=]")
		if end < 0 {
			break
		}
		body := s[2 : 2+end]
		c, m := trChar(body)
		if m != len(body) {
			return e, 0, false, usagef("tr", "%s: equivalence class operand must be a single character", body)
		}
		return trElem{kind: '=', lo: c}, end + 4, true, nil
	}
	// [c*n] or [c*]
	c, m := trChar(s[1:])
	rest := s[1+m:]
	if !strings.HasPrefix(rest, "*") {
		return e, 0, false, nil
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return e, 0, false, nil
	}
	count := rest[1:end]
	r := -1
	if count != "" {
		base := 10
		if count[0] == '0' {
			base = 8
		}
		v, perr := strconv.ParseUint(count, base, 31)
		if perr != nil {
			return e, 0, false, usagef("tr", "invalid repeat count '%s' in [c*n] construct", count)
		}
		r = int(v)
		if r == 0 {
			r = -1 // [c*0] is [c*]
		}
	}
	return trElem{kind: '*', lo: c, n: r}, 1 + m + end + 1, true, nil
}

// fixedLen is the length of the set without its [c*] fill.
func (s trSet) fixedLen() int {
	n := 0
	for _, e := range s {
		switch e.kind {
		case 'c', '=':
			n++
		case '-':
			n += int(e.hi-e.lo) + 1
		case ':':
			n += len(trClassBytes(e.class))
		case '*':
			if e.n > 0 {
				n += e.n
			}
		}
	}
	return n
}

// expand lists the bytes of s in order; a [c*] fills the set up to want
// bytes. classAt maps the index where each class starts to its name.
func (s trSet) expand(want int) (out []byte, classAt map[int]string) {
	fill := max(want-s.fixedLen(), 0)
	for _, e := range s {
		switch e.kind {
		case 'c', '=':
			out = append(out, e.lo)
		case '-':
			for c := int(e.lo); c <= int(e.hi); c++ {
				out = append(out, byte(c))
			}
		case ':':
			if classAt == nil {
				classAt = map[int]string{}
			}
			classAt[len(out)] = e.class
			out = append(out, trClassBytes(e.class)...)
		case '*':
			n := e.n
			if n < 0 {
				n, fill = fill, 0 // only the first [c*] fills
			}
			for range n {
				out = append(out, e.lo)
			}
		}
	}
	return out, classAt
}

// expandChecked is expand for a SET2 that allows a single [c*].
func (s trSet) expandChecked(want int) ([]byte, map[int]string, error) {
	fills := 0
	for _, e := range s {
		if e.kind == '*' && e.n < 0 {
			fills++
		}
	}
	if fills > 1 {
		return nil, nil, usagef("tr", "only one [c*] repeat construct may appear in string2")
	}
	out, classAt := s.expand(want)
	return out, classAt, nil
}

// trCheck applies GNU's rules to the SETs of a translation: SET2 is not
// empty; it holds no class but [:upper:] and [:lower:], each facing
// [:lower:] or [:upper:] in SET1 (unless SET1 is complemented or already
// over), and does not end with one while SET1 is longer; and a complemented
// SET1 with a class maps everything to one byte.
func trCheck(s1, s2 trSet, len1 int, set2 []byte, classAt2 map[int]string, complement bool) error {
	if len(set2) == 0 && len1 > 0 {
		return usagef("tr", "when not truncating set1, string2 must be non-empty")
	}
	_, classAt1 := s1.expand(0)
	for at, name := range classAt2 {
		if name != "upper" && name != "lower" {
			return usagef("tr", "when translating, the only character classes that may appear in string2 are 'upper' and 'lower'")
		}
		// GNU walks both SETs and checks a class of SET2 that starts
		// where SET1 has a byte or has just ended.
		if other := classAt1[at]; !complement && at <= len1 && other != "upper" && other != "lower" {
			return usagef("tr", "misaligned [:upper:] and/or [:lower:] construct")
		}
	}
	if len(set2) < len1 && len(s2) > 0 && s2[len(s2)-1].kind == ':' {
		return usagef("tr", "when translating with string1 longer than string2, the latter string must not end with a character class")
	}
	if complement && s1.has(':', 0) && bytes.Count(set2, set2[:1]) != len(set2) {
		return usagef("tr", "when translating with complemented character classes, string2 must map all characters in the domain to one")
	}
	return nil
}

// trClassBytes lists the bytes of a class of the C locale in order.
func trClassBytes(name string) []byte {
	in := posixre.Class(name)
	var out []byte
	for c := 0; c < 256; c++ {
		if in(byte(c)) {
			out = append(out, byte(c))
		}
	}
	return out
}

// trComplement lists, in order, the bytes not in set.
func trComplement(set []byte) []byte {
	var in [256]bool
	for _, c := range set {
		in[c] = true
	}
	var out []byte
	for c := 0; c < 256; c++ {
		if !in[c] {
			out = append(out, byte(c))
		}
	}
	return out
}
