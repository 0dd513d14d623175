package shell_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/shell"
)

// testEnv is the environment of the table tests that set env.
var testEnv = map[string]string{
	"HOME":  "/home/u",
	"SP":    " a  b ",
	"EMPTY": "",
	"BLANK": " \t ",
	"TAB":   "x\ty",
	"NL":    "l1\nl2",
	"Q":     `'"|;$HOME\`,
	"ONE":   "1",
	"EDGE":  "@e",
	"é":     "accent",
	"1":     "first",
}

func testGetenv(name string) string { return testEnv[name] }

// show prints a Script compactly: pipelines joined by " ; ", commands by
// " | ", a command's words and then its redirections. A Quoted word is
// printed as a Go string literal, an unquoted one as it is, so `"a"` and
// `a` print differently; a named edge is printed in angle brackets.
func show(s *shell.Script) string {
	var b strings.Builder
	for i, st := range s.Stmts {
		if i > 0 {
			b.WriteString(" ; ")
		}
		for n, pl := range st.Pipelines {
			if n > 0 {
				b.WriteString(" " + st.Ops[n-1].String() + " ")
			}
			showPipeline(&b, pl)
		}
	}
	return b.String()
}

// showPipeline prints one pipeline for show: '!' when Negated, and a
// command's assignments as NAME=value before its words.
func showPipeline(b *strings.Builder, pl *shell.Pipeline) {
	if pl.Negated {
		b.WriteString("! ")
	}
	for j, c := range pl.Cmds {
		if j > 0 {
			b.WriteString(" | ")
		}
		var ws []string
		for _, a := range c.Assigns {
			ws = append(ws, a.Name+"="+showWord(a.Value))
		}
		for _, w := range c.Args {
			ws = append(ws, showWord(w))
		}
		b.WriteString(strings.Join(ws, " "))
		for _, r := range c.Redirs {
			b.WriteString(" " + r.Op.String() + showWord(r.Target))
		}
	}
}

func showWord(w shell.Word) string {
	switch {
	case w.Quoted:
		return strconv.Quote(w.Value)
	case w.Edge:
		return "<" + w.Value + ">"
	}
	return w.Value
}

// showPos prints every node with its position: P for a pipeline, C for a
// command, then words as value@pos and redirections as op@pos=target@pos.
func showPos(s *shell.Script) string {
	var parts []string
	for _, pl := range s.Pipelines {
		parts = append(parts, "P"+pl.Pos.String())
		for _, c := range pl.Cmds {
			parts = append(parts, "C"+c.Pos.String())
			for _, w := range c.Args {
				parts = append(parts, showWord(w)+"@"+w.Pos.String())
			}
			for _, r := range c.Redirs {
				parts = append(parts, r.Op.String()+"@"+r.Pos.String()+"="+showWord(r.Target)+"@"+r.Target.Pos.String())
			}
		}
	}
	return strings.Join(parts, " ")
}

type parseTest struct {
	name string
	in   string
	env  bool   // expand with testEnv; else Getenv is nil
	want string // show of the Script; ignored when err is set
	err  string // the whole Error() text
	inc  bool   // the error is Incomplete
}

// Tiny builders for the error rows.
func fails(name, in, err string) parseTest { return parseTest{name: name, in: in, err: err} }
func needsMore(name, in, err string) parseTest {
	return parseTest{name: name, in: in, err: err, inc: true}
}
func ok(name, in, want string) parseTest { return parseTest{name: name, in: in, want: want} }
func okEnv(name, in, want string) parseTest {
	return parseTest{name: name, in: in, want: want, env: true}
}
func failsEnv(name, in, err string) parseTest {
	return parseTest{name: name, in: in, err: err, env: true}
}

const substHint = " (tpipe runs no command to make a word)"

var parseTests = []parseTest{
	// Nothing to run.
	ok("empty", "", ""),
	ok("blanks", " \t\r\n\n  ", ""),
	ok("comment only", "# nothing here", ""),
	ok("comments and blank lines", "\n# a\n\n   # b\n", ""),
	ok("trailing semicolon", "a;", "a"),
	ok("semicolon then newline", "a ;\n\nb", "a ; b"),

	// Words and quoting.
	ok("one word", "cat", "cat"),
	ok("headline", `cat app.log | grep -i error | cut -d" " -f3 | sort | uniq -c`,
		`cat app.log | grep -i error | cut "-d " -f3 | sort | uniq -c`),
	ok("parts join", `a"b c"'d'`, `"ab cd"`),
	ok("blanks between words", "a \t b\r\n", "a b"),
	ok("empty quotes are words", `a '' "" b`, `a "" "" b`),
	ok("single quotes keep backslash", `'a\b' '\'`, `"a\\b" "\\"`),
	ok("single quotes keep dollar and double quote", `'$HOME "x"'`, `"$HOME \"x\""`),
	ok("double quote escapes", `"\" \\ \$ \`+"`"+`"`, "\"\\\" \\\\ $ `\""),
	ok("double quotes keep other backslashes", `"\a\n\t\'"`, `"\\a\\n\\t\\'"`),
	ok("backslash escapes anything outside quotes", `\a\ b\|\;\#\'\"\\`, `"a b|;#'\"\\"`),
	ok("escaped t and n stay letters", `\t\n`, `"tn"`),
	ok("operators inside quotes", `echo '|;&<>()' "|;&<>()#"`, `echo "|;&<>()" "|;&<>()#"`),
	ok("newline inside quotes", "echo 'a\nb' \"c\nd\"", `echo "a\nb" "c\nd"`),
	ok("a bang after a name is a word", "a ! x '{' }", `a ! x "{" }`),
	fails("compound commands are refused", "a; { b; }", "1:4: `{` begins one of bash's compound commands (if, for, while, case, { }, [[ ]]), which tpipe does not have: it runs pipelines, one after another, with && and || between them"),
	fails("if", "if true; then a; fi", "1:1: `if` begins one of bash's compound commands (if, for, while, case, { }, [[ ]]), which tpipe does not have: it runs pipelines, one after another, with && and || between them"),
	ok("globs and tilde wait for expansion", "A=b ls *.go ~/x [ab]", "A=b ls *.go ~/x [ab]"),
	ok("an assignment after the name is a word", "make X=1 'Y'=2", `make X=1 "Y=2"`),
	ok("dollar is plain without Getenv", "echo $HOME ${HOME} $", "echo $HOME ${HOME} $"),
	ok("dollar in double quotes is plain without Getenv", `echo "$HOME"`, `echo "$HOME"`),
	ok("utf-8", "grep é 世界", "grep é 世界"),
	ok("NUL byte is a word byte", "a\x00b", "a\x00b"),

	// Line continuation.
	ok("continuation between words", "a \\\nb", "a b"),
	ok("continuation inside a word", "a\\\nb", "ab"),
	ok("continuation inside double quotes", "\"a\\\nb\"", `"ab"`),
	ok("no continuation inside single quotes", "'a\\\nb'", `"a\\\nb"`),
	ok("continuation before a comment", "a \\\n# c\nb", "a ; b"),
	ok("continuation then a blank line", "a \\\n\nb", "a ; b"),

	// Comments.
	ok("comment after words", "a b # c d", "a b"),
	ok("hash inside a word", "a#b c#", "a#b c#"),
	ok("hash after a quote is inside the word", `"a"#b`, `"a#b"`),
	ok("escaped and quoted hash", `\#a '#b' "#c"`, `"#a" "#b" "#c"`),
	ok("comment hides operators", "a # | b; c && d", "a"),
	ok("comment right after an operator", "a|# c\nb", "a | b"),
	ok("comment ends at newline", "a # c\nb", "a ; b"),
	ok("backslash in comment does not continue it", "a # c \\\nb", "a ; b"),

	// Pipelines and lists.
	ok("pipe", "a|b", "a | b"),
	ok("pipe then newline", "a |\n b", "a | b"),
	ok("pipe then blank lines and comments", "a |\n\n  # c\n\n b | c", "a | b | c"),
	ok("newline separates", "a\nb | c\n\nd", "a ; b | c ; d"),
	ok("semicolon separates", "a;b | c ; d", "a ; b | c ; d"),
	ok("crlf", "a | b\r\nc\r\n", "a | b ; c"),

	// Redirections.
	ok("brief example", `cat <in | grep "a b" >>out ; wc`, `cat <in | grep "a b" >>out ; wc`),
	ok("out with and without blank", "a >x > y", "a >x >y"),
	ok("all operators", "a <i >o >>p 2>e 2>>f", "a <i >o >>p 2>e 2>>f"),
	ok("2> with blank", "a 2> e", "a 2>e"),
	ok("redirect first", ">out a b", "a b >out"),
	ok("redirect between words", "a <in b", "a b <in"),
	ok("redirect glued to words", "a<in>out b", "a b <in >out"),
	ok("a2> is a word and >", "a2>x", "a2 >x"),
	ok("2 > is a word and >", "a 2 > x", "a 2 >x"),
	ok("quoted 2 is a word", `a "2">x '2'>y \2>z`, `a "2" "2" "2" >x >y >z`),
	ok("22 then blank is a word", "a 22 >x", "a 22 >x"),
	ok("2 before a word", "a 2x", "a 2x"),
	ok("quoted target", `a > "my file" 2>'e r'`, `a >"my file" 2>"e r"`),
	ok("redirect in every command", "<i a | b >o", "a <i | b >o"),
	ok("target ends at an operator", "a >x|b", "a >x | b"),
	ok("continuation inside 2>", "a 2\\\n>e", "a 2>e"),

	// Expansion.
	okEnv("expand", `echo $HOME ${HOME}/x`, "echo /home/u /home/u/x"),
	okEnv("expand in double quotes", `echo "$HOME" "${HOME}x"`, `echo "/home/u" "/home/ux"`),
	okEnv("no expansion in single quotes", `echo '$HOME'`, `echo "$HOME"`),
	okEnv("escaped dollar", `echo \$HOME "\$HOME"`, `echo "$HOME" "$HOME"`),
	okEnv("unquoted value is split", `echo $SP`, "echo a b"),
	okEnv("split joins with neighbours", `echo x$SP"y" x$TAB"y"`, `echo "x" "a" "b" "y" "xx" "yy"`),
	okEnv("quoted value is not split", `echo "$SP"`, `echo " a  b "`),
	okEnv("tab and newline split", `echo $TAB $NL`, "echo x y l1 l2"),
	okEnv("empty expansion is no word", `echo $EMPTY x$EMPTY`, "echo x"),
	okEnv("blank expansion is no word", `echo $BLANK`, "echo"),
	okEnv("empty quoted expansion is a word", `echo "$EMPTY" ''$EMPTY`, `echo "" ""`),
	okEnv("expansion is never syntax", `echo $Q`, `echo '"|;$HOME\`),
	okEnv("unset is empty", `echo a$NOPE`, "echo a"),
	okEnv("lone dollars", `echo $ $/ a$ "$" "$/"`, `echo $ $/ a$ "$" "$/"`),
	okEnv("name stops at a non-name byte", `echo $HOME.x $HOME-`, "echo /home/u.x /home/u-"),
	okEnv("a non-ASCII letter is no name, as in bash", `echo $é $1`, "echo $é"),
	okEnv("empty command name is skipped", `$EMPTY echo`, "echo"),
	okEnv("expanded 2 is not a descriptor", `echo $ONE>x`, "echo 1 >x"),
	okEnv("expanded target", `echo >$HOME/o`, "echo >/home/u/o"),
	okEnv("dollar quote inside double quotes", `echo "$'x'" "a$"`, `echo "$'x'" "a$"`),

	// Named edges: an unquoted @name, as an operand or a redirect target.
	ok("edges", "seq 3 | tee @a @b_2 >@out; cat <@a @b_2", "seq 3 | tee <@a> <@b_2> ><@out> ; cat <@b_2> <<@a>"),
	ok("quoted at is a file", `cat '@a' "@b" \@c`, `cat "@a" "@b" "@c"`),
	ok("not edge names", "cat @ @1x @a.txt a@b @a-b", "cat @ @1x @a.txt a@b @a-b"),
	okEnv("no expansion makes an edge", "X=1; cat $EDGE", "X=1 ; cat @e"),

	// Errors: quoting and the end of the input.
	needsMore("unterminated single quote", "a 'b c", "1:3: unterminated single quote"),
	needsMore("unterminated double quote", `a "b c`, "1:3: unterminated double quote"),
	needsMore("double quote ends in a backslash", `a "b\`, "1:3: unterminated double quote"),
	needsMore("unterminated quote on a later line", "a\nb 'c\nd", "2:3: unterminated single quote"),
	needsMore("trailing backslash", `a \`, "1:3: backslash at end of input"),
	needsMore("trailing backslash in a word", `ab\`, "1:3: backslash at end of input"),
	needsMore("trailing pipe", "a |", "1:3: missing command after `|`"),
	needsMore("pipe then newline at the end", "a |\n\n", "1:3: missing command after `|`"),
	needsMore("pipe then comment at the end", "a | # c", "1:3: missing command after `|`"),

	// Errors: structure.
	fails("pipe at the start", "| a", "1:1: missing command before `|`"),
	fails("pipe at the start of a line", "a\n| b", "2:1: missing command before `|`"),
	fails("two pipes", "cat x | | wc", "1:9: missing command after `|`"),
	ok("or", "a || b", "a || b"),
	ok("and, or and not", "! a | b && c || ! d; e", "! a | b && c || ! d ; e"),
	ok("newlines after && and ||", "a &&\n\n b ||\n c", "a && b || c"),
	needsMore("&& at the end", "a &&", "1:3: missing command after `&&`"),
	fails("&& at the start", "&& a", "1:1: missing command before `&&`"),
	fails("&& after ;", "a; || b", "1:4: missing command before `||`"),
	ok("two bangs", "! ! a; ! ! ! b", "a ; ! b"),
	ok("append", "X+=a Y=b c", `X=a Y=b c`),
	ok("a quoted bang is a word", "'!' a; \\! b; a !", `"!" a ; "!" b ; a !`),
	fails("pipe then semicolon", "a | ; b", "1:5: missing command after `|`"),
	fails("semicolon at the start", "; a", "1:1: empty command before `;`"),
	fails("double semicolon", "a ;; b", "1:4: empty command before `;`"),
	fails("semicolon alone on a line", "a;\n;", "2:1: empty command before `;`"),
	fails("only redirects", ">out", "1:1: missing command"),
	fails("only redirects after a pipe", "a | <in >out", "1:5: missing command"),
	fails("missing target at end", "a >", "1:3: missing file name after `>`"),
	fails("missing target before newline", "a 2>>\nb", "1:3: missing file name after `2>>`"),
	fails("missing target before pipe", "a > | b", "1:3: missing file name after `>`"),
	fails("redirect target is an operator", "a < >x", "1:3: missing file name after `<`"),
	fails("comment where the target goes", "a >#x", "1:3: missing file name after `>`"),

	// Errors: shell syntax tpipe does not have.
	ok("and", "a && b", "a && b"),
	fails("background", "a & b", "1:3: `&` is not supported (tpipe has no background jobs; quote it to use it as text)"),
	fails("background at the end", "a&", "1:2: `&` is not supported (tpipe has no background jobs; quote it to use it as text)"),
	fails("subshell", "(a)", "1:1: `(` is not supported (tpipe has no subshells or grouping; quote it to use it as text)"),
	fails("close paren", "a )", "1:3: `)` is not supported (tpipe has no subshells or grouping; quote it to use it as text)"),
	fails("paren inside a word", "a(b", "1:2: `(` is not supported (tpipe has no subshells or grouping; quote it to use it as text)"),
	fails("process substitution in", "comm -12 <(sort a) b", "1:10: `<(` (process substitution) is not supported (send the command's output to a named edge and read the edge instead: CMD > @a; ... @a)"),
	fails("process substitution out", "tee >(wc -l)", "1:5: `>(` (process substitution) is not supported (read the edge a command writes instead: ... > @a; CMD @a)"),
	fails("backquote", "echo `date`", "1:6: backquote (command substitution) is not supported"),
	fails("backquote in double quotes", "echo \"`date`\"", "1:7: backquote (command substitution) is not supported"),
	fails("command substitution", "echo $(date)", "1:6: `$(` (command substitution) is not supported"+substHint),
	fails("command substitution in double quotes", `echo "x$(date)"`, "1:8: `$(` (command substitution) is not supported"+substHint),
	okEnv("arithmetic", "echo $((1+2)) $(( (ONE+1)*3 ))", "echo 3 6"),
	okEnv("ansi-c quoting", `cut -d$'\t' $'a\'b'`, "cut \"-d\\t\" \"a'b\""),
	okEnv("locale quoting", `echo $"x"`, `echo "x"`),
	fails("here-document", "cat <<EOF", "1:5: `<<` (here-document) is not supported"),
	fails("here-string", "cat <<<x", "1:5: `<<<` (here-string) is not supported"),
	fails("2>&1", "a 2>&1", "1:3: `2>&1` is not supported (tpipe keeps standard output and standard error apart; send each to a file with > and 2>)"),
	fails(">&2", "a >&2", "1:3: `>&2` is not supported (tpipe keeps standard output and standard error apart; send each to a file with > and 2>)"),
	fails(">>&", "a >>&-", "1:3: `>>&-` is not supported (tpipe keeps standard output and standard error apart; send each to a file with > and 2>)"),
	fails("&>", "a &>x", "1:3: `&>` is not supported (redirect each stream on its own with > FILE and 2> FILE)"),
	fails("|&", "a |& b", "1:3: `|&` is not supported (redirect standard error with 2> FILE)"),
	fails(">|", "a >|x", "1:3: `>|` is not supported"),
	fails("2>|", "a 2>|x", "1:3: `2>|` is not supported"),
	fails("<>", "a <>x", "1:3: `<>` is not supported"),
	fails("<&", "a <&3", "1:3: `<&` is not supported"),
	fails("descriptor 1", "a 1>x", "1:3: `1>` is not supported (2> and 2>> are the only redirections that take a descriptor number)"),
	fails("descriptor 3", "a 3>>x", "1:3: `3>` is not supported (2> and 2>> are the only redirections that take a descriptor number)"),
	fails("descriptor 0", "a 0<x", "1:3: `0<` is not supported (2> and 2>> are the only redirections that take a descriptor number)"),
	fails("descriptor 2 for input", "a 2<x", "1:3: `2<` is not supported (2> and 2>> are the only redirections that take a descriptor number)"),
	fails("error on a later line", "a\nb | c\n  x & y", "3:5: `&` is not supported (tpipe has no background jobs; quote it to use it as text)"),
	fails("first error wins", "a 'b' & c 'd", "1:7: `&` is not supported (tpipe has no background jobs; quote it to use it as text)"),

	// Errors: expansion.
	{name: "unterminated ${", in: "echo ${HOME", env: true, err: "1:6: unterminated `${`", inc: true},
	okEnv("default values", "echo ${HOME:-x} ${NOPE:-x} ${EMPTY-y} ${#HOME} ${HOME#/home/}", "echo /home/u x y 7 u"),
	fails("empty ${}", "echo ${}", "1:6: `${}`: bad substitution"),
	fails("bad substitution in double quotes", `echo "${ x}"`, "1:7: `${ x}`: bad substitution"),
	failsEnv("target splits", "echo >$SP", "1:7: $SP: ambiguous redirect (the file name expands to 2 words)"),
	failsEnv("target vanishes", "echo >$EMPTY", "1:7: $EMPTY: ambiguous redirect (the file name expands to 0 words)"),
	okEnv("command vanishes", "$EMPTY $BLANK", ""),
	fails("assignment with a redirection", "A=1 <in", "1:5: redirection without a command: only assignments before it"),
	okEnv("quoted empty target is one word", `echo >"$EMPTY"`, `echo >""`),

	// Fixed bugs: inputs that once parsed wrongly, kept so they stay fixed.

	// A backslash-newline at the very end parsed as complete, so an
	// interactive caller that appends "\n" to each line ran "a \" at once
	// instead of asking for the next line.
	needsMore("continuation at the end", "a \\\n", "1:3: line continuation at end of input"),
	needsMore("continuation at the end of a word", "ab\\\n", "1:3: line continuation at end of input"),
	needsMore("continuation at the end of double quotes", "a \"b\\\n", "1:3: unterminated double quote"),

	// A line continuation ended an operator or a name, where a POSIX shell
	// removes it first (found by comparing with bash): >\<newline>> was
	// "missing file name after >" and $HO\<newline>ME expanded $HO.
	ok("continuation inside >>", "a >\\\n>x 2>\\\n\\\n>y", "a >>x 2>>y"),
	ok("continuation inside ||", "a |\\\n| b", "a || b"),
	ok("continuation inside &&", "a &\\\n& b", "a && b"),
	fails("continuation inside 2>&1", "a 2>\\\n&1", "1:3: `2>&1` is not supported (tpipe keeps standard output and standard error apart; send each to a file with > and 2>)"),
	fails("continuation inside >|", "a >\\\n|x", "1:3: `>|` is not supported"),
	fails("continuation inside <<", "a <\\\n<EOF", "1:3: `<<` (here-document) is not supported"),
	fails("continuation inside <<<", "a <<\\\n<x", "1:3: `<<<` (here-string) is not supported"),
	fails("continuation inside $(", "echo $\\\n(date)", "1:6: `$(` (command substitution) is not supported"+substHint),
	okEnv("continuation inside names", "echo $\\\nHOME $HO\\\nME ${HO\\\nME\\\n} \"$HO\\\nME\"", `echo /home/u /home/u /home/u "/home/u"`),
	okEnv("continuation after a name", "echo $HOME\\\n.x $HOME\\\nx $HOME\\\n y", "echo /home/u.x /home/u y"),
	ok("continuation after a lone dollar", "echo $\\\n x", "echo $ x"),
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			var opts shell.Options
			if tt.env {
				opts.Getenv = testGetenv
			}
			s, err := shell.Parse(tt.in, opts)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("Parse(%q): unexpected error %v", tt.in, err)
				}
				if got := show(s); got != tt.want {
					t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want error %q", tt.in, show(s), tt.err)
			}
			var (
				perr *shell.ParseError
				eerr *shell.ExpandError
			)
			if tt.env && errors.As(err, &eerr) {
				perr = &shell.ParseError{Pos: eerr.Pos, Msg: eerr.Msg}
			} else if !errors.As(err, &perr) {
				t.Fatalf("Parse(%q): error %T is not a *ParseError", tt.in, err)
			}
			if s != nil {
				t.Errorf("Parse(%q): non-nil Script with an error", tt.in)
			}
			if err.Error() != tt.err {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, err, tt.err)
			}
			if perr.Incomplete != tt.inc {
				t.Errorf("Parse(%q): Incomplete = %v, want %v", tt.in, perr.Incomplete, tt.inc)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cat", "P1:1 C1:1 cat@1:1"},
		{"  a  b", "P1:3 C1:3 a@1:3 b@1:6"},
		{"a\n  b ; c", "P1:1 C1:1 a@1:1 P2:3 C2:3 b@2:3 P2:7 C2:7 c@2:7"},
		{
			"cat <in |\n  grep \"a b\" >>out ; wc\n\n# note\nsort 2>err\\\n  -r",
			"P1:1 C1:1 cat@1:1 <@1:5=in@1:6 C2:3 grep@2:3 \"a b\"@2:8 >>@2:14=out@2:16 " +
				"P2:22 C2:22 wc@2:22 P5:1 C5:1 sort@5:1 -r@6:3 2>@5:6=err@5:8",
		},
		{">o a", "P1:1 C1:1 a@1:4 >@1:1=o@1:2"},
		{"a 2> \\\n e", "P1:1 C1:1 a@1:1 2>@1:3=e@2:2"},
		{"x\\\ny z", "P1:1 C1:1 xy@1:1 z@2:3"},
		{"'a\nb' c", "P1:1 C1:1 \"a\\nb\"@1:1 c@2:4"},
		{"é | ü", "P1:1 C1:1 é@1:1 C1:6 ü@1:6"},
		{"\r\n\ta\r\n", "P2:2 C2:2 a@2:2"},
	}
	for _, tt := range tests {
		s, err := shell.Parse(tt.in, shell.Options{})
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := showPos(s); got != tt.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestPositionsOfExpansions(t *testing.T) {
	// Every field of a word is placed at the word.
	s, err := shell.Parse("echo x$SP\n  $SP'q' $TAB", shell.Options{Getenv: testGetenv})
	if err != nil {
		t.Fatal(err)
	}
	want := "P1:1 C1:1 echo@1:1 x@1:6 a@1:6 b@1:6 P2:3 C2:3 \"a\"@2:3 \"b\"@2:3 \"q\"@2:3 x@2:10 y@2:10"
	if got := showPos(s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCaret(t *testing.T) {
	tests := []struct{ src, want string }{
		{"cat x | | wc", "cat x | | wc\n        ^"},
		{"a\n\tb & c\r\nd", "\tb & c\n\t  ^"},
		{"é & b", "é & b\n  ^"},
		{"a |", "a |\n  ^"},
		// Fixed: control bytes reached the terminal raw.
		{"\x1b[2J & b", `\x1b[2J & b` + "\n        ^"},
	}
	for _, tt := range tests {
		_, err := shell.Parse(tt.src, shell.Options{})
		var perr *shell.ParseError
		if !errors.As(err, &perr) {
			t.Fatalf("Parse(%q): error %v, want a *ParseError", tt.src, err)
		}
		if got := perr.Caret(tt.src); got != tt.want {
			t.Errorf("Caret(%q)\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
	// A position outside the text must not panic.
	for _, p := range []shell.Pos{{}, {Line: 9, Col: 9}, {Line: 1, Col: 99}} {
		e := &shell.ParseError{Pos: p, Msg: "x"}
		_ = e.Caret("ab\ncd")
	}
}

func TestStrings(t *testing.T) {
	ops := map[shell.RedirOp]string{
		shell.RedirIn: "<", shell.RedirOut: ">", shell.RedirAppend: ">>",
		shell.RedirErr: "2>", shell.RedirErrAppend: "2>>", 0: "RedirOp(0)",
	}
	for op, want := range ops {
		if got := op.String(); got != want {
			t.Errorf("RedirOp(%d).String() = %q, want %q", int(op), got, want)
		}
	}
	if got := (shell.Pos{Line: 3, Col: 7}).String(); got != "3:7" {
		t.Errorf("Pos.String() = %q", got)
	}
	e := &shell.ParseError{Pos: shell.Pos{Line: 1, Col: 6}, Msg: "unterminated single quote"}
	if got := e.Error(); got != "1:6: unterminated single quote" {
		t.Errorf("Error() = %q", got)
	}
}
