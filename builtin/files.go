package builtin

// Helpers shared by the builtins that take options and FILE operands:
// GNU-style option parsing, reading an operand ("-" is the input port, a
// named edge "@name" the port of that name), reporting a file that cannot
// be read, and joining records across files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/record"
)

// getopt parses a command line the way GNU getopt_long does: options may
// be clustered (-nr), an option's argument may be attached (-k2) or the
// next word (-k 2), a long option may be abbreviated to any unambiguous
// prefix and take its argument as "--name=arg" or the next word, "--" ends
// the options and "-" alone is an operand. Unless inOrder is set, options
// may follow operands (sort f -r). Errors have GNU's wording. An option it
// was not told of is an *UnsupportedError, so that the system's program
// runs the line instead: it may know the option, and if not, says so in
// its own words. With only cmd set, a getopt accepts no option at all.
// The word --help, where an option may stand, is errHelp for every
// command: New prints the builtin's help instead of running it.
type getopt struct {
	cmd string
	// shorts lists the short option letters, each followed by ':' if it
	// takes an argument, as for getopt(3).
	shorts string
	longs  []longOpt
	// inOrder makes the first operand end the options, as in tr.
	inOrder bool
	// optArgs lists the letters of the long options whose argument is
	// optional: given only as "--name=arg" (grep --color).
	optArgs string
}

// longOpt is a long option and the letter opt is called with for it, which
// need not be one of the short options (cut's --complement).
type longOpt struct {
	name   string
	short  byte
	hasArg bool
}

// parse calls opt for each option, in order, and returns the operands. An
// error from opt stops the parse and is returned: a tool checks an option
// as GNU does, before it looks at the rest of the line. opt may be nil if
// no option is accepted.
func (g getopt) parse(args []string, opt func(c byte, arg string) error) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(operands, args[i+1:]...), nil
		case a == "--help":
			return nil, errHelp
		case strings.HasPrefix(a, "--"):
			c, arg, tookNext, err := g.long(a, args[i+1:])
			if err != nil {
				return nil, err
			}
			if tookNext {
				i++
			}
			if err := opt(c, arg); err != nil {
				return nil, err
			}
			continue
		case len(a) < 2 || a[0] != '-':
			if g.inOrder {
				return append(operands, args[i:]...), nil
			}
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			k := strings.IndexByte(g.shorts, c)
			if k < 0 || c == ':' {
				return nil, &UnsupportedError{Cmd: g.cmd, What: fmt.Sprintf("%s -%c", g.cmd, c),
					Usage: usageTryf(g.cmd, "invalid option -- '%c'", c)}
			}
			var arg string
			if k+1 < len(g.shorts) && g.shorts[k+1] == ':' {
				switch {
				case j+1 < len(a):
					arg = a[j+1:]
				case i+1 < len(args):
					i++
					arg = args[i]
				default:
					return nil, usageTryf(g.cmd, "option requires an argument -- '%c'", c)
				}
				j = len(a)
			}
			if err := opt(c, arg); err != nil {
				return nil, err
			}
		}
	}
	return operands, nil
}

// long looks up the long option a ("--name" or "--name=arg") and returns
// its letter and argument; tookNext reports that the argument is rest[0].
func (g getopt) long(a string, rest []string) (c byte, arg string, tookNext bool, err error) {
	name, arg, hasArg := strings.Cut(a[2:], "=")
	var match []longOpt
	for _, l := range g.longs {
		if l.name == name {
			match = []longOpt{l}
			break
		}
		if strings.HasPrefix(l.name, name) {
			match = append(match, l)
		}
	}
	if len(match) == 0 {
		return 0, "", false, &UnsupportedError{Cmd: g.cmd, What: g.cmd + " " + a,
			Usage: usageTryf(g.cmd, "unrecognized option '%s'", a)}
	}
	for _, l := range match[1:] {
		// As in getopt_long, a prefix of several names for the same
		// option is not ambiguous.
		if l.short != match[0].short {
			return 0, "", false, usageTryf(g.cmd, "option '%s' is ambiguous", a)
		}
	}
	l := match[0]
	switch {
	case strings.IndexByte(g.optArgs, l.short) >= 0:
	case l.hasArg && !hasArg:
		if len(rest) == 0 {
			return 0, "", false, usageTryf(g.cmd, "option '--%s' requires an argument", l.name)
		}
		return l.short, rest[0], true, nil
	case !l.hasArg && hasArg:
		return 0, "", false, usageTryf(g.cmd, "option '--%s' doesn't allow an argument", l.name)
	}
	return l.short, arg, false, nil
}

// readsInput reports whether a command with these FILE operands reads its
// input port (port 0, the pipe): with no operand, or with "-" among them.
// Named edges are other ports (edgeOperands).
func readsInput(names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == "-" {
			return true
		}
	}
	return false
}

// isEdge reports whether operand name is a named edge: a word the shell
// marked as one (Env.Edges). Spelling alone decides nothing: a quoted
// '@a' is a file name.
func (e *Env) isEdge(name string) bool {
	return e != nil && slices.Contains(e.Edges, name)
}

// edgeOperands returns the operands among names that are named edges, in
// order: what Cmd.Reads (or, for tee, Cmd.Writes) lists. An edge named
// twice is a *UsageError: an edge has one reader and one writer.
func (e *Env) edgeOperands(cmd string, names []string) ([]string, error) {
	var edges []string
	for _, n := range names {
		if !e.isEdge(n) {
			continue
		}
		if slices.Contains(edges, n) {
			return nil, usagef(cmd, "%s: named twice; a named edge has one reader and one writer", n)
		}
		edges = append(edges, n)
	}
	return edges, nil
}

// edgeIn returns the input port connected to the named edge name, or nil
// if there is none.
func edgeIn(p *buffer.Ports, name string) *buffer.Input {
	for i := range p.NumIn() {
		if in := p.In(i); in.Name() == name {
			return in
		}
	}
	return nil
}

// edgeOut returns the output port connected to the named edge name, or
// nil if there is none.
func edgeOut(p *buffer.Ports, name string) *buffer.Output {
	for i := range p.NumOut() {
		if o := p.Out(i); o.Name() == name {
			return o
		}
	}
	return nil
}

// errNotConnected is the error of merge and join for an operand that has
// no port: the runner connects every unquoted @name, so it means the word
// was quoted or the command was started some other way.
var errNotConnected = errors.New("not connected")

// operand is one FILE operand being read, record by record: the input port
// for "-", the edge's port for a named edge, else a file opened with
// Env.Open. It is not safe for concurrent use.
type operand struct {
	name string
	in   *buffer.Input // set for "-" and a named edge
	rc   io.ReadCloser
	sc   *record.Scanner // made by the first Read
	max  int             // the longest line, the pool's MaxRecord

	// Chunk's state for a file: what the last read gave, and where the
	// next piece starts in it.
	chunk    []byte
	chunkOff int
	chunkErr error
}

// openOperand opens operand name. Its error is the one Env.Open returned,
// for the caller to word as its tool does; errText gives GNU's text.
func openOperand(env *Env, p *buffer.Ports, name string) (*operand, error) {
	if name == "-" {
		return &operand{name: name, in: p.In(0)}, nil
	}
	if env.isEdge(name) {
		// A named edge reads its port. With no port of that name (the
		// command was started without its graph), it is a file name.
		if in := edgeIn(p, name); in != nil {
			return &operand{name: name, in: in}, nil
		}
	}
	rc, err := env.openStream(p, name)
	if err != nil {
		return nil, err
	}
	return &operand{name: name, rc: rc, max: p.MaxRecord()}, nil
}

// openStream opens the file name for a task with ports p. A file that is
// not a regular one (a FIFO, a terminal, /dev/stdin on a pipe) may make a
// read wait for long: it is read through a streamReader, so that what
// the task wrote before such a wait is handed over first.
func (e *Env) openStream(p *buffer.Ports, name string) (io.ReadCloser, error) {
	rc, err := e.open(name)
	if err != nil {
		return nil, err
	}
	if st, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return &streamReader{ReadCloser: rc, p: p}, nil
		}
	}
	return rc, nil
}

// streamReader reads a pipe, FIFO or terminal for a task and hands over
// the task's partially filled output buffers (Ports.Flush) before a read
// that may wait: one after a read that gave less than asked, which is
// how such a file says it has nothing more for now. Lines already
// selected from a log that is being written then reach the next command
// at once, not when a buffer fills.
type streamReader struct {
	io.ReadCloser
	p     *buffer.Ports
	short bool
}

func (s *streamReader) Read(b []byte) (int, error) {
	if s.short {
		s.p.Flush()
	}
	n, err := s.ReadCloser.Read(b)
	s.short = n < len(b)
	return n, err
}

// fileError is a FILE operand that could not be opened (atOpen) or read
// (a directory, an I/O error, a line over the record size). A tool reports
// it and goes on with its next operand, unlike an error of the input port,
// which means the run is aborted; grep, sed and cut abort it too for a
// failure that is not a system error (see eachRecord).
type fileError struct {
	name   string
	err    error
	atOpen bool
}

func (e *fileError) Error() string { return e.name + ": " + errText(e.err) }
func (e *fileError) Unwrap() error { return e.err }

// Read returns the next line, with its '\n' if it has one, however long
// (up to the pool's MaxRecord: a line longer than S is read into memory of
// the operand's, outside the pool, as Input.Read does). The line is valid
// until the next Read or Close. Read returns io.EOF at the end, a
// *fileError when a file cannot be read, and the port's error otherwise.
func (s *operand) Read() ([]byte, error) {
	if s.in != nil {
		return s.in.Read()
	}
	if s.sc == nil {
		s.sc = record.NewScanner(s.rc, record.Lines, s.max)
	}
	if s.sc.Scan() {
		return s.sc.Record(), nil
	}
	if err := s.sc.Err(); err != nil {
		var tl *record.TooLargeError
		if errors.As(err, &tl) {
			tl.Limit = buffer.MaxRecordLimit
		}
		return nil, &fileError{name: s.name, err: err}
	}
	return nil, io.EOF
}

// operandChunk is the size of Chunk's reads from a file.
const operandChunk = 64 << 10

// Chunk returns the next piece of s's bytes: a part of one line, ending
// at its '\n' or where the line goes on in the next piece. It never holds
// a line whole, so no line is too long: it is how a tool that counts bytes
// (head -c -N, tail -c) reads. A piece of a port is at most S bytes (see
// buffer.Input.ReadChunk), one of a file at most 64 KiB. The piece is valid
// until the next call; Chunk returns io.EOF at the end, a *fileError when a
// file cannot be read, and the port's error otherwise. A caller uses Chunk
// or Read on an operand, not both.
func (s *operand) Chunk() ([]byte, error) {
	if s.in != nil {
		piece, _, err := s.in.ReadChunk()
		return piece, err
	}
	for s.chunkOff == len(s.chunk) {
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
	piece := s.chunk[s.chunkOff:]
	if i := bytes.IndexByte(piece, '\n'); i >= 0 {
		piece = piece[:i+1]
	}
	s.chunkOff += len(piece)
	return piece, nil
}

// eachChunk calls fn on every piece of s (see Chunk), to its end; an
// error of fn stops it and is returned.
func (s *operand) eachChunk(fn func(piece []byte) error) error {
	for {
		piece, err := s.Chunk()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(piece); err != nil {
			return err
		}
	}
}

// Port returns the input port when s reads "-" or an edge, so that a caller may
// Forward or Pass its records without a copy, and nil for a file.
func (s *operand) Port() *buffer.Input { return s.in }

// Close closes the file; the input port stays as it is.
func (s *operand) Close() error {
	if s.rc == nil {
		return nil
	}
	return s.rc.Close()
}

// regularSize returns the size of a regular file, as wc needs it to choose
// its column width; ok is false for a port ("-" or an edge), which tpipe
// cannot stat, and for anything but a regular file.
func (s *operand) regularSize() (size int64, ok bool) {
	st, isStat := s.rc.(interface{ Stat() (fs.FileInfo, error) })
	if !isStat {
		return 0, false
	}
	fi, err := st.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// eachRecord calls fn on every record of operand name, for grep, sed and
// cut. A file that cannot be opened, or that fails with a system error, is
// a *fileError, for the caller to report before it goes on. Any other
// failure of a file, such as a line over the record size, is tpipe's limit
// rather than the file's fault: it comes back wrapped with the name and
// ends the run, as an error of the input port does. An error from fn stops
// the loop and is returned as it is.
func eachRecord(ctx context.Context, env *Env, p *buffer.Ports, name string, fn func(rec []byte) error) error {
	src, err := openOperand(env, p, name)
	if err != nil {
		return &fileError{name: name, err: err, atOpen: true}
	}
	defer src.Close()
	for n := 0; ; n++ {
		rec, err := src.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if fe, ok := err.(*fileError); ok && !isErrno(fe.err) {
				return fmt.Errorf("%s: %w", name, fe.err)
			}
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
		// A cancelled run is noticed at the ports; reading a file touches
		// none, and grep -c may write nothing until the file's end.
		if src.in == nil && n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

func isErrno(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno)
}

// errText words err as GNU tools do: the C library's text for a system
// error ("No such file or directory"), else err's own text.
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" && 'a' <= s[0] && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}

// quote quotes a file name for a message the way GNU's quotef does in the
// C locale, for the common cases: unchanged if it holds only characters
// that need no quoting in a shell, else in single quotes.
func quote(name string) string {
	safe := name != ""
	for i := 0; i < len(name) && safe; i++ {
		c := name[i]
		safe = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("%+,-./:=@_^", c) >= 0
	}
	if safe {
		return name
	}
	return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
}

// warnFile writes "cmd: name: text" to env's stderr, with name as given:
// the coreutils quote it (quote), grep and sed do not.
func warnFile(env *Env, cmd, name string, err error) {
	fmt.Fprintf(env.stderr(), "%s: %s: %s\n", cmd, visible.Controls(name), errText(err))
}

// joiner writes the output of a tool that concatenates its operands
// (cat, head and tail with headers, rev): GNU writes bytes, so the last
// line of a file without '\n' runs into what follows. A record without
// '\n' is written as an unfinished record (buffer.Output.WriteChunk with
// more set), which the next write goes on with; the end of the output ends
// it. The zero value is not usable; make one with newJoiner.
type joiner struct {
	out *buffer.Output
}

func newJoiner(p *buffer.Ports) *joiner {
	return &joiner{out: p.Out(0)}
}

// write writes rec, leaving it open if it does not end in '\n'. The caller
// may reuse rec at once.
func (j *joiner) write(rec []byte) error {
	if len(rec) == 0 {
		return nil
	}
	return j.out.WriteChunk(rec, rec[len(rec)-1] != '\n')
}

// writeBytes writes b, bytes that may hold several lines or part of one,
// as the lines they are: each record the output gets is one line, or a
// piece of one that the next write goes on with.
func (j *joiner) writeBytes(b []byte) error {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		if err := j.write(line); err != nil {
			return err
		}
		b = b[len(line):]
	}
	return nil
}

// forward writes rec, the record (or piece) last read from in, without
// copying it where it can. After forward, rec must not be used.
func (j *joiner) forward(in *buffer.Input, rec []byte) error {
	if len(rec) == 0 || rec[len(rec)-1] != '\n' {
		return j.write(rec)
	}
	return j.out.Forward(in)
}

// flush ends the output of the tool. An unfinished last line needs
// nothing: the end of the output ends it.
func (j *joiner) flush() error { return nil }

// textWriter writes text that may not end or break where records do
// (seq -s ", ", awk's output): it cuts it into lines, each written as a
// record when its '\n' comes; a line without one goes out in pieces that
// the next write goes on with, so no line is too long. It is an
// io.Writer; its first error is sticky. It is not safe for concurrent use.
type textWriter struct {
	out     *buffer.Output
	started bool
	err     error
}

func (w *textWriter) Write(b []byte) (int, error) {
	if err := w.write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// WriteString writes s as Write would, without the copy io.WriteString
// makes of a string for a plain Writer (GoAWK writes each line so): the
// output copies what it is given and never changes it (WriteChunk), so
// s's bytes are lent to it for the call.
func (w *textWriter) WriteString(s string) (int, error) {
	if err := w.write(unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		return 0, err
	}
	return len(s), nil
}

func (w *textWriter) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	w.started = true
	w.err = w.out.WriteText(b)
	return w.err
}

// flush ends the output; an unfinished line needs nothing more.
func (w *textWriter) flush() error { return w.err }

// fill reads the next piece of the operand's file into s.chunk, from its
// start; it returns io.EOF after the end, a *fileError when the file could
// not be read.
func (s *operand) fill() error {
	if s.chunkErr != nil {
		if s.chunkErr == io.EOF {
			return io.EOF
		}
		return &fileError{name: s.name, err: s.chunkErr}
	}
	if s.chunk == nil {
		s.chunk = make([]byte, operandChunk)
	}
	n, err := s.rc.Read(s.chunk[:cap(s.chunk)])
	s.chunk, s.chunkOff, s.chunkErr = s.chunk[:n], 0, err
	return nil
}
