package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/lexer"
	"github.com/benhoyt/goawk/parser"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "awk",
		Usage: "awk [-F FS] [-v VAR=VALUE]... ['PROGRAM' | -f FILE | -e 'PROGRAM']... [FILE | VAR=VALUE]...",
		Help: "The AWK language, in process (GoAWK, a POSIX awk in Go): records from the " +
			"input or the FILEs, output to the next command. -F sets the field separator, -v " +
			"a variable before BEGIN, -f reads the program from a file, -e (gawk's) takes a piece of it; " +
			"gawk's and, or, xor, lshift and rshift are there. What GoAWK does not " +
			"do as GNU awk does (gawk's functions and variables such as gensub, strftime, " +
			"IGNORECASE, FPAT; rand, whose numbers differ; gawk's options) runs the system's awk. " +
			"for (k in a) takes its keys in a fixed order: integers ascending, then the rest in byte order. " +
			"The one-liners {print $N, ...} (fields, NR, NF and strings, side by side too), {n++} END {print n}, {s += $N} END {print s}, " +
			"{c[$N]++} END {for (k in c) print k, c[k]} and {s[$N] += $M} END {...} ($NF too), each alone or after one condition " +
			"($N == 404 or any comparison with a constant, NR > 1, NR % 2 == 0, NF, /RE/, !/RE/, $N ~ /RE/, $N !~ /RE/; " +
			"a condition alone prints the line), and END {print NR}, with the default or a one-byte -F " +
			"(or BEGIN {FS = \"C\"}), run without the interpreter, as gawk would.",
		New: awkNew,
	})
}

// awkCmd is a parsed awk command line. The program is parsed once; each
// run has its own interpreter.
type awkCmd struct {
	env  *Env
	prog *parser.Program
	// ordered is prog written over for GoAWK to run it as gawk would
	// (awkRewrite), run with an awkKeys' functions; nil if it needs none.
	ordered *parser.Program
	vars    []string // name, value pairs: -F and -v
	args    []string // FILE and VAR=VALUE operands
	// bytes: -b (--characters-as-bytes), gawk's bytes for characters
	// whatever the locale.
	bytes bool
	// keepsRS: the program leaves RS alone, so the builtin may keep the
	// '\r's GoAWK's line scanner drops (awkcr.go).
	keepsRS bool
	// getlineFiles: the program may read files by getline.
	getlineFiles bool
}

var awkLongs = []longOpt{
	{name: "field-separator", short: 'F', hasArg: true},
	{name: "assign", short: 'v', hasArg: true},
	{name: "file", short: 'f', hasArg: true},
	{name: "source", short: 'e', hasArg: true},
	{name: "characters-as-bytes", short: 'b'},
}

// awkGawkOnly are names that mean something to GNU awk alone: functions
// GoAWK lacks would fail to parse anyway, but these variables (and the
// patterns BEGINFILE and ENDFILE) would parse and silently do nothing. INPUTMODE and OUTPUTMODE are GoAWK's own, and
// plain variables to gawk.
var awkGawkOnly = map[string]bool{
	"IGNORECASE": true, "FIELDWIDTHS": true, "FPAT": true, "RT": true, "PROCINFO": true,
	"BINMODE": true, "LINT": true, "TEXTDOMAIN": true, "ERRNO": true, "ARGIND": true,
	"SYMTAB": true, "FUNCTAB": true, "INPUTMODE": true, "OUTPUTMODE": true,
	"BEGINFILE": true, "ENDFILE": true,
	// gawk's functions: GoAWK has none of them and would say "undefined
	// function", which reads like a typo.
	"gensub": true, "strftime": true, "systime": true, "mktime": true, "asort": true, "asorti": true,
	"patsplit": true, "isarray": true, "typeof": true, "strtonum": true, "compl": true,
	"bindtextdomain": true, "dcgettext": true, "dcngettext": true, "mkbool": true,
}

// awkGoRegexLacks finds in a program's text what gawk's regular
// expressions have and Go's do not: word starts and ends, \< and \>, and
// an interval without its lower bound.
var awkGoRegexLacks = regexp.MustCompile(`\\[<>]|\{,`)

// awkIntFormat is a printf conversion that takes an integer: as OFMT or
// CONVFMT, GoAWK hands it a float and writes Go's complaint
// (%!d(float64=1.5)) where gawk writes the integer.
var awkIntFormat = regexp.MustCompile(`%[-+ #0-9.*]*[diouxXc]`)

func awkNew(env *Env, args []string) (*Cmd, error) {
	a := &awkCmd{env: env}
	var sources, fs []string
	fromFile, assigns := false, false
	operands, err := getopt{cmd: "awk", shorts: "F:v:f:e:b", longs: awkLongs, inOrder: true}.parse(args, func(c byte, arg string) error {
		switch c {
		case 'b':
			a.bytes = true
		case 'F':
			v := awkUnescape(arg)
			if arg == `\` {
				v = arg // gawk's -F keeps a lone backslash (-v FS= would drop it)
			}
			a.vars = append(a.vars, "FS", v)
			fs = append(fs, arg)
		case 'v':
			assigns = true
			name, value, ok := strings.Cut(arg, "=")
			if !ok {
				return unsupportedf("awk", "-v %s", arg)
			}
			a.vars = append(a.vars, name, awkUnescape(value))
		case 'f':
			if arg == "-" {
				// The program on stdin: here stdin is the input port,
				// records that arrive once the run starts.
				return unsupportedf("awk", "-f - (the program on stdin)")
			}
			rc, err := env.open(arg)
			if err != nil {
				return &UsageError{Cmd: "awk", Msg: fmt.Sprintf("fatal: can't open source file `%s' for reading: %s", arg, errText(err)), Status: 2}
			}
			defer rc.Close()
			var b strings.Builder
			if _, err := io.Copy(&b, rc); err != nil {
				return &UsageError{Cmd: "awk", Msg: fmt.Sprintf("%s: %s", arg, errText(err)), Status: 2}
			}
			sources = append(sources, b.String())
			fromFile = true
		case 'e':
			// gawk's program text as an option, in turn with -f's.
			sources = append(sources, arg)
			fromFile = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !fromFile {
		if len(operands) == 0 {
			return nil, unsupportedf("awk", "without a program")
		}
		sources = append(sources, operands[0])
		operands = operands[1:]
	}
	src, spelled := awkSpellFunction(strings.Join(sources, "\n"))
	utf8 := awkUTF8Locale(env.Environ) && !a.bytes
	what := awkNeedsGawk(src, a.vars, utf8)
	bytesOnly := what == awkSplitsBytes // the own interpreter may run it
	if what != "" && !bytesOnly {
		return nil, unsupportedf("awk", "%s", what)
	}
	a.prog, err = parser.ParseProgram([]byte(src), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})})
	if err == nil {
		// gawk's hex and octal constants, for everything below; errors
		// are the text's as written.
		if fixed, ok := awkRewriteNumbers(src); ok {
			if prog, err := parser.ParseProgram([]byte(fixed), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})}); err == nil {
				src, a.prog = fixed, prog
			}
		}
	}
	if pe := (*parser.ParseError)(nil); errors.As(err, &pe) && spelled != nil {
		pe.Position.Column = awkSpelledPosition(src, spelled, pe.Position.Line, pe.Position.Column)
	}
	if err != nil {
		// A syntax error, or gawk's syntax (BEGINFILE, gensub, @include):
		// the system's awk says which.
		return nil, &UnsupportedError{Cmd: "awk", What: "awk with a program GoAWK cannot parse",
			Usage: &UsageError{Cmd: "awk", Msg: strings.ReplaceAll(err.Error(), "\n", " "), Status: 1}} // gawk's status for a syntax error
	}
	if awkRunsCommands(a.prog) {
		// GoAWK gives a command the interpreter's stdin and stdout, which
		// here are the task's ports, as readers and writers: os/exec then
		// copies them on goroutines of its own, which read ahead of awk
		// (a command that never reads its input still swallows up to a
		// pipe's worth of awk's) and write beside awk's own output. The
		// system's awk shares its real descriptors with the command.
		return nil, unsupportedf("awk", "running a command (| getline, print |, system)")
	}
	if f := newAwkFast(a.prog, fs, utf8); f != nil && !assigns && !slices.ContainsFunc(operands, awkIsAssignment) {
		// The group form keeps every value it has seen.
		unbounded := f.group != nil
		if len(operands) == 0 {
			rec := f.perRecord()
			return &Cmd{ReadsInput: true, Rec: rec, Fn: rec.Func(), Unbounded: unbounded}, nil
		}
		if reads, err := env.edgeOperands("awk", operands); err == nil {
			return &Cmd{ReadsInput: readsInput(operands), Reads: reads, Fn: f.files(env, operands), Unbounded: unbounded}, nil
		}
	}
	if !slices.ContainsFunc(operands, awkIsAssignment) {
		if prog := compileAwkVM(src, fs, a.vars, utf8); prog != nil {
			reads := len(prog.rules) > 0 || len(prog.end) > 0
			// Arrays keep what they are given, and a variable set to a
			// string may grow with the input ({s = s $0}).
			unbounded := prog.narrays > 0 || prog.stores
			if len(operands) == 0 {
				return &Cmd{ReadsInput: reads, Fn: prog.run(env, nil), Unbounded: unbounded}, nil
			}
			if edges, err := env.edgeOperands("awk", operands); err == nil {
				if !reads {
					operands, edges = nil, nil
				}
				return &Cmd{ReadsInput: reads && readsInput(operands), Reads: edges, Fn: prog.run(env, operands), Unbounded: unbounded}, nil
			}
		}
	}
	if bytesOnly {
		return nil, unsupportedf("awk", "%s", what)
	}
	a.args = make([]string, len(operands))
	for i, o := range operands {
		a.args[i] = o
		if awkIsAssignment(o) {
			// GoAWK reads the escapes of a VAR=VALUE operand its own way
			// (a lone \ at the end stays): give it gawk's value, with
			// each backslash doubled for GoAWK to undo.
			name, value, _ := strings.Cut(o, "=")
			a.args[i] = name + "=" + strings.ReplaceAll(awkUnescape(value), `\`, `\\`)
		}
	}
	a.keepsRS = !awkMentionsRS(src, a.vars, operands)
	a.getlineFiles = strings.Contains(src, "getline") && strings.Contains(src, "<")
	if awkGoRegexLacks.MatchString(src) {
		// The fast forms read these as gawk does (grep's matcher); Go's
		// regexp, which GoAWK uses, has no \< or \> and reads {,N} as
		// text.
		return nil, unsupportedf("awk", "a regular expression with \\<, \\> or {,N}")
	}
	if src, ok := awkRewrite(src, utf8); ok {
		// A program that does not parse once rewritten (which would be
		// a fault of the rewriting) runs as it was written.
		a.ordered, _ = parser.ParseProgram([]byte(src), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})})
	}
	var names []string
	for _, o := range operands {
		if !awkIsAssignment(o) {
			names = append(names, o)
		}
	}
	if anyEdge(env, names) {
		// GoAWK opens its files by name; an edge is a port.
		return nil, unsupportedf("awk", "reading a named edge")
	}
	if elsewhere(env) && (len(names) > 0 || awkTouchesFiles(src)) {
		// GoAWK opens files and runs commands in the process's directory.
		return nil, unsupportedf("awk", "with files in another directory")
	}
	// GoAWK keeps what the program stores, arrays and strings, unbudgeted.
	return &Cmd{ReadsInput: readsInput(names), Fn: a.run, Effects: awkWritesFiles(a.prog), Unbounded: true}, nil
}

// awkSplitsBytes is what awkNeedsGawk says of a program that splits
// into characters where they are bytes (the C locale, or -b): GoAWK splits
// UTF-8 characters. The builtin's own interpreter splits bytes there.
const awkSplitsBytes = "splitting into characters outside a UTF-8 locale, or with -b (GoAWK splits UTF-8 characters, gawk bytes)"

// awkNeedsGawk names what in the program src, run with the variables
// vars (name, value pairs of -F and -v), GoAWK would run differently from
// GNU awk, or returns "". utf8 says the locale's characters are UTF-8.
func awkNeedsGawk(src string, vars []string, utf8 bool) string {
	const chars = awkSplitsBytes
	for i := 0; i+1 < len(vars); i += 2 {
		if vars[i] == "FS" && vars[i+1] == "" && !utf8 {
			return chars
		}
		if (vars[i] == "OFMT" || vars[i] == "CONVFMT") && awkIntFormat.MatchString(vars[i+1]) {
			return vars[i] + " as an integer format"
		}
	}
	l := lexer.NewLexer([]byte(src))
	var last [3]lexer.Token // the tokens before this one, latest first
	var vals [3]string      // and their values
	// Inside split( at depth splits[i], having passed commas[i] commas.
	depth := 0
	var splits, commas []int
	for {
		_, tok, val := l.Scan()
		switch tok {
		case lexer.EOF, lexer.ILLEGAL:
			return ""
		case lexer.LPAREN:
			depth++
			if last[0] == lexer.F_SPLIT {
				splits, commas = append(splits, depth), append(commas, 0)
			}
		case lexer.RPAREN:
			n := len(splits)
			if n > 0 && splits[n-1] == depth {
				// split(s, a, ""): the third argument the empty string.
				if commas[n-1] == 2 && last[0] == lexer.STRING && vals[0] == "" && last[1] == lexer.COMMA && !utf8 {
					return chars
				}
				splits, commas = splits[:n-1], commas[:n-1]
			}
			depth--
		case lexer.COMMA:
			if n := len(splits); n > 0 && splits[n-1] == depth {
				commas[n-1]++
			}
		case lexer.F_RAND:
			return "rand() (GoAWK's numbers differ from gawk's)"
		case lexer.NAME:
			// A regex is scanned as if it were division and words: a
			// name in one only makes a false alarm, and the system's
			// awk runs.
			if awkGawkOnly[val] {
				return val
			}
		case lexer.AT:
			// gawk's @include, @load, @namespace and @f() calls; GoAWK
			// reads @ as its own field-name operator.
			return "@ (gawk's directives and indirect calls)"
		case lexer.NUMBER:
			// $-1 or $(-1): gawk stops with a fatal error, GoAWK takes
			// the last field.
			if last[0] == lexer.SUB && (last[1] == lexer.DOLLAR || last[1] == lexer.LPAREN && last[2] == lexer.DOLLAR) {
				return "a negative field number"
			}
		case lexer.STRING:
			if val == "" && last[0] == lexer.ASSIGN && last[1] == lexer.NAME && vals[1] == "FS" && !utf8 {
				return chars
			}
			if last[0] == lexer.ASSIGN && last[1] == lexer.NAME && (vals[1] == "OFMT" || vals[1] == "CONVFMT") && awkIntFormat.MatchString(val) {
				return vals[1] + " as an integer format"
			}
		}
		last[0], last[1], last[2] = tok, last[0], last[1]
		vals[0], vals[1], vals[2] = val, vals[0], vals[1]
	}
}

// awkRunsCommands reports whether the program may run a command: a pipe
// from one (getline), to one (print, printf) or system(). It reads
// GoAWK's disassembly of the compiled program rather than the source,
// where a | in a regex or a string would look the same as a pipe.
func awkRunsCommands(prog *parser.Program) bool {
	return awkAnyOp(prog, func(op string, args []string) bool {
		switch {
		case op == "CallBuiltin" && len(args) > 0 && args[0] == "BuiltinSystem":
			return true
		case strings.HasPrefix(op, "Print") || strings.HasPrefix(op, "Getline"):
			// "Print 0 |", "Printf 2 |", "Getline |", "GetlineGlobal | d".
			return slices.Contains(args, "|")
		}
		return false
	})
}

// awkWritesFiles reports whether the program may write a file (print or
// printf with > or >>), from the disassembly as awkRunsCommands.
func awkWritesFiles(prog *parser.Program) bool {
	return awkAnyOp(prog, func(op string, args []string) bool {
		return strings.HasPrefix(op, "Print") && (slices.Contains(args, ">") || slices.Contains(args, ">>"))
	})
}

// awkAnyOp reports whether is holds for some instruction of GoAWK's
// disassembly of prog (its opcode and the words after it), or true when
// the disassembly cannot be had: what the program may do is then unknown.
func awkAnyOp(prog *parser.Program, is func(op string, args []string) bool) bool {
	var b strings.Builder
	if err := prog.Disassemble(&b); err != nil {
		return true
	}
	for line := range strings.Lines(b.String()) {
		if f := strings.Fields(line); len(f) >= 2 && is(f[1], f[2:]) {
			return true
		}
	}
	return false
}

// awkTouchesFiles reports whether the program may open a file or run a
// command: getline, a redirection, a pipe, system or close.
func awkTouchesFiles(src string) bool {
	return strings.Contains(src, "getline") || strings.ContainsAny(src, ">|") ||
		strings.Contains(src, "system") || strings.Contains(src, "close")
}

// elsewhere reports whether the runner resolves file names somewhere
// other than the process's working directory.
func elsewhere(env *Env) bool {
	if env == nil || env.Dir == "" {
		return false
	}
	wd, err := os.Getwd()
	if err != nil {
		return true
	}
	dir, err := filepath.Abs(env.Dir)
	return err != nil || filepath.Clean(dir) != filepath.Clean(wd)
}

func anyEdge(env *Env, names []string) bool {
	for _, n := range names {
		if env.isEdge(n) {
			return true
		}
	}
	return false
}

// awkIsAssignment reports whether an operand is VAR=VALUE, which awk
// runs as an assignment when it comes to it rather than as a file.
func awkIsAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" || !(name[0] == '_' || 'a' <= name[0]|0x20 && name[0]|0x20 <= 'z') {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// run interprets the program with the input port as stdin and the output
// port as stdout. GoAWK's messages go to Env.Stderr; a program's exit
// status is the command's.
func (a *awkCmd) run(ctx context.Context, p *buffer.Ports) error {
	out := &textWriter{out: p.Out(0)}
	cfg := &interp.Config{
		Output:       out,
		Error:        a.env.stderr(),
		Argv0:        "awk",
		Args:         a.args,
		Vars:         a.vars,
		ShellCommand: []string{"/bin/sh", "-c"},
	}
	if a.env.Environ != nil {
		cfg.Environ = []string{}
		for _, kv := range a.env.Environ {
			if k, v, ok := strings.Cut(kv, "="); ok {
				cfg.Environ = append(cfg.Environ, k, v)
			}
		}
	}
	// length, substr, index, match and printf %c count characters in a
	// UTF-8 locale and bytes in any other, as gawk does.
	cfg.Chars = awkUTF8Locale(a.env.Environ) && !a.bytes
	in := &awkInput{}
	if p.NumIn() > 0 {
		in.r = record.NewReader(p.In(0), record.Lines)
	} else {
		in.r = strings.NewReader("")
	}
	cfg.Stdin = in
	if a.keepsRS {
		if awkFilesHoldCR(a.args, a.getlineFiles) {
			cfg.Vars = append(slices.Clip(cfg.Vars), "RS", awkRegexRS)
		} else {
			cfg.Stdin = newAwkCRReader(in)
		}
	}
	prog := a.prog
	if a.ordered != nil {
		prog = a.ordered
	}
	cfg.Funcs = awkFuncs(&awkKeys{})
	it, err := interp.New(prog)
	if err != nil {
		return err
	}
	status, err := it.ExecuteContext(ctx, cfg)
	switch {
	case out.err != nil:
		// The next command stopped reading, or the run is being
		// stopped: the port's error says which.
		return out.err
	case in.err != nil:
		return in.err
	case ctx.Err() != nil:
		// GoAWK says only "canceled"; the scheduler's cause says why.
		return context.Cause(ctx)
	}
	if err != nil {
		fmt.Fprintf(a.env.stderr(), "awk: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return task.Exit(2)
	}
	if status != 0 {
		return task.Exit(status)
	}
	return nil
}

// awkUnescape reads the escapes of a -v or -F value as gawk 5.2 reads
// them there (GoAWK reads none): \n and the other C letters, \\, \/ and
// \", one to three octal digits, \x and one or two hex digits; before any
// other character the backslash goes, and so does a backslash at the end.
func awkUnescape(v string) string {
	i := strings.IndexByte(v, '\\')
	if i < 0 {
		return v
	}
	b := []byte(v[:i])
	for i < len(v) {
		c := v[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		i++
		if i == len(v) {
			break
		}
		c = v[i]
		i++
		switch {
		case strings.IndexByte("abfnrtv", c) >= 0:
			b = append(b, "\a\b\f\n\r\t\v"[strings.IndexByte("abfnrtv", c)])
		case '0' <= c && c <= '7':
			n := int(c - '0')
			for k := 0; k < 2 && i < len(v) && '0' <= v[i] && v[i] <= '7'; k++ {
				n = n*8 + int(v[i]-'0')
				i++
			}
			b = append(b, byte(n))
		case c == 'x' && i < len(v) && isHexDigit(v[i]):
			n := 0
			for k := 0; k < 2 && i < len(v) && isHexDigit(v[i]); k++ {
				n = n*16 + hexValue(v[i])
				i++
			}
			b = append(b, byte(n))
		default:
			b = append(b, c) // \\, \/, \", and any other: the character
		}
	}
	return string(b)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func hexValue(c byte) int {
	if c <= '9' {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}

// awkFuncs are the Go functions a program may call: gawk's bit
// functions, and those of a rewritten program (awkRewrite) with keys as
// their state. Parsing and running take the same names.
func awkFuncs(keys *awkKeys) map[string]any {
	funcs := keys.funcs()
	for name, f := range awkBitFuncs {
		funcs[name] = f
	}
	return funcs
}

// awkUTF8Locale reports whether the locale of environ (the process's
// when nil) has UTF-8 characters: the first of LC_ALL, LC_CTYPE and LANG
// that is set names it.
func awkUTF8Locale(environ []string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := environValue(environ, k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// awkInput is the input port as GoAWK reads it, keeping the port's
// first error (other than the end), which GoAWK would word as its own.
type awkInput struct {
	r   io.Reader
	err error
}

func (r *awkInput) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}
