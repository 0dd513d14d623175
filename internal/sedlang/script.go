package sedlang

import (
	"fmt"

	"github.com/tpipe/tpipe/internal/backtrack"
	"github.com/tpipe/tpipe/internal/posixre"
)

// Options are the command line's say in how a script reads and runs.
type Options struct {
	Extended bool // -E, -r: the regexes are EREs
	Quiet    bool // -n: print only what the script prints
	NullData bool // -z: lines end in NUL bytes, not newlines
	Sandbox  bool // --sandbox: refuse r, R, w, W and e
	// LineWrap is the width l wraps its output at (-l N); 0 means GNU's
	// default of 70, and a negative value never wraps (-l 0).
	LineWrap int
}

// Piece is one piece of a script, as the command line gives it: an -e
// expression (or the SCRIPT operand), or the text of a -f file.
type Piece struct {
	Text string
	File string // the -f file's name; "" for an expression
}

// Exprs returns the -e expressions texts as pieces.
func Exprs(texts ...string) []Piece {
	ps := make([]Piece, len(texts))
	for i, t := range texts {
		ps[i] = Piece{Text: t}
	}
	return ps
}

// Error is a script GNU sed rejects, or one that tpipe cannot run, with
// where GNU says it is: the -e piece, from 1, and how many characters of
// that piece were read when the error was found; or, for a -f file, its
// name and line.
type Error struct {
	Expr int
	Char int
	File string
	Line int
	Msg  string
	// Unsupported is set when the script is one GNU sed runs but tpipe
	// does not (the e command, an interval over RE2's limit): the caller
	// may hand the whole command to the system's sed instead of refusing
	// it. What then names the part tpipe lacks, short, as a command line
	// would show it: "e", "s///e", "r /dev/stdin", "/a\{1001\}/".
	Unsupported bool
	What        string
	// NoPlace is set for an error GNU words without a place ("can't find
	// label for jump to `x'", "no previous regular expression").
	NoPlace bool
	// Panic marks an error after which GNU stops as it does when it
	// cannot go on (its status 4, not a script error's 1): a jump to a
	// label the script lacks.
	Panic bool
}

// Error returns the message as GNU sed prints it after "sed: ".
func (e *Error) Error() string {
	switch {
	case e.NoPlace:
		return e.Msg
	case e.File != "":
		return fmt.Sprintf("file %s line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("-e expression #%d, char %d: %s", e.Expr, e.Char, e.Msg)
}

// Script is a parsed script. It does not change once Parse returns it, so
// that any number of Runs may use it at once.
type Script struct {
	cmds     []command
	quiet    bool
	delim    byte // the end of a line: '\n', or NUL with -z
	lineWrap int
	needLast bool // some address is $, so each line waits for the next
	quits    bool // q or Q may stop the input early
	// The files the script names: read by R, written by w, W and s///w,
	// each once however many commands name it. r reads its file anew
	// each time and is not listed.
	reads, writes []string
	readsFiles    bool // some r or R command
	loops         bool // some b, t, T or D
}

// Quits reports whether a q or Q command may end the run before the
// input does, so that a caller can stop reading then.
func (s *Script) Quits() bool { return s.quits }

// Loops reports whether the script may run without end on one line: it
// jumps (b, t, T) or starts over (D). A caller that runs it should give
// the run a way to stop (IO.Stop).
func (s *Script) Loops() bool { return s.loops }

// UsesFiles reports whether the script reads or writes files (r, R, w, W,
// s///w), so that a run of it must be started and closed (Run.Start,
// Run.Close).
func (s *Script) UsesFiles() bool { return s.readsFiles || len(s.writes) > 0 }

// WritesFiles reports whether the script writes files (w, W, s///w).
func (s *Script) WritesFiles() bool { return len(s.writes) > 0 }

// command is one command of a script.
type command struct {
	a1, a2 *address // a2 is set for a range
	neg    bool
	op     byte // the command letter

	// { : the index of its }; b t T: the index to jump to
	jump int
	// q Q: the exit status; l: the wrap width (-1: the script's)
	num int
	// a i c: the text, with its final newline
	text []byte
	// r R w W: the file; R w W: its index in Script.reads or .writes
	file  string
	index int
	// s
	sub *subst
	// y
	ymap *[256]byte
}

// subst is what an s command does.
type subst struct {
	re    *regex // nil: the last regex used
	repl  []replPart
	glob  bool
	nth   int // replace the nth match (from it on, with glob)
	print bool
	write int // the index in Script.writes for the w flag, or -1
	// simple is set when the replacement is plain text and groups, with
	// no case conversion, which lets it be appended without checks.
	simple bool
}

// address is an address: a line number, $, FIRST~STEP or a regex; or, as
// the end of a range, +N or ~N.
type address struct {
	kind byte // 'n' line, '$' last, '~' FIRST~STEP, '/' regex, '+' +N, 'm' ~N, 'a' any line
	n    int  // the line, or FIRST of FIRST~STEP, or N of +N and ~N
	step int
	re   *regex // nil for // (the last regex used)
}

// regex is a compiled address or s regex, with the fastest way found to
// run it (see fastOf). It is read with posixre.Bytes, each byte one
// character as in GNU's C locale: a text with bytes >= 0x80 goes to the
// regexp (or the backtracker) through posixre.Encode. A pattern RE2 cannot run (a back-reference, a \<
// or \> away from a word character) runs on the backtracker bt instead,
// behind m, its RE2 prefilter: a line the prefilter turns away has no
// match, and most lines are turned away without a backtracking step.
type regex struct {
	m       *posixre.Matcher // the regexp; with bt, its prefilter or nil
	bt      *backtrack.Regexp
	fast    fast
	newline bool // M: the Matcher's ".*" chains would cross newlines
	// segments is set for M under -z: as in GNU, each piece of the
	// pattern space between NULs is searched alone, so that ^ and $
	// hold at its ends and no match crosses a NUL.
	segments bool
	groups   int
}

// caseConv is how the replacement's text is changed as it is appended:
// GNU's \U \L \E set the mode, \u \l the first character.
type caseConv uint8

const (
	caseAsIs  caseConv = 0
	caseUpper caseConv = 1 << iota
	caseLower
	caseUpperFirst
	caseLowerFirst

	caseOneShot = caseUpperFirst | caseLowerFirst
)

// replPart is a piece of an s replacement, as GNU cuts it: literal text
// then, maybe, a group (0 for the whole match, & or \0), with the case
// conversion in force where the piece starts.
type replPart struct {
	text  []byte
	group int // -1 for none
	conv  caseConv
}
