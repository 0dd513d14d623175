package shell

import (
	"strconv"

	"mvdan.cc/sh/v3/syntax"
)

// Pos is a position in the source text. Line and Col are 1-based; Col
// counts bytes, not runes, from the start of the line, so that a Pos can
// be turned back into an offset without decoding the text. The zero Pos
// means "no position".
type Pos struct{ Line, Col int }

// String returns "line:col", for example "3:7".
func (p Pos) String() string {
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Script is the whole parsed text: its statements in source order, and
// all their pipelines in source order. A text with nothing but blanks,
// blank lines and comments gives a Script with no statements.
type Script struct {
	Stmts     []*Stmt
	Pipelines []*Pipeline // every pipeline of every Stmt, in source order
}

// Stmt is one statement: pipelines joined by && and ||, run left to right.
// After Pipelines[i] ends, Ops[i] says whether Pipelines[i+1] runs: &&
// runs it when the status so far is 0, || when it is not (the operators
// bind equally, as in the POSIX shell).
type Stmt struct {
	Pos       Pos
	Pipelines []*Pipeline // at least one
	Ops       []ListOp    // len(Pipelines)-1
}

// ListOp joins two pipelines of a Stmt.
type ListOp int

const (
	AndOp ListOp = iota + 1 // &&
	OrOp                    // ||
)

// String returns "&&" or "||".
func (o ListOp) String() string {
	if o == AndOp {
		return "&&"
	}
	return "||"
}

// Pipeline is a chain of commands joined by '|'. The output of Cmds[i]
// feeds the input of Cmds[i+1].
type Pipeline struct {
	Pos     Pos    // position of the first command (of the first '!', if any)
	Negated bool   // an odd number of '!' before it: its status is inverted
	Cmds    []*Cmd // at least one
}

// Cmd is one simple command: assignments, then a name, its arguments and
// its redirections.
type Cmd struct {
	Pos Pos // position of the first word, assignment or redirection
	// Assigns are the NAME=value words before the name. With a name they
	// set variables in the command's environment alone; without one (Args
	// empty) they set the shell's variables.
	Assigns []*Assign
	Args    []Word // Args[0] is the command name; empty only with Assigns
	Redirs  []*Redir
}

// Assign is a NAME=value (or NAME+=value) word before a command's name.
type Assign struct {
	Pos    Pos // of the name
	Name   string
	Value  Word // expanded as one field: no splitting, no globbing
	Append bool // NAME+=value: the value is added to the end of NAME's
}

// Word is one word of the source, or one field of its expansion (see
// Expander). A Word can join several quoted and unquoted parts (a"b c"'d'
// is the single Word "ab cd"); expansion can make several of one word, or
// none.
type Word struct {
	// Pos is the position of the word's first byte in the source. A Word
	// that begins inside an expansion whose value was split (the second
	// field of $X where X="a b") has the position of that '$'.
	Pos    Pos
	Value  string
	Quoted bool // some part of it was quoted or escaped with a backslash
	// Edge marks a named edge of the graph: an unquoted word @name (see
	// IsEdgeName). A quoted '@a' is an ordinary word, a file name, and no
	// expansion ever makes an edge.
	Edge bool
	// Raw is the word as written in the source.
	Raw string

	// syntax is the word parsed by mvdan.cc/sh when it has something to
	// expand ($, a glob, braces, a leading ~); nil when Value is final.
	syntax *syntax.Word
}

// Expands reports whether the word has something to expand when its
// command runs: a parameter, a pattern, braces or a tilde. Value is then
// the word with quotes removed and nothing expanded.
func (w Word) Expands() bool { return w.syntax != nil }

// IsEdgeName reports whether s has the form of a named edge: "@", then a
// letter or '_', then letters, digits and '_'. A word that only starts
// with '@' ("@", "@1x", "@a.txt") is an ordinary word.
func IsEdgeName(s string) bool {
	return len(s) >= 2 && s[0] == '@' && IsName(s[1:])
}

// RedirOp is the kind of a redirection.
type RedirOp int

const (
	RedirIn        RedirOp = iota + 1 // <  file is standard input
	RedirOut                          // >  file is standard output, truncated
	RedirAppend                       // >> file is standard output, appended to
	RedirErr                          // 2> file is standard error, truncated
	RedirErrAppend                    // 2>> file is standard error, appended to
)

// String returns the operator as written in the source: "<", ">", ">>",
// "2>" or "2>>".
func (o RedirOp) String() string {
	switch o {
	case RedirIn:
		return "<"
	case RedirOut:
		return ">"
	case RedirAppend:
		return ">>"
	case RedirErr:
		return "2>"
	case RedirErrAppend:
		return "2>>"
	}
	return "RedirOp(" + strconv.Itoa(int(o)) + ")"
}

// Redir is one redirection of a command. Redirections may appear anywhere
// among a command's words; Cmd.Redirs keeps them in source order, which
// matters when two name the same stream (the last one wins in a POSIX
// shell).
type Redir struct {
	Pos    Pos // position of the operator (of the '2' for 2> and 2>>)
	Op     RedirOp
	Target Word // the file name; exactly one word after expansion
}
