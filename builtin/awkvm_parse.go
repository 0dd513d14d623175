package builtin

// The subset of awk the builtin's own interpreter (awkvm.go) takes, read
// from GoAWK's tokens (the program has already parsed as awk):
//
//   - rules: BEGIN, END, pattern { action }, pattern alone, { action }
//     (no range patterns, no functions);
//   - statements: expressions, print and printf (a format in one string
//     literal; %d %i %o %x %X %u %c %s %e %E %f %F %g %G; no redirection), if/else,
//     while, for, for (k in a), break, continue, next, exit, delete, and
//     FS = "C" (one byte, or " ") at the top of BEGIN;
//   - expressions: numbers, strings (common escapes), $N and $(expr),
//     variables, a[k] (one subscript), k in a, = and OP=, ++ and --, + -
//     * / % ^, unary - + !, comparisons, concatenation, && || ?:, and
//     ~ or !~ with a regular expression literal the fast forms take
//     (awkFastRegex); NR, FNR, NF, FILENAME, OFS and ORS; length, substr,
//     index, int, tolower, toupper, sprintf, split by FS or by a one-byte
//     string, and sub, gsub and match (RSTART, RLENGTH) on $0, a
//     variable or an element with a regular expression literal that
//     never matches the empty string.
//
// Fields and NF may be assigned ($0 is then made of the fields and OFS).
// Anything else, or anything read two ways by awks (!x == y, a ++b),
// gives no program and the command runs on GoAWK.

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/lexer"
)

// awkToken is a token of a program's text and its byte offset (-1 if
// the lexer's position is not in the text).
type awkToken struct {
	tok lexer.Token
	val string
	at  int
}

// awkBail stops compiling: the program is outside the subset.
type awkBail struct{}

type awkParser struct {
	src        string
	toks       []awkToken
	i          int
	prog       *awkProg
	vars       map[string]int
	arrays     map[string]int
	arrayNames map[string]bool
	utf8       bool
	loops      int
	inBegin    bool
	inEnd      bool
	recordRefs int // references to the line ($, NF, print, length)
}

// awkVMSpecial are the variables the subset reads or sets as awk's
// own; any other of awk's, or gawk's, sends the program to GoAWK.
var awkVMSpecial = map[string]bool{"NR": true, "FNR": true, "NF": true, "FILENAME": true, "OFS": true, "ORS": true}

// awkVMRefused are awk's special variables the subset leaves to GoAWK.
var awkVMRefused = map[string]bool{
	"FS": true, "RS": true, "OFMT": true, "CONVFMT": true, "SUBSEP": true,
	"ENVIRON": true, "ARGV": true, "ARGC": true,
}

// compileAwkVM compiles src for the builtin's interpreter, with the -F
// values fs and the -v pairs vars (FS among them), or returns nil when
// the program is outside the subset.
func compileAwkVM(src string, fs []string, vars []string, utf8 bool) (prog *awkProg) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(awkBail); !ok {
				panic(r)
			}
			prog = nil
		}
	}()
	toks, ok := awkLex(src)
	if !ok {
		return nil
	}
	p := &awkParser{src: src, toks: toks, vars: map[string]int{}, arrays: map[string]int{}, arrayNames: map[string]bool{}, utf8: utf8}
	p.prog = &awkProg{utf8: utf8, varNames: p.vars}
	p.prog.ofs = p.slot("OFS")
	p.prog.ors = p.slot("ORS")
	p.prog.rstart, p.prog.rlength = p.slot("RSTART"), p.slot("RLENGTH")
	for _, v := range fs {
		sep, ok := awkFastSep(v)
		if !ok {
			return nil
		}
		p.prog.sep = sep
	}
	for i := 0; i+1 < len(vars); i += 2 {
		name, value := vars[i], vars[i+1]
		switch {
		case name == "FS":
			// -F's value was read above; -v FS= is the value itself
			sep, ok := awkVMSep(value)
			if !ok {
				return nil
			}
			p.prog.sep = sep
		case name == "OFS" || name == "ORS" || !awkVMSpecial[name] && !awkVMRefused[name] && !awkGawkOnly[name] && awkIsName(name):
			p.slot(name)
			p.prog.vars = append(p.prog.vars, name, value)
		default:
			return nil
		}
	}
	for i, t := range toks {
		if t.tok == lexer.F_SPLIT {
			// split(s, NAME, ...): NAME after the first comma at depth 0
			depth := 0
			for j := i + 1; j+1 < len(toks); j++ {
				switch toks[j].tok {
				case lexer.LPAREN, lexer.LBRACKET:
					depth++
				case lexer.RPAREN, lexer.RBRACKET:
					depth--
				case lexer.COMMA:
					if depth == 1 && toks[j+1].tok == lexer.NAME {
						p.arrayNames[toks[j+1].val] = true
					}
				}
				if depth == 0 || toks[j].tok == lexer.COMMA && depth == 1 {
					break
				}
			}
		}
		if t.tok == lexer.NAME && i+1 < len(toks) && toks[i+1].tok == lexer.LBRACKET ||
			i > 0 && (toks[i-1].tok == lexer.IN || toks[i-1].tok == lexer.DELETE) && t.tok == lexer.NAME {
			p.arrayNames[t.val] = true
		}
	}
	for name := range p.arrayNames {
		if _, ok := p.vars[name]; ok || awkVMSpecial[name] {
			return nil // a -v variable, or OFS, used as an array
		}
	}
	p.program()
	p.prog.nvars, p.prog.narrays = len(p.vars), len(p.arrays)
	return p.prog
}

// awkIsName reports whether s is an awk variable name.
func awkIsName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// awkVMSep is the separator byte of an FS value, as awkFastSep but for
// the value itself.
func awkVMSep(v string) (byte, bool) {
	switch {
	case v == " ":
		return 0, true
	case len(v) == 1 && v[0] != '\\' && v[0] != 0:
		return v[0], true
	}
	return 0, false
}

// awkLex returns src's tokens, the last one EOF, a / read as division
// after an operand and as a regular expression elsewhere; a token whose
// position the lexer counted outside the text has offset -1.
func awkLex(src string) ([]awkToken, bool) {
	lineStart := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	var toks []awkToken
	l := lexer.NewLexer([]byte(src))
	var prev lexer.Token = lexer.NEWLINE
	for {
		pos, tok, val := l.Scan()
		if (tok == lexer.DIV || tok == lexer.DIV_ASSIGN) && !awkEndsOperand(prev) {
			pos, tok, val = l.ScanRegex()
		}
		if tok == lexer.ILLEGAL {
			return nil, false
		}
		at := -1
		if pos.Line >= 1 && pos.Line <= len(lineStart) {
			at = lineStart[pos.Line-1] + pos.Column - 1
		}
		toks = append(toks, awkToken{tok, val, at})
		if tok == lexer.EOF {
			return toks, true
		}
		prev = tok
	}
}

func (p *awkParser) bail()            { panic(awkBail{}) }
func (p *awkParser) tok() lexer.Token { return p.toks[p.i].tok }
func (p *awkParser) peek(n int) lexer.Token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n].tok
	}
	return lexer.EOF
}
func (p *awkParser) next() awkToken {
	t := p.toks[p.i]
	if t.tok != lexer.EOF {
		p.i++
	}
	return t
}
func (p *awkParser) expect(tok lexer.Token) awkToken {
	if p.tok() != tok {
		p.bail()
	}
	return p.next()
}
func (p *awkParser) newlines() {
	for p.tok() == lexer.NEWLINE {
		p.next()
	}
}

// slot is the variable name's slot.
func (p *awkParser) slot(name string) int {
	if s, ok := p.vars[name]; ok {
		return s
	}
	p.vars[name] = len(p.vars)
	return len(p.vars) - 1
}

// array is the array name's number.
func (p *awkParser) array(name string) int {
	if !p.arrayNames[name] || awkVMSpecial[name] || awkVMRefused[name] || awkGawkOnly[name] {
		p.bail()
	}
	if a, ok := p.arrays[name]; ok {
		return a
	}
	p.arrays[name] = len(p.arrays)
	return len(p.arrays) - 1
}

func (p *awkParser) program() {
	for {
		for p.tok() == lexer.NEWLINE || p.tok() == lexer.SEMICOLON {
			p.next()
		}
		switch p.tok() {
		case lexer.EOF:
			return
		case lexer.BEGIN:
			p.next()
			p.inBegin = true
			p.prog.begin = append(p.prog.begin, p.block(true)...)
			p.inBegin = false
		case lexer.END:
			p.next()
			p.inEnd = true
			refs := p.recordRefs
			p.prog.end = append(p.prog.end, p.block(false)...)
			p.prog.keepsRecord = p.prog.keepsRecord || p.recordRefs > refs
			p.inEnd = false
		case lexer.LBRACE:
			p.prog.rules = append(p.prog.rules, awkRule{body: p.block(false)})
		default:
			pattern := p.expr(true)
			if p.tok() == lexer.LBRACE {
				p.prog.rules = append(p.prog.rules, awkRule{pattern: pattern, body: p.block(false)})
				continue
			}
			switch p.tok() {
			case lexer.NEWLINE, lexer.SEMICOLON, lexer.EOF:
				p.recordRefs++
				p.prog.rules = append(p.prog.rules, awkRule{pattern: pattern})
			default:
				p.bail() // a range, or something unknown
			}
		}
	}
}

// block reads { statements }; top says it is BEGIN's, where FS may be
// set.
func (p *awkParser) block(top bool) []awkStmt {
	p.expect(lexer.LBRACE)
	stmts := []awkStmt{}
	for {
		for p.tok() == lexer.NEWLINE || p.tok() == lexer.SEMICOLON {
			p.next()
		}
		if p.tok() == lexer.RBRACE {
			p.next()
			return stmts
		}
		if top && p.tok() == lexer.NAME && p.toks[p.i].val == "FS" && p.peek(1) == lexer.ASSIGN && p.peek(2) == lexer.STRING {
			p.next()
			p.next()
			sep, ok := awkVMSep(p.str(p.next()))
			if !ok {
				p.bail()
			}
			p.prog.sep = sep
			p.end()
			continue
		}
		stmts = append(stmts, p.stmt())
	}
}

// end reads the end of a simple statement.
func (p *awkParser) end() {
	switch p.tok() {
	case lexer.SEMICOLON, lexer.NEWLINE:
		p.next()
	case lexer.RBRACE, lexer.EOF:
	default:
		p.bail()
	}
}

// body reads the statement of an if, else or loop.
func (p *awkParser) body() []awkStmt {
	p.newlines()
	if p.tok() == lexer.SEMICOLON {
		p.next()
		return nil
	}
	return []awkStmt{p.stmt()}
}

type awkBlockStmt struct{ stmts []awkStmt }

func (s *awkBlockStmt) exec(m *awkVM) awkFlow { return m.execAll(s.stmts) }

func (p *awkParser) stmt() awkStmt {
	switch p.tok() {
	case lexer.LBRACE:
		return &awkBlockStmt{p.block(false)}
	case lexer.IF:
		p.next()
		p.expect(lexer.LPAREN)
		s := &awkIfStmt{cond: p.expr(true)}
		p.expect(lexer.RPAREN)
		s.then = p.body()
		save := p.i
		for p.tok() == lexer.NEWLINE || p.tok() == lexer.SEMICOLON {
			p.next()
		}
		if p.tok() == lexer.ELSE {
			p.next()
			s.els_ = p.body()
		} else {
			p.i = save
		}
		return s
	case lexer.WHILE:
		p.next()
		p.expect(lexer.LPAREN)
		s := &awkLoopStmt{cond: p.expr(true)}
		p.expect(lexer.RPAREN)
		p.loops++
		s.body = p.body()
		p.loops--
		return s
	case lexer.FOR:
		p.next()
		p.expect(lexer.LPAREN)
		if p.tok() == lexer.NAME && p.peek(1) == lexer.IN && p.peek(2) == lexer.NAME && p.peek(3) == lexer.RPAREN {
			key := p.lvalue(p.name(p.next().val, false))
			p.next()
			s := &awkForInStmt{key: key, arr: p.array(p.next().val)}
			p.next()
			p.loops++
			s.body = p.body()
			p.loops--
			return s
		}
		s := &awkLoopStmt{}
		if p.tok() != lexer.SEMICOLON {
			s.init = &awkExprStmt{p.expr(true)}
		}
		p.expect(lexer.SEMICOLON)
		p.newlines()
		if p.tok() != lexer.SEMICOLON {
			s.cond = p.expr(true)
		}
		p.expect(lexer.SEMICOLON)
		p.newlines()
		if p.tok() != lexer.RPAREN {
			s.post = &awkExprStmt{p.expr(true)}
		}
		p.expect(lexer.RPAREN)
		p.loops++
		s.body = p.body()
		p.loops--
		return s
	case lexer.SEMICOLON:
		p.next()
		return &awkBlockStmt{}
	}
	s := p.simple()
	p.end()
	return s
}

// simple reads a statement that ends with ; or a newline.
func (p *awkParser) simple() awkStmt {
	switch p.tok() {
	case lexer.NEXT:
		if p.inBegin || p.inEnd {
			p.bail()
		}
		p.next()
		return &awkFlowStmt{awkFlowNext}
	case lexer.EXIT:
		p.next()
		s := &awkExitStmt{}
		switch p.tok() {
		case lexer.SEMICOLON, lexer.NEWLINE, lexer.RBRACE, lexer.EOF:
		default:
			s.code = p.expr(true)
		}
		return s
	case lexer.BREAK, lexer.CONTINUE:
		if p.loops == 0 {
			p.bail()
		}
		if p.next().tok == lexer.BREAK {
			return &awkFlowStmt{awkFlowBreak}
		}
		return &awkFlowStmt{awkFlowContinue}
	case lexer.DELETE:
		p.next()
		s := &awkDeleteStmt{arr: p.array(p.expect(lexer.NAME).val)}
		if p.tok() == lexer.LBRACKET {
			p.next()
			s.key = p.expr(true)
			p.expect(lexer.RBRACKET)
		}
		return s
	case lexer.PRINT, lexer.PRINTF:
		printf := p.next().tok == lexer.PRINTF
		var items []awkExpr
		switch p.tok() {
		case lexer.SEMICOLON, lexer.NEWLINE, lexer.RBRACE, lexer.EOF:
		default:
			items = p.printItems()
		}
		switch p.tok() {
		case lexer.SEMICOLON, lexer.NEWLINE, lexer.RBRACE, lexer.EOF:
		default:
			p.bail() // > file, >> file, | command
		}
		if !printf {
			if len(items) == 0 {
				p.recordRefs++
			}
			return &awkPrintStmt{items: items, elems: awkHasElem(items)}
		}
		if len(items) == 0 {
			p.bail()
		}
		f := p.format(items)
		return &awkPrintfStmt{f, items[1:]}
	}
	return &awkExprStmt{p.expr(true)}
}

// format is the format of a printf or sprintf whose arguments are args:
// a string literal the builtin knows every conversion of.
func (p *awkParser) format(args []awkExpr) *awkFormat {
	lit, ok := args[0].(*awkStrLit)
	if !ok {
		p.bail()
	}
	f, ok := newAwkFormat(lit.s, len(args)-1)
	if !ok {
		p.bail()
	}
	return f
}

// printItems reads print's expressions, in parentheses or not.
func (p *awkParser) printItems() []awkExpr {
	if p.tok() == lexer.LPAREN {
		save := p.i
		p.next()
		items := p.exprList(lexer.RPAREN)
		switch p.tok() {
		case lexer.SEMICOLON, lexer.NEWLINE, lexer.RBRACE, lexer.EOF:
			return items
		}
		p.i = save
	}
	items := []awkExpr{p.expr(false)}
	for p.tok() == lexer.COMMA {
		p.next()
		p.newlines()
		items = append(items, p.expr(false))
	}
	return items
}

// exprList reads expressions separated by commas up to close.
func (p *awkParser) exprList(close lexer.Token) []awkExpr {
	var list []awkExpr
	for {
		p.newlines()
		list = append(list, p.expr(true))
		p.newlines()
		if p.tok() == close {
			p.next()
			return list
		}
		p.expect(lexer.COMMA)
	}
}

// expr reads an expression; gt false stops before a > (print's
// redirection).
func (p *awkParser) expr(gt bool) awkExpr {
	lhs := p.ternary(gt)
	var op byte
	switch p.tok() {
	case lexer.ASSIGN:
	case lexer.ADD_ASSIGN:
		op = '+'
	case lexer.SUB_ASSIGN:
		op = '-'
	case lexer.MUL_ASSIGN:
		op = '*'
	case lexer.DIV_ASSIGN:
		op = '/'
	case lexer.MOD_ASSIGN:
		op = '%'
	case lexer.POW_ASSIGN:
		op = '^'
	default:
		return lhs
	}
	lv := p.lvalue(lhs)
	p.prog.stores = p.prog.stores || op == 0
	p.next()
	p.newlines()
	return &awkAssignExpr{lv, op, p.expr(gt)}
}

// lvalue is e, which must be a variable or an element.
func (p *awkParser) lvalue(e awkExpr) awkLvalue {
	switch lv := e.(type) {
	case *awkVarExpr:
		return lv
	case *awkElemExpr:
		return lv
	case *awkFieldExpr:
		return &awkFieldLvalue{lv}
	case *awkSpecial:
		if lv.name == "NF" {
			return &awkNFLvalue{*lv}
		}
	}
	p.bail()
	return nil
}

func (p *awkParser) ternary(gt bool) awkExpr {
	c := p.or(gt)
	if p.tok() != lexer.QUESTION {
		return c
	}
	p.next()
	p.newlines()
	a := p.ternary(gt)
	p.newlines()
	p.expect(lexer.COLON)
	p.newlines()
	return &awkCondExpr{c, a, p.ternary(gt)}
}

func (p *awkParser) or(gt bool) awkExpr {
	l := p.and(gt)
	for p.tok() == lexer.OR {
		p.next()
		p.newlines()
		l = &awkLogicExpr{false, l, p.and(gt)}
	}
	return l
}

func (p *awkParser) and(gt bool) awkExpr {
	l := p.in(gt)
	for p.tok() == lexer.AND {
		p.next()
		p.newlines()
		l = &awkLogicExpr{true, l, p.in(gt)}
	}
	return l
}

func (p *awkParser) in(gt bool) awkExpr {
	l := p.match(gt)
	for p.tok() == lexer.IN {
		p.next()
		l = &awkInExpr{l, p.array(p.expect(lexer.NAME).val)}
	}
	return l
}

func (p *awkParser) match(gt bool) awkExpr {
	l := p.comparison(gt)
	for p.tok() == lexer.MATCH || p.tok() == lexer.NOT_MATCH {
		not := p.next().tok == lexer.NOT_MATCH
		if p.tok() != lexer.REGEX {
			p.bail() // a regular expression built from a string
		}
		l = &awkMatchExpr{x: l, re: p.regex(p.next().val), not: not}
	}
	return l
}

// regex compiles a regular expression literal the fast forms take.
func (p *awkParser) regex(re string) grepMatcher {
	if !awkVMRegex.MatchString(re) {
		p.bail()
	}
	m, ok := awkFastRegex(re, p.utf8)
	if !ok {
		p.bail()
	}
	return m
}

// awkVMRegex is a regular expression literal's text (\/ already read as
// /) with a backslash only where grep -E and awk agree.
var awkVMRegex = regexp.MustCompile(`^(?:[^\\\n]|\\[.\[\](){}*+?^$|\\/])*$`)

func (p *awkParser) comparison(gt bool) awkExpr {
	l := p.concat(gt)
	var op string
	switch p.tok() {
	case lexer.LESS:
		op = "<"
	case lexer.LTE:
		op = "<="
	case lexer.EQUALS:
		op = "=="
	case lexer.NOT_EQUALS:
		op = "!="
	case lexer.GTE:
		op = ">="
	case lexer.GREATER:
		if !gt {
			return l
		}
		op = ">"
	default:
		return l
	}
	p.next()
	return &awkCompareExpr{op, l, p.concat(gt)}
}

func (p *awkParser) concat(gt bool) awkExpr {
	l := p.additive()
	for {
		switch p.tok() {
		case lexer.NUMBER, lexer.STRING, lexer.DOLLAR, lexer.NAME, lexer.LPAREN:
		default:
			if p.tok() < lexer.FIRST_FUNC || p.tok() > lexer.LAST_FUNC {
				return l
			}
		}
		l = &awkConcatExpr{l, p.additive()}
	}
}

func (p *awkParser) additive() awkExpr {
	l := p.mul()
	for p.tok() == lexer.ADD || p.tok() == lexer.SUB {
		op := byte('+')
		if p.next().tok == lexer.SUB {
			op = '-'
		}
		l = &awkArithExpr{op, l, p.mul()}
	}
	return l
}

func (p *awkParser) mul() awkExpr {
	l := p.unary()
	for {
		var op byte
		switch p.tok() {
		case lexer.MUL:
			op = '*'
		case lexer.DIV:
			op = '/'
		case lexer.MOD:
			op = '%'
		default:
			return l
		}
		p.next()
		r := p.unary()
		if lit, ok := r.(*awkNumLit); ok && lit.n == 0 && op != '*' {
			p.bail() // gawk's error before the run starts
		}
		l = &awkArithExpr{op, l, r}
	}
}

func (p *awkParser) unary() awkExpr {
	switch p.tok() {
	case lexer.SUB, lexer.ADD:
		op := byte('+')
		if p.next().tok == lexer.SUB {
			op = '-'
		}
		return &awkUnaryExpr{op, p.unary()}
	case lexer.NOT:
		p.next()
		x := p.unary()
		switch p.tok() {
		case lexer.LESS, lexer.LTE, lexer.EQUALS, lexer.NOT_EQUALS, lexer.GREATER, lexer.GTE,
			lexer.MATCH, lexer.NOT_MATCH, lexer.IN:
			p.bail() // awks group !x == y differently
		}
		return &awkUnaryExpr{'!', x}
	}
	return p.pow()
}

func (p *awkParser) pow() awkExpr {
	x := p.postfix()
	if p.tok() != lexer.POW {
		return x
	}
	p.next()
	var y awkExpr
	switch p.tok() {
	case lexer.SUB, lexer.ADD, lexer.NOT:
		y = p.unary()
	default:
		y = p.pow()
	}
	return &awkArithExpr{'^', x, y}
}

func (p *awkParser) postfix() awkExpr {
	x := p.primary()
	switch p.tok() {
	case lexer.INCR, lexer.DECR:
		delta := 1.0
		if p.next().tok == lexer.DECR {
			delta = -1
		}
		return &awkIncrExpr{p.lvalue(x), delta, true}
	}
	return x
}

// str is a string literal's value, if its escapes are ones every awk
// reads alike.
func (p *awkParser) str(t awkToken) string {
	if t.at < 0 || t.at >= len(p.src) || p.src[t.at] != '"' {
		p.bail()
	}
	for i := t.at + 1; i < len(p.src) && p.src[i] != '"'; i++ {
		if p.src[i] == '\\' {
			i++
			if i >= len(p.src) || strings.IndexByte(`ntrfvab\"/01234567`, p.src[i]) < 0 {
				p.bail()
			}
		}
	}
	return t.val
}

func (p *awkParser) primary() awkExpr {
	t := p.next()
	switch t.tok {
	case lexer.NUMBER:
		n, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			p.bail()
		}
		return &awkNumLit{n}
	case lexer.STRING:
		return &awkStrLit{p.str(t)}
	case lexer.REGEX:
		p.recordRefs++
		return &awkMatchExpr{re: p.regex(t.val)}
	case lexer.DOLLAR:
		p.recordRefs++
		if p.tok() == lexer.NUMBER {
			n, err := strconv.Atoi(p.next().val)
			if err != nil || n > 1<<20 {
				p.bail()
			}
			return &awkFieldExpr{n: n}
		}
		return &awkFieldExpr{x: p.primary()}
	case lexer.LPAREN:
		x := p.expr(true)
		p.expect(lexer.RPAREN)
		return x
	case lexer.INCR, lexer.DECR:
		delta := 1.0
		if t.tok == lexer.DECR {
			delta = -1
		}
		return &awkIncrExpr{p.lvalue(p.primary()), delta, false}
	case lexer.NAME:
		if p.tok() == lexer.LBRACKET {
			arr := p.array(t.val)
			p.next()
			key := p.expr(true)
			p.expect(lexer.RBRACKET)
			return &awkElemExpr{arr, key}
		}
		if p.tok() == lexer.LPAREN && p.toks[p.i].at == t.at+len(t.val) {
			p.bail() // a function of the program's
		}
		return p.name(t.val, true)
	case lexer.F_LENGTH:
		p.recordRefs++
		if p.tok() != lexer.LPAREN {
			return &awkLengthExpr{x: &awkFieldExpr{}, arr: -1}
		}
		p.next()
		if p.tok() == lexer.RPAREN {
			p.next()
			return &awkLengthExpr{x: &awkFieldExpr{}, arr: -1}
		}
		if p.tok() == lexer.NAME && p.peek(1) == lexer.RPAREN && p.arrayNames[p.toks[p.i].val] {
			arr := p.array(p.next().val)
			p.next()
			return &awkLengthExpr{arr: arr}
		}
		x := p.expr(true)
		p.expect(lexer.RPAREN)
		return &awkLengthExpr{x: x, arr: -1}
	case lexer.F_SUB, lexer.F_GSUB:
		// sub(/re/, repl[, target]) with target $0, a variable or an
		// element; re one that never matches the empty string.
		p.expect(lexer.LPAREN)
		p.newlines()
		if p.tok() != lexer.REGEX {
			p.bail()
		}
		e := &awkSubExpr{re: p.regex(p.next().val), global: t.tok == lexer.F_GSUB}
		if e.re.match(nil) {
			p.bail() // gsub's empty matches are GoAWK's
		}
		p.expect(lexer.COMMA)
		p.newlines()
		e.repl = p.expr(true)
		p.newlines()
		if p.tok() == lexer.COMMA {
			p.next()
			p.newlines()
			switch target := p.expr(true).(type) {
			case *awkFieldExpr:
				if target.n != 0 || target.x != nil {
					e.target = &awkFieldLvalue{target}
				}
			default:
				e.target = p.lvalue(target)
			}
		}
		p.newlines()
		p.expect(lexer.RPAREN)
		p.recordRefs++
		return e
	case lexer.F_MATCH:
		// match(s, /re/): RSTART and RLENGTH; re one that never matches
		// the empty string
		p.expect(lexer.LPAREN)
		p.newlines()
		e := &awkMatchFunc{s: p.expr(true)}
		p.expect(lexer.COMMA)
		p.newlines()
		if p.tok() != lexer.REGEX {
			p.bail()
		}
		if e.re = p.regex(p.next().val); e.re.match(nil) {
			p.bail()
		}
		p.newlines()
		p.expect(lexer.RPAREN)
		return e
	case lexer.F_SPLIT:
		// split(s, a), split(s, a, "C") and split(s, a, ""): FS's
		// splitting, one byte's, or into characters; a regular
		// expression is GoAWK's.
		p.expect(lexer.LPAREN)
		p.newlines()
		e := &awkSplitExpr{s: p.expr(true), sep: -1}
		p.expect(lexer.COMMA)
		p.newlines()
		e.arr = p.array(p.expect(lexer.NAME).val)
		if p.tok() == lexer.COMMA {
			p.next()
			p.newlines()
			switch v := p.str(p.expect(lexer.STRING)); v {
			case "":
				e.sep = awkSplitChars
			default:
				sep, ok := awkVMSep(v)
				if !ok || sep >= 0x80 {
					p.bail()
				}
				e.sep = int(sep)
			}
		}
		p.newlines()
		p.expect(lexer.RPAREN)
		return e
	case lexer.F_SUBSTR, lexer.F_INDEX, lexer.F_INT, lexer.F_TOLOWER, lexer.F_TOUPPER, lexer.F_SPRINTF:
		p.expect(lexer.LPAREN)
		args := p.exprList(lexer.RPAREN)
		switch {
		case t.tok == lexer.F_SUBSTR && (len(args) == 2 || len(args) == 3):
			s := &awkSubstrExpr{s: args[0], start: args[1]}
			if len(args) == 3 {
				s.n = args[2]
			}
			return s
		case t.tok == lexer.F_INDEX && len(args) == 2:
			return &awkIndexExpr{args[0], args[1]}
		case t.tok == lexer.F_INT && len(args) == 1:
			return &awkIntExpr{args[0]}
		case (t.tok == lexer.F_TOLOWER || t.tok == lexer.F_TOUPPER) && len(args) == 1:
			return &awkCaseExpr{t.tok == lexer.F_TOUPPER, args[0]}
		case t.tok == lexer.F_SPRINTF:
			return &awkSprintfExpr{p.format(args), args[1:]}
		}
	}
	p.bail()
	return nil
}

// name is the variable name as an expression; scalar false for a loop's
// key, which the subset only lets be a plain variable.
func (p *awkParser) name(name string, scalar bool) awkExpr {
	switch {
	case p.arrayNames[name] || awkVMRefused[name] || awkGawkOnly[name]:
		p.bail()
	case name == "NR" || name == "FNR" || name == "NF" || name == "FILENAME":
		if !scalar {
			p.bail()
		}
		if name == "NF" {
			p.recordRefs++
		}
		return &awkSpecial{name}
	}
	return &awkVarExpr{p.slot(name)}
}
