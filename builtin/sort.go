package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "sort",
		Usage: "sort [-bdfinrsu] [-t SEP] [-k POS1[,POS2]]... [FILE]...",
		Help: "Sort the lines of the FILEs (default the input) bytewise, or by the keys given " +
			"with -k (POS is FIELD[.CHAR][bdfinr]) on fields split at SEP or, by default, at " +
			"each run of blanks. -n compares numbers, -r reverses, -u keeps the first of equal " +
			"lines, -s keeps equal lines in input order. Past Env.SortMemory, sorted runs " +
			"are spilled to compressed temporary files and merged.",
		New: sortNew,
	})
}

// sortKey is one -k key, or the whole line with the global options. Fields
// and characters count from 0.
type sortKey struct {
	sword, schar int  // start: field, then character in it
	eword, echar int  // end: field and character; echar 0 is the field's end
	hasEnd       bool // POS2 given; else the key runs to the end of the line
	sblanks      bool // b on POS1: skip blanks before the start character
	eblanks      bool // b on POS2: skip blanks before the end character
	numeric      bool // n
	reverse      bool // r
	fold         bool // f: compare lowercase letters as uppercase
	dict         bool // d: ignore all but letters, digits and blanks
	printable    bool // i: ignore non-printing characters
}

// ordering reports whether k has an option other than r: a key with none
// (and no r) takes the global options, as in GNU sort.
func (k *sortKey) ordering() bool {
	return k.sblanks || k.eblanks || k.numeric || k.fold || k.dict || k.printable
}

// sortCmd is a parsed sort command line.
type sortCmd struct {
	env     *Env
	keys    []sortKey
	global  sortKey
	unique  bool // -u
	stable  bool // -s
	sep     int  // -t: the field separator, or -1 for runs of blanks
	names   []string
	lastCmp bool // compare whole lines when the keys tie
}

func sortNew(env *Env, args []string) (*Cmd, error) {
	c := &sortCmd{env: env, sep: -1}
	names, err := getopt{cmd: "sort", shorts: "bdfinrsuk:t:"}.parse(args, func(o byte, arg string) error {
		switch o {
		case 'k':
			k, err := sortParseKey(arg)
			if err != nil {
				return err
			}
			c.keys = append(c.keys, k)
		case 't':
			sep := -1
			switch {
			case arg == "":
				return usagef("sort", "empty tab")
			case arg == `\0`:
				sep = 0
			case len(arg) > 1:
				return usagef("sort", "multi-character tab '%s'", arg)
			default:
				sep = int(arg[0])
			}
			if c.sep >= 0 && c.sep != sep {
				return usagef("sort", "incompatible tabs")
			}
			c.sep = sep
		case 's':
			c.stable = true
		case 'u':
			c.unique = true
		default:
			sortSetOrdering(&c.global, o, true, true)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range c.keys {
		k := &c.keys[i]
		if !k.ordering() && !k.reverse {
			g := c.global
			k.sblanks, k.eblanks, k.numeric, k.reverse = g.sblanks, g.eblanks, g.numeric, g.reverse
			k.fold, k.dict, k.printable = g.fold, g.dict, g.printable
		}
		if err := sortCheckKey(k); err != nil {
			return nil, err
		}
	}
	if len(c.keys) == 0 {
		// The global options matter only without -k (or through a key
		// that inherits them, checked above).
		if err := sortCheckKey(&c.global); err != nil {
			return nil, err
		}
	}
	if len(c.keys) == 0 && c.global.ordering() {
		// The global options make a key of the whole line.
		c.keys = []sortKey{c.global}
	}
	c.lastCmp = !c.unique && !c.stable
	c.names = names
	reads, err := env.edgeOperands("sort", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: c.run, Spills: true}, nil
}

// sortSetOrdering applies option letter o to k and reports whether it is
// one. start and end tell where b applies: POS1, POS2, or both for the
// global -b.
func sortSetOrdering(k *sortKey, o byte, start, end bool) bool {
	switch o {
	case 'b':
		k.sblanks = k.sblanks || start
		k.eblanks = k.eblanks || end
	case 'd':
		k.dict = true
	case 'f':
		k.fold = true
	case 'i':
		k.printable = true
	case 'n':
		k.numeric = true
	case 'r':
		k.reverse = true
	default:
		return false
	}
	return true
}

// sortCheckKey rejects the option combinations GNU rejects.
func sortCheckKey(k *sortKey) error {
	if k.numeric && (k.dict || k.printable) {
		opts := ""
		if k.dict {
			opts += "d"
		}
		if k.printable {
			opts += "i"
		}
		return usagef("sort", "options '-%sn' are incompatible", opts)
	}
	return nil
}

// sortParseKey parses a -k argument:
//
//	key  = pos1 [ "," pos2 ]
//	pos1 = field [ "." char ] { opt }    field >= 1, char >= 1
//	pos2 = field [ "." char ] { opt }    field >= 1, char >= 0 (0: end of field)
//	opt  = "b" | "d" | "f" | "i" | "n" | "r"
func sortParseKey(spec string) (sortKey, error) {
	var k sortKey
	bad := func(why string) (sortKey, error) {
		return sortKey{}, usagef("sort", "%s: invalid field specification '%s'", why, spec)
	}
	s := spec
	var err error
	if k.sword, s, err = sortCount(s, "invalid number at field start"); err != nil {
		return sortKey{}, err
	}
	if k.sword == 0 {
		return bad("field number is zero")
	}
	k.sword--
	if strings.HasPrefix(s, ".") {
		if k.schar, s, err = sortCount(s[1:], "invalid number after '.'"); err != nil {
			return sortKey{}, err
		}
		if k.schar == 0 {
			return bad("character offset is zero")
		}
		k.schar--
	}
	s = sortOptions(&k, s, true)
	if strings.HasPrefix(s, ",") {
		k.hasEnd = true
		if k.eword, s, err = sortCount(s[1:], "invalid number after ','"); err != nil {
			return sortKey{}, err
		}
		if k.eword == 0 {
			return bad("field number is zero")
		}
		k.eword--
		if strings.HasPrefix(s, ".") {
			if k.echar, s, err = sortCount(s[1:], "invalid number after '.'"); err != nil {
				return sortKey{}, err
			}
		}
		s = sortOptions(&k, s, false)
	}
	if s != "" {
		if strings.ContainsRune("ghMRV", rune(s[0])) {
			return sortKey{}, usagef("sort", "ordering option '%c' is not supported: '%s'", s[0], spec)
		}
		return bad("stray character in field spec")
	}
	return k, nil
}

// sortOptions applies the option letters at the start of s to k and
// returns the rest of s.
func sortOptions(k *sortKey, s string, start bool) string {
	for s != "" && sortSetOrdering(k, s[0], start, !start) {
		s = s[1:]
	}
	return s
}

// sortCount parses the count at the start of s as strtoumax does (blanks,
// an optional '+', digits; a count too large saturates) and returns the
// rest of s.
func sortCount(s, what string) (int, string, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	t = strings.TrimPrefix(t, "+")
	i, n := 0, 0
	for i < len(t) && headIsDigit(t[i]) {
		if n <= (math.MaxInt-9)/10 {
			n = n*10 + int(t[i]-'0')
		} else {
			n = math.MaxInt
		}
		i++
	}
	if i == 0 {
		return 0, s, usagef("sort", "%s: invalid count at start of '%s'", what, s)
	}
	return n, t[i:], nil
}

// sortBlank is GNU sort's blank in the C locale: space, tab (and newline,
// which a line never holds).
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

// compare orders two lines (without '\n'): by the keys in turn, then, when
// they tie and neither -s nor -u is given, bytewise (reversed by -r).
func (c *sortCmd) compare(a, b []byte) int {
	for i := range c.keys {
		k := &c.keys[i]
		ka := a[:0]
		if s := c.keyStart(a, k); s < len(a) {
			ka = a[s:max(s, c.keyEnd(a, k))]
		}
		kb := b[:0]
		if s := c.keyStart(b, k); s < len(b) {
			kb = b[s:max(s, c.keyEnd(b, k))]
		}
		var d int
		if k.numeric {
			d = sortNumCompare(ka, kb)
		} else {
			d = sortTextCompare(ka, kb, k)
		}
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
	var ignore *[256]bool
	switch {
	case k.dict: // d wins over i, as in GNU sort
		ignore = &sortIgnore[0]
	case k.printable:
		ignore = &sortIgnore[1]
	}
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

func sortUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

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
	for i < len(s) && headIsDigit(s[i]) {
		i++
	}
	intPart = s[start:i]
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && headIsDigit(s[i]) {
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

// sortRef locates a held line in the slabs of a sortBuffer. Sorting
// moves these small pointer-free values rather than slice headers, so the
// garbage collector neither scans the array nor sees the swaps.
type sortRef struct {
	slab, off, n uint32
}

// sortLineCost is what a held line costs beyond its bytes: its sortRef.
const sortLineCost = int(unsafe.Sizeof(sortRef{}))

// sortBuffer holds the lines of one run, packed in large slabs rather than
// allocated one by one. Slabs are kept from run to run. The zero value
// holds nothing; set budget.
type sortBuffer struct {
	slabs  [][]byte
	cur    int // the slab being filled
	lines  []sortRef
	used   int // bytes of lines plus sortLineCost per line
	budget int
}

// at returns the line r locates; it is valid until reset.
func (b *sortBuffer) at(r sortRef) []byte {
	return b.slabs[r.slab][r.off : r.off+r.n : r.off+r.n]
}

// add copies line into the buffer. It reports false, adding nothing, when
// the line would take the buffer past its budget; the buffer then needs
// to be spilled. A buffer with no line takes any line.
func (b *sortBuffer) add(line []byte) bool {
	cost := len(line) + sortLineCost
	if len(b.lines) > 0 && b.used+cost > b.budget {
		return false
	}
	b.used += cost
	for {
		if b.cur == len(b.slabs) {
			// Slabs of at most 1 MiB: large enough that lines share them, small
			// enough that the last one is not mostly empty.
			size := min(b.budget, 1<<20)
			b.slabs = append(b.slabs, make([]byte, 0, max(size, len(line))))
		}
		s := b.slabs[b.cur]
		if cap(s)-len(s) >= len(line) {
			b.lines = append(b.lines, sortRef{slab: uint32(b.cur), off: uint32(len(s)), n: uint32(len(line))})
			b.slabs[b.cur] = append(s, line...)
			return true
		}
		if len(s) == 0 {
			// A line longer than the slab: give it a slab of its own size.
			b.slabs[b.cur] = make([]byte, 0, len(line))
			continue
		}
		b.cur++
	}
}

// reset empties the buffer, keeping its memory.
func (b *sortBuffer) reset() {
	for i := range b.slabs {
		b.slabs[i] = b.slabs[i][:0]
	}
	b.lines, b.cur, b.used = b.lines[:0], 0, 0
}

// sortInputError is a FILE that sort cannot open or read: GNU sort then
// writes nothing and exits with status 2.
type sortInputError struct {
	msg string
}

func (e *sortInputError) Error() string { return e.msg }

func (c *sortCmd) run(ctx context.Context, p *buffer.Ports) error {
	budget := sortBudget(c.env)
	spill := &spillFiles{dir: sortTempDir(c.env)}
	defer spill.cleanup()
	buf := &sortBuffer{budget: budget}
	// runs are in input order, their levels never increasing: whenever
	// spillFanIn runs share the last level they are merged into one run of
	// the next, so at most spillFanIn-1 runs a level stay open and each
	// line is rewritten once a level, as a merge level by level at the end
	// would, without holding a descriptor for every run.
	var runs []*spillRun
	flushRun := func() error {
		c.sortLines(buf)
		w, err := spill.create()
		if err != nil {
			return err
		}
		for _, r := range buf.lines {
			if err := w.add(buf.at(r)); err != nil {
				return err
			}
		}
		run, err := w.close()
		if err != nil {
			return err
		}
		runs = append(runs, run)
		buf.reset()
		for len(runs) >= spillFanIn {
			tail := runs[len(runs)-spillFanIn:]
			if tail[0].level != tail[len(tail)-1].level {
				break
			}
			merged, err := spill.mergeRuns(tail, c.compare, c.unique)
			if err != nil {
				return err
			}
			runs = append(runs[:len(runs)-spillFanIn], merged)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	err := c.read(p, func(line []byte) error {
		if buf.add(line) {
			return nil
		}
		if err := flushRun(); err != nil {
			return err
		}
		buf.add(line)
		return nil
	})
	var ierr *sortInputError
	if errors.As(err, &ierr) {
		fmt.Fprintf(c.env.stderr(), "sort: %s\n", ierr.msg)
		return task.Exit(2)
	}
	if err != nil {
		return err
	}
	c.sortLines(buf)
	out := p.Out(0)
	var scratch []byte
	emit := func(line []byte) error {
		scratch = append(append(scratch[:0], line...), '\n')
		return out.Write(scratch)
	}
	if len(runs) == 0 {
		for _, r := range buf.lines {
			if err := emit(buf.at(r)); err != nil {
				return err
			}
		}
		return nil
	}
	// Merge groups of consecutive runs, level by level, until few enough
	// are left to merge with the lines in memory. Consecutive, so that
	// input order still breaks ties; level by level, so that each line is
	// rewritten once per level (log16 of the number of runs).
	for len(runs) >= spillFanIn {
		var next []*spillRun
		for i := 0; i < len(runs); i += spillFanIn {
			group := runs[i:min(i+spillFanIn, len(runs))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			merged, err := spill.mergeRuns(group, c.compare, c.unique)
			if err != nil {
				return err
			}
			next = append(next, merged)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		runs = next
	}
	srcs := make([]spillSource, 0, len(runs)+1)
	for _, run := range runs {
		r, err := spill.open(run)
		if err != nil {
			return err
		}
		srcs = append(srcs, r)
	}
	srcs = append(srcs, &spillMem{buf: buf})
	return spillMerge(srcs, c.compare, c.unique, emit)
}

// sortLines sorts the lines held, keeping only the first of equal lines
// with -u. Equal lines stay in input order when -s or -u asks for it
// (otherwise lines that compare equal are identical).
func (c *sortCmd) sortLines(b *sortBuffer) {
	cmp := func(x, y sortRef) int { return c.compare(b.at(x), b.at(y)) }
	if c.lastCmp {
		slices.SortFunc(b.lines, cmp)
	} else {
		slices.SortStableFunc(b.lines, cmp)
	}
	if c.unique {
		b.lines = slices.CompactFunc(b.lines, func(x, y sortRef) bool { return cmp(x, y) == 0 })
	}
}

// read calls add with every line (without '\n') of the operands in turn.
// A file that cannot be opened or read is a *sortInputError.
func (c *sortCmd) read(p *buffer.Ports, add func(line []byte) error) error {
	names := c.names
	if len(names) == 0 {
		names = []string{"-"}
	}
	for _, name := range names {
		src, err := openOperand(c.env, p, name)
		if err != nil {
			return &sortInputError{msg: "cannot read: " + quote(name) + ": " + errText(err)}
		}
		for {
			rec, err := src.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				src.Close()
				if rerr := (*fileError)(nil); errors.As(err, &rerr) {
					return &sortInputError{msg: "read failed: " + quote(name) + ": " + errText(rerr.err)}
				}
				return err
			}
			if err := add(record.TrimEOL(rec)); err != nil {
				src.Close()
				return err
			}
		}
		src.Close()
	}
	return nil
}

func sortBudget(e *Env) int {
	if e == nil || e.SortMemory <= 0 {
		return DefaultSortMemory
	}
	return e.SortMemory
}

func sortTempDir(e *Env) string {
	if e == nil {
		return ""
	}
	return e.TempDir
}
