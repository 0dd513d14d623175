package builtin

// Helpers shared by the coreutils-style builtins of this package that take
// FILE operands (cat, head, tail, wc, sort, uniq, nl, rev, tee): GNU-style
// option parsing, reading an operand ("-" is the input port), joining
// records across files, and GNU's wording of system errors.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
)

// filesGetopt parses short options the way GNU getopt_long does for the
// tools here: options may be clustered (-nr), an option's argument may be
// attached (-k2) or the next word (-k 2), options and operands may be
// mixed (sort f -r), "--" ends the options and "-" alone is an operand.
// Long options are not supported: "--x" is an unrecognized option.
type filesGetopt struct {
	cmd     string
	flags   string // option letters without an argument
	withArg string // option letters that take an argument
}

// parse calls opt for each option, in order, and returns the operands.
func (g filesGetopt) parse(args []string, opt func(c byte, arg string) error) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			return nil, usagef(g.cmd, "unrecognized option '%s'", a)
		case len(a) < 2 || a[0] != '-':
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			switch {
			case strings.IndexByte(g.flags, c) >= 0:
				if err := opt(c, ""); err != nil {
					return nil, err
				}
			case strings.IndexByte(g.withArg, c) >= 0:
				var arg string
				if j+1 < len(a) {
					arg = a[j+1:]
				} else if i+1 < len(args) {
					i++
					arg = args[i]
				} else {
					return nil, usagef(g.cmd, "option requires an argument -- '%c'", c)
				}
				if err := opt(c, arg); err != nil {
					return nil, err
				}
				j = len(a)
			default:
				return nil, usagef(g.cmd, "invalid option -- '%c'", c)
			}
		}
	}
	return operands, nil
}

// filesReadsInput reports whether a command with these FILE operands reads
// its input port: with no operand, or with "-" among them.
func filesReadsInput(names []string) bool {
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

// filesSource is one FILE operand being read, record by record: the input
// port for "-", else a file opened with Env.Open. It is not safe for
// concurrent use.
type filesSource struct {
	name string
	in   *buffer.Input // set for "-"
	rc   io.ReadCloser
	sc   *record.Scanner
}

// filesOpen opens operand name. Its error is the one Env.Open returned;
// filesErrText words it as GNU does.
func filesOpen(env *Env, p *buffer.Proc, name string) (*filesSource, error) {
	if name == "-" {
		return &filesSource{name: name, in: p.In(0)}, nil
	}
	rc, err := env.open(name)
	if err != nil {
		return nil, err
	}
	return &filesSource{name: name, rc: rc, sc: record.NewScanner(rc, record.Lines, p.RecordSize())}, nil
}

// filesReadError is a failure to read a file operand (a directory, an I/O
// error, a line over the record size). A tool reports it and goes on with
// its next operand, unlike an error of the input port, which means the run
// is aborted.
type filesReadError struct {
	Name string
	Err  error
}

func (e *filesReadError) Error() string { return e.Name + ": " + filesErrText(e.Err) }
func (e *filesReadError) Unwrap() error { return e.Err }

// Read returns the next line, with its '\n' if it has one. The line is
// valid until the next Read or Close. Read returns io.EOF at the end, a
// *filesReadError when a file cannot be read, and the port's error
// otherwise.
func (s *filesSource) Read() ([]byte, error) {
	if s.in != nil {
		return s.in.Read()
	}
	if s.sc.Scan() {
		return s.sc.Record(), nil
	}
	if err := s.sc.Err(); err != nil {
		return nil, &filesReadError{Name: s.name, Err: err}
	}
	return nil, io.EOF
}

// Port returns the input port when s reads "-", so that a caller may
// Forward or Pass its records without a copy, and nil for a file.
func (s *filesSource) Port() *buffer.Input { return s.in }

// Close closes the file; the input port stays as it is.
func (s *filesSource) Close() error {
	if s.rc == nil {
		return nil
	}
	return s.rc.Close()
}

// regularSize returns the size of a regular file, as wc needs it to choose
// its column width; ok is false for "-", which tpipe cannot stat, and for
// anything but a regular file.
func (s *filesSource) regularSize() (size int64, ok bool) {
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

// filesErrText words err as GNU tools do: the C library's text for a
// system error ("No such file or directory"), else err's own text.
func filesErrText(err error) string {
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

// filesQuote quotes a file name for a message the way GNU's quotef does in
// the C locale, for the common cases: unchanged if it holds only characters
// that need no quoting in a shell, else in single quotes.
func filesQuote(name string) string {
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

// filesWarn writes "cmd: name: text" to env's stderr.
func filesWarn(env *Env, cmd, name string, err error) {
	fmt.Fprintf(env.stderr(), "%s: %s: %s\n", cmd, filesQuote(name), filesErrText(err))
}

// filesJoin writes the output of a tool that concatenates its operands
// (cat, head and tail with headers, rev): GNU writes bytes, so the last
// line of a file without '\n' runs into what follows. filesJoin keeps the
// invariant that only the last record of a stream lacks '\n' by holding
// such a line back and writing it with what comes next. The zero value is
// not usable; set out and max (the record size).
type filesJoin struct {
	out   *buffer.Output
	max   int
	carry []byte
}

func filesNewJoin(p *buffer.Proc) *filesJoin {
	return &filesJoin{out: p.Out(0), max: p.RecordSize()}
}

// write writes rec, or holds it back if it does not end in '\n'. The caller
// may reuse rec at once.
func (j *filesJoin) write(rec []byte) error {
	if len(rec) == 0 {
		return nil
	}
	if len(j.carry) > 0 {
		if len(j.carry)+len(rec) > j.max {
			// Too long to be one record: the bytes are the same either way.
			if err := j.out.Write(j.carry); err != nil {
				return err
			}
			j.carry = j.carry[:0]
		} else {
			j.carry = append(j.carry, rec...)
			if rec[len(rec)-1] != '\n' {
				return nil
			}
			err := j.out.Write(j.carry)
			j.carry = j.carry[:0]
			return err
		}
	}
	if rec[len(rec)-1] != '\n' {
		j.carry = append(j.carry[:0], rec...)
		return nil
	}
	return j.out.Write(rec)
}

// forward writes rec, the record last read from in, without copying it
// when nothing is held back. After forward, rec must not be used.
func (j *filesJoin) forward(in *buffer.Input, rec []byte) error {
	if len(j.carry) > 0 || len(rec) == 0 || rec[len(rec)-1] != '\n' {
		return j.write(rec)
	}
	return j.out.Forward(in)
}

// flush writes what is held back: the end of the output.
func (j *filesJoin) flush() error {
	if len(j.carry) == 0 {
		return nil
	}
	err := j.out.Write(j.carry)
	j.carry = j.carry[:0]
	return err
}
