package builtin

import (
	"fmt"
	"strings"
)

// Two errors a builtin's New returns about its own command line, before
// anything runs:
//
//   - *UsageError: the line is wrong, as GNU's tool would say too (a bad
//     number, a missing operand). The runner prints it as GNU does, on the
//     command's standard error (a '2>' of the command applies), and the
//     command exits with GNU's status; the rest of the pipeline runs, as
//     in bash.
//   - *UnsupportedError: the builtin does not implement an option or a
//     form that the system's program may (grep -P, an option the builtin
//     does not know). The runner then runs the program of that name from
//     PATH instead, bridged as any external command (the fallback); with
//     the fallback turned off, or no such program, the error is a refusal.
//
// Every builtin signals a missing feature the one way, with
// unsupportedf or getopt, which does it for an option it was not told
// of; the runner decides what happens.

// UsageError is a bad option or operand, worded as GNU's tool words it.
type UsageError struct {
	Cmd string
	// Msg follows "Cmd: " on the first line; empty when GNU prints only
	// its usage hint (grep without a pattern).
	Msg string
	// Try marks an error after which GNU prints its hint ("Try 'head
	// --help' for more information."): a bad option or a missing
	// operand, not a bad value.
	Try bool
	// Status is the exit status; 0 means the tool's usual one for a
	// usage error (gnuUsage).
	Status int
}

// Error is the first line alone, "head: invalid option -- 'x'", for
// messages that have room for one line.
func (e *UsageError) Error() string {
	if e.Msg == "" {
		return e.Cmd + ": " + strings.TrimSuffix(gnuUsage[e.Cmd].synopsis, "\n")
	}
	return e.Cmd + ": " + e.Msg
}

// Message is the whole text GNU prints for the error, each line ending
// in '\n': the message, then, where GNU has them, its synopsis line and
// its hint.
func (e *UsageError) Message() string {
	var b strings.Builder
	if e.Msg != "" {
		b.WriteString(e.Cmd + ": " + e.Msg + "\n")
	}
	if (e.Try || e.Msg == "") && gnuTools[e.Cmd] {
		b.WriteString(gnuUsage[e.Cmd].synopsis)
		fmt.Fprintf(&b, "Try '%s --help' for more information.\n", e.Cmd)
	}
	return b.String()
}

// ExitStatus is the status the command exits with.
func (e *UsageError) ExitStatus() int {
	switch {
	case e.Status != 0:
		return e.Status
	case gnuUsage[e.Cmd].status != 0:
		return gnuUsage[e.Cmd].status
	}
	return 1
}

// gnuTools are the builtins named after a GNU (or util-linux) program,
// whose usage errors end with that program's hint; tpipe's own commands
// (route, copy, decode, ...) have no --help to point to.
var gnuTools = map[string]bool{
	"awk": true, "cat": true, "cut": true, "grep": true, "head": true, "join": true,
	"nl": true, "rev": true, "sed": true, "seq": true, "sort": true, "tail": true,
	"tee": true, "tr": true, "uniq": true, "wc": true, "yes": true,
}

// gnuUsage is how GNU's tools end a usage error, where they differ from
// coreutils' usual status 1 and bare hint.
var gnuUsage = map[string]struct {
	status   int
	synopsis string // a line printed before the hint
}{
	"grep": {2, "Usage: grep [OPTION]... PATTERNS [FILE]...\n"},
	"sort": {2, ""},
	"awk":  {2, ""},
}

func usagef(cmd, format string, args ...any) *UsageError {
	return &UsageError{Cmd: cmd, Msg: fmt.Sprintf(format, args...)}
}

// usageTryf is a usage error after which GNU prints its hint.
func usageTryf(cmd, format string, args ...any) *UsageError {
	return &UsageError{Cmd: cmd, Msg: fmt.Sprintf(format, args...), Try: true}
}

// UnsupportedError is an option or form of a command that the builtin
// does not implement. The runner runs the system's program instead (see
// above); What names the part the builtin lacks, as --explain shows it:
// "grep -P", "seq -f %a".
type UnsupportedError struct {
	Cmd  string
	What string
	// Usage is set when the builtin cannot tell whether GNU's tool has
	// the option at all (getopt met an option it was not told of): it is
	// what to say when no program runs instead, in GNU's words.
	Usage *UsageError
}

func (e *UnsupportedError) Error() string {
	if e.Usage != nil {
		return e.Usage.Error()
	}
	return e.What + ": not implemented by tpipe's " + e.Cmd
}

// Unwrap returns Usage, which may be nil.
func (e *UnsupportedError) Unwrap() error {
	if e.Usage == nil {
		return nil
	}
	return e.Usage
}

// unsupportedf says that the builtin cmd lacks what the format describes;
// the text starts with the command's name, as --explain prints it:
// unsupportedf("grep", "-P") is "grep -P".
func unsupportedf(cmd, format string, args ...any) *UnsupportedError {
	return &UnsupportedError{Cmd: cmd, What: cmd + " " + fmt.Sprintf(format, args...)}
}
