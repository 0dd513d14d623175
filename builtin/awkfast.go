package builtin

// awk's one-liners without the interpreter. The programs people type most
// after a grep (`{s += $10} END {print s}`, `{print $1}`, `-F, '{print
// $2, $5}'`, `$9 == 404 {n++} END {print n}`, `{c[$1]++} END {for (k in
// c) print k, c[k]}`, `/GET/ {print $7}`, `NR > 1`) spend most of
// GoAWK's time handing each line over as a string and splitting all its
// fields into a new slice. When a program has exactly one of these
// shapes, an action (print fields, NR, NF and strings, count, sum,
// group by count or sum;
// $NF for a field too) after an optional condition ($N OP CONST, NR OP
// N, NF, /RE/, !/RE/, $N ~ /RE/, $N !~ /RE/), or END {print NR}, with
// the default or a one-byte field separator (-F or BEGIN {FS = "C"}),
// the builtin runs it on the port's records or its FILE operands
// directly, with no allocation per line, as GNU awk would:
//
//   - fields as gawk splits them: the default FS splits at runs of
//     blanks (space, tab), ignoring those at the ends; a one-byte FS
//     splits at each of its bytes, and an empty line has no field;
//   - numbers as gawk reads input: leading and trailing white space
//     skipped, the longest decimal prefix in strtod's grammar (a field
//     that starts with a letter or with 0x is 0; +inf, -inf, +nan and
//     -nan spelled alone are themselves), summed in float64;
//   - the sum printed as gawk prints a number: an integral value in full
//     (with %d, or %.0f out of a long's range), +inf, -nan and so on, else
//     OFMT's %.6g; and nothing but a newline when no line came;
//   - comparisons as gawk's (awkCompare.match) and regular expressions
//     as grep -E's matcher in the C locale (awkFastRegex says which).
//
// The shapes are recognised on GoAWK's parse of the program, printed in
// its canonical form (parser.Program.String), so spacing, semicolons and
// $(N) for $N do not matter. Anything else runs on GoAWK.

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/parser"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

// awkFast is a program run without GoAWK: an optional condition, then
// one action on the lines it holds for.
type awkFast struct {
	sep    byte           // the field separator; 0 for the default (runs of blanks)
	cond   *awkCond       // nil: every line
	fields []int          // the field summed or grouped by
	print  [][]awkOperand // {print ...}: its items, each a concatenation
	sum    bool           // {V += $N} END {print V}
	count  bool           // {V++} END {print V}
	lines  bool           // END {print NR}: count prints 0 for no line
	group  *awkGroup
}

// awkGroup is `{A[$N]++} END {for (K in A) print K, A[K]}` (or A[K], K):
// the lines of each value of field N, or `{A[$N] += $M} ...`, the sum of
// field M over them, printed in the order for-in takes keys elsewhere
// (awkSortKeys: integers ascending, then bytes; gawk's is its hash's).
type awkGroup struct {
	countFirst bool // print A[K], K
	sum        int  // the field summed, or 0 to count lines
}

// awkCond is a pattern the fast forms test each line with: field N (the
// line for 0) compared with a constant, or matched by a regular
// expression, or the line's number compared with a number.
type awkCond struct {
	field int
	cmp   *awkCompare
	re    grepMatcher
	not   bool // !~ or !/RE/
	nr    bool // cmp compares NR
	mod   int  // NR % mod is compared (or tested, cmp nil)
	nf    bool // NF: the line has a field
}

// awkCompare is `OP CONST`: a value compared with a constant.
type awkCompare struct {
	op     string  // ==, !=, <, <=, >, >=
	str    bool    // CONST is a string: fields compare as strings
	num    float64 // CONST's value, if a number
	numStr []byte  // and as a string (CONVFMT), for a field not numeric
}

const (
	awkName  = `[A-Za-z_][A-Za-z_0-9]*`
	awkField = `\$\(?([0-9]+|NF)\)?`
	awkOp    = `(==|!=|<|<=|>|>=)`
	// awkRegex is a regular expression literal the fast forms take: a
	// backslash only before a character it makes literal, where awk and
	// grep -E agree (and \/, a slash).
	awkRegex = `/((?:[^/\\\n]|\\[.\[\](){}*+?^$|\\/])*)/`
)

var (
	// awkCondShape is a pattern as GoAWK prints it: $N OP CONST, NR OP
	// NUMBER, /RE/, !/RE/, $N ~ /RE/, $N !~ /RE/, NF, or NR % N with or
	// without OP NUMBER after it.
	awkCondShape = regexp.MustCompile(`^(?:` + awkField + ` ` + awkOp + ` ("[A-Za-z0-9_./:-]*"|[0-9]+(?:\.[0-9]+)?)` +
		`|NR ` + awkOp + ` ([0-9]+)` +
		`|(!?)` + awkRegex +
		`|` + awkField + ` (!?~) ` + awkRegex + `|(NF)` +
		`|NR % ([1-9][0-9]{0,8})(?: ` + awkOp + ` ([0-9]+))?)`)
	// awkBeginFS is `BEGIN { FS = "C" }` before the rest, C one byte.
	awkBeginFS = regexp.MustCompile(`^BEGIN \{\n    FS = "([^"\\]|\\[t"])"\n\}\n\n`)
	// awkSumShape is `{ V += $N } END { print V }` as GoAWK prints it.
	awkSumShape = regexp.MustCompile(`^\{\n    (` + awkName + `) \+= ` + awkField + `\n\}\n\nEND \{\n    print (` + awkName + `)\n\}$`)
	// awkPrintShape is `{ print ITEM, ... }`, or a bare print.
	awkPrintShape = regexp.MustCompile(`^\{\n    print (.*)\n\}$`)
	// awkPrintOperand is an operand of a printed item: $N, NR, NF or a
	// string with no escape but \t, \n, \", \\ and \/.
	awkPrintOperand = regexp.MustCompile(`^(?:\$\(?([0-9]+|NF)\)?|(NR)|(NF)|"((?:[^"\\]|\\[tn"\\/])*)")`)
	// awkGroupShape is `{ A[$N]++ } END { for (K in A) print K, A[K] }`.
	awkGroupShape = regexp.MustCompile(`^\{\n    (` + awkName + `)\[` + awkField + `\](?:\+\+| \+= 1| \+= ` + awkField + `)\n\}\n\nEND \{\n    for \((` + awkName + `) in (` + awkName + `)\) \{\n        print (` + awkName + `(?:\[` + awkName + `\])?), (` + awkName + `(?:\[` + awkName + `\])?)\n    \}\n\}$`)
	// awkCountShape is `{ V++ } END { print V }` (or V += 1).
	awkCountShape = regexp.MustCompile(`^\{\n    (` + awkName + `)(?:\+\+| \+= 1)\n\}\n\nEND \{\n    print (` + awkName + `)\n\}$`)
)

// awkSpecialVars are awk's own variables: a sum into one of them is not a
// plain sum (NF changes the record, NR counts lines).
var awkSpecialVars = map[string]bool{
	"NF": true, "NR": true, "FNR": true, "FS": true, "OFS": true, "ORS": true, "RS": true,
	"FILENAME": true, "SUBSEP": true, "RSTART": true, "RLENGTH": true, "CONVFMT": true,
	"OFMT": true, "ENVIRON": true, "ARGC": true, "ARGV": true,
}

// newAwkFast returns the fast form of prog run with the values of its -F
// options, or nil when it has none. utf8 says the locale's characters
// are UTF-8, where a regular expression's . and [^...] take a character
// (those run on GoAWK there).
func newAwkFast(prog *parser.Program, fs []string, utf8 bool) *awkFast {
	f := &awkFast{}
	for _, v := range fs {
		sep, ok := awkFastSep(v)
		if !ok {
			return nil
		}
		f.sep = sep
	}
	src := prog.String()
	if m := awkBeginFS.FindStringSubmatch(src); m != nil {
		v := strings.TrimPrefix(m[1], `\`)
		if m[1] == `\t` {
			v = "\t"
		}
		f.sep, _ = awkFastSep(v)
		src = src[len(m[0]):]
	}
	if src == "END {\n    print NR\n}" {
		f.count, f.lines = true, true
		return f
	}
	if m := awkCondShape.FindStringSubmatch(src); m != nil {
		c, ok := newAwkCond(m, utf8)
		if !ok {
			return nil
		}
		f.cond = c
		if src = src[len(m[0]):]; src == "" {
			f.print = awkPrintLine // no action: print the line
			return f
		}
		if src, ok = strings.CutPrefix(src, " "); !ok {
			return nil
		}
	}
	if m := awkGroupShape.FindStringSubmatch(src); m != nil {
		// m: array, field, field summed (if any), key, array, printed, printed.
		arr, key := m[1], m[4]
		n, err := awkFastField(m[2])
		elem := arr + "[" + key + "]"
		if err != nil || n == 0 || m[5] != arr || key == arr || awkSpecialVars[key] || awkSpecialVars[arr] {
			return nil
		}
		g := &awkGroup{}
		if m[3] != "" {
			if g.sum, err = awkFastField(m[3]); err != nil || g.sum == 0 {
				return nil
			}
		}
		switch {
		case m[6] == key && m[7] == elem:
		case m[6] == elem && m[7] == key:
			g.countFirst = true
		default:
			return nil
		}
		f.fields, f.group = []int{n}, g
		return f
	}
	if m := awkCountShape.FindStringSubmatch(src); m != nil {
		if m[1] != m[2] || awkSpecialVars[m[1]] {
			return nil
		}
		f.count = true
		return f
	}
	if m := awkSumShape.FindStringSubmatch(src); m != nil {
		if m[1] != m[3] || awkSpecialVars[m[1]] {
			return nil
		}
		n, err := awkFastField(m[2])
		if err != nil || n == 0 {
			return nil
		}
		f.sum, f.fields = true, []int{n}
		return f
	}
	m := awkPrintShape.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	items, ok := awkParsePrint(m[1])
	if !ok {
		return nil
	}
	f.print = items
	return f
}

// awkOperand is an operand of a printed item.
type awkOperand struct {
	kind  uint8 // awkOpField, awkOpNR, awkOpNF or awkOpString
	field int
	text  []byte
}

const (
	awkOpField = iota
	awkOpNR
	awkOpNF
	awkOpString
)

// awkPrintLine is print's list when it prints the line.
var awkPrintLine = [][]awkOperand{{{kind: awkOpField, field: 0}}}

// awkParsePrint reads print's list as GoAWK prints it: items separated
// by ", " (joined by OFS, a space), each operands separated by " " (a
// concatenation); ok is false for anything else.
func awkParsePrint(list string) (items [][]awkOperand, ok bool) {
	if list == "" {
		return awkPrintLine, true
	}
	var item []awkOperand
	for {
		m := awkPrintOperand.FindStringSubmatch(list)
		if m == nil {
			return nil, false
		}
		var o awkOperand
		switch {
		case m[1] != "":
			n, err := awkFastField(m[1])
			if err != nil {
				return nil, false
			}
			o.field = n
		case m[2] != "":
			o.kind = awkOpNR
		case m[3] != "":
			o.kind = awkOpNF
		default:
			o.kind = awkOpString
			o.text = []byte(awkStringEscapes.Replace(m[4]))
		}
		item = append(item, o)
		list = list[len(m[0]):]
		switch {
		case list == "":
			return append(items, item), true
		case strings.HasPrefix(list, ", "):
			items, item, list = append(items, item), nil, list[2:]
		case strings.HasPrefix(list, " "):
			list = list[1:]
		default:
			return nil, false
		}
	}
}

// awkStringEscapes are the escapes awkPrintOperand lets through.
var awkStringEscapes = strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\"`, `"`, `\\`, `\`, `\/`, "/")

// awkCountFields is NF of line, split as awkFieldOf splits.
func awkCountFields(line []byte, sep byte) int {
	if sep != 0 {
		if len(line) == 0 {
			return 0
		}
		return bytes.Count(line, []byte{sep}) + 1
	}
	n, in := 0, false
	for _, c := range line {
		blank := c == ' ' || c == '\t'
		if !blank && !in {
			n++
		}
		in = !blank
	}
	return n
}

// newAwkCond is the condition awkCondShape's match m names, with ok false
// for one the fast forms do not take.
func newAwkCond(m []string, utf8 bool) (c *awkCond, ok bool) {
	c = &awkCond{}
	var err error
	switch {
	case m[2] != "": // $N OP CONST
		if c.field, err = awkFastField(m[1]); err != nil || c.field == 0 {
			return nil, false
		}
		if c.cmp, ok = newAwkCompare(m[2], m[3]); !ok {
			return nil, false
		}
	case m[4] != "": // NR OP NUMBER
		c.nr = true
		if c.cmp, ok = newAwkCompare(m[4], m[5]); !ok {
			return nil, false
		}
	case m[12] != "": // NR % N [OP NUMBER]
		c.nr = true
		if c.mod, err = strconv.Atoi(m[12]); err != nil {
			return nil, false
		}
		if m[13] != "" {
			if c.cmp, ok = newAwkCompare(m[13], m[14]); !ok {
				return nil, false
			}
		}
	case m[11] != "": // NF
		c.nf = true
	case m[9] != "": // $N ~ /RE/
		if c.field, err = awkFastField(m[8]); err != nil {
			return nil, false
		}
		c.not = m[9] == "!~"
		if c.re, ok = awkFastRegex(m[10], utf8); !ok {
			return nil, false
		}
	default: // /RE/ or !/RE/
		c.not = m[6] == "!"
		if c.re, ok = awkFastRegex(m[7], utf8); !ok {
			return nil, false
		}
	}
	return c, true
}

// awkFastRegex compiles re as grep -E does in the C locale, where it
// means what it means to gawk: a POSIX extended regular expression whose
// backslashes make the next character literal. In a UTF-8 locale gawk
// matches characters, which bytes match alike only where re has no .,
// [^...] or [:class:] and is all ASCII.
func awkFastRegex(re string, utf8 bool) (grepMatcher, bool) {
	if awkBracketBackslash(re) {
		// In a bracket expression a backslash escapes to awk and is
		// itself to grep.
		return nil, false
	}
	re = strings.ReplaceAll(re, `\/`, "/")
	if utf8 && (strings.Contains(strings.ReplaceAll(re, `\.`, ""), ".") || strings.Contains(re, "[^") || strings.Contains(re, "[:") || strings.IndexFunc(re, func(r rune) bool { return r >= 0x80 }) >= 0) {
		return nil, false
	}
	m, err := grepNewMatcher([]string{re}, 'E', false, grepAny)
	return m, err == nil
}

// awkBracketBackslash reports whether a backslash stands inside a bracket
// expression of re ([...], where a ] first is literal and [:class:],
// [=c=] and [.c.] hold a ]), or re ends inside one.
func awkBracketBackslash(re string) bool {
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			for ; j < len(re) && re[j] != ']'; j++ {
				switch {
				case re[j] == '\\':
					return true
				case re[j] == '[' && j+1 < len(re) && strings.IndexByte(":=.", re[j+1]) >= 0:
					end := strings.Index(re[j+2:], string(re[j+1])+"]")
					if end < 0 {
						return true
					}
					j += 2 + end + 1
				}
			}
			if j >= len(re) {
				return true
			}
			i = j
		}
	}
	return false
}

// newAwkCompare is `op lit`, lit a number or a string in double quotes.
func newAwkCompare(op, lit string) (*awkCompare, bool) {
	c := &awkCompare{op: op}
	if s, ok := strings.CutPrefix(lit, `"`); ok {
		c.str, c.numStr = true, []byte(strings.TrimSuffix(s, `"`))
		return c, true
	}
	var err error
	if c.num, err = strconv.ParseFloat(lit, 64); err != nil {
		return nil, false
	}
	c.numStr = awkFormatNumber(nil, c.num)
	return c, true
}

// awkNF stands for $NF among awkFast's fields.
const awkNF = -1

// awkFastField is the field ref names (digits, or NF).
func awkFastField(ref string) (int, error) {
	if ref == "NF" {
		return awkNF, nil
	}
	n, err := strconv.Atoi(ref)
	if err == nil && n > 1<<20 {
		err = strconv.ErrRange
	}
	return n, err
}

// awkFastSep is the separator byte of -F value, with ok false for a value
// the fast form does not split by (a regular expression, a backslash).
// gawk reads -F '\t' as a tab, and -Ft as the letter.
func awkFastSep(v string) (sep byte, ok bool) {
	switch {
	case v == " ":
		return 0, true
	case v == `\t`:
		return '\t', true
	case len(v) == 1 && v[0] != '\\' && v[0] != 0:
		return v[0], true
	}
	return 0, false
}

// perRecord is the program's per-record form. The print form keeps no
// state, so copies may share the lines (replicas), unless its condition
// counts lines.
func (f *awkFast) perRecord() *task.PerRecord {
	keep := f.cond.tester(f.sep)
	if g := f.group; g != nil {
		index := map[string]int{}
		var keys []string
		var counts []int64
		var sums []float64
		return &task.PerRecord{
			Each: func(rec []byte, _ task.Emit) error {
				line := record.TrimEOL(rec)
				if !keep(line) {
					return nil
				}
				v := awkFieldOf(line, f.fields[0], f.sep)
				i, ok := index[string(v)]
				if !ok {
					i = len(keys)
					index[string(v)] = i
					keys = append(keys, string(v))
					counts, sums = append(counts, 0), append(sums, 0)
				}
				counts[i]++
				if g.sum != 0 {
					sums[i] += awkNumber(awkFieldOf(line, g.sum, f.sep))
				}
				return nil
			},
			End: func(emit task.Emit) error {
				var line []byte
				for _, k := range awkSortKeys(keys) {
					i := index[k]
					line = line[:0]
					value := strconv.AppendInt(nil, counts[i], 10)
					if g.sum != 0 {
						value = awkFormatNumber(nil, sums[i])
					}
					if g.countFirst {
						line = append(append(append(line, value...), ' '), k...)
					} else {
						line = append(append(append(line, k...), ' '), value...)
					}
					if err := emit(append(line, '\n')); err != nil {
						return err
					}
				}
				return nil
			},
		}
	}
	if f.count {
		n := 0
		return &task.PerRecord{
			Each: func(rec []byte, _ task.Emit) error {
				if keep(record.TrimEOL(rec)) {
					n++
				}
				return nil
			},
			End: func(emit task.Emit) error {
				if n == 0 && !f.lines {
					return emit([]byte{'\n'}) // never set: ""
				}
				return emit(append(strconv.AppendInt(nil, int64(n), 10), '\n'))
			},
		}
	}
	if f.sum {
		var s float64
		lines := 0
		return &task.PerRecord{
			Each: func(rec []byte, _ task.Emit) error {
				line := record.TrimEOL(rec)
				if keep(line) {
					s += awkNumber(awkFieldOf(line, f.fields[0], f.sep))
					lines++
				}
				return nil
			},
			End: func(emit task.Emit) error {
				if lines == 0 {
					return emit([]byte{'\n'}) // an unset variable prints as ""
				}
				return emit(append(awkFormatNumber(nil, s), '\n'))
			},
		}
	}
	var buf []byte
	nr, counts := 0, false // NR, and whether an item prints it
	newline := false       // whether a string printed holds a '\n' (print $1 "\n" $2)
	for _, item := range f.print {
		for _, o := range item {
			counts = counts || o.kind == awkOpNR
			newline = newline || bytes.IndexByte([]byte(o.text), '\n') >= 0
		}
	}
	r := &task.PerRecord{
		Each: func(rec []byte, emit task.Emit) error {
			line := record.TrimEOL(rec)
			nr++
			if !keep(line) {
				return nil
			}
			buf = buf[:0]
			for i, item := range f.print {
				if i > 0 {
					buf = append(buf, ' ')
				}
				for _, o := range item {
					switch o.kind {
					case awkOpField:
						buf = append(buf, awkFieldOf(line, o.field, f.sep)...)
					case awkOpNR:
						buf = strconv.AppendInt(buf, int64(nr), 10)
					case awkOpNF:
						buf = strconv.AppendInt(buf, int64(awkCountFields(line, f.sep)), 10)
					default:
						buf = append(buf, o.text...)
					}
				}
			}
			if newline {
				// The next task reads the lines it would from a pipe.
				return task.EmitLines(emit, append(buf, '\n'))
			}
			return emit(append(buf, '\n'))
		},
	}
	if !counts && (f.cond == nil || !f.cond.nr) {
		r.Fresh = f.perRecord
	}
	return r
}

// tester is the condition as a test of a line (without its end), true
// for every line when c is nil. Each tester counts lines of its own.
func (c *awkCond) tester(sep byte) func(line []byte) bool {
	switch {
	case c == nil:
		return func([]byte) bool { return true }
	case c.nr:
		nr := 0
		return func([]byte) bool {
			nr++
			v := nr
			if c.mod != 0 {
				v %= c.mod
				if c.cmp == nil {
					return v != 0
				}
			}
			return c.cmp.compare(float64(v))
		}
	case c.nf:
		if sep != 0 {
			return func(line []byte) bool { return len(line) > 0 }
		}
		return func(line []byte) bool {
			return slices.ContainsFunc(line, func(c byte) bool { return c != ' ' && c != '\t' })
		}
	case c.re != nil:
		return func(line []byte) bool {
			return c.re.match(awkFieldOf(line, c.field, sep)) != c.not
		}
	}
	return func(line []byte) bool { return c.cmp.match(awkFieldOf(line, c.field, sep)) }
}

// awkFieldOf returns field n of line ($0 for 0), or nothing past the
// last field, split as gawk splits: at each sep, or at runs of blanks
// with those at the ends ignored when sep is 0.
func awkFieldOf(line []byte, n int, sep byte) []byte {
	switch n {
	case 0:
		return line
	case awkNF:
		return awkLastField(line, sep)
	}
	if sep != 0 {
		if len(line) == 0 {
			return nil
		}
		for ; n > 1; n-- {
			i := bytes.IndexByte(line, sep)
			if i < 0 {
				return nil
			}
			line = line[i+1:]
		}
		if i := bytes.IndexByte(line, sep); i >= 0 {
			return line[:i]
		}
		return line
	}
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			return nil
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		if n--; n == 0 {
			return line[start:i]
		}
	}
}

// awkLastField is $NF of line: its last field, or the line itself when it
// has none (NF is 0, and $0 is the line, blanks and all).
func awkLastField(line []byte, sep byte) []byte {
	if sep != 0 {
		if i := bytes.LastIndexByte(line, sep); i >= 0 {
			return line[i+1:]
		}
		return line
	}
	end := len(line)
	for end > 0 && (line[end-1] == ' ' || line[end-1] == '\t') {
		end--
	}
	if end == 0 {
		return line
	}
	start := end
	for start > 0 && line[start-1] != ' ' && line[start-1] != '\t' {
		start--
	}
	return line[start:end]
}

// files is the program run on the FILE operands names in turn (- is the
// input, @NAME an edge), as gawk does: a directory is skipped with a
// warning, a file that cannot be opened ends the run (status 2, and no
// END).
func (f *awkFast) files(env *Env, names []string) func(context.Context, *buffer.Ports) error {
	return func(ctx context.Context, p *buffer.Ports) error {
		rec := f.perRecord()
		emit := task.Emit(p.Out(0).Write)
		read := false // a line ran through the program's rule
		err := awkEachFile(ctx, env, p, names, nil,
			func(r []byte) error { read = true; return rec.Each(r, emit) },
			func() (bool, error) { return read && !f.lines, nil })
		if err != nil {
			return err
		}
		if rec.End != nil {
			return rec.End(emit)
		}
		return nil
	}
}

// match reports whether field
// compares with the constant as c.op says, as gawk compares: a field that
// looks like a number against a number numerically, anything else as
// strings (the number in CONVFMT); a field past the last is "".
func (c *awkCompare) match(field []byte) bool {
	switch v, num := awkNumeric(field); {
	case num && !c.str:
		return c.holds(compareFloat(v, c.num))
	default:
		return c.holds(bytes.Compare(field, c.numStr))
	}
}

// compare reports whether the number v compares with the constant, a
// number, as c.op says.
func (c *awkCompare) compare(v float64) bool { return c.holds(compareFloat(v, c.num)) }

// holds reports whether c.op holds of an order cmp (-1, 0, 1).
func (c *awkCompare) holds(cmp int) bool {
	switch c.op {
	case "==":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	}
	return cmp >= 0
}

// compareFloat orders a and b as gawk does: a NaN above every number,
// and equal to another NaN.
func compareFloat(a, b float64) int {
	switch {
	case math.IsNaN(a):
		if math.IsNaN(b) {
			return 0
		}
		return 1
	case math.IsNaN(b):
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// awkNumeric reports whether field looks like a number to gawk (white
// space around a decimal number in strtod's grammar, or a signed inf or
// nan; not hex), and its value.
func awkNumeric(field []byte) (float64, bool) {
	if v, ok := awkDigits(field); ok {
		return v, true
	}
	b := field
	for len(b) > 0 && awkSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && awkSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return 0, false
	}
	if len(b) == 4 && (b[0] == '+' || b[0] == '-') {
		switch strings.ToLower(string(b[1:])) {
		case "inf", "nan":
			return awkNumber(b), true
		}
	}
	if n := awkNumberLen(b); n == 0 || n != len(b) {
		return 0, false
	}
	return awkNumber(b), true
}

// awkSpace is C's isspace in the C locale.
func awkSpace(c byte) bool { return c == ' ' || '\t' <= c && c <= '\r' }

// awkDigits is the value of b when it is the common case, up to 15
// digits and nothing else (exact in a float64).
func awkDigits(b []byte) (float64, bool) {
	n := len(b)
	if n == 0 || n > 15 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return float64(v), true
}

// awkNumber is the numeric value gawk gives an input field.
func awkNumber(b []byte) float64 {
	if v, ok := awkDigits(b); ok {
		return v
	}
	for len(b) > 0 && awkSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && awkSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return 0
	}
	if c := b[0] | 0x20; 'a' <= c && c <= 'z' {
		return 0
	}
	if len(b) == 4 && (b[0] == '+' || b[0] == '-') {
		sign := 1.0
		if b[0] == '-' {
			sign = -1
		}
		switch strings.ToLower(string(b[1:])) {
		case "inf":
			return math.Inf(int(sign))
		case "nan":
			return math.Copysign(math.NaN(), sign)
		}
	}
	digits := b
	if digits[0] == '+' || digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 1 && digits[0] == '0' && digits[1]|0x20 == 'x' {
		return 0
	}
	v, err := strconv.ParseFloat(string(b[:awkNumberLen(b)]), 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0 // no digits: strtod reads nothing
	}
	return v
}

// awkNumberLen is the length of the longest prefix of b that strtod reads
// as a decimal number: [sign] digits [. digits] [e [sign] digits], with at
// least one digit before the exponent; 0 if there is none.
func awkNumberLen(b []byte) int {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j < len(b) && '0' <= b[j] && b[j] <= '9' {
			for j < len(b) && '0' <= b[j] && b[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return i
}

// awkFormatNumber appends v as gawk's print writes a number.
func awkFormatNumber(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return append(dst, "-nan"...)
		}
		return append(dst, "+nan"...)
	case math.IsInf(v, 1):
		return append(dst, "+inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	case v == math.Trunc(v):
		if v > math.MinInt64 && v < math.MaxInt64 {
			return strconv.AppendInt(dst, int64(v), 10)
		}
		return strconv.AppendFloat(dst, v, 'f', 0, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', 6, 64)
}
