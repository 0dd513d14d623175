package builtin

// Programs written over before GoAWK parses them, where GoAWK would run
// them otherwise than gawk and the difference can be mended in the
// program's text (GoAWK is a library here, used as it is):
//
//   - `for (k in a)` in a stable order. GoAWK ranges over a Go map,
//     whose order changes from run to run, and skips a key deleted while
//     the loop runs. gawk walks a list of the keys taken when the loop
//     starts (a key deleted meanwhile still comes), in an order that is
//     its hash tables' but the same every run: ascending for an array of
//     integers such as split's. Programs and their tests lean on that, so
//     each such loop becomes a plain for loop on a snapshot of the keys in
//     a fixed order: integers first, ascending, then every other key in
//     byte order (gawk's order for integer keys; its hash order for
//     strings is not worth copying). The snapshot is made by an awk
//     function appended to the program, with Go functions
//     (interp.Config.Funcs) sorting the keys. A loop inside a function
//     keeps its snapshot in two extra parameters of that function, so
//     recursion gets one per call.
//   - String literals: a backslash before a newline is dropped with the
//     newline, and \u is a plain u, as gawk 5.2 reads them (GoAWK keeps
//     the newline and reads \u as a Unicode escape).
//   - tolower and toupper change only ASCII letters outside a UTF-8
//     locale, as gawk's do there (GoAWK's change every letter).
//   - A constant written in hex (0x1A) or octal (011) in the program is
//     that number, as gawk takes it (GoAWK reads 0x1A as 0 then a name,
//     011 as eleven). Input is another matter, out of the text's reach:
//     GoAWK reads 0x1A there as 26, gawk as 0 (docs/builtins.md).

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// awkKeysFunc is the awk function the rewritten loops call. It fills
// out with the keys of a and returns how many, to be taken from out[n]
// down to out[1]; or, for an array of the keys 1 to n (split's, a[NR]),
// sets out[0] to n and returns -n, for the loop to count 1 to n itself.
// Other keys are handed to Go a key at a time, and come back sorted in one
// string that split cuts at a byte none of them holds (__tpk_sep).
const awkKeysFunc = `
function __tpkeys(a, out,    k, n, i) {
	delete out
	n = length(a)
	for (i = 1; i <= n; i++)
		if (!(i in a))
			break
	if (i > n) {
		out[0] = n
		return -n
	}
	for (k in a)
		__tpk_add(k)
	return split(__tpk_sorted(), out, __tpk_sep()) - 1
}
`

// awkKeys is one run's side of __tpkeys: the keys handed over, and the
// separator of the last list handed back.
type awkKeys struct {
	keys []string
	sep  string
}

// funcs are the Go functions a rewritten program calls (__tpkeys, the
// loops, tolower and toupper in ASCII), for interp.Config.Funcs and
// parser.ParserConfig.Funcs.
func (s *awkKeys) funcs() map[string]any {
	return map[string]any{
		"__tp_tolower": func(v string) string { return awkMapASCII(v, 'A', 'a') },
		"__tp_toupper": func(v string) string { return awkMapASCII(v, 'a', 'A') },
		"__tpk_add":    func(k string) { s.keys = append(s.keys, k) },
		"__tpk_sorted": func() (string, error) {
			defer func() { s.keys = s.keys[:0] }()
			var seen [256]bool
			size := 0
			for _, k := range s.keys {
				for i := 0; i < len(k); i++ {
					seen[k[i]] = true
				}
				size += len(k) + 1
			}
			sep := slices.IndexFunc(awkSeps[:], func(c byte) bool { return !seen[c] })
			if sep < 0 {
				return "", errors.New("for (k in a): the keys hold every byte value, and cannot be listed in order")
			}
			s.sep = string(awkSeps[sep])
			sorted := awkSortKeys(s.keys)
			b := make([]byte, 0, size)
			for i := len(sorted) - 1; i >= 0; i-- {
				b = append(append(b, sorted[i]...), awkSeps[sep])
			}
			return string(b), nil
		},
		"__tpk_sep": func() string { return s.sep },
		"__tpn":     awkGawkNumber,
	}
}

// awkMapASCII returns v with its ASCII letters from..from+25 moved to
// to..to+25, and every other byte as it was.
func awkMapASCII(v string, from, to byte) string {
	i := 0
	for i < len(v) && !(from <= v[i] && v[i] <= from+25) {
		i++
	}
	if i == len(v) {
		return v
	}
	b := []byte(v)
	for ; i < len(b); i++ {
		if from <= b[i] && b[i] <= from+25 {
			b[i] += to - from
		}
	}
	return string(b)
}

// awkSeps are the bytes a list of keys may be split at, in the order
// tried: controls first, never a space (split's "any blanks").
var awkSeps = func() (seps [255]byte) {
	i := 0
	for c := 1; c < 256; c++ {
		if c != ' ' {
			seps[i] = byte(c)
			i++
		}
	}
	seps[i] = 0
	return seps
}()

// awkSortKeys sorts keys in place in for-in's order: integers as awk
// writes them (awkIntKey) first, by value, then the rest by bytes. Each key
// is read once.
func awkSortKeys(keys []string) []string {
	type key struct {
		s     string
		v     int64
		isInt bool
	}
	ks := make([]key, len(keys))
	for i, k := range keys {
		v, ok := awkIntKey(k)
		ks[i] = key{k, v, ok}
	}
	slices.SortFunc(ks, func(a, b key) int {
		switch {
		case a.isInt && b.isInt:
			return cmp.Compare(a.v, b.v)
		case a.isInt:
			return -1
		case b.isInt:
			return 1
		}
		return strings.Compare(a.s, b.s)
	})
	out := keys[:0]
	for _, k := range ks {
		out = append(out, k.s)
	}
	return out
}

// awkIntKey reports whether k is an integer as awk writes one (no sign
// but -, no leading zero, not -0) and its value.
func awkIntKey(k string) (int64, bool) {
	digits := strings.TrimPrefix(k, "-")
	if digits == "" || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || k != digits) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(k, 10, 64)
	return v, err == nil
}

// awkRewrite returns src written over as this file's comment says, to
// be parsed and run with awkFuncs, or ok false when nothing in src
// needs it or src is not lexed cleanly (GoAWK then runs it as it is).
// utf8 says the locale's characters are UTF-8.
func awkRewrite(src string, utf8 bool) (out string, ok bool) {
	return awkRewriteSome(src, utf8, false)
}

// awkRewriteNumbers returns src with its hex and octal constants written
// in decimal, and nothing else changed: the text the fast forms and the
// gawk checks read, so that NR == 010 is NR == 8 to them too.
func awkRewriteNumbers(src string) (out string, ok bool) {
	return awkRewriteSome(src, false, true)
}

// awkRewriteSome is awkRewrite, or awkRewriteNumbers if numbers is set.
func awkRewriteSome(src string, utf8, numbers bool) (out string, ok bool) {
	if strings.IndexByte(src, '\r') >= 0 {
		return "", false // GoAWK's columns skip a CR: offsets would drift
	}
	if strings.IndexByte(src, 0) >= 0 {
		return "", false // GoAWK's lexer ends the text at a NUL: what is appended would be lost
	}
	toks, ok := awkLex(src)
	if !ok {
		return "", false
	}
	toks = toks[:len(toks)-1] // the EOF
	for _, t := range toks {
		if t.at < 0 || t.at >= len(src) {
			return "", false // a position the lexer counted otherwise ("0E\n0")
		}
	}

	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	sites := 0
	// The function being read: where its parameter list ends, whether it
	// has parameters, its body's brace depth, and its loops' names.
	inFunc, funcBody, depth := false, false, 0
	paramsEnd, hasParams := 0, false
	var locals []string
	endFunc := func() {
		if len(locals) > 0 {
			sep := ", "
			if !hasParams {
				sep = ""
			}
			edits = append(edits, edit{paramsEnd, paramsEnd, sep + strings.Join(locals, ", ")})
		}
		inFunc, funcBody, locals = false, false, nil
	}
	if !numbers {
		// fields read as numbers as gawk reads them (awkstrnum.go)
		for i, end := range awkNumericFields(toks, src) {
			edits = append(edits, edit{toks[i].at, toks[i].at, " __tpn("}, edit{end, end, ")"})
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if numbers != (t.tok == lexer.NUMBER) {
			continue
		}
		switch t.tok {
		case lexer.FUNCTION:
			if inFunc {
				return "", false
			}
			// function NAME ( PARAMS ) {
			j := i + 1
			for j < len(toks) && toks[j].tok != lexer.RPAREN {
				j++
			}
			if j == len(toks) || j < i+3 {
				return "", false
			}
			inFunc, paramsEnd, hasParams = true, toks[j].at, toks[j-1].tok != lexer.LPAREN
			i = j
		case lexer.LBRACE:
			if inFunc {
				funcBody = true
			}
			depth++
		case lexer.RBRACE:
			depth--
			if inFunc && funcBody && depth == 0 {
				endFunc()
			}
		case lexer.NUMBER:
			// 0x1A is 0 then the name x1A to GoAWK: a name something
			// after it may take (x1A++, x1A = 1, x1A[1]) keeps it so.
			hexName := i+1 < len(toks) && toks[i+1].at == t.at+1
			if hexName && i+2 < len(toks) && awkTakesName(toks[i+2].tok) {
				continue
			}
			if m := awkBaseConstant(src[t.at:]); m != "" {
				edits = append(edits, edit{t.at, t.at + len(m), awkDecimal(m)})
			}
		case lexer.STRING:
			if fixed, end, changed := awkFixString(src, t.at); changed {
				edits = append(edits, edit{t.at, end, fixed})
			}
		case lexer.REGEX:
			if utf8 {
				// Go's classes are ASCII; gawk's take the locale's letters
				end := len(src)
				if i+1 < len(toks) && toks[i+1].at > t.at {
					end = toks[i+1].at
				}
				if fixed := awkUnicodeClasses.Replace(src[t.at:end]); fixed != src[t.at:end] {
					edits = append(edits, edit{t.at, end, fixed})
				}
			}
		case lexer.F_TOLOWER, lexer.F_TOUPPER:
			if !utf8 {
				name := "__tp_tolower"
				if t.tok == lexer.F_TOUPPER {
					name = "__tp_toupper"
				}
				edits = append(edits, edit{t.at, t.at + len("tolower"), name})
			}
		case lexer.FOR:
			// for ( NAME in NAME )
			if i+5 >= len(toks) || toks[i+1].tok != lexer.LPAREN || toks[i+2].tok != lexer.NAME ||
				toks[i+3].tok != lexer.IN || toks[i+4].tok != lexer.NAME || toks[i+5].tok != lexer.RPAREN {
				continue
			}
			key, arr := toks[i+2].val, toks[i+4].val
			if arr == "ENVIRON" || arr == "ARGV" {
				continue // special arrays GoAWK will not pass to a function
			}
			sites++
			keys, idx := fmt.Sprintf("__tpk%d", sites), fmt.Sprintf("__tpi%d", sites)
			if inFunc {
				locals = append(locals, keys, idx)
			}
			edits = append(edits, edit{t.at, toks[i+5].at + 1, fmt.Sprintf(
				"for (%[1]s = __tpkeys(%[2]s, %[3]s); %[1]s != 0 && ((%[4]s = %[1]s > 0 ? %[3]s[%[1]s--] : %[3]s[0] + %[1]s++ + 1) || 1); )",
				idx, arr, keys, key)})
			i += 5
		}
	}
	if inFunc || depth != 0 || len(edits) == 0 {
		return "", false
	}
	var b strings.Builder
	last := 0
	slices.SortStableFunc(edits, func(a, b edit) int { return a.from - b.from })
	for _, e := range edits {
		b.WriteString(src[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(src[last:])
	if sites > 0 {
		b.WriteString("\n")
		b.WriteString(awkKeysFunc)
	}
	return b.String(), true
}

// awkUnicodeClasses writes a regular expression's letter classes, which
// Go's regexp (GoAWK's) reads as ASCII, as Unicode's, for a UTF-8 locale
// where gawk's take every letter: [[:alpha:]] matches é there.
var awkUnicodeClasses = strings.NewReplacer(
	"[:alpha:]", `\p{L}`, "[:upper:]", `\p{Lu}`, "[:lower:]", `\p{Ll}`, "[:alnum:]", `\p{L}\p{Nd}`,
	"[:punct:]", `\p{P}\p{S}`, `\\`, `\\`, `\w`, `[\p{L}\p{Nd}_]`, `\W`, `[^\p{L}\p{Nd}_]`)

// awkSpellFunction returns src with gawk's short spelling of a function
// definition, func NAME(, written out as function NAME(, which is all
// GoAWK reads; src as it is when it has none or does not lex. at holds
// where each "function" written starts in the text returned (see
// awkSpelledPosition).
func awkSpellFunction(src string) (out string, at []int) {
	if !strings.Contains(src, "func") {
		return src, nil
	}
	toks, ok := awkLex(src)
	if !ok {
		return src, nil
	}
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		if t.tok != lexer.NAME || t.val != "func" || t.at < 0 || toks[i+1].tok != lexer.NAME || toks[i+2].tok != lexer.LPAREN {
			continue
		}
		if i > 0 && toks[i-1].tok != lexer.NEWLINE && toks[i-1].tok != lexer.SEMICOLON && toks[i-1].tok != lexer.RBRACE {
			continue // not where a definition starts
		}
		b.WriteString(src[last:t.at])
		at = append(at, b.Len())
		b.WriteString("function")
		last = t.at + len("func")
	}
	if last == 0 {
		return src, nil
	}
	b.WriteString(src[last:])
	return b.String(), at
}

// awkSpelledPosition moves the position (line, 1-based byte column) of a
// parse error in text, which awkSpellFunction wrote with "function" at
// each of at, to where it is in the program as the user wrote it: 4 bytes
// back for each "func" written out before it on its line, and to the start
// of the word for a position within one.
func awkSpelledPosition(text string, at []int, line, col int) int {
	start := 0 // the line's first byte
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return col
		}
		start += i + 1
	}
	off := start + col - 1
	moved := col
	for _, a := range at {
		switch {
		case a < start || a >= off:
		case off >= a+len("function"):
			moved -= len("function") - len("func")
		default:
			moved -= off - a
		}
	}
	return moved
}

// awkBaseNumber is a hex or octal constant at the start of a number in
// the program's text.
var awkBaseNumber = regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|0[0-7]+)`)

// awkBaseConstant returns the hex or octal constant at the start of src,
// or "" when there is none, or when what follows makes GoAWK read the
// text otherwise than as a number next to something (more of a number, a
// name, 0x1[2] or 0x1(2), an increment: 0x1++ is 0 then x1++ to GoAWK
// and no constant to gawk), which is left as it is.
func awkBaseConstant(src string) string {
	m := awkBaseNumber.FindString(src)
	if m == "" {
		return ""
	}
	rest := src[len(m):]
	switch {
	case rest == "":
	case strings.IndexByte("0123456789.[(_", rest[0]) >= 0 || rest[0]|0x20 >= 'a' && rest[0]|0x20 <= 'z':
		return ""
	case strings.HasPrefix(rest, "++") || strings.HasPrefix(rest, "--"):
		return ""
	}
	return m
}

// awkTakesName reports whether tok after a name makes it an lvalue or an
// array or a call.
func awkTakesName(tok lexer.Token) bool {
	switch tok {
	case lexer.INCR, lexer.DECR, lexer.ASSIGN, lexer.ADD_ASSIGN, lexer.SUB_ASSIGN, lexer.MUL_ASSIGN,
		lexer.DIV_ASSIGN, lexer.MOD_ASSIGN, lexer.POW_ASSIGN, lexer.LBRACKET, lexer.LPAREN:
		return true
	}
	return false
}

// awkDecimal writes the hex or octal constant m in decimal.
func awkDecimal(m string) string {
	n := new(big.Int)
	if _, ok := n.SetString(m, 0); !ok {
		return m
	}
	f, _ := new(big.Float).SetInt(n).Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// awkFixString reads the string literal at src[at] (its opening quote)
// and returns its text as gawk reads it, written for GoAWK, the offset
// past its closing quote, and whether the two differ: a backslash and
// the newline after it dropped, \u made a plain u.
func awkFixString(src string, at int) (fixed string, end int, changed bool) {
	var b strings.Builder
	b.WriteByte('"')
	i := at + 1
	for i < len(src) && src[i] != '"' {
		if src[i] == '\\' && i+1 < len(src) {
			switch src[i+1] {
			case '\n':
				changed = true
			case 'u':
				b.WriteByte('u')
				changed = true
			default:
				b.WriteString(src[i : i+2])
			}
			i += 2
			continue
		}
		b.WriteByte(src[i])
		i++
	}
	if i == len(src) {
		return "", 0, false
	}
	b.WriteByte('"')
	return b.String(), i + 1, changed
}

// awkEndsOperand reports whether a / after tok divides (tok ends an
// operand) rather than starts a regular expression.
func awkEndsOperand(tok lexer.Token) bool {
	switch tok {
	case lexer.NAME, lexer.NUMBER, lexer.STRING, lexer.REGEX, lexer.RPAREN, lexer.RBRACKET,
		lexer.INCR, lexer.DECR, lexer.F_LENGTH:
		return true
	}
	return false
}
