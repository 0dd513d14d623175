package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

// grep's general form: FILE operands and directories, counts, lists of
// files, line numbers and byte offsets, -o, -m and lines of context.

// grepRun is the state of one run of the general form. It is used by the
// task's goroutine only.
type grepRun struct {
	*grepCmd
	out      *buffer.Output
	buf      []byte
	block    []byte // what files are read into (grepBlocks), kept between them
	spans    [][2]int
	selected bool
	failed   bool // an input could not be read
	// used is set once a line was output (or, under -o, passed as
	// context): a later group of context is set off by the separator.
	used bool
	// bulk is set when no line of context was asked for: the lines
	// between matches need no look of their own (see scan).
	bulk bool
}

// newRun starts a run of the general form writing to out.
func (g *grepCmd) newRun(out *buffer.Output) *grepRun {
	return &grepRun{grepCmd: g, out: out, bulk: g.before < 0 && g.after < 0}
}

// grepFile is the state of one input being searched.
type grepFile struct {
	label string
	named bool // output lines start with label
	// n is the number of the line being searched; the lines that scan
	// skips are counted only when -n asks for it.
	n      int
	offset int64 // the byte offset of the next line
	count  int64 // lines selected
	// afterLeft is how many lines of trailing context are still due.
	afterLeft int
	// lastOut is the number of the line output last, 0 for none.
	lastOut int
	// ring holds the last lines not output, up to -B of them, oldest
	// first; their bytes are reused as lines pass.
	ring []grepHeld
	// done is set once -m NUM lines were selected: only trailing
	// context is left to print.
	done bool
}

// grepHeld is a line kept for leading context.
type grepHeld struct {
	n    int
	off  int64
	text []byte
}

// errGrepDone stops reading at the first match of grep -q.
var errGrepDone = errors.New("grep: done")

// errGrepStop stops reading one input: -l and -L know the answer, or -m
// NUM lines and their context are out.
var errGrepStop = errors.New("grep: stop")

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
// "grep: NAME: binary file matches" on stderr, status 0. -c counts on, -q
// stops and -l and -L list as for text, and none says anything; -a reads
// the input as text, and -I skips it from the line that makes it binary.
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
	r := g.newRun(p.Out(0))
	if g.maxCount == 0 && !g.listMissing {
		// GNU reads nothing at all.
		return task.Exit(1)
	}
	files := g.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		err := r.operand(ctx, p, name)
		if err == errGrepDone {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return r.finish(nil)
}

// operand greps one FILE operand: a file, a port ("-" or a named edge),
// or, under -r, a directory and all it holds.
func (r *grepRun) operand(ctx context.Context, p *buffer.Ports, name string) error {
	if name == "-" || r.env.isEdge(name) && edgeIn(p, name) != nil {
		label := name
		if name == "-" {
			label = "(standard input)"
			if r.stdinLabel != "" {
				label = r.stdinLabel
			}
		}
		return r.input(ctx, p, name, label, r.names == 1)
	}
	if r.recurse != 0 || r.skipDirs || r.skipDevices {
		if fi, err := r.stat(name, true); err == nil {
			switch {
			case fi.IsDir() && r.recurse != 0:
				return r.walk(ctx, p, name, name)
			case fi.IsDir() && r.skipDirs:
				return nil
			case r.skipDevices && fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
				return nil
			}
		}
	}
	return r.input(ctx, p, name, name, r.names == 1)
}

// stat looks at the file name through Env.Open, which is where the runner
// says relative names resolve. With follow unset a symbolic link is not
// followed; that needs the file system itself, and is done relative to
// Env.Dir.
func (r *grepRun) stat(name string, follow bool) (fs.FileInfo, error) {
	if !follow {
		p := name
		if r.env != nil && r.env.Dir != "" && !path.IsAbs(name) {
			p = path.Join(r.env.Dir, name)
		}
		return os.Lstat(p)
	}
	rc, err := r.env.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	st, ok := rc.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return st.Stat()
}

// walk greps the files under directory dir, in the order the directory
// lists them (as GNU's fts does), going into subdirectories as they come.
// Under -r symbolic links met on the way are skipped; -R follows them.
// Devices, pipes and sockets are skipped; --include, --exclude and
// --exclude-dir choose among the rest by their base names. shown is dir
// as output lines name it: without "./" when grep -r had no operand.
func (r *grepRun) walk(ctx context.Context, p *buffer.Ports, dir, shown string) error {
	rc, err := r.env.open(dir)
	if err != nil {
		r.warn(dir, err)
		return nil
	}
	lister, ok := rc.(interface {
		ReadDir(int) ([]fs.DirEntry, error)
	})
	if !ok {
		rc.Close()
		return r.input(ctx, p, dir, shown, true)
	}
	entries, err := lister.ReadDir(-1)
	rc.Close()
	if err != nil {
		r.warn(dir, err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := joinPath(dir, e.Name())
		label := name
		if r.dotByDefault {
			label = strings.TrimPrefix(name, "./")
		}
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			if r.recurse != 'R' {
				continue
			}
			fi, err := r.stat(name, true)
			if err != nil {
				r.warn(name, err)
				continue
			}
			typ = fi.Mode().Type()
		}
		var err error
		switch {
		case typ.IsDir():
			if r.excludedDir(e.Name()) {
				continue
			}
			err = r.walk(ctx, p, name, label)
		case typ.IsRegular():
			if !r.included(e.Name()) {
				continue
			}
			err = r.input(ctx, p, name, label, r.names != 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// joinPath joins a directory and a name as fts does: "d/" and "f" make
// "d/f".
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// included applies --include and --exclude to a file's base name: the
// last pattern that matches wins; with none matching, the file is in
// unless the first pattern is an --include.
func (r *grepRun) included(base string) bool {
	for i := len(r.globs) - 1; i >= 0; i-- {
		if ok, _ := path.Match(r.globs[i].pattern, base); ok {
			return r.globs[i].include
		}
	}
	return len(r.globs) == 0 || !r.globs[0].include
}

func (r *grepRun) excludedDir(base string) bool {
	for _, g := range r.excludeDirs {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}

// warn reports a file that cannot be read, unless -s.
func (r *grepRun) warn(name string, err error) {
	r.failed = true
	if !r.noMessages {
		warnFile(r.env, "grep", name, err)
	}
}

// input greps one input and reports its problems.
func (r *grepRun) input(ctx context.Context, p *buffer.Ports, name, label string, named bool) error {
	if r.maxCount == 0 {
		// grep -L -m0: no line is read, so no file has a match.
		return r.writeName(label)
	}
	err := r.file(ctx, p, name, &grepFile{label: label, named: named}, nil)
	var fe *fileError
	if errors.As(err, &fe) {
		r.warn(fe.name, fe.err)
		return nil
	}
	return err
}

// finish returns the status of a run whose last input ended with err.
func (r *grepRun) finish(err error) error {
	switch {
	case err == errGrepDone:
		return nil
	case err != nil:
		if fe, ok := err.(*fileError); ok {
			r.warn(fe.name, fe.err)
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

// file greps one input and writes its count or its name if asked to.
// ahead are records of the input already read by grepProbe, which found
// a NUL in them; with none, file looks ahead itself.
func (r *grepRun) file(ctx context.Context, p *buffer.Ports, name string, f *grepFile, ahead [][]byte) error {
	if r.before > 0 {
		f.ring = make([]grepHeld, 0, min(r.before, 1024))
	}
	g := &grepInput{r: r, f: f, bin: len(ahead) > 0, probing: !r.text && len(ahead) == 0}
	var err error
	for _, rec := range ahead {
		if err = g.line(rec); err != nil {
			break
		}
	}
	if err == nil {
		err = eachBatch(ctx, r.env, p, name, &r.block, g.batch)
	}
	fe, isFile := err.(*fileError)
	if g.probing && (err == nil || isFile && !fe.atOpen) {
		// The input ended (or failed part way) within the probe.
		if perr := g.endProbe(); perr != nil {
			err = perr
		}
	}
	if err == errGrepBinary || err == errGrepStop {
		// GNU stops reading binary input at its first selected line.
		err = nil
	}
	if g.binMatch {
		binaryMatches(r.env, f.label)
	}
	fe, isFile = err.(*fileError)
	if err != nil && !(isFile && !fe.atOpen) {
		return err
	}
	// GNU counts what it read, even of a file that failed part way.
	switch {
	case r.listMatch:
	case r.listMissing:
		if f.count == 0 {
			if werr := r.writeName(f.label); werr != nil {
				return werr
			}
		}
	case r.count:
		r.buf = r.buf[:0]
		if f.named {
			r.buf = append(r.buf, f.label...)
			r.buf = append(r.buf, r.nameEnd(':'))
		}
		r.buf = append(strconv.AppendInt(r.buf, f.count, 10), '\n')
		if werr := r.out.Write(r.buf); werr != nil {
			return werr
		}
	}
	return err
}

// selectLines counts k selected lines of f, and returns the error that
// stops reading for -q, -l and -L, or nil.
func (r *grepRun) selectLines(f *grepFile, k int) error {
	f.count += int64(k)
	r.selected = true
	switch {
	case r.quiet:
		return errGrepDone
	case r.listMatch:
		return r.listFile(f)
	case r.listMissing:
		return errGrepStop
	}
	return nil
}

// listFile writes the name of a file with a selected line, for -l, and
// stops reading it.
func (r *grepRun) listFile(f *grepFile) error {
	if err := r.writeName(f.label); err != nil {
		return err
	}
	return errGrepStop
}

// writeName writes a file name on a line of its own (-l, -L), or ended by
// a NUL (-Z).
func (r *grepRun) writeName(label string) error {
	r.buf = append(r.buf[:0], label...)
	if r.nullName {
		// A NUL ends the name; the next name follows at once, so the
		// record goes on.
		r.buf = append(r.buf, 0)
		return r.out.WriteChunk(r.buf, true)
	}
	return r.out.Write(append(r.buf, '\n'))
}

// nameEnd is what follows a file name in an output line: sep, or a NUL
// under -Z.
func (r *grepRun) nameEnd(sep byte) byte {
	if r.nullName {
		return 0
	}
	return sep
}

// line greps one line of text input.
func (r *grepRun) line(f *grepFile, rec []byte) error {
	if f.done {
		// -m NUM lines are out: what follows is trailing context.
		if f.afterLeft == 0 {
			return errGrepStop
		}
		f.n++
		off := f.offset
		f.offset += int64(len(rec))
		f.afterLeft--
		return r.output(f, f.n, off, record.TrimEOL(rec), '-')
	}
	return r.decide(f, rec, r.m.match(record.TrimEOL(rec)))
}

// decide takes one line of text input, which matched or not.
func (r *grepRun) decide(f *grepFile, rec []byte, matched bool) error {
	f.n++
	off := f.offset
	f.offset += int64(len(rec))
	line := record.TrimEOL(rec)
	if matched == r.invert {
		switch {
		case f.afterLeft > 0:
			f.afterLeft--
			return r.output(f, f.n, off, line, '-')
		case r.before > 0 && !r.count && !r.listMatch && !r.listMissing:
			f.remember(r.before, f.n, off, line)
		}
		return nil
	}
	if err := r.selectLines(f, 1); err != nil {
		return err
	}
	reached := r.maxCount >= 0 && f.count >= r.maxCount
	if r.count {
		if reached {
			return errGrepStop
		}
		return nil
	}
	for _, c := range f.ring {
		if c.n > f.lastOut {
			if err := r.output(f, c.n, c.off, c.text, '-'); err != nil {
				return err
			}
		}
	}
	f.ring = f.ring[:0]
	var err error
	if r.bulk && !r.only && !f.named && !r.number && !r.byteOffset {
		// No prefix, no context: the line as it is.
		r.used, f.lastOut = true, f.n
		err = r.write(rec)
	} else {
		err = r.output(f, f.n, off, line, ':')
	}
	if err != nil {
		return err
	}
	f.afterLeft = max(r.after, 0)
	if reached {
		f.done = true
		if f.afterLeft == 0 {
			return errGrepStop
		}
	}
	return nil
}

// remember keeps line for leading context, dropping the oldest beyond
// size lines.
func (f *grepFile) remember(size, n int, off int64, line []byte) {
	if len(f.ring) < size {
		f.ring = append(f.ring, grepHeld{n: n, off: off, text: append([]byte(nil), line...)})
		return
	}
	old := f.ring[0]
	copy(f.ring, f.ring[1:])
	f.ring[len(f.ring)-1] = grepHeld{n: n, off: off, text: append(old.text[:0], line...)}
}

// output writes line n, a selected line (sep ':') or one of context
// (sep '-'), with what -H, -n and -b put before it; under -o, the
// matches of a selected line, each on a line of its own. A group of lines
// that does not follow the last one output is set off by "--" when
// context was asked for.
func (r *grepRun) output(f *grepFile, n int, off int64, line []byte, sep byte) error {
	if (r.before >= 0 || r.after >= 0) && !r.noGroupSep && r.used && (f.lastOut == 0 || n != f.lastOut+1) {
		r.buf = append(append(r.buf[:0], r.groupSep...), '\n')
		if err := r.out.Write(r.buf); err != nil {
			return err
		}
	}
	f.lastOut = n
	r.used = true
	if !r.only {
		r.buf = append(r.prefix(f, n, off, sep), line...)
		return r.out.Write(append(r.buf, '\n'))
	}
	if sep != ':' || r.invert {
		return nil
	}
	r.spans = r.m.find(line, r.spans[:0])
	for _, s := range r.spans {
		r.buf = r.prefix(f, n, off+int64(s[0]), sep)
		r.buf = append(append(r.buf, line[s[0]:s[1]]...), '\n')
		if err := r.out.Write(r.buf); err != nil {
			return err
		}
	}
	return nil
}

// prefix starts an output line in r.buf: "FILE:", "N:" and "OFFSET:" as
// asked, with sep for ':'.
func (r *grepRun) prefix(f *grepFile, n int, off int64, sep byte) []byte {
	b := r.buf[:0]
	if f.named {
		b = append(append(b, f.label...), r.nameEnd(sep))
	}
	if r.number {
		b = append(strconv.AppendInt(b, int64(n), 10), sep)
	}
	if r.byteOffset {
		b = append(strconv.AppendInt(b, off, 10), sep)
	}
	return b
}
