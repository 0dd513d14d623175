package builtin

// sort's keys: where a key lies in a line, how two keys compare under each
// ordering GNU sort has (bytes, -n, -g, -h, -M, -V, with -d, -f, -i, -r),
// and the abbreviated key of a line: a uint64 whose order agrees with the
// key's, so that most comparisons of a sort are comparisons of integers,
// and each line's fields are scanned once rather than once per comparison.

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
)

// sortKind is how a key's text is ordered.
type sortKind uint8

const (
	kindText    sortKind = iota // bytewise, after d, f, i
	kindNumeric                 // -n: decimal numbers, exactly
	kindGeneral                 // -g: floating point, as strtold reads it
	kindHuman                   // -h: numbers with an SI suffix
	kindMonth                   // -M: JAN < ... < DEC, unknown first
	kindVersion                 // -V: version numbers within text
)

// sortKey is one -k key, or the whole line with the global options. Fields
// and characters count from 0.
type sortKey struct {
	sword, schar int  // start: field, then character in it
	eword, echar int  // end: field and character; echar 0 is the field's end
	hasEnd       bool // POS2 given; else the key runs to the end of the line
	sblanks      bool // b on POS1: skip blanks before the start character
	eblanks      bool // b on POS2: skip blanks before the end character
	kind         sortKind
	kinds        uint8 // every kind given, for sortCheckKey
	reverse      bool  // r
	fold         bool  // f: compare lowercase letters as uppercase
	dict         bool  // d: ignore all but letters, digits and blanks
	printable    bool  // i: ignore non-printing characters
}

// ordering reports whether k has an option other than r: a key with none
// (and no r) takes the global options, as in GNU sort.
func (k *sortKey) ordering() bool {
	return k.sblanks || k.eblanks || k.kind != kindText || k.fold || k.dict || k.printable
}

// ignore returns the bytes a comparison of k skips, or nil.
func (k *sortKey) ignore() *[256]bool {
	switch {
	case k.dict: // d wins over i, as in GNU sort
		return &sortIgnore[0]
	case k.printable:
		return &sortIgnore[1]
	}
	return nil
}

// sortBlank is GNU sort's blank in the C locale: space, tab and newline
// (which a line holds only with -z).
func sortBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// keyStart returns where key k starts in line.
func (c *sortCmd) keyStart(line []byte, k *sortKey) int {
	p, n := 0, len(line)
	if c.sep >= 0 {
		for w := k.sword; w > 0 && p < n; w-- {
			i := bytes.IndexByte(line[p:], byte(c.sep))
			if i < 0 {
				p = n
				break
			}
			p += i + 1
		}
	} else {
		for w := k.sword; w > 0 && p < n; w-- {
			for p < n && sortBlank(line[p]) {
				p++
			}
			for p < n && !sortBlank(line[p]) {
				p++
			}
		}
	}
	if k.sblanks {
		for p < n && sortBlank(line[p]) {
			p++
		}
	}
	if k.schar > n-p {
		return n
	}
	return p + k.schar
}

// keyEnd returns where key k ends in line (before keyStart if the key is
// empty).
func (c *sortCmd) keyEnd(line []byte, k *sortKey) int {
	n := len(line)
	if !k.hasEnd {
		return n
	}
	// With no character, the key ends with field eword: skip eword+1
	// fields, but not the separator after the last one.
	words := k.eword
	if k.echar == 0 {
		words++
	}
	p := 0
	if c.sep >= 0 {
		for words > 0 && p < n {
			words--
			i := bytes.IndexByte(line[p:], byte(c.sep))
			if i < 0 {
				p = n
				break
			}
			p += i
			if words > 0 || k.echar != 0 {
				p++
			}
		}
	} else {
		for words > 0 && p < n {
			words--
			for p < n && sortBlank(line[p]) {
				p++
			}
			for p < n && !sortBlank(line[p]) {
				p++
			}
		}
	}
	if k.echar != 0 {
		if k.eblanks {
			for p < n && sortBlank(line[p]) {
				p++
			}
		}
		if k.echar > n-p {
			return n
		}
		p += k.echar
	}
	return p
}

// key returns the text of key k in line (empty when the key is).
func (c *sortCmd) key(line []byte, k *sortKey) []byte {
	if k.sword == 0 && k.schar == 0 && !k.sblanks && !k.hasEnd {
		return line
	}
	s := c.keyStart(line, k)
	if s >= len(line) {
		return line[:0]
	}
	return line[s:max(s, c.keyEnd(line, k))]
}

// compare orders two lines: by the keys in turn, then, when they tie and
// neither -s nor -u is given, bytewise (reversed by -r).
func (c *sortCmd) compare(a, b []byte) int { return c.compareFrom(a, b, 0) }

// compareFrom is compare for lines known to tie on the keys before key i.
func (c *sortCmd) compareFrom(a, b []byte, i int) int {
	for ; i < len(c.keys); i++ {
		k := &c.keys[i]
		d := c.compareKey(c.key(a, k), c.key(b, k), k)
		if d != 0 {
			if k.reverse {
				return -d
			}
			return d
		}
	}
	if len(c.keys) > 0 && !c.lastCmp {
		return 0
	}
	d := bytes.Compare(a, b)
	if c.global.reverse {
		return -d
	}
	return d
}

// compareKey compares the texts of key k in two lines, not reversed.
func (c *sortCmd) compareKey(ka, kb []byte, k *sortKey) int {
	switch k.kind {
	case kindNumeric:
		return sortNumCompare(ka, kb)
	case kindGeneral:
		return sortGeneralCompare(ka, kb)
	case kindHuman:
		if k.fold { // GNU folds the copy it reads: 1e5 has the suffix E
			ka, kb = sortTranslate(ka, k), sortTranslate(kb, k)
		}
		return sortHumanCompare(ka, kb)
	case kindMonth:
		return sortMonth(ka) - sortMonth(kb)
	case kindVersion:
		if k.fold || k.dict || k.printable {
			ka, kb = sortTranslate(ka, k), sortTranslate(kb, k)
		}
		return sortVersionCompare(ka, kb)
	}
	return sortTextCompare(ka, kb, k)
}

// sortIgnore tells, for d and i, which bytes a comparison skips.
var sortIgnore = func() (t [2][256]bool) {
	for i := range 256 {
		c := byte(i)
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		t[0][i] = !alnum && !sortBlank(c) // d
		t[1][i] = c < 0x20 || c >= 0x7f   // i
	}
	return t
}()

// sortTextCompare compares two keys as text, with k's d, i and f.
func sortTextCompare(a, b []byte, k *sortKey) int {
	if !k.fold && !k.dict && !k.printable {
		return bytes.Compare(a, b)
	}
	ignore := k.ignore()
	i, j := 0, 0
	for {
		if ignore != nil {
			for i < len(a) && ignore[a[i]] {
				i++
			}
			for j < len(b) && ignore[b[j]] {
				j++
			}
		}
		if i == len(a) || j == len(b) {
			break
		}
		ca, cb := a[i], b[j]
		if k.fold {
			ca, cb = sortUpper(ca), sortUpper(cb)
		}
		if ca != cb {
			return int(ca) - int(cb)
		}
		i++
		j++
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return 0
}

// sortTranslate returns the key as GNU sort compares it under d, i and f
// for the orderings that read a copy (-V, -h): ignored bytes left out,
// letters folded.
func sortTranslate(s []byte, k *sortKey) []byte {
	ignore := k.ignore()
	out := make([]byte, 0, len(s))
	for _, c := range s {
		if ignore != nil && ignore[c] {
			continue
		}
		if k.fold {
			c = sortUpper(c)
		}
		out = append(out, c)
	}
	return out
}

func sortUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func sortIsDigit(c byte) bool { return '0' <= c && c <= '9' }

// sortNumber splits a key for -n: leading blanks, an optional '-', digits,
// an optional '.' and digits; the rest is ignored, and a key with no digit
// is zero. intPart has no leading zeros and frac no trailing zeros, so that
// equal numbers have equal parts.
func sortNumber(s []byte) (neg bool, intPart, frac []byte) {
	i := 0
	for i < len(s) && sortBlank(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(s) && sortIsDigit(s[i]) {
		i++
	}
	intPart = s[start:i]
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && sortIsDigit(s[i]) {
			i++
		}
		frac = s[start:i]
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
	}
	return neg, intPart, frac
}

// sortNumCompare compares two keys as decimal numbers, exactly, whatever
// their length.
func sortNumCompare(a, b []byte) int {
	an, ai, af := sortNumber(a)
	bn, bi, bf := sortNumber(b)
	sign := func(neg bool, i, f []byte) int {
		switch {
		case len(i) == 0 && len(f) == 0:
			return 0 // -0 is 0
		case neg:
			return -1
		}
		return 1
	}
	sa, sb := sign(an, ai, af), sign(bn, bi, bf)
	if sa != sb || sa == 0 {
		return sa - sb
	}
	d := len(ai) - len(bi)
	if d == 0 {
		d = bytes.Compare(ai, bi)
	}
	if d == 0 {
		d = bytes.Compare(af, bf)
	}
	return d * sa
}

// sortUnitOrder is the order of an SI suffix for -h: none < K (or k) < M <
// G < T < P < E < Z < Y. (GNU sort 9.1, which tpipe is compared with,
// does not know R and Q; later versions put them after Y.)
var sortUnitOrder = func() (t [256]int8) {
	for i, c := range "KMGTPEZY" {
		t[c] = int8(i + 1)
	}
	t['k'] = 1
	return t
}()

// sortHumanCompare compares two keys for -h: by sign and suffix first (a
// number whose digits are all zero has none), then as numbers.
func sortHumanCompare(a, b []byte) int {
	a, b = sortSkipBlanks(a), sortSkipBlanks(b)
	if d := sortUnit(a) - sortUnit(b); d != 0 {
		return d
	}
	return sortNumCompare(a, b)
}

func sortSkipBlanks(s []byte) []byte {
	for len(s) > 0 && sortBlank(s[0]) {
		s = s[1:]
	}
	return s
}

// sortUnit is the signed order of the suffix after the number at the start
// of s: the byte after its digits, after a '.' and the digits that follow.
func sortUnit(s []byte) int {
	sign := 1
	if len(s) > 0 && s[0] == '-' {
		sign, s = -1, s[1:]
	}
	i, maxDigit := 0, byte(0)
	for i < len(s) && sortIsDigit(s[i]) {
		maxDigit = max(maxDigit, s[i])
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && sortIsDigit(s[i]) {
			maxDigit = max(maxDigit, s[i])
			i++
		}
	}
	if maxDigit <= '0' || i == len(s) {
		return 0
	}
	return sign * int(sortUnitOrder[s[i]])
}

// sortMonths are the month names -M knows, in the C locale.
var sortMonths = [12]string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}

// sortMonth is 1 to 12 for a key that starts (after blanks) with a month's
// name in any case, else 0.
func sortMonth(s []byte) int {
	s = sortSkipBlanks(s)
	if len(s) < 3 {
		return 0
	}
	name := [3]byte{sortUpper(s[0]), sortUpper(s[1]), sortUpper(s[2])}
	for i, m := range sortMonths {
		if string(name[:]) == m {
			return i + 1
		}
	}
	return 0
}

// sortFloatText returns the number at the start of s as strtold reads it
// (blanks, a sign, then decimal or hexadecimal digits with an exponent,
// inf, infinity or nan), spelled for strconv and math/big; ok is false if
// there is none.
func sortFloatText(s []byte) (t string, nan, inf, ok bool) {
	n := sortFloatLen(s)
	if n == 0 {
		return "", false, false, false
	}
	b := sortSkipSpace(s[:n])
	body := b
	if b[0] == '-' || b[0] == '+' {
		body = b[1:]
	}
	switch body[0] | 0x20 {
	case 'n':
		return "", true, false, true
	case 'i':
		return string(b[:len(b)-len(body)]) + "Inf", false, true, true
	}
	t = string(b)
	if len(body) > 1 && body[1]|0x20 == 'x' && !bytes.ContainsAny(body, "pP") {
		t += "p0" // Go wants the exponent of a hexadecimal mantissa
	}
	return t, false, false, true
}

func sortSkipSpace(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || '\t' <= s[0] && s[0] <= '\r') {
		s = s[1:]
	}
	return s
}

// sortFloatLen returns the length of the prefix of s that strtold would
// read, or 0.
func sortFloatLen(s []byte) int {
	i := len(s) - len(sortSkipSpace(s))
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := s[i:]
	lower := func(j int) byte {
		if j < len(rest) {
			return rest[j] | 0x20
		}
		return 0
	}
	word := func(w string) bool {
		for j := range len(w) {
			if lower(j) != w[j] {
				return false
			}
		}
		return true
	}
	switch {
	case word("infinity"):
		return i + 8
	case word("inf"):
		return i + 3
	case word("nan"):
		j := 3
		if j < len(rest) && rest[j] == '(' {
			k := j + 1
			for k < len(rest) && (rest[k] == '_' || sortIsDigit(rest[k]) || sortIsAlpha(rest[k])) {
				k++
			}
			if k < len(rest) && rest[k] == ')' {
				j = k + 1
			}
		}
		return i + j
	}
	hex := len(rest) > 2 && rest[0] == '0' && lower(1) == 'x'
	isDigit := sortIsDigit
	start := 0
	if hex {
		start = 2
		isDigit = func(c byte) bool { return sortIsDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }
	}
	j, digits := start, 0
	for j < len(rest) && isDigit(rest[j]) {
		j++
		digits++
	}
	if j < len(rest) && rest[j] == '.' {
		j++
		for j < len(rest) && isDigit(rest[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		if hex {
			return i + 1 // "0x" alone reads as 0
		}
		return 0
	}
	if e := lower(j); hex && e == 'p' || !hex && e == 'e' {
		k := j + 1
		if k < len(rest) && (rest[k] == '+' || rest[k] == '-') {
			k++
		}
		if k < len(rest) && sortIsDigit(rest[k]) {
			for k < len(rest) && sortIsDigit(rest[k]) {
				k++
			}
			j = k
		}
	}
	return i + j
}

// sortLongDouble is the value strtold gives t: a 64-bit mantissa, rounded
// to nearest (the exponent's range is big.Float's, wider than x87's).
func sortLongDouble(t string, inf bool) *big.Float {
	if inf {
		return new(big.Float).SetInf(t[0] == '-')
	}
	f, _, err := big.ParseFloat(t, 0, 64, big.ToNearestEven)
	if err != nil {
		return new(big.Float)
	}
	return f
}

// sortGeneralCompare compares two keys for -g: what is not a number first,
// then NaNs (a positive one before a negative, as GNU sort's comparison of
// their bytes has it), then numbers; -0 equals 0.
func sortGeneralCompare(a, b []byte) int {
	ta, nanA, infA, okA := sortFloatText(a)
	tb, nanB, infB, okB := sortFloatText(b)
	switch {
	case !okA || !okB:
		return sortBool(okA) - sortBool(okB)
	case nanA || nanB:
		if nanA && nanB {
			return sortNaNRank(a) - sortNaNRank(b)
		}
		return sortBool(nanB) - sortBool(nanA)
	}
	return sortLongDouble(ta, infA).Cmp(sortLongDouble(tb, infB))
}

// sortNaNRank orders NaNs: positive (0) before negative (1).
func sortNaNRank(s []byte) int {
	if t := sortSkipSpace(s); len(t) > 0 && t[0] == '-' {
		return 1
	}
	return 0
}

func sortBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortVersionCompare orders two keys as GNU's filevercmp does for -V:
// file name suffixes (".tar.gz") are compared last, runs of digits as
// numbers, letters before other bytes, '~' before everything, even the
// end.
func sortVersionCompare(a, b []byte) int {
	switch {
	case len(a) == 0:
		return -sortBool(len(b) > 0)
	case len(b) == 0:
		return 1
	}
	// "." first, then "..", then other names that start with '.'.
	if a[0] == '.' {
		if b[0] != '.' {
			return -1
		}
		adot, bdot := len(a) == 1, len(b) == 1
		if adot {
			return -sortBool(!bdot)
		}
		if bdot {
			return 1
		}
		adotdot, bdotdot := a[1] == '.' && len(a) == 2, b[1] == '.' && len(b) == 2
		if adotdot {
			return -sortBool(!bdotdot)
		}
		if bdotdot {
			return 1
		}
	} else if b[0] == '.' {
		return 1
	}
	ap, bp := sortVersionPrefix(a), sortVersionPrefix(b)
	d := sortVerrevcmp(a[:ap], b[:bp])
	if d != 0 || ap == len(a) && bp == len(b) {
		return d
	}
	return sortVerrevcmp(a, b)
}

func sortIsAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// sortVersionPrefix is the length of s without its suffix: the longest
// tail of the form (\.[A-Za-z~][A-Za-z0-9~]*)*. A hidden file's name may
// be all suffix (".e5"), as GNU sort 9.1 has it.
func sortVersionPrefix(s []byte) int {
	prefix := 0
	for i := 0; ; {
		for i+1 < len(s) && s[i] == '.' && (sortIsAlpha(s[i+1]) || s[i+1] == '~') {
			for i += 2; i < len(s) && (sortIsAlpha(s[i]) || sortIsDigit(s[i]) || s[i] == '~'); i++ {
			}
		}
		if i == len(s) {
			return prefix
		}
		i++
		prefix = i
	}
}

// sortVersionOrder is the weight of s[i] between digit runs: the end
// before anything but '~', letters before other bytes.
func sortVersionOrder(s []byte, i int) int {
	if i == len(s) {
		return -1
	}
	c := s[i]
	switch {
	case sortIsDigit(c):
		return 0
	case sortIsAlpha(c):
		return int(c)
	case c == '~':
		return -2
	}
	return int(c) + 256
}

// sortVerrevcmp is dpkg's version comparison as filevercmp adapts it.
func sortVerrevcmp(a, b []byte) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		firstDiff := 0
		for i < len(a) && !sortIsDigit(a[i]) || j < len(b) && !sortIsDigit(b[j]) {
			ac, bc := sortVersionOrder(a, i), sortVersionOrder(b, j)
			if ac != bc {
				return ac - bc
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for i < len(a) && j < len(b) && sortIsDigit(a[i]) && sortIsDigit(b[j]) {
			if firstDiff == 0 {
				firstDiff = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if i < len(a) && sortIsDigit(a[i]) {
			return 1
		}
		if j < len(b) && sortIsDigit(b[j]) {
			return -1
		}
		if firstDiff != 0 {
			return firstDiff
		}
	}
	return 0
}

// Abbreviated keys. abbrev returns a uint64 for the text of key k in a
// line, starting depth bytes into it, such that a line whose abbreviation
// is smaller sorts first. Equal abbreviations decide nothing unless the
// abbreviation is exact (abbrevExact): then the two keys are equal.
//
// Text: 7 bytes (folded to upper case with f) and the count of bytes left
// if 7 or fewer, else 0xff: exact when the rest of the key fit. Numbers
// (-n): the sign bit, six bits of the count of integer digits, the first
// 16 significant digits, and one bit set when nonzero digits follow: exact
// when that bit is clear. Months: their number, exact. General numbers
// (-g): the float64 nearest below, never exact. Others (-h, -V, d and i)
// have none: every line abbreviates to 0. A reversed key is the bitwise
// complement, and its exactness is read through it.

// sortAbbreviates reports whether key k has abbreviated keys, and whether
// a level deeper than 0 exists (a text key longer than 7 bytes).
func (k *sortKey) abbreviates() bool {
	switch k.kind {
	case kindText:
		return !k.dict && !k.printable
	case kindNumeric, kindMonth, kindGeneral:
		return true
	}
	return false
}

// abbrev is the abbreviated key of text key (already cut from its line).
func (k *sortKey) abbrev(key []byte, depth int) uint64 {
	var v uint64
	switch k.kind {
	case kindText:
		if depth > len(key) {
			depth = len(key)
		}
		rest := key[depth:]
		if len(rest) > 7 {
			// The common case, one load: 7 bytes, and 0xff for "more".
			v = binary.BigEndian.Uint64(rest) | 0xff
		} else {
			for i, c := range rest {
				v |= uint64(c) << (56 - 8*i)
			}
			v |= uint64(len(rest))
		}
		if k.fold {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], v)
			for i := range 7 {
				b[i] = sortUpper(b[i])
			}
			v = binary.BigEndian.Uint64(b[:])
		}
	case kindNumeric:
		v = sortNumAbbrev(key)
	case kindMonth:
		v = uint64(sortMonth(key))
	case kindGeneral:
		v = sortGeneralAbbrev(key)
	}
	if k.reverse {
		v = ^v
	}
	return v
}

// abbrevExact reports whether keys whose abbreviation is v are equal.
func (k *sortKey) abbrevExact(v uint64) bool {
	if k.reverse {
		v = ^v
	}
	switch k.kind {
	case kindText:
		return k.abbreviates() && v&0xff != 0xff
	case kindNumeric:
		more := v & 1
		if v>>63 == 0 { // negative: the magnitude's bits are complemented
			more ^= 1
		}
		return more == 0
	case kindMonth:
		return true
	}
	return false
}

// sortNumAbbrev is the abbreviation of a -n key.
func sortNumAbbrev(key []byte) uint64 {
	neg, ip, frac := sortNumber(key)
	if len(ip) == 0 && len(frac) == 0 {
		return 1 << 63
	}
	const sig = 16
	var v uint64
	var more uint64
	n := 0
	for _, part := range [2][]byte{ip, frac} {
		for _, c := range part {
			if n < sig {
				v = v*10 + uint64(c-'0')
				n++
			} else if c != '0' {
				more = 1
			}
		}
	}
	for ; n < sig; n++ {
		v *= 10
	}
	length := uint64(len(ip))
	if length > 63 {
		length, more = 63, 1
	}
	mag := length<<57 | v<<1 | more
	if neg {
		return ^mag &^ (1 << 63)
	}
	return 1<<63 | mag
}

// sortGeneralAbbrev is the abbreviation of a -g key: not a number (0),
// then NaN (1), then numbers by their float64, whose rounding keeps the
// order of the long doubles that the comparison of ties reads.
func sortGeneralAbbrev(key []byte) uint64 {
	t, nan, inf, ok := sortFloatText(key)
	switch {
	case !ok:
		return 0
	case nan:
		return 1
	}
	f := math.Inf(1)
	if inf {
		if t[0] == '-' {
			f = math.Inf(-1)
		}
	} else if g, err := strconv.ParseFloat(t, 64); err == nil || math.IsInf(g, 0) {
		f = g
	} else {
		f = 0 // not reached: sortFloatText spells what ParseFloat reads
	}
	if f == 0 {
		f = 0 // -0 == 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return max(b, 2)
}
