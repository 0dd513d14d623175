// Package shell parses tpipe's command language, the part of the POSIX
// shell that describes pipelines:
//
//	cat app.log | grep -i error | cut -d" " -f3 | sort | uniq -c >counts
//
// Parse turns the text into a Script, an AST with a position on every
// node. It only parses: it opens no files and runs nothing.
//
// # Grammar
//
// In the EBNF of the Go spec. The lexer hands the parser the tokens
// newline, "|", ";", the redirection operators and word; blanks, comments
// and backslash-newline line continuations lie between tokens.
//
//	script   = { newline | pipeline ( ";" | newline | EOF ) } EOF .
//	pipeline = command { "|" { newline } command } .
//	command  = ( word | redirect ) { word | redirect } .  // a word after expansion
//	redirect = ( "<" | ">" | ">>" | "2>" | "2>>" ) word .
//
// Blank lines are allowed anywhere, and a ';' may end a line, but an
// empty command is an error (";;", "| |", a line that begins with ';').
// A newline right after '|' continues the pipeline.
//
// # Words
//
// Words follow the rules of github.com/mattn/go-shellwords, which are the
// POSIX quoting rules without globbing or tilde expansion:
//
//	word    = part { part } .  // parts join: a"b c"'d' is the word "ab cd"
//	part    = plain | "\\" byte | "'" { byte } "'" | `"` { dbyte } `"` | param .
//	param   = "$" name | "${" name "}" .
//
// Single quotes keep everything literally. Inside double quotes a
// backslash escapes only '"', '\\', '$', '`' and newline and is kept
// before any other byte. Outside quotes a backslash escapes any byte.
// Where go-shellwords strays from POSIX, tpipe keeps to POSIX: shellwords
// drops a backslash before any byte inside double quotes ("\a" is a, here
// \a), and reads \t and \n as tab and newline (here t and n).
//
// A backslash-newline outside single quotes is removed before anything
// else, as in a POSIX shell, so it may even split an operator or a name:
// ">\<newline>>" is ">>". A '#' where a word could begin starts a comment
// that runs to the end of the line; inside a word it is plain.
//
// With Options.Getenv set, $NAME and ${NAME} are replaced by the variable's
// value outside single quotes. Outside double quotes the value is then
// split into fields on blanks and newlines, so one word of the source can
// become several Words or none. Without Getenv, '$' is a plain byte, but
// $( $' and $" are still errors (see below).
//
// # Named edges
//
// An unquoted word of the form @name (a letter or '_', then letters,
// digits and '_') is a named edge of the graph, an in-memory queue between
// commands, wherever a file name may stand: after < > >>, and as an
// operand. Word.Edge marks it. Quoted, '@a' is an ordinary word.
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
// position rather than being taken as words: && || & ( ) |& backquotes,
// $( $(( $' $", here-documents (<< <<<), descriptor duplication (2>&1,
// >&2), &> >| <> <& and descriptor numbers other than the 2 of 2> and 2>>
// (1>x, 3>x, 0<x). Everything else the shell knows but tpipe does not, such
// as globs, ~, assignments (A=b cmd) and reserved words (if, for, {), is a
// plain word.
package shell

// Options changes how Parse reads the text. The zero Options is valid:
// no expansion.
type Options struct {
	// Getenv, if set, expands $NAME and ${NAME} outside single quotes
	// (as go-shellwords does with ParseEnv). Parse calls it once for each
	// expansion, in source order, from the calling goroutine. If nil, '$'
	// is an ordinary character.
	Getenv func(string) string
}

// Parse parses src and returns its pipelines. The error, if any, is a
// *ParseError, and the Script is then nil. The Script is the caller's to
// keep and change; Parse keeps no reference to it, to src or to opts. It
// is safe to call Parse from several goroutines at once if opts.Getenv is.
func Parse(src string, opts Options) (*Script, error) {
	p := &parser{lex: newLexer(src, opts.Getenv)}
	p.advance()
	s, err := p.script()
	if err != nil {
		return nil, err // not a typed nil: err is non-nil here
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

// script = { newline | pipeline ( ";" | newline | EOF ) } EOF .
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
		case tPipe:
			return nil, p.errorf(p.tok.off, "missing command before `|`")
		case tError:
			return nil, p.tok.err
		}
		pl, err := p.pipeline()
		if err != nil {
			return nil, err
		}
		s.Pipelines = append(s.Pipelines, pl)
		// pipeline stops only at ';', newline, EOF or an error; the first
		// two end the statement, the others are seen by the loop.
		if p.tok.kind == tSemi || p.tok.kind == tNewline {
			p.advance()
		}
	}
}

// pipeline = command { "|" { newline } command } .
//
// The caller has seen that p.tok begins a command.
func (p *parser) pipeline() (*Pipeline, *ParseError) {
	c, err := p.command()
	if err != nil {
		return nil, err
	}
	pl := &Pipeline{Pos: c.Pos, Cmds: []*Cmd{c}}
	for p.tok.kind == tPipe {
		pipe := p.tok.off
		p.advance()
		for p.tok.kind == tNewline {
			p.advance()
		}
		switch p.tok.kind {
		case tWord, tRedir:
		case tError:
			return nil, p.tok.err
		case tEOF:
			err := p.errorf(pipe, "missing command after `|`")
			err.Incomplete = true
			return nil, err
		default:
			return nil, p.errorf(p.tok.off, "missing command after `|`")
		}
		c, err := p.command()
		if err != nil {
			return nil, err
		}
		pl.Cmds = append(pl.Cmds, c)
	}
	return pl, nil
}

// command = { word | redirect } .
//
// The caller has seen that p.tok is a word or a redirection. After
// expansion the command must have at least one word, its name.
func (p *parser) command() (*Cmd, *ParseError) {
	start := p.tok.off
	c := &Cmd{Pos: p.lex.pos(start)}
	firstWord := -1 // offset of the first word in the source, if any
	for {
		switch p.tok.kind {
		case tWord:
			if firstWord < 0 {
				firstWord = p.tok.off
			}
			c.Args = append(c.Args, p.tok.fields...)
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
			case firstWord >= 0:
				return nil, p.errorf(firstWord, "missing command: its words expand to nothing")
			}
			return nil, p.errorf(start, "missing command")
		}
	}
}

// redirect = ( "<" | ">" | ">>" | "2>" | "2>>" ) word .
//
// The file name must come out of expansion as exactly one word.
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
	if n := len(p.tok.fields); n != 1 {
		return nil, p.errorf(p.tok.off, "ambiguous redirect: the file name expands to %d words", n)
	}
	r := &Redir{Pos: p.lex.pos(at), Op: op, Target: p.tok.fields[0]}
	p.advance()
	return r, nil
}
