package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "sort",
		Usage: "sort [-bdfghiMnrsuVz] [-c|-C] [-t SEP] [-k POS1[,POS2]]... [-o FILE] [-S SIZE] [-T DIR] [--parallel=N] [FILE]...",
		Help: "Sort the lines of the FILEs (default the input) bytewise, or by the keys given " +
			"with -k (POS is FIELD[.CHAR][bdfghiMnrV]) on fields split at SEP or, by default, at " +
			"each run of blanks. -n compares numbers, -g floating point, -h sizes such as 2K, " +
			"-M month names, -V version numbers; -r reverses, -u keeps the first of equal " +
			"lines, -s keeps equal lines in input order, -z ends lines with NUL, -c and -C " +
			"check the order. Past -S (or --sort-memory), sorted runs are spilled to " +
			"temporary files and merged.",
		New: sortNew,
	})
}

// sortCmd is a parsed sort command line.
type sortCmd struct {
	env      *Env
	keys     []sortKey
	global   sortKey
	unique   bool // -u
	stable   bool // -s
	sep      int  // -t: the field separator, or -1 for runs of blanks
	names    []string
	lastCmp  bool   // compare whole lines when the keys tie
	check    byte   // 'c' or 'C': check the order instead of sorting
	output   string // -o
	eol      byte   // '\n', or 0 with -z
	memory   int    // -S in bytes; 0: Env.SortMemory
	tmpDir   string // -T
	parallel int    // --parallel, or GOMAXPROCS
}

// Option letters of long options that have no short form.
const (
	sortOptSort     = 1 // --sort=WORD
	sortOptParallel = 2 // --parallel=N
)

var sortLongs = []longOpt{
	{"buffer-size", 'S', true},
	{"check", 'c', false},
	{"dictionary-order", 'd', false},
	{"field-separator", 't', true},
	{"general-numeric-sort", 'g', false},
	{"human-numeric-sort", 'h', false},
	{"ignore-case", 'f', false},
	{"ignore-leading-blanks", 'b', false},
	{"ignore-nonprinting", 'i', false},
	{"key", 'k', true},
	{"month-sort", 'M', false},
	{"numeric-sort", 'n', false},
	{"output", 'o', true},
	{"parallel", sortOptParallel, true},
	{"reverse", 'r', false},
	{"sort", sortOptSort, true},
	{"stable", 's', false},
	{"temporary-directory", 'T', true},
	{"unique", 'u', false},
	{"version-sort", 'V', false},
	{"zero-terminated", 'z', false},
}

// sortWords are the values of --sort=WORD, and the option each stands for.
var sortWords = []struct {
	word string
	opt  byte
}{{"general-numeric", 'g'}, {"human-numeric", 'h'}, {"month", 'M'}, {"numeric", 'n'}, {"version", 'V'}}

func sortNew(env *Env, args []string) (*Cmd, error) {
	c := &sortCmd{env: env, sep: -1, eol: '\n', parallel: runtime.GOMAXPROCS(0)}
	args, err := sortCheckArgs(args)
	if err != nil {
		return nil, err
	}
	names, err := getopt{cmd: "sort", shorts: "bcCdfghiMnrsuVzk:o:S:t:T:", longs: sortLongs}.parse(args, func(o byte, arg string) error {
		switch o {
		case 'k':
			k, err := sortParseKey(arg)
			if err != nil {
				return err
			}
			c.keys = append(c.keys, k)
		case 't':
			return c.setSep(arg)
		case 's':
			c.stable = true
		case 'u':
			c.unique = true
		case 'z':
			c.eol = 0
		case 'c', 'C':
			if c.check != 0 && c.check != o {
				return usagef("sort", "options '-cC' are incompatible")
			}
			c.check = o
		case 'o':
			if c.output != "" && c.output != arg {
				return usagef("sort", "multiple output files specified")
			}
			c.output = arg
		case 'S':
			n, err := sortParseSize(arg)
			if err != nil {
				return err
			}
			c.memory = max(c.memory, n)
		case 'T':
			c.tmpDir = arg
		case sortOptParallel:
			n, err := strconv.ParseUint(arg, 10, 64)
			switch {
			case err != nil && !errors.Is(err, strconv.ErrRange):
				return usagef("sort", "invalid --parallel argument '%s'", arg)
			case n == 0:
				return usagef("sort", "number in parallel must be nonzero")
			}
			c.parallel = int(min(n, 1<<16))
		case sortOptSort:
			for _, w := range sortWords {
				if strings.HasPrefix(w.word, arg) && arg != "" {
					sortSetOrdering(&c.global, w.opt, true, true)
					return nil
				}
			}
			return usagef("sort", "invalid argument '%s' for '--sort'", arg)
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
			k.sblanks, k.eblanks, k.kind, k.kinds, k.reverse = g.sblanks, g.eblanks, g.kind, g.kinds, g.reverse
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
		if c.global.ordering() {
			// The global options make a key of the whole line.
			c.keys = []sortKey{c.global}
		}
	}
	if c.check != 0 {
		switch {
		case c.output != "":
			return nil, usagef("sort", "options '-%co' are incompatible", c.check)
		case len(names) > 1:
			return nil, usagef("sort", "extra operand '%s' not allowed with -%c", names[1], c.check)
		}
	}
	c.lastCmp = !c.unique && !c.stable
	c.names = names
	reads, err := env.edgeOperands("sort", names)
	if err != nil {
		return nil, err
	}
	return &Cmd{ReadsInput: readsInput(names), Reads: reads, Fn: c.run, Spills: c.check == 0, OwnMemory: c.memory,
		TakesCut: c.check == 0 && !c.unique && c.output == "", Effects: c.output != ""}, nil
}

// setSep sets the -t separator.
func (c *sortCmd) setSep(arg string) error {
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
	return nil
}

// sortCheckArgs rewrites --check=WHAT, whose argument is optional (which
// getopt does not do), as -c or -C. WHAT may be abbreviated, as the name.
func sortCheckArgs(args []string) ([]string, error) {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !hasVal || len(name) < 2 || !strings.HasPrefix("check", name) {
			out = append(out, a)
			continue
		}
		switch {
		case val != "" && (strings.HasPrefix("quiet", val) || strings.HasPrefix("silent", val)):
			out = append(out, "-C")
		case val != "" && strings.HasPrefix("diagnose-first", val):
			out = append(out, "-c")
		default:
			return nil, usagef("sort", "invalid argument '%s' for '--check'", val)
		}
	}
	return out, nil
}

// sortParseSize parses -S SIZE as GNU sort does: a number of KiB, or of
// bytes with b, or with a suffix K, M, G, T, P, E, Z, Y, R, Q (k, m, g, t
// too) of 1024 to a power, or % of the machine's memory.
func sortParseSize(arg string) (int, error) {
	i := 0
	for i < len(arg) && sortIsDigit(arg[i]) {
		i++
	}
	bad := func() (int, error) { return 0, usagef("sort", "invalid -S argument '%s'", arg) }
	if i == 0 {
		return bad()
	}
	n, err := strconv.ParseUint(arg[:i], 10, 64)
	if err != nil {
		return 0, usagef("sort", "-S argument '%s' too large", arg)
	}
	mul := 1.0
	switch suf := arg[i:]; {
	case suf == "":
		mul = 1024
	case suf == "b":
	case suf == "%":
		mul = float64(sortPhysicalMemory()) / 100
	case len(suf) == 1 && strings.Contains("kKmMgGtTpPeEzZyYrRqQ", suf):
		p := strings.IndexByte("KMGTPEZYRQ", suf[0]&^0x20) + 1
		mul = math.Pow(1024, float64(p))
	default:
		return 0, usagef("sort", "invalid suffix in -S argument '%s'", arg)
	}
	v := float64(n) * mul
	if v >= math.MaxInt64 {
		return 0, usagef("sort", "-S argument '%s' too large", arg)
	}
	return max(int(v), 64<<10), nil
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
	case 'n', 'g', 'h', 'M', 'V':
		kinds := map[byte]sortKind{'n': kindNumeric, 'g': kindGeneral, 'h': kindHuman, 'M': kindMonth, 'V': kindVersion}
		k.addKind(kinds[o])
	case 'r':
		k.reverse = true
	default:
		return false
	}
	return true
}

// addKind records an ordering option. A key has one kind; sortCheckKey
// refuses a second, as GNU does, so it is kept in kinds.
func (k *sortKey) addKind(kind sortKind) {
	k.kinds |= 1 << kind
	k.kind = kind
}

// sortCheckKey rejects the option combinations GNU rejects: two of -n,
// -g, -h, -M and one of -V, -d, -i.
func sortCheckKey(k *sortKey) error {
	n := 0
	for _, kind := range []sortKind{kindNumeric, kindGeneral, kindHuman, kindMonth} {
		if k.kinds&(1<<kind) != 0 {
			n++
		}
	}
	if k.kinds&(1<<kindVersion) != 0 || k.dict || k.printable {
		n++
	}
	if n <= 1 {
		return nil
	}
	// The options in GNU's order, without b and r.
	opts := ""
	add := func(on bool, o string) {
		if on {
			opts += o
		}
	}
	add(k.dict, "d")
	add(k.fold, "f")
	add(k.kinds&(1<<kindGeneral) != 0, "g")
	add(k.kinds&(1<<kindHuman) != 0, "h")
	add(k.printable && !k.dict, "i")
	add(k.kinds&(1<<kindMonth) != 0, "M")
	add(k.kinds&(1<<kindNumeric) != 0, "n")
	add(k.kinds&(1<<kindVersion) != 0, "V")
	return usagef("sort", "options '-%s' are incompatible", opts)
}

// sortParseKey parses a -k argument:
//
//	key  = pos1 [ "," pos2 ]
//	pos1 = field [ "." char ] { opt }    field >= 1, char >= 1
//	pos2 = field [ "." char ] { opt }    field >= 1, char >= 0 (0: end of field)
//	opt  = "b" | "d" | "f" | "g" | "h" | "i" | "M" | "n" | "r" | "V"
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
		if s[0] == 'R' {
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
	for i < len(t) && sortIsDigit(t[i]) {
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

// sortInputError is a FILE that sort cannot open or read: GNU sort then
// writes nothing and exits with status 2.
type sortInputError struct {
	msg string
}

func (e *sortInputError) Error() string { return e.msg }

func (c *sortCmd) run(ctx context.Context, p *buffer.Ports) error {
	if c.check != 0 {
		return c.runCheck(p)
	}
	if cut, ok := c.env.cut(); ok && !c.unique && c.output == "" {
		return c.runCut(p, cut)
	}
	spill := &spillFiles{dir: c.tempDir()}
	defer spill.cleanup()
	// Copies of a line fold into one entry wherever the output cannot
	// tell them from lines that tie (sortfold.go).
	buf := newSortBuffer(c.budget(), c.lastCmp || c.unique)
	s := newSorter(c)
	// runs are in input order, their levels never increasing: whenever
	// spillFanIn runs share the last level they are merged into one run of
	// the next, so at most spillFanIn-1 runs a level stay open and each
	// line is rewritten once a level, as a merge level by level at the end
	// would, without holding a descriptor for every run.
	var runs []*spillRun
	flushRun := func() error {
		s.sortBuffer(buf)
		w, err := spill.create()
		if err != nil {
			return err
		}
		err = s.each(buf, func(line []byte, n int) error {
			for range n {
				if err := w.add(line); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
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
			merged, err := spill.mergeRuns(tail, s.order(), c.unique)
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
	if err != nil {
		return c.inputError(err)
	}
	s.sortBuffer(buf)
	emit, done, err := c.emitter(p)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		if err := s.each(buf, emit); err != nil {
			return err
		}
		return done()
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
			merged, err := spill.mergeRuns(group, s.order(), c.unique)
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
	srcs = append(srcs, &spillMem{buf: buf, unique: c.unique})
	if err := spillMerge(srcs, s.order(), c.unique, func(line []byte) error { return emit(line, 1) }); err != nil {
		return err
	}
	return done()
}

// inputError reports a *sortInputError as GNU does (nothing written,
// status 2) and passes any other error on.
func (c *sortCmd) inputError(err error) error {
	var ierr *sortInputError
	if errors.As(err, &ierr) {
		fmt.Fprintf(c.env.stderr(), "sort: %s\n", ierr.msg)
		return task.Exit(2)
	}
	return err
}

// emitter returns the function that writes a sorted line (without its
// end) n times to the output port or, with -o, to the file, and the
// function that finishes the output. The -o file is created only now, once
// the input is read: it may be one of the inputs.
func (c *sortCmd) emitter(p *buffer.Ports) (emit func(line []byte, n int) error, done func() error, err error) {
	if c.output == "" {
		out := p.Out(0)
		eol := []byte{c.eol}
		var rec []byte
		write := out.Write
		if c.eol != '\n' {
			// -z: a line may hold newlines, and the next task reads
			// lines, as it would from a pipe.
			write = out.WriteText
		}
		emit = func(line []byte, n int) error {
			if n == 1 && c.eol == '\n' {
				// The line, then its end, into the output buffer: no
				// copy of the line in between.
				if err := out.WriteChunk(line, true); err != nil {
					return err
				}
				return out.Write(eol)
			}
			// Copies of a folded line: the line with its end once, then
			// a record at a time.
			rec = append(append(rec[:0], line...), c.eol)
			for range n {
				if err := write(rec); err != nil {
					return err
				}
			}
			return nil
		}
		return emit, func() error { return nil }, nil
	}
	f, err := c.env.create(c.output, false)
	if err != nil {
		fmt.Fprintf(c.env.stderr(), "sort: open failed: %s: %s\n", quote(c.output), errText(err))
		return nil, nil, task.Exit(2)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	emit = func(line []byte, n int) error {
		for range n {
			w.Write(line)
			if err := w.WriteByte(c.eol); err != nil {
				return err
			}
		}
		return nil
	}
	done = func() error {
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(c.env.stderr(), "sort: write failed: %s: %s\n", quote(c.output), errText(err))
			return task.Exit(2)
		}
		return nil
	}
	return emit, done, nil
}

// read calls add with every line (without its end) of the operands in
// turn. A file that cannot be opened or read is a *sortInputError. With
// -z, lines end with NUL: the records are joined and cut again.
func (c *sortCmd) read(p *buffer.Ports, add func(line []byte) error) error {
	names := c.names
	if len(names) == 0 {
		names = []string{"-"}
	}
	var pending []byte // -z: the start of a line cut by a record's end
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
			if c.eol == '\n' {
				err = add(record.TrimEOL(rec))
			} else {
				pending, err = sortSplitNUL(pending, rec, add)
			}
			if err != nil {
				src.Close()
				return err
			}
		}
		src.Close()
	}
	if len(pending) > 0 {
		return add(pending)
	}
	return nil
}

// sortSplitNUL calls add with each NUL-ended line of pending+rec and
// returns what is left after the last NUL.
func sortSplitNUL(pending, rec []byte, add func([]byte) error) ([]byte, error) {
	for {
		i := indexNUL(rec)
		if i < 0 {
			return append(pending, rec...), nil
		}
		line := rec[:i]
		if len(pending) > 0 {
			pending = append(pending, line...)
			line = pending
		}
		if err := add(line); err != nil {
			return nil, err
		}
		pending, rec = pending[:0], rec[i+1:]
	}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// runCheck is -c and -C: is the input in order (strictly, with -u)? The
// first line out of order is reported with -c; the status is 1.
func (c *sortCmd) runCheck(p *buffer.Ports) error {
	var prev []byte
	n := 0
	disorder := errors.New("disorder")
	err := c.read(p, func(line []byte) error {
		n++
		if n > 1 {
			d := c.compare(prev, line)
			if d > 0 || c.unique && d == 0 {
				if c.check == 'c' {
					name := "-"
					if len(c.names) > 0 {
						name = c.names[0]
					}
					fmt.Fprintf(c.env.stderr(), "sort: %s:%d: disorder: %s%c", name, n, line, c.eol)
				}
				return disorder
			}
		}
		prev = append(prev[:0], line...)
		return nil
	})
	if err == disorder {
		return task.Exit(1)
	}
	if err != nil {
		return c.inputError(err)
	}
	return nil
}

// budget is the memory for lines: -S, else --sort-memory.
func (c *sortCmd) budget() int {
	if c.memory > 0 {
		return c.memory
	}
	return sortBudget(c.env)
}

func (c *sortCmd) tempDir() string {
	if c.tmpDir != "" {
		return c.tmpDir
	}
	return sortTempDir(c.env)
}

func sortBudget(e *Env) int {
	if e == nil || e.SortMemory <= 0 {
		n, _ := AutoSortMemory()
		return n
	}
	return e.SortMemory
}

func sortTempDir(e *Env) string {
	if e == nil {
		return ""
	}
	return e.TempDir
}
