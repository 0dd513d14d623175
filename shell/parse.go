// Package shell parses tpipe's command language, the part of bash that
// describes pipelines and runs them one after another:
//
//	cd logs && cat *.log | grep -i error | LC_ALL=C sort | uniq -c >counts
//
// Parse turns the text into a Script, an AST with a position on every
// node. It only parses: it opens no files and runs nothing. An Expander
// expands a command's words when it is about to run, with the shell's
// state of that moment (variables, $?, the directory).
//
// # Grammar
//
// In the EBNF of the Go spec. The lexer hands the parser the tokens
// newline, "|", ";", "&&", "||", the redirection operators and word;
// blanks, comments and backslash-newline line continuations lie between
// tokens.
//
//	script     = { newline | list ( ";" | newline | EOF ) } EOF .
//	list       = pipeline { ( "&&" | "||" ) { newline } pipeline } .
//	pipeline   = [ "!" ] command { "|" { newline } command } .
//	command    = { assignment } ( word | redirect ) { word | redirect }
//	           | assignment { assignment } .
//	assignment = name "=" [ word ] .   // before the command's name only
//	redirect   = ( "<" | ">" | ">>" | "2>" | "2>>" ) word .
//
// Blank lines are allowed anywhere, and a ';' may end a line, but an
// empty command is an error (";;", "| |", a line that begins with ';').
// A newline right after '|', '&&' or '||' continues the statement. '!' is
// the reserved word only unquoted, alone, before a pipeline.
//
// # Words
//
// Words follow bash's rules:
//
//	word  = part { part } .  // parts join: a"b c"'d' is the word "ab cd"
//	part  = plain | "\\" byte | "'" { byte } "'" | `"` { dbyte } `"` | "$'" ... "'"
//	      | "$" name | "$" special | "${" ... "}" | "$((" ... "))" .
//
// Single quotes keep everything literally. Inside double quotes a
// backslash escapes only '"', '\\', '$', '`' and newline and is kept
// before any other byte. Outside quotes a backslash escapes any byte.
// $'...' is bash's ANSI-C quoting (\t is a tab).
//
// The lexer finds where each word ends and removes its quotes; a word
// with something to expand (a parameter, $((...)), a pattern * ? [...],
// braces, a leading ~) is also parsed by mvdan.cc/sh/v3/syntax, and the
// Expander hands it to mvdan.cc/sh/v3/expand. Expansion is bash's, in
// bash's order: braces, tilde, parameters ($NAME ${NAME} ${NAME:-word}
// ${#NAME} ${NAME#pattern} ${NAME/old/new} ...; $? $# $@ $* $1...) and
// arithmetic, field splitting of what was expanded unquoted, pathname
// expansion (sorted in byte order; a pattern that matches nothing stays
// as written), quote removal.
//
// A backslash-newline outside single quotes is removed before anything
// else, as in a POSIX shell, so it may even split an operator or a name:
// ">\<newline>>" is ">>". A '#' where a word could begin starts a comment
// that runs to the end of the line; inside a word it is plain.
//
// # Named edges
//
// An unquoted word of the form @name (a letter or '_', then letters,
// digits and '_') is a named edge of the graph, an in-memory queue between
// commands, wherever a file name may stand: after < > >>, and as an
// operand. Word.Edge marks it. Quoted, '@a' is an ordinary word, and no
// expansion ever makes an edge ($X with X=@a is the file @a).
//
// # Redirections
//
// < > >> 2> and 2>> take the next word as a file name, with or without a
// blank between (>out and > out). "2>" is an operator only when the 2 is
// a word of its own written right before the '>': a2>x is the word a2 and
// the redirection >x, and 2 > x is the word 2 and the redirection > x.
//
// # Not supported
//
// tpipe runs pipelines, not shell programs. These give an error at their
// position rather than being taken as words: & ( ) |& backquotes and $(
// (tpipe runs no command to make a word), here-documents (<< <<<),
// descriptor duplication (2>&1, >&2), &> >| <> <& and descriptor numbers
// other than the 2 of 2> and 2>> (1>x, 3>x, 0<x), and ${NAME/#old/new}
// and ${NAME/%old/new}. Reserved words of bash's compound commands (if,
// for, while, case, {, [[) are plain words: they name programs.
package shell

import "strings"

// Options changes how Parse reads the text. The zero Options is valid:
// words are left for an Expander.
type Options struct {
	// Getenv, if set, expands every word at once, as an Expander whose
	// Lookup is Getenv would with no globbing (for callers that have no
	// shell state of their own). Parse calls it in source order, from the
	// calling goroutine. An expansion's error is then Parse's.
	Getenv func(string) string
}

// Parse parses src and returns its statements. The error, if any, is a
// *ParseError (or, with Options.Getenv, an *ExpandError), and the Script
// is then nil. The Script is the caller's to keep and change; Parse keeps
// no reference to it, to src or to opts. It is safe to call Parse from
// several goroutines at once if opts.Getenv is.
func Parse(src string, opts Options) (*Script, error) {
	p := &parser{lex: newLexer(src)}
	p.advance()
	s, err := p.script()
	if err != nil {
		return nil, err // not a typed nil: err is non-nil here
	}
	if opts.Getenv != nil {
		if err := expandNow(s, opts.Getenv); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parser is a recursive-descent parser with one token of lookahead, tok.
type parser struct {
	lex *lexer
	tok token
}

func (p *parser) advance() { p.tok = p.lex.next() }

func (p *parser) errorf(off int, format string, args ...any) *ParseError {
	return p.lex.errorf(off, format, args...)
}

// script = { newline | list ( ";" | newline | EOF ) } EOF .
func (p *parser) script() (*Script, *ParseError) {
	s := &Script{}
	for {
		switch p.tok.kind {
		case tEOF:
			return s, nil
		case tNewline:
			p.advance()
			continue
		case tSemi:
			return nil, p.errorf(p.tok.off, "empty command before `;`")
		case tPipe, tAnd, tOr:
			return nil, p.errorf(p.tok.off, "missing command before `%s`", p.opText())
		case tError:
			return nil, p.tok.err
		}
		st, err := p.list()
		if err != nil {
			return nil, err
		}
		s.Stmts = append(s.Stmts, st)
		s.Pipelines = append(s.Pipelines, st.Pipelines...)
		// list stops only at ';', newline, EOF or an error; the first
		// two end the statement, the others are seen by the loop.
		if p.tok.kind == tSemi || p.tok.kind == tNewline {
			p.advance()
		}
	}
}

// opText is the operator p.tok stands for, for messages.
func (p *parser) opText() string {
	switch p.tok.kind {
	case tPipe:
		return "|"
	case tAnd:
		return "&&"
	case tOr:
		return "||"
	case tSemi:
		return ";"
	}
	return "newline"
}

// list = pipeline { ( "&&" | "||" ) { newline } pipeline } .
func (p *parser) list() (*Stmt, *ParseError) {
	pl, err := p.pipeline()
	if err != nil {
		return nil, err
	}
	st := &Stmt{Pos: pl.Pos, Pipelines: []*Pipeline{pl}}
	for p.tok.kind == tAnd || p.tok.kind == tOr {
		op, at, text := AndOp, p.tok.off, p.opText()
		if p.tok.kind == tOr {
			op = OrOp
		}
		p.advance()
		if err := p.commandAfter(at, text); err != nil {
			return nil, err
		}
		pl, err := p.pipeline()
		if err != nil {
			return nil, err
		}
		st.Pipelines = append(st.Pipelines, pl)
		st.Ops = append(st.Ops, op)
	}
	return st, nil
}

// commandAfter skips the newlines after the operator at offset at (text)
// and checks that a command follows.
func (p *parser) commandAfter(at int, text string) *ParseError {
	for p.tok.kind == tNewline {
		p.advance()
	}
	switch p.tok.kind {
	case tWord, tRedir:
		return nil
	case tError:
		return p.tok.err
	case tEOF:
		err := p.errorf(at, "missing command after `%s`", text)
		err.Incomplete = true
		return err
	}
	return p.errorf(p.tok.off, "missing command after `%s`", text)
}

// pipeline = [ "!" ] command { "|" { newline } command } .
//
// The caller has seen that p.tok begins a command.
func (p *parser) pipeline() (*Pipeline, *ParseError) {
	pl := &Pipeline{Pos: p.lex.pos(p.tok.off)}
	for p.bang() {
		bang := p.tok.off
		pl.Negated = !pl.Negated
		p.advance()
		if err := p.commandAfter(bang, "!"); err != nil {
			return nil, err
		}
	}
	c, err := p.command()
	if err != nil {
		return nil, err
	}
	pl.Cmds = []*Cmd{c}
	for p.tok.kind == tPipe {
		pipe := p.tok.off
		p.advance()
		if err := p.commandAfter(pipe, "|"); err != nil {
			return nil, err
		}
		c, err := p.command()
		if err != nil {
			return nil, err
		}
		pl.Cmds = append(pl.Cmds, c)
	}
	return pl, nil
}

// bang reports whether p.tok is the reserved word '!': unquoted, alone.
func (p *parser) bang() bool {
	return p.tok.kind == tWord && p.tok.word.Raw == "!"
}

// command = { assignment } ( word | redirect ) { word | redirect } | assignment { assignment } .
//
// The caller has seen that p.tok is a word or a redirection. Words of the
// form NAME=value before the first other word are assignments.
func (p *parser) command() (*Cmd, *ParseError) {
	start := p.tok.off
	c := &Cmd{Pos: p.lex.pos(start)}
	for {
		switch p.tok.kind {
		case tWord:
			if a := p.assignment(); a != nil && len(c.Args) == 0 {
				c.Assigns = append(c.Assigns, a)
			} else {
				if len(c.Args) == 0 && reserved[p.tok.word.Raw] {
					return nil, p.errorf(p.tok.off, "`%s` begins one of bash's compound commands (if, for, while, case, { }, [[ ]]), which tpipe does not have: it runs pipelines, one after another, with && and || between them", p.tok.word.Value)
				}
				if len(c.Args) == 0 && bashOnly[p.tok.word.Raw] {
					return nil, p.errorf(p.tok.off, "`%s` is one of bash's own commands, which tpipe does not have (its own are cd, export, unset, pwd, exit: help lists them)", p.tok.word.Value)
				}
				c.Args = append(c.Args, p.tok.word)
			}
			p.advance()
		case tRedir:
			r, err := p.redirect()
			if err != nil {
				return nil, err
			}
			c.Redirs = append(c.Redirs, r)
		case tError:
			return nil, p.tok.err
		default:
			switch {
			case len(c.Args) > 0:
				return c, nil
			case len(c.Assigns) > 0 && len(c.Redirs) == 0:
				return c, nil
			case len(c.Assigns) > 0:
				return nil, &ParseError{Pos: c.Redirs[0].Pos, Msg: "redirection without a command: only assignments before it"}
			}
			return nil, p.errorf(start, "missing command")
		}
	}
}

// reserved are the words that begin or end bash's compound commands and
// functions where a command's name stands.
var reserved = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true,
	"for": true, "while": true, "until": true, "do": true, "done": true,
	"case": true, "esac": true, "select": true, "function": true,
	"{": true, "}": true, "[[": true, "]]": true,
}

// bashOnly are commands bash runs itself and no program stands for, which
// tpipe does not have: refused by name rather than "command not found"
// when the line runs.
var bashOnly = map[string]bool{
	"set": true, "shift": true, "readonly": true, "local": true, "declare": true, "typeset": true,
	"source": true, ".": true, "eval": true, "exec": true, "trap": true, "alias": true, "unalias": true,
	"read": true, "return": true, "break": true, "continue": true, "let": true, "getopts": true,
	"wait": true, "jobs": true, "fg": true, "bg": true, "disown": true, "ulimit": true, "umask": true,
	"shopt": true, "hash": true, "history": true, "builtin": true, "enable": true, "mapfile": true,
	"readarray": true, "suspend": true, "logout": true, "popd": true, "pushd": true, "dirs": true,
}

// assignment returns p.tok as an assignment if it has the form NAME=value
// or NAME+=value with NAME unquoted (a letter or '_', then letters,
// digits and '_').
func (p *parser) assignment() *Assign {
	w := p.tok.word
	eq := strings.IndexByte(w.Raw, '=')
	if eq <= 0 {
		return nil
	}
	name, appends := w.Raw[:eq], false
	if strings.HasSuffix(name, "+") {
		name, appends = name[:len(name)-1], true
	}
	if !IsName(name) {
		return nil
	}
	off := p.tok.off
	v := Word{Pos: p.lex.pos(off + eq + 1), Value: w.Value[eq+1:], Quoted: w.Quoted, Raw: w.Raw[eq+1:]}
	if w.syntax != nil {
		// Parse the value alone: the name is no part of what expands, and
		// a '~' right after '=' is a tilde to expand.
		if len(v.Raw) > 0 {
			sw, err := p.lex.parseWord(off+eq+1, off+len(w.Raw))
			if err == nil {
				v.syntax = sw
			}
		}
	} else if strings.HasPrefix(v.Raw, "~") {
		if sw, err := p.lex.parseWord(off+eq+1, off+len(w.Raw)); err == nil {
			v.syntax = sw
		}
	}
	return &Assign{Pos: w.Pos, Name: name, Value: v, Append: appends}
}

// IsName reports whether s is a variable name: a letter or '_', then
// letters, digits and '_'.
func IsName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// redirect = ( "<" | ">" | ">>" | "2>" | "2>>" ) word .
func (p *parser) redirect() (*Redir, *ParseError) {
	op, at := p.tok.op, p.tok.off
	p.advance()
	switch p.tok.kind {
	case tWord:
	case tError:
		return nil, p.tok.err
	default:
		return nil, p.errorf(at, "missing file name after `%s`", op)
	}
	r := &Redir{Pos: p.lex.pos(at), Op: op, Target: p.tok.word}
	p.advance()
	return r, nil
}
