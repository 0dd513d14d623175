package builtin

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "grep",
		Usage: "grep [-EFGiwxvcnoqlLhHbsZIrR] [-e PATTERN]... [-f FILE] [-m NUM] [-A|-B|-C NUM] [PATTERN] [FILE]...",
		Help: "Print the lines that match a pattern: a POSIX basic regular expression, " +
			"an extended one (-E) or fixed strings (-F); a newline in PATTERN separates " +
			"several patterns, -f FILE reads them from a file. -w and -x match whole words " +
			"and whole lines; back-references (\\1) work. -v selects the lines that do not " +
			"match, -i ignores case, -c counts the selected lines, -n numbers them, -b gives " +
			"their byte offsets, -o prints only the matched parts, -l and -L name the files " +
			"with and without a match, -m NUM stops after NUM, -A, -B and -C NUM print lines " +
			"of context, -r and -R search directories, -h and -H leave out or add file names, " +
			"-s keeps quiet about files that cannot be read, and -q prints nothing and stops " +
			"at the first match. Input with a NUL byte is binary, as for GNU grep: its lines " +
			"are not printed, and a match says \"binary file matches\" on stderr; -a reads " +
			"it as text, -I skips it. Exit status 0 if a line was selected, 1 if none, 2 on " +
			"error. Other options (-P, -z, -T, --color=always) run the system's grep.",
		New: newGrep,
	})
}

// grepCmd is a parsed grep command line. It is read-only once made: each
// run keeps its state in a grepFilter or a grepRun.
type grepCmd struct {
	env    *Env
	invert bool
	count  bool
	number bool
	only   bool
	quiet  bool
	text   bool // -a: binary input is read as text
	m      grepMatcher
	files  []string
	// names says whether output lines start with the file's name: 1
	// always (-H, several operands), 0 never (-h, one operand), -1 for
	// the files that a directory operand holds (-r with one operand).
	names       int
	listMatch   bool  // -l
	listMissing bool  // -L
	maxCount    int64 // -m; -1: no limit
	// before and after are the lines of context (-B, -A, -C); -1 when
	// not asked for, which also leaves out the "--" between groups.
	before, after int
	byteOffset    bool   // -b
	nullName      bool   // -Z: a NUL after a file name, not ':' or '\n'
	noMessages    bool   // -s
	skipBinary    bool   // -I
	recurse       byte   // 'r', 'R', or 0
	skipDirs      bool   // -d skip
	skipDevices   bool   // -D skip
	stdinLabel    string // --label
	groupSep      string // between groups of context
	noGroupSep    bool
	globs         []grepGlob // --include and --exclude, in order
	excludeDirs   []string
	dotByDefault  bool // grep -r without an operand searches "."
}

// grepGlob is an --include (include set) or --exclude pattern.
type grepGlob struct {
	pattern string
	include bool
}

// Letters for grep's long options that have no short one.
const (
	grepLabel byte = 0x80 + iota
	grepColor
	grepBinaryFiles
	grepLineBuffered
	grepInclude
	grepExclude
	grepExcludeDir
	grepExcludeFrom
	grepGroupSep
	grepNoGroupSep
	grepNoIgnoreCase
)

var grepLongs = []longOpt{
	{name: "invert-match", short: 'v'},
	{name: "ignore-case", short: 'i'},
	{name: "no-ignore-case", short: grepNoIgnoreCase},
	{name: "count", short: 'c'},
	{name: "line-number", short: 'n'},
	{name: "extended-regexp", short: 'E'},
	{name: "fixed-strings", short: 'F'},
	{name: "basic-regexp", short: 'G'},
	{name: "perl-regexp", short: 'P'},
	{name: "only-matching", short: 'o'},
	{name: "quiet", short: 'q'},
	{name: "silent", short: 'q'},
	{name: "regexp", short: 'e', hasArg: true},
	{name: "file", short: 'f', hasArg: true},
	{name: "text", short: 'a'},
	{name: "word-regexp", short: 'w'},
	{name: "line-regexp", short: 'x'},
	{name: "recursive", short: 'r'},
	{name: "dereference-recursive", short: 'R'},
	{name: "no-filename", short: 'h'},
	{name: "with-filename", short: 'H'},
	{name: "files-with-matches", short: 'l'},
	{name: "files-without-match", short: 'L'},
	{name: "max-count", short: 'm', hasArg: true},
	{name: "after-context", short: 'A', hasArg: true},
	{name: "before-context", short: 'B', hasArg: true},
	{name: "context", short: 'C', hasArg: true},
	{name: "no-messages", short: 's'},
	{name: "byte-offset", short: 'b'},
	{name: "null", short: 'Z'},
	{name: "null-data", short: 'z'},
	{name: "initial-tab", short: 'T'},
	{name: "binary", short: 'U'},
	{name: "directories", short: 'd', hasArg: true},
	{name: "devices", short: 'D', hasArg: true},
	{name: "label", short: grepLabel, hasArg: true},
	{name: "color", short: grepColor},
	{name: "colour", short: grepColor},
	{name: "binary-files", short: grepBinaryFiles, hasArg: true},
	{name: "line-buffered", short: grepLineBuffered},
	{name: "include", short: grepInclude, hasArg: true},
	{name: "exclude", short: grepExclude, hasArg: true},
	{name: "exclude-dir", short: grepExcludeDir, hasArg: true},
	{name: "exclude-from", short: grepExcludeFrom, hasArg: true},
	{name: "group-separator", short: grepGroupSep, hasArg: true},
	{name: "no-group-separator", short: grepNoGroupSep},
}

func newGrep(env *Env, args []string) (*Cmd, error) {
	g := &grepCmd{env: env, maxCount: -1, before: -1, after: -1, groupSep: "--"}
	nameOpt := byte(0) // 'h' or 'H', the last given
	var patterns []string
	havePattern := false
	matcher := byte(0) // 'E', 'F' or 'G' once chosen
	icase := false
	mode := grepAny
	context := -1 // -C NUM and -NUM, which -A and -B override
	digits, lastDigit := "", false
	contextArg := func(arg string) (int, error) {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			return 0, &UsageError{Cmd: "grep", Msg: arg + ": invalid context length argument", Status: 2}
		}
		return int(min(n, 1<<30)), nil
	}
	operands, err := getopt{cmd: "grep", shorts: "vicnEFGPoqae:f:wxrRhHlLm:A:B:C:sbZzTUId:D:yu0123456789", longs: grepLongs,
		optArgs: string(grepColor)}.parse(args, func(c byte, arg string) error {
		if c >= '0' && c <= '9' {
			// -NUM is -C NUM; the digits of one word make one number.
			if !lastDigit {
				digits = ""
			}
			digits += string(c)
			lastDigit = true
			n, err := contextArg(digits)
			context = n
			return err
		}
		lastDigit = false
		switch c {
		case 'v':
			g.invert = true
		case 'i', 'y':
			icase = true
		case grepNoIgnoreCase:
			icase = false
		case 'c':
			g.count = true
		case 'n':
			g.number = true
		case 'o':
			g.only = true
		case 'q':
			g.quiet = true
		case 'a':
			g.text = true
		case 'I':
			g.skipBinary = true
		case 'w':
			mode = max(mode, grepWord)
		case 'x':
			mode = grepLine
		case 'E', 'F', 'G':
			if matcher != 0 && matcher != c {
				return &UsageError{Cmd: "grep", Msg: "conflicting matchers specified", Status: 2}
			}
			matcher = c
		case 'e':
			patterns = append(patterns, strings.Split(arg, "\n")...)
			havePattern = true
		case 'f':
			if arg == "-" {
				return unsupportedf("grep", "-f -")
			}
			ps, err := grepPatternFile(env, arg)
			if err != nil {
				return err
			}
			patterns = append(patterns, ps...)
			havePattern = true
		case 'r', 'R':
			g.recurse = c
		case 'h', 'H':
			nameOpt = c
		case 'l':
			g.listMatch, g.listMissing = true, false
		case 'L':
			g.listMissing, g.listMatch = true, false
		case 'm':
			n, err := strconv.ParseInt(arg, 10, 64)
			if err != nil {
				return &UsageError{Cmd: "grep", Msg: "invalid max count", Status: 2}
			}
			g.maxCount = max(n, -1) // GNU takes a negative count for none
		case 'A', 'B', 'C':
			n, err := contextArg(arg)
			if err != nil {
				return err
			}
			switch c {
			case 'A':
				g.after = n
			case 'B':
				g.before = n
			default:
				context = n
			}
		case 's':
			g.noMessages = true
		case 'b':
			g.byteOffset = true
		case 'Z':
			g.nullName = true
		case 'U', grepLineBuffered:
			// Binary mode is for DOS; tpipe writes each line as it goes.
		case 'd':
			switch arg {
			case "read":
			case "skip":
				g.skipDirs = true
			case "recurse":
				g.recurse = 'r'
			default:
				return unsupportedf("grep", "-d %s", arg)
			}
		case 'D':
			switch arg {
			case "read":
			case "skip":
				g.skipDevices = true
			default:
				return unsupportedf("grep", "-D %s", arg)
			}
		case grepLabel:
			g.stdinLabel = arg
		case grepColor:
			switch arg {
			case "", "auto", "tty", "if-tty", "never", "no", "none":
				// tpipe's grep does not color, as GNU's does not
				// when its output is not a terminal.
			default:
				return unsupportedf("grep", "--color=%s", arg)
			}
		case grepBinaryFiles:
			switch arg {
			case "binary":
			case "text":
				g.text = true
			case "without-match":
				g.skipBinary = true
			default:
				return &UsageError{Cmd: "grep", Msg: "unknown binary-files type", Status: 2}
			}
		case grepInclude, grepExclude:
			g.globs = append(g.globs, grepGlob{pattern: arg, include: c == grepInclude})
		case grepExcludeDir:
			g.excludeDirs = append(g.excludeDirs, arg)
		case grepGroupSep:
			g.groupSep, g.noGroupSep = arg, false
		case grepNoGroupSep:
			g.noGroupSep = true
		case 'P':
			return unsupportedf("grep", "-P")
		case 'z':
			return unsupportedf("grep", "-z")
		case 'T':
			return unsupportedf("grep", "-T")
		case 'u':
			return unsupportedf("grep", "-u")
		case grepExcludeFrom:
			return unsupportedf("grep", "--exclude-from")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if context >= 0 {
		if g.before < 0 {
			g.before = context
		}
		if g.after < 0 {
			g.after = context
		}
	}
	if !havePattern {
		if len(operands) == 0 {
			return nil, &UsageError{Cmd: "grep"}
		}
		patterns = strings.Split(operands[0], "\n")
		operands = operands[1:]
	}
	if g.recurse != 0 && len(operands) == 0 {
		operands = []string{"."}
		g.dotByDefault = true
	}
	g.files = operands
	switch {
	case nameOpt == 'H' || nameOpt == 0 && len(operands) > 1:
		g.names = 1
	case nameOpt == 0 && g.recurse != 0:
		g.names = -1
	}
	g.m, err = grepNewMatcher(patterns, matcher, icase, mode)
	if err != nil {
		return nil, err
	}
	reads, err := env.edgeOperands("grep", g.files)
	if err != nil {
		return nil, err
	}
	c := &Cmd{Name: "grep", ReadsInput: readsInput(g.files), Reads: reads}
	if g.perRecord() {
		// Rec is the per-record form, for fusion; Fn looks at the start
		// of the input for binary data first, and searches whole buffers
		// where the matcher can.
		c.Rec = g.filter()
		c.Fn = g.filterFunc()
		return c, nil
	}
	c.Fn = g.run
	return c, nil
}

// perRecord reports whether grep is a filter of its input that prints the
// selected lines as they are: what the per-record form does.
func (g *grepCmd) perRecord() bool {
	return len(g.files) == 0 && !g.count && !g.number && !g.only && !g.quiet &&
		!g.listMatch && !g.listMissing && g.maxCount < 0 && g.before < 0 && g.after < 0 &&
		!g.byteOffset && g.names != 1 && !g.skipBinary
}

// grepPatternFile reads the patterns of -f FILE, one a line; an empty file
// has none, so that nothing matches.
func grepPatternFile(env *Env, name string) ([]string, error) {
	rc, err := env.open(name)
	if err != nil {
		return nil, &UsageError{Cmd: "grep", Msg: name + ": " + errText(err), Status: 2}
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, &UsageError{Cmd: "grep", Msg: name + ": " + errText(err), Status: 2}
	}
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// filter is grep's per-record form: a Keep that passes matching lines on
// without copying them. GNU ends every output line with a newline, so a
// selected last line that lacks one is held back and written, with its
// newline, at the end.
func (g *grepCmd) filter() *task.PerRecord {
	f := &grepFilter{grepCmd: g}
	return &task.PerRecord{
		Start: func(task.Emit) error {
			f.reset()
			return nil
		},
		Keep: f.keep,
		End:  f.end,
	}
}

// grepFilter is the state of one run of the filter form.
type grepFilter struct {
	*grepCmd
	selected bool
	bin      bool // the input is binary (see grepBinaryProbe)
	binMatch bool // a line of binary input was selected
	tail     []byte
	// hit is the address of the match seek found last, or 0: the record
	// that holds it, which keep is given next, matches without a search.
	hit uintptr
}

func (f *grepFilter) reset() {
	f.selected, f.bin, f.binMatch, f.tail, f.hit = false, false, false, f.tail[:0], 0
}

func (f *grepFilter) keep(rec []byte) bool {
	line := record.TrimEOL(rec)
	if !f.text && !f.bin && bytes.IndexByte(line, 0) >= 0 {
		f.bin = true
	}
	if f.bin {
		f.hit = 0
		if !f.binMatch && f.binarySelects(rec) > 0 {
			f.binMatch, f.selected = true, true
		}
		return false
	}
	var matched bool
	if hit := f.hit; hit != 0 {
		f.hit = 0
		start := uintptr(unsafe.Pointer(unsafe.SliceData(line)))
		matched = start <= hit && hit < start+uintptr(len(line))
	}
	if !matched {
		matched = f.m.match(line)
	}
	if matched == f.invert {
		return false
	}
	f.selected = true
	if len(line) == len(rec) {
		f.tail = append(append(f.tail[:0], rec...), '\n')
		return false
	}
	return true
}

func (f *grepFilter) end(emit task.Emit) error {
	if f.binMatch {
		binaryMatches(f.env, "(standard input)")
	}
	if len(f.tail) > 0 {
		if err := emit(f.tail); err != nil {
			return err
		}
	}
	if !f.selected {
		return task.Exit(1)
	}
	return nil
}

// filterFunc is the filter form as a Func. It first reads up to
// grepBinaryProbe bytes ahead: if they hold a NUL, the input is binary from
// its start and the general form takes over; if not, they go through the
// filter and the rest follows, searched a buffer at a time where the
// matcher seeks (see sift) and a record at a time otherwise.
func (g *grepCmd) filterFunc() task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		f := &grepFilter{grepCmd: g}
		if !g.text {
			ahead, bin, err := grepProbe(p.In(0))
			if err != nil {
				return err
			}
			if bin {
				r := g.newRun(p.Out(0))
				return r.finish(r.file(ctx, p, "-", &grepFile{label: "(standard input)"}, ahead))
			}
			for _, rec := range ahead {
				if f.keep(rec) {
					if err := p.Out(0).Write(rec); err != nil {
						return err
					}
				}
			}
		}
		if g.m.seeks() {
			return g.sift(p, f)
		}
		return task.PerRecord{Keep: f.keep, End: f.end}.Func()(ctx, p)
	}
}

// grepProbe reads records from in until it has grepBinaryProbe bytes, a
// record with a NUL, or the end, and returns copies of them and whether
// one holds a NUL. It stops early where its writer is idle (Input.Idle):
// on a stream (a log followed, a program that prints now and then) GNU
// grep decides on what its first read gave, and a line is not held back
// until 32 KiB more have come.
func grepProbe(in *buffer.Input) (ahead [][]byte, bin bool, err error) {
	size := 0
	for size < grepBinaryProbe && !bin {
		if size > 0 && in.Idle() {
			break
		}
		rec, err := in.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
		ahead = append(ahead, bytes.Clone(rec))
		size += len(rec)
		bin = bytes.IndexByte(rec, 0) >= 0
	}
	return ahead, bin, nil
}

// sift is the filter form given the runtime the matcher's search of whole
// buffers (Output.Sift with a Skip): a buffer is searched once, and the
// lines before the first that may match are dropped (or kept, with -v) in
// bulk, with no call per line. It writes what the per-record form writes.
func (g *grepCmd) sift(p *buffer.Ports, f *grepFilter) error {
	// seek returns the offset of the first byte Keep must decide, or
	// -1 when every line shares the fate of those skipped.
	seek := func(data []byte) int {
		at, sure := g.m.seek(data)
		if g.invert {
			// The lines before at are kept without a call to keep: the
			// last line of the input, if it lacks its '\n', must
			// still get one from keep.
			if n := len(data); n > 0 && data[n-1] != '\n' {
				if last := bytes.LastIndexByte(data, '\n') + 1; at < 0 || last < at {
					at = last
					f.hit = 0
					if bytes.IndexByte(data[:at], '\n') >= 0 {
						f.selected = true
					}
					return at
				}
			}
			// Some line ends before at (or there is no match): it is
			// kept.
			if at < 0 || bytes.IndexByte(data[:at], '\n') >= 0 {
				f.selected = true
			}
		}
		f.hit = 0
		if at >= 0 && sure {
			// Otherwise at is only a candidate: keep decides.
			f.hit = uintptr(unsafe.Pointer(unsafe.SliceData(data))) + uintptr(at)
		}
		return at
	}
	sieve := buffer.Sieve{Keep: f.keep, Skip: func(data []byte) (int, bool) {
		switch {
		case f.bin && f.binMatch:
			return len(data), false // nothing more to say
		case f.bin:
			return 0, false // Keep decides, line by line
		}
		was := f.selected
		at := seek(data)
		end := at
		if at < 0 {
			end = len(data)
		}
		if !g.text {
			// A NUL makes the input binary from its line on: Keep
			// decides that line.
			if z := bytes.IndexByte(data[:end], 0); z >= 0 {
				cut := bytes.LastIndexByte(data[:z], '\n') + 1
				f.hit = 0
				f.selected = was || g.invert && cut > 0
				return cut, g.invert
			}
		}
		return end, g.invert
	}}
	in, out := p.In(0), p.Out(0)
	for {
		err := out.Sift(in, sieve)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	return f.end(out.Write)
}

// grepRun is the state of one run of the general form.
