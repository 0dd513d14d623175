package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/posixre"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "grep",
		Usage: "grep [-vicnEFoqa] [-e PATTERN]... [PATTERN] [FILE]...",
		Help: "Print the lines that match a pattern: a POSIX basic regular expression, " +
			"an extended one (-E) or fixed strings (-F); a newline in PATTERN separates " +
			"several patterns. -v selects the lines that do not match, -i ignores case, " +
			"-c counts the selected lines, -n numbers them, -o prints only the matched " +
			"parts and -q prints nothing and stops at the first match. Input with a NUL " +
			"byte is binary, as for GNU grep: its lines are not printed, and a match " +
			"says \"binary file matches\" on stderr; -a reads it as text. Exit status " +
			"0 if a line was selected, 1 if none, 2 on error.",
		New: newGrep,
	})
}

// grepCmd is a parsed grep command line.
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
	label  bool // prefix each output line with its file's name
}

var grepLongs = []longOpt{
	{"invert-match", 'v', false},
	{"ignore-case", 'i', false},
	{"count", 'c', false},
	{"line-number", 'n', false},
	{"extended-regexp", 'E', false},
	{"fixed-strings", 'F', false},
	{"only-matching", 'o', false},
	{"quiet", 'q', false},
	{"silent", 'q', false},
	{"regexp", 'e', true},
	{"text", 'a', false},
}

func newGrep(env *Env, args []string) (*Cmd, error) {
	g := &grepCmd{env: env}
	var patterns []string
	havePattern := false
	matcher := byte(0) // 'E' or 'F' once chosen
	icase := false
	operands, err := getopt{cmd: "grep", shorts: "vicnEFoqae:", longs: grepLongs}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'v':
			g.invert = true
		case 'i':
			icase = true
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
		case 'E', 'F':
			if matcher != 0 && matcher != c {
				return usagef("grep", "conflicting matchers specified")
			}
			matcher = c
		case 'e':
			patterns = append(patterns, strings.Split(arg, "\n")...)
			havePattern = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !havePattern {
		if len(operands) == 0 {
			return nil, usagef("grep", "no pattern; usage: grep [OPTION]... PATTERNS [FILE]...")
		}
		patterns = strings.Split(operands[0], "\n")
		operands = operands[1:]
	}
	g.files = operands
	g.label = len(operands) > 1
	g.m, err = grepNewMatcher(patterns, matcher, icase)
	if err != nil {
		return nil, err
	}
	reads, err := env.edgeOperands("grep", g.files)
	if err != nil {
		return nil, err
	}
	c := &Cmd{Name: "grep", ReadsInput: readsInput(g.files), Reads: reads}
	if len(g.files) == 0 && !g.count && !g.number && !g.only && !g.quiet {
		// Rec is the per-record form, for fusion; Fn looks at the start
		// of the input for binary data first, and, for a literal, searches
		// whole buffers.
		c.Rec = g.filter()
		l, _ := g.m.(*grepLiteral)
		if l != nil && !l.seekable() {
			l = nil
		}
		c.Fn = g.filterFunc(l)
		return c, nil
	}
	c.Fn = g.run
	return c, nil
}

// grepNewMatcher compiles the patterns. Patterns without any special
// character are searched as strings; the others become one regexp.
func grepNewMatcher(patterns []string, matcher byte, icase bool) (grepMatcher, error) {
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
		l := &grepLiteral{fold: icase}
		for _, p := range patterns {
			b := []byte(p)
			if icase {
				posixre.LowerASCII(b)
			}
			l.pats = append(l.pats, b)
		}
		return l, nil
	}
	var fl posixre.Flags
	if icase {
		fl = posixre.IgnoreCase
	}
	re, err := posixre.CompileAny(patterns, syn, fl)
	if err != nil {
		return nil, usagef("grep", "%s", err)
	}
	m := &grepRegex{Matcher: posixre.NewMatcher(re), longest: regexp.MustCompile(re.String())}
	m.longest.Longest()
	return m, nil
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
// filter and the rest follows, searched a buffer at a time for a literal
// l (see sift) and a record at a time otherwise.
func (g *grepCmd) filterFunc(l *grepLiteral) task.Func {
	return func(ctx context.Context, p *buffer.Ports) error {
		f := &grepFilter{grepCmd: g}
		if !g.text {
			ahead, bin, err := grepProbe(p.In(0))
			if err != nil {
				return err
			}
			if bin {
				r := &grepRun{grepCmd: g, out: p.Out(0)}
				return r.finish(r.file(ctx, p, "-", "(standard input)", ahead))
			}
			for _, rec := range ahead {
				if f.keep(rec) {
					if err := p.Out(0).Write(rec); err != nil {
						return err
					}
				}
			}
		}
		if l != nil {
			return g.sift(p, f, l)
		}
		return task.PerRecord{Keep: f.keep, End: f.end}.Func()(ctx, p)
	}
}

// grepProbe reads records from in until it has grepBinaryProbe bytes, a
// record with a NUL, or the end, and returns copies of them and whether
// one holds a NUL.
func grepProbe(in *buffer.Input) (ahead [][]byte, bin bool, err error) {
	size := 0
	for size < grepBinaryProbe && !bin {
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

// sift is the filter form of a literal grep given the runtime the search
// for the literal (Output.Sift with a Skip): a buffer is searched once, and
// the lines before the first match are dropped (or kept, with -v) in bulk,
// with no call per line. It writes what the per-record form writes.
func (g *grepCmd) sift(p *buffer.Ports, f *grepFilter, l *grepLiteral) error {
	// seek returns the offset of the first byte Keep must decide, or
	// -1 when every line shares the fate of those skipped.
	seek := func(data []byte) int {
		at := l.seek(data)
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
		if at >= 0 {
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
type grepRun struct {
	*grepCmd
	out      *buffer.Output
	buf      []byte
	spans    [][2]int
	selected bool
	failed   bool // an input could not be read
}

// errGrepDone stops reading at the first match of grep -q.
var errGrepDone = errors.New("grep: done")

// errGrepBinary stops reading an input at the first line selected once it
// is known to be binary.
var errGrepBinary = errors.New("grep: binary")

// Binary input, as GNU grep 3 treats it in the C locale. An input whose
// first grepBinaryProbe bytes hold a NUL is binary from its start; any
// other becomes binary at the first line that holds one. (GNU decides per
// buffer of its own reads, so past the probe a NUL can take effect a few
// lines sooner there; and the per-record form, which fusion runs and which
// cannot look ahead, prints the lines selected before the first line with
// a NUL.) In binary input a NUL ends a line as '\n' does;
// selected lines are not printed: grep stops at the first and says
// "grep: NAME: binary file matches" on stderr, status 0. -c counts on and
// -q stops as for text, and neither says anything; -a reads the input as
// text.
const grepBinaryProbe = 32 << 10

// binarySelects returns how many of the lines that rec, a record of binary
// input, is cut into at its NULs grep selects. A NUL that ends the last
// record, which lacks its '\n', ends its last line.
func (g *grepCmd) binarySelects(rec []byte) int {
	line := record.TrimEOL(rec)
	if n := len(line); n == len(rec) && n > 0 && line[n-1] == 0 {
		line = line[:n-1]
	}
	k := 0
	for {
		piece, rest, more := bytes.Cut(line, []byte{0})
		if g.m.match(piece) != g.invert {
			k++
		}
		if !more {
			return k
		}
		line = rest
	}
}

// binaryMatches says, as GNU grep does, that the binary input label had a
// selected line.
func binaryMatches(env *Env, label string) {
	fmt.Fprintf(env.stderr(), "grep: %s: binary file matches\n", visible.Controls(label))
}

func (g *grepCmd) run(ctx context.Context, p *buffer.Ports) error {
	r := &grepRun{grepCmd: g, out: p.Out(0)}
	files := g.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		label := name
		if name == "-" {
			label = "(standard input)"
		}
		err := r.file(ctx, p, name, label, nil)
		if err == errGrepDone {
			return nil
		}
		if fe, ok := err.(*fileError); ok {
			warnFile(g.env, "grep", fe.name, fe.err)
			r.failed = true
			continue
		}
		if err != nil {
			return err
		}
	}
	return r.finish(nil)
}

// finish returns the status of a run whose last input ended with err.
func (r *grepRun) finish(err error) error {
	switch {
	case err == errGrepDone:
		return nil
	case err != nil:
		if fe, ok := err.(*fileError); ok {
			warnFile(r.env, "grep", fe.name, fe.err)
			return task.Exit(2)
		}
		return err
	case r.failed:
		return task.Exit(2)
	case !r.selected:
		return task.Exit(1)
	}
	return nil
}

// file greps one input and writes its count if asked to. ahead are
// records of the input already read by grepProbe, which found a NUL in
// them; with none, file looks ahead itself.
func (r *grepRun) file(ctx context.Context, p *buffer.Ports, name, label string, ahead [][]byte) error {
	n, count := 0, 0
	bin := len(ahead) > 0
	probing := !r.text && !bin
	binMatch := false
	// line greps one record.
	line := func(rec []byte) error {
		n++
		line := record.TrimEOL(rec)
		if !r.text && !bin && bytes.IndexByte(line, 0) >= 0 {
			bin = true
		}
		if bin {
			k := r.binarySelects(rec)
			if k == 0 {
				return nil
			}
			count += k
			r.selected = true
			switch {
			case r.quiet:
				return errGrepDone
			case r.count:
				return nil
			}
			binMatch = true
			return errGrepBinary
		}
		if r.m.match(line) == r.invert {
			return nil
		}
		count++
		r.selected = true
		switch {
		case r.quiet:
			return errGrepDone
		case r.count:
			return nil
		case r.only:
			if r.invert {
				return nil
			}
			r.spans = r.m.find(line, r.spans[:0])
			for _, s := range r.spans {
				r.buf = r.prefix(label, n)
				r.buf = append(append(r.buf, line[s[0]:s[1]]...), '\n')
				if err := r.out.Write(r.buf); err != nil {
					return err
				}
			}
			return nil
		}
		r.buf = append(r.prefix(label, n), line...)
		r.buf = append(r.buf, '\n')
		return r.out.Write(r.buf)
	}
	// Until grepBinaryProbe bytes are read, records wait in ahead: a NUL
	// among them makes the input binary from its first line.
	size := 0
	flush := func() error {
		probing = false
		for _, rec := range ahead {
			if err := line(rec); err != nil {
				return err
			}
		}
		ahead = nil
		return nil
	}
	var err error
	if bin {
		err = flush()
	}
	if err == nil {
		err = eachRecord(ctx, r.env, p, name, func(rec []byte) error {
			if !probing {
				return line(rec)
			}
			ahead = append(ahead, bytes.Clone(rec))
			size += len(rec)
			if bytes.IndexByte(rec, 0) >= 0 {
				bin = true
				return flush()
			}
			if size >= grepBinaryProbe {
				return flush()
			}
			return nil
		})
	}
	fe, isFile := err.(*fileError)
	if probing && (err == nil || isFile && !fe.atOpen) {
		// The input ended (or failed part way) within the probe.
		if ferr := flush(); ferr != nil {
			err = ferr
		}
	}
	if err == errGrepBinary {
		// GNU stops reading binary input at its first selected line.
		err = nil
	}
	if binMatch {
		binaryMatches(r.env, label)
	}
	fe, isFile = err.(*fileError)
	if r.count && (err == nil || isFile && !fe.atOpen) {
		// GNU counts what it read, even of a file that failed part way.
		r.buf = r.buf[:0]
		if r.label {
			r.buf = append(append(r.buf, label...), ':')
		}
		r.buf = append(strconv.AppendInt(r.buf, int64(count), 10), '\n')
		if werr := r.out.Write(r.buf); werr != nil {
			return werr
		}
	}
	return err
}

// prefix starts an output line in r.buf: "FILE:" and "N:" as asked.
func (r *grepRun) prefix(label string, n int) []byte {
	b := r.buf[:0]
	if r.label {
		b = append(append(b, label...), ':')
	}
	if r.number {
		b = append(strconv.AppendInt(b, int64(n), 10), ':')
	}
	return b
}

// grepMatcher finds a pattern in a line (without its '\n'). Neither method
// keeps line.
type grepMatcher interface {
	match(line []byte) bool
	// find appends to dst the non-empty matches of line, leftmost-longest
	// and not overlapping, as [start, end) offsets.
	find(line []byte, dst [][2]int) [][2]int
}

// grepLiteral matches fixed strings; with fold, the strings are in lower
// case and match ASCII letters of either case.
type grepLiteral struct {
	pats [][]byte
	fold bool
}

func (l *grepLiteral) index(s, pat []byte) int {
	if l.fold {
		return posixre.IndexFold(s, pat)
	}
	return bytes.Index(s, pat)
}

// seekable reports whether seek may stand for match on a whole buffer:
// no pattern is empty (which matches every line).
func (l *grepLiteral) seekable() bool {
	for _, p := range l.pats {
		if len(p) == 0 {
			return false
		}
	}
	return len(l.pats) > 0
}

// seek returns the offset of the first match of any pattern in data, many
// lines back to back, or -1. No pattern holds '\n', so a match lies inside
// one line. With several patterns, data is searched a window at a time, so
// that a rare pattern is not searched to the end for each match of a
// frequent one.
func (l *grepLiteral) seek(data []byte) int {
	if len(l.pats) == 1 {
		return l.index(data, l.pats[0])
	}
	const window = 16 << 10
	longest := 0
	for _, p := range l.pats {
		longest = max(longest, len(p))
	}
	for s := 0; s < len(data); s += window {
		w := data[s:min(len(data), s+window+longest-1)]
		best := -1
		for _, p := range l.pats {
			if best >= 0 {
				// Only a match before the best so far matters.
				w = w[:min(len(w), best+len(p)-1)]
			}
			if i := l.index(w, p); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return s + best
		}
	}
	return -1
}

func (l *grepLiteral) match(line []byte) bool {
	for _, p := range l.pats {
		if l.index(line, p) >= 0 {
			return true
		}
	}
	return false
}

func (l *grepLiteral) find(line []byte, dst [][2]int) [][2]int {
	for pos := 0; pos <= len(line); {
		start, size := -1, 0
		for _, p := range l.pats {
			i := l.index(line[pos:], p)
			if i < 0 {
				continue
			}
			if start < 0 || pos+i < start || pos+i == start && len(p) > size {
				start, size = pos+i, len(p)
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
type grepRegex struct {
	*posixre.Matcher
	longest *regexp.Regexp // the same, leftmost-longest, for find
}

func (g *grepRegex) match(line []byte) bool { return g.Match(line) }

func (g *grepRegex) find(line []byte, dst [][2]int) [][2]int {
	if !g.MayMatch(line) {
		return dst
	}
	for _, m := range g.longest.FindAllIndex(line, -1) {
		if m[1] > m[0] {
			dst = append(dst, [2]int{m[0], m[1]})
		}
	}
	return dst
}
