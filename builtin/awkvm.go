package builtin

// The builtin's own awk, for the programs people write most that the fast
// forms (awkfast.go) do not take: a few rules with conditions, sums and
// counts, averages, arrays, if and loops, print and printf. It exists for
// two reasons. GoAWK reads a string as a number its own way ("informed"
// is inf to it, "0x1A" 26, where gawk reads 0) and that reader is out of
// the builtin's reach; and GoAWK splits every field of every line into
// new strings, which made `{s += $10; n++} END {print s/n}` 1.6 times
// slower than gawk. Here values follow gawk's rules (awkNumber reads
// numbers as gawk reads input; a field that looks like a number compares
// as one), fields are split into offsets of the line with no copy, and
// the program is compiled once into a tree of Go values.
//
// It takes a subset of awk (awkvm_parse.go says which); a program with
// anything else (functions, getline, redirection, a regular expression
// built from a string, RS, OFMT, a field assigned) runs on GoAWK as
// before. A fatal error (division by zero) stops the run as gawk's does:
// its message, status 2.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

// awkKind is the type of an awk value.
type awkKind uint8

const (
	awkUninit awkKind = iota // never set: "" and 0
	awkNum
	awkStr
	awkStrNum // from input: a number where it looks like one
)

// awkVal is an awk value. A borrowed string points into the current line
// and is copied before it is kept (own).
type awkVal struct {
	k        awkKind
	borrowed bool
	n        float64
	s        string
}

func awkNumVal(n float64) awkVal { return awkVal{k: awkNum, n: n} }

// own returns v with a string of its own.
func (v awkVal) own() awkVal {
	if v.borrowed {
		v.s, v.borrowed = strings.Clone(v.s), false
	}
	return v
}

// awkBytes is s's bytes, shared.
func awkBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// num is v as a number.
func (v awkVal) num() float64 {
	switch v.k {
	case awkNum:
		return v.n
	case awkStr, awkStrNum:
		return awkNumber(awkBytes(v.s))
	}
	return 0
}

// str is v as a string: a number as gawk converts one (an integer in
// full, else CONVFMT's %.6g).
func (v awkVal) str() string {
	if v.k == awkNum {
		if v.n == math.Trunc(v.n) && math.Abs(v.n) < 1e15 {
			return strconv.FormatInt(int64(v.n), 10)
		}
		return string(awkFormatNumber(nil, v.n))
	}
	return v.s
}

// appendTo appends v as print writes it (OFMT being CONVFMT here).
func (v awkVal) appendTo(b []byte) []byte {
	if v.k == awkNum {
		return awkFormatNumber(b, v.n)
	}
	return append(b, v.s...)
}

// numeric reports whether v compares as a number.
func (v awkVal) numeric() bool {
	switch v.k {
	case awkNum, awkUninit:
		return true
	case awkStrNum:
		_, ok := awkNumeric(awkBytes(v.s))
		return ok
	}
	return false
}

// truth is v as a condition.
func (v awkVal) truth() bool {
	switch v.k {
	case awkNum:
		return v.n != 0
	case awkStr:
		return v.s != ""
	case awkStrNum:
		if n, ok := awkNumeric(awkBytes(v.s)); ok {
			return n != 0
		}
		return v.s != ""
	}
	return false
}

// awkCompareVals orders a and b as gawk does: as numbers when both are
// numeric, else as strings (bytes).
func awkCompareVals(a, b awkVal) int {
	if x, ok := a.asNumber(); ok {
		if y, ok := b.asNumber(); ok {
			return compareFloat(x, y)
		}
	}
	return strings.Compare(a.cmpStr(), b.cmpStr())
}

// asNumber is v's number and whether v compares as one, read once.
func (v awkVal) asNumber() (float64, bool) {
	switch v.k {
	case awkNum, awkUninit:
		return v.n, true
	case awkStrNum:
		return awkNumeric(awkBytes(v.s))
	}
	return 0, false
}

// cmpStr is v as a comparison with a string takes it: gawk 5.2 compares
// an infinite or NaN number as the empty string (print writes +inf).
func (v awkVal) cmpStr() string {
	if v.k == awkNum && (math.IsInf(v.n, 0) || math.IsNaN(v.n)) {
		return ""
	}
	return v.str()
}

// awkFlow is how a statement ends.
type awkFlow uint8

const (
	awkFlowNormal awkFlow = iota
	awkFlowNext
	awkFlowExit
	awkFlowBreak
	awkFlowContinue
)

// awkFatal stops a run with gawk's fatal message.
type awkFatal struct{ msg string }

// awkExpr is a compiled expression: its value, or its value as a number
// (cheaper where the expression is numeric or a field).
type awkExpr interface {
	val(m *awkVM) awkVal
	num(m *awkVM) float64
}

// awkStmt is a compiled statement.
type awkStmt interface {
	exec(m *awkVM) awkFlow
}

// awkRule is a pattern and its action (nil: print the line).
type awkRule struct {
	pattern awkExpr
	body    []awkStmt
}

// awkProg is a compiled program.
type awkProg struct {
	begin, end  []awkStmt
	rules       []awkRule
	sep         byte // 0: runs of blanks
	nvars       int
	narrays     int
	ofs, ors    int // the slots of OFS and ORS
	rstart      int // and of RSTART and RLENGTH
	rlength     int
	varNames    map[string]int
	keepsRecord bool // END reads $0, a field or NF: the last line is kept
	stores      bool // a variable is set to a value that may be a string
	utf8        bool
	vars        []string // -v pairs
}

// awkVM is one run of a program.
type awkVM struct {
	prog     *awkProg
	vars     []awkVal
	arrays   []*awkArray
	line     []byte
	lineBuf  []byte
	fields   []int32 // start, end pairs of the line's fields
	split    bool    // fields holds every field
	subbed   bool    // sub, gsub or a field assigned changed $0: a string
	fmode    bool    // a field was assigned: fvals holds the fields
	fvals    []awkVal
	fieldRef int    // the field a field lvalue's ref took
	fieldTmp awkVal // and its value, stored back by store
	at       int    // where splitting stopped
	nr, fnr  float64
	filename string
	out      []byte    // output not yet ended by a newline
	stack    []awkVal  // print's and printf's values
	matches  [][2]int  // sub's scratch
	refs     []*awkVal // print's and printf's elements
	emit     task.Emit
	exitCode int
}

func newAwkVM(prog *awkProg) *awkVM {
	m := &awkVM{prog: prog, vars: make([]awkVal, prog.nvars), arrays: make([]*awkArray, prog.narrays)}
	for i := range m.arrays {
		m.arrays[i] = newAwkArray()
	}
	m.vars[prog.ofs] = awkVal{k: awkStr, s: " "}
	m.vars[prog.ors] = awkVal{k: awkStr, s: "\n"}
	m.vars[prog.rstart], m.vars[prog.rlength] = awkNumVal(0), awkNumVal(0)
	for i := 0; i+1 < len(prog.vars); i += 2 {
		if slot, ok := prog.varNames[prog.vars[i]]; ok {
			m.vars[slot] = awkVal{k: awkStrNum, s: prog.vars[i+1]}
		}
	}
	return m
}

// setLine makes rec (without its end) the current line.
func (m *awkVM) setLine(rec []byte) {
	line := record.TrimEOL(rec)
	if m.prog.keepsRecord {
		m.lineBuf = append(m.lineBuf[:0], line...)
		line = m.lineBuf
	}
	m.line, m.split, m.fields, m.at, m.subbed, m.fmode = line, false, m.fields[:0], 0, false, false
	m.nr++
	m.fnr++
}

// splitTo finds the fields of the line up to field n, or all of them:
// a program that reads $1 and $7 does not split the rest.
func (m *awkVM) splitTo(n int) {
	line, i := m.line, m.at
	if sep := m.prog.sep; sep != 0 {
		if len(line) == 0 {
			m.split = true
			return
		}
		for len(m.fields) < 2*n {
			j := bytes.IndexByte(line[i:], sep)
			if j < 0 {
				m.fields = append(m.fields, int32(i), int32(len(line)))
				m.split = true
				return
			}
			m.fields = append(m.fields, int32(i), int32(i+j))
			i += j + 1
		}
		m.at = i
		return
	}
	for len(m.fields) < 2*n {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n') {
			i++
		}
		if i == len(line) {
			m.split = true
			return
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\n' {
			i++
		}
		m.fields = append(m.fields, int32(start), int32(i))
	}
	m.at = i
}

// nf is NF.
func (m *awkVM) nf() int {
	if m.fmode {
		return len(m.fvals)
	}
	if !m.split {
		m.splitTo(math.MaxInt32)
	}
	return len(m.fields) / 2
}

// field is $i's bytes.
func (m *awkVM) field(i int) []byte {
	if i == 0 {
		return m.line
	}
	if i < 0 {
		panic(awkFatal{fmt.Sprintf("attempt to access field %d", i)})
	}
	if m.fmode {
		if i > len(m.fvals) {
			return nil
		}
		return awkBytes(m.fvals[i-1].str())
	}
	if !m.split && i > len(m.fields)/2 {
		m.splitTo(i)
	}
	if i > len(m.fields)/2 {
		return nil
	}
	return m.line[m.fields[2*i-2]:m.fields[2*i-1]]
}

// setField sets $i to v as awk does: $0 is split again; another field
// is set among the fields (made up to i with empty ones) and $0 is made
// of them joined by OFS, a string.
func (m *awkVM) setField(i int, v awkVal) {
	v = v.own()
	if i == 0 {
		m.line = append([]byte(nil), v.str()...)
		// $0 set to a string is a string (gawk's), its fields split anew
		m.split, m.fields, m.at, m.subbed, m.fmode = false, m.fields[:0], 0, v.k == awkStr, false
		return
	}
	m.fieldsApart()
	for len(m.fvals) < i {
		m.fvals = append(m.fvals, awkVal{k: awkStrNum})
	}
	m.fvals[i-1] = v
	m.joinFields()
}

// setNF sets NF: the fields cut or made up with empty ones, $0 made of
// them.
func (m *awkVM) setNF(n float64) {
	if n < 0 {
		panic(awkFatal{fmt.Sprintf("NF set to negative value %d", int64(n))})
	}
	m.fieldsApart()
	k := int(min(n, 1<<20))
	for len(m.fvals) < k {
		m.fvals = append(m.fvals, awkVal{k: awkStrNum})
	}
	m.fvals = m.fvals[:k]
	m.joinFields()
}

// fieldsApart copies the line's fields into fvals, once.
func (m *awkVM) fieldsApart() {
	if m.fmode {
		return
	}
	n := m.nf()
	m.fvals = m.fvals[:0]
	for j := 1; j <= n; j++ {
		m.fvals = append(m.fvals, awkVal{k: awkStrNum, s: string(m.field(j))})
	}
	m.fmode = true
}

// joinFields makes $0 of the fields and OFS, in a new line (values
// taken from the old one stay as they were).
func (m *awkVM) joinFields() {
	ofs := m.vars[m.prog.ofs].str()
	var b []byte
	for j, v := range m.fvals {
		if j > 0 {
			b = append(b, ofs...)
		}
		b = v.appendTo(b)
	}
	m.line, m.subbed = b, true
}

// awkFieldLvalue is a field assigned: ref hands out its value, store
// sets it (setField).
type awkFieldLvalue struct{ f *awkFieldExpr }

func (e *awkFieldLvalue) val(m *awkVM) awkVal  { return e.f.val(m) }
func (e *awkFieldLvalue) num(m *awkVM) float64 { return e.f.num(m) }
func (e *awkFieldLvalue) ref(m *awkVM) *awkVal {
	i := e.f.index(m)
	m.fieldRef, m.fieldTmp = i, e.f.valAt(m, i).own()
	return &m.fieldTmp
}
func (e *awkFieldLvalue) store(m *awkVM) { m.setField(m.fieldRef, m.fieldTmp) }

// awkNFLvalue is NF assigned.
type awkNFLvalue struct{ awkSpecial }

func (e *awkNFLvalue) ref(m *awkVM) *awkVal {
	m.fieldTmp = awkNumVal(float64(m.nf()))
	return &m.fieldTmp
}
func (e *awkNFLvalue) store(m *awkVM) { m.setNF(math.Trunc(m.fieldTmp.num())) }

// flush hands on the complete lines of the output, and with all what is
// left.
func (m *awkVM) flush(all bool) error {
	start := 0
	for {
		i := bytes.IndexByte(m.out[start:], '\n')
		if i < 0 {
			break
		}
		if err := m.emit(m.out[start : start+i+1]); err != nil {
			return err
		}
		start += i + 1
	}
	if all && start < len(m.out) {
		if err := m.emit(m.out[start:]); err != nil {
			return err
		}
		start = len(m.out)
	}
	m.out = append(m.out[:0], m.out[start:]...)
	return nil
}

// errAwkExit ends the input early: the program ran exit.
var errAwkExit = errors.New("awk: exit")

// execAll runs stmts.
func (m *awkVM) execAll(stmts []awkStmt) awkFlow {
	for _, s := range stmts {
		if f := s.exec(m); f != awkFlowNormal {
			return f
		}
	}
	return awkFlowNormal
}

// record runs the main rules on rec.
func (m *awkVM) record(rec []byte) error {
	m.setLine(rec)
	for _, r := range m.prog.rules {
		if r.pattern != nil && !r.pattern.val(m).truth() {
			continue
		}
		if r.body == nil {
			line := append(m.out, m.line...)
			m.out = append(line, m.vars[m.prog.ors].str()...)
			if err := m.flush(false); err != nil {
				return err
			}
			continue
		}
		switch m.execAll(r.body) {
		case awkFlowNext:
			return nil
		case awkFlowExit:
			return errAwkExit
		}
	}
	return nil
}

// awkEmitErr carries an error from the output out of a statement.
type awkEmitErr struct{ err error }

// run is the program's task: BEGIN, the lines of the input or of the
// FILE operands names, END; a fatal error stops it with gawk's message.
func (prog *awkProg) run(env *Env, names []string) func(context.Context, *buffer.Ports) error {
	return func(ctx context.Context, p *buffer.Ports) (err error) {
		m := newAwkVM(prog)
		m.emit = p.Out(0).Write
		defer func() {
			switch r := recover().(type) {
			case nil:
			case awkFatal:
				if ferr := m.flush(true); ferr != nil {
					err = ferr
					return
				}
				name := m.filename
				if name == "" {
					name = "-"
				}
				where := fmt.Sprintf("(FILENAME=%s FNR=%d) ", name, int64(m.fnr))
				if m.nr == 0 {
					where = ""
				}
				fmt.Fprintf(env.stderr(), "awk: cmd. line:1: %sfatal: %s\n", where, r.msg)
				err = task.Exit(2)
			case awkEmitErr:
				err = r.err
			default:
				panic(r)
			}
		}()
		exited := m.execAll(prog.begin) == awkFlowExit
		if !exited && (len(prog.rules) > 0 || len(prog.end) > 0) {
			if len(names) == 0 {
				m.filename = "-"
				in := p.In(0)
				for {
					rec, rerr := in.Read()
					if rerr == io.EOF {
						break
					}
					if rerr != nil {
						return rerr
					}
					if err := m.record(rec); err == errAwkExit {
						exited = true
						break
					} else if err != nil {
						return err
					}
				}
			} else if err := m.files(ctx, env, p, names, &exited); err != nil {
				return err
			}
		}
		if !exited || len(prog.end) > 0 {
			m.execAll(prog.end)
		}
		if err := m.flush(true); err != nil {
			return err
		}
		if m.exitCode != 0 {
			return task.Exit(m.exitCode)
		}
		return nil
	}
}

// files runs the main rules on each file of names in turn, as gawk
// reads its operands: a directory skipped with a warning, a file that
// cannot be opened ending the run (status 2, no END).
func (m *awkVM) files(ctx context.Context, env *Env, p *buffer.Ports, names []string, exited *bool) error {
	err := awkEachFile(ctx, env, p, names, func(name string) { m.filename, m.fnr = name, 0 }, m.record,
		func() (bool, error) {
			// gawk names the code that ran last
			return len(m.prog.begin) > 0 || m.nr > 0 && len(m.prog.rules) > 0, m.flush(true)
		})
	if err == errAwkExit {
		*exited = true
		return nil
	}
	return err
}

// awkEachFile runs each on the records of the FILE operands names in
// turn (- is the input, @NAME an edge), as gawk reads its operands, with
// start called before each: a directory is skipped with a warning, a
// file that cannot be opened ends the run with gawk's message (status 2,
// and no END), after fatal says whether code ran (the message then
// names its place) and has handed on what the program wrote. each's
// error ends the run as it is.
func awkEachFile(ctx context.Context, env *Env, p *buffer.Ports, names []string, start func(name string),
	each func(rec []byte) error, fatal func() (ran bool, err error)) error {
	for _, name := range names {
		if start != nil {
			start(name)
		}
		err := eachRecord(ctx, env, p, name, each)
		var fe *fileError
		switch {
		case errors.As(err, &fe) && errors.Is(fe.err, syscall.EISDIR):
			fmt.Fprintf(env.stderr(), "awk: warning: command line argument `%s' is a directory: skipped\n", name)
		case errors.As(err, &fe) && fe.atOpen:
			ran, ferr := fatal()
			if ferr != nil {
				return ferr
			}
			where := ""
			if ran {
				where = "cmd. line:1: "
			}
			fmt.Fprintf(env.stderr(), "awk: %sfatal: cannot open file `%s' for reading: %s\n", where, name, errText(fe.err))
			return task.Exit(2)
		case err != nil:
			return err
		}
	}
	return nil
}

// Statements.

type awkExprStmt struct{ e awkExpr }

func (s *awkExprStmt) exec(m *awkVM) awkFlow {
	s.e.val(m)
	return awkFlowNormal
}

// awkPrintStmt is print: its items (none: the line), OFS between, ORS
// after.
type awkPrintStmt struct {
	items []awkExpr
	elems bool // an element among the items (awkItems)
}

func (s *awkPrintStmt) exec(m *awkVM) awkFlow {
	if s.elems {
		return s.execItems(m)
	}
	b := m.out
	if len(s.items) == 0 {
		b = append(b, m.line...)
	}
	for i, e := range s.items {
		if i > 0 {
			b = append(b, m.vars[m.prog.ofs].str()...)
		}
		if f, ok := e.(*awkFieldExpr); ok {
			b = append(b, m.field(f.index(m))...)
			continue
		}
		b = e.val(m).appendTo(b)
	}
	m.out = append(b, m.vars[m.prog.ors].str()...)
	if err := m.flush(false); err != nil {
		panic(awkEmitErr{err})
	}
	return awkFlowNormal
}

// execItems is print with an element among its items: every item is
// evaluated, then each element never set becomes the empty string
// (awkItems), then the line is written.
func (s *awkPrintStmt) execItems(m *awkVM) awkFlow {
	base := len(m.stack)
	awkItems(m, s.items, nil)
	b := m.out
	for i := range s.items {
		if i > 0 {
			b = append(b, m.vars[m.prog.ofs].str()...)
		}
		b = m.stack[base+i].appendTo(b)
	}
	m.stack = m.stack[:base]
	m.out = append(b, m.vars[m.prog.ors].str()...)
	if err := m.flush(false); err != nil {
		panic(awkEmitErr{err})
	}
	return awkFlowNormal
}

// awkItemRef is e's value and, where e is an element (or a ?: that
// picks one, which hands on the element itself in gawk), the element.
func awkItemRef(m *awkVM, e awkExpr) (awkVal, *awkVal) {
	switch x := e.(type) {
	case *awkElemExpr:
		p := x.ref(m)
		return *p, p
	case *awkCondExpr:
		if x.c.val(m).truth() {
			return awkItemRef(m, x.a)
		}
		return awkItemRef(m, x.b)
	}
	return e.val(m), nil
}

// awkHasElem reports whether an element may stand alone among exprs
// (awkItemRef).
func awkHasElem(exprs []awkExpr) bool {
	for _, e := range exprs {
		switch e.(type) {
		case *awkElemExpr, *awkCondExpr:
			return true
		}
	}
	return false
}

// awkItems pushes the values of exprs, print's items or printf's
// arguments, on m's stack, all of them first, as gawk does, and then
// makes each element among them that was never set the empty string
// for good (gawk 5.2: later comparisons take it as a string): every one
// of print's, printf's where strs says %s takes it.
func awkItems(m *awkVM, exprs []awkExpr, strs []bool) {
	refs := 0
	for i, e := range exprs {
		if strs == nil || i < len(strs) && strs[i] {
			v, p := awkItemRef(m, e)
			m.stack = append(m.stack, v)
			if p != nil {
				m.refs = append(m.refs, p)
				refs++
			}
			continue
		}
		m.stack = append(m.stack, e.val(m))
	}
	for _, p := range m.refs[len(m.refs)-refs:] {
		if p.k == awkUninit {
			*p = awkVal{k: awkStr}
		}
	}
	m.refs = m.refs[:len(m.refs)-refs]
}

type awkPrintfStmt struct {
	format *awkFormat
	args   []awkExpr
}

func (s *awkPrintfStmt) exec(m *awkVM) awkFlow {
	base := len(m.stack)
	awkItems(m, s.args, s.format.strs)
	m.out = s.format.appendTo(m.out, m.stack[base:], m.prog.utf8)
	m.stack = m.stack[:base]
	if err := m.flush(false); err != nil {
		panic(awkEmitErr{err})
	}
	return awkFlowNormal
}

type awkIfStmt struct {
	cond       awkExpr
	then, els_ []awkStmt
}

func (s *awkIfStmt) exec(m *awkVM) awkFlow {
	if s.cond.val(m).truth() {
		return m.execAll(s.then)
	}
	return m.execAll(s.els_)
}

// awkLoopStmt is while (cond) body and for (init; cond; post) body.
type awkLoopStmt struct {
	init, post awkStmt
	cond       awkExpr // nil: for ever
	body       []awkStmt
}

func (s *awkLoopStmt) exec(m *awkVM) awkFlow {
	if s.init != nil {
		s.init.exec(m)
	}
	for s.cond == nil || s.cond.val(m).truth() {
		switch f := m.execAll(s.body); f {
		case awkFlowBreak:
			return awkFlowNormal
		case awkFlowNext, awkFlowExit:
			return f
		}
		if s.post != nil {
			s.post.exec(m)
		}
	}
	return awkFlowNormal
}

// awkForInStmt is for (k in a) body: the keys as they were when the
// loop starts, in for-in's order (awkSortKeys).
type awkForInStmt struct {
	key  awkLvalue
	arr  int
	body []awkStmt
}

func (s *awkForInStmt) exec(m *awkVM) awkFlow {
	for _, k := range m.arrays[s.arr].keys() {
		*s.key.ref(m) = awkVal{k: awkStrNum, s: k}
		s.key.store(m)
		switch f := m.execAll(s.body); f {
		case awkFlowBreak:
			return awkFlowNormal
		case awkFlowNext, awkFlowExit:
			return f
		}
	}
	return awkFlowNormal
}

type awkFlowStmt struct{ flow awkFlow }

func (s *awkFlowStmt) exec(*awkVM) awkFlow { return s.flow }

type awkExitStmt struct{ code awkExpr }

func (s *awkExitStmt) exec(m *awkVM) awkFlow {
	if s.code != nil {
		m.exitCode = int(int32(s.code.num(m)))
	}
	return awkFlowExit
}

type awkDeleteStmt struct {
	arr int
	key awkExpr // nil: every element
}

func (s *awkDeleteStmt) exec(m *awkVM) awkFlow {
	if s.key == nil {
		m.arrays[s.arr].clear()
	} else {
		m.arrays[s.arr].delete(s.key.val(m))
	}
	return awkFlowNormal
}

// Expressions.

type awkNumLit struct{ n float64 }

func (e *awkNumLit) val(*awkVM) awkVal  { return awkNumVal(e.n) }
func (e *awkNumLit) num(*awkVM) float64 { return e.n }

type awkStrLit struct{ s string }

func (e *awkStrLit) val(*awkVM) awkVal    { return awkVal{k: awkStr, s: e.s} }
func (e *awkStrLit) num(m *awkVM) float64 { return awkNumber(awkBytes(e.s)) }

// awkFieldExpr is $N (n) or $(expr) (x).
type awkFieldExpr struct {
	n int
	x awkExpr
}

func (e *awkFieldExpr) index(m *awkVM) int {
	if e.x == nil {
		return e.n
	}
	f := e.x.num(m)
	if f < 0 {
		panic(awkFatal{fmt.Sprintf("attempt to access field %d", int64(f))})
	}
	if f > 1<<30 {
		return 1 << 30
	}
	return int(f)
}

func (e *awkFieldExpr) val(m *awkVM) awkVal { return e.valAt(m, e.index(m)) }

// valAt is $i's value.
func (e *awkFieldExpr) valAt(m *awkVM, i int) awkVal {
	if m.fmode && i > 0 {
		if i > len(m.fvals) {
			return awkVal{k: awkStrNum}
		}
		return m.fvals[i-1]
	}
	b := m.field(i)
	k := awkStrNum
	if i == 0 && m.subbed {
		k = awkStr // $0 as sub left it is a string to gawk
	}
	return awkVal{k: k, borrowed: true, s: unsafe.String(unsafe.SliceData(b), len(b))}
}

func (e *awkFieldExpr) num(m *awkVM) float64 {
	i := e.index(m)
	if m.fmode && i > 0 {
		return e.valAt(m, i).num()
	}
	return awkNumber(m.field(i))
}

// awkSpecial is NR, FNR, NF or FILENAME.
type awkSpecial struct{ name string }

func (e *awkSpecial) val(m *awkVM) awkVal {
	if e.name == "FILENAME" {
		return awkVal{k: awkStr, s: m.filename}
	}
	return awkNumVal(e.num(m))
}

func (e *awkSpecial) num(m *awkVM) float64 {
	switch e.name {
	case "NR":
		return m.nr
	case "FNR":
		return m.fnr
	case "NF":
		return float64(m.nf())
	}
	return awkNumber(awkBytes(m.filename))
}

// awkLvalue is what can be assigned: a variable or an element.
type awkLvalue interface {
	awkExpr
	ref(m *awkVM) *awkVal
	store(m *awkVM) // after a write through ref
}

type awkVarExpr struct{ slot int }

func (e *awkVarExpr) val(m *awkVM) awkVal  { return m.vars[e.slot] }
func (e *awkVarExpr) num(m *awkVM) float64 { return m.vars[e.slot].num() }
func (e *awkVarExpr) ref(m *awkVM) *awkVal { return &m.vars[e.slot] }
func (e *awkVarExpr) store(*awkVM)         {}

// awkArray is an array. Keys that are integers as awk writes them
// (awkIntKey) are kept apart from strings, which spares a string per key
// and makes for-in's order (integers first, ascending) cheap: the keys 1
// to n, as a[NR] and split make them, in a slice (dense), other
// integers in a map. Elements are allocated in slabs.
type awkArray struct {
	dense  []*awkVal // keys 1..len(dense); nil where deleted
	ndense int       // the non-nil ones
	ints   map[int64]*awkVal
	strs   map[string]*awkVal
	slab   []awkVal
}

func newAwkArray() *awkArray {
	return &awkArray{ints: map[int64]*awkVal{}, strs: map[string]*awkVal{}}
}

// awkArrayKey is v as a subscript: an integer, or else a string.
func awkArrayKey(v awkVal) (n int64, s string, isInt bool) {
	if v.k == awkNum {
		if v.n == math.Trunc(v.n) && math.Abs(v.n) < 1e15 {
			return int64(v.n), "", true
		}
		s = v.str()
	} else {
		s = v.s
	}
	if n, ok := awkIntKey(s); ok {
		return n, "", true
	}
	return 0, s, false
}

// ref is the element under v, made if it is not there; a key that
// points into the line is copied before the array keeps it.
func (a *awkArray) ref(v awkVal) *awkVal {
	n, s, isInt := awkArrayKey(v)
	if !isInt {
		if e, ok := a.strs[s]; ok {
			return e
		}
		if v.borrowed || v.k == awkNum {
			s = strings.Clone(s)
		}
		e := a.alloc()
		a.strs[s] = e
		return e
	}
	if n >= 1 && n <= int64(len(a.dense)) {
		if e := a.dense[n-1]; e != nil {
			return e
		}
		e := a.alloc()
		a.dense[n-1] = e
		a.ndense++
		return e
	}
	if e, ok := a.ints[n]; ok {
		return e
	}
	e := a.alloc()
	if n != int64(len(a.dense))+1 {
		a.ints[n] = e
		return e
	}
	a.dense = append(a.dense, e)
	a.ndense++
	for len(a.ints) > 0 {
		next, ok := a.ints[int64(len(a.dense))+1]
		if !ok {
			break
		}
		delete(a.ints, int64(len(a.dense))+1)
		a.dense = append(a.dense, next)
		a.ndense++
	}
	return e
}

func (a *awkArray) alloc() *awkVal {
	if len(a.slab) == cap(a.slab) {
		a.slab = make([]awkVal, 0, 256)
	}
	a.slab = a.slab[:len(a.slab)+1]
	return &a.slab[len(a.slab)-1]
}

func (a *awkArray) has(v awkVal) bool {
	n, s, isInt := awkArrayKey(v)
	switch {
	case !isInt:
		_, ok := a.strs[s]
		return ok
	case n >= 1 && n <= int64(len(a.dense)):
		return a.dense[n-1] != nil
	}
	_, ok := a.ints[n]
	return ok
}

func (a *awkArray) delete(v awkVal) {
	n, s, isInt := awkArrayKey(v)
	switch {
	case !isInt:
		delete(a.strs, s)
	case n >= 1 && n <= int64(len(a.dense)):
		if a.dense[n-1] != nil {
			a.dense[n-1] = nil
			a.ndense--
		}
	default:
		delete(a.ints, n)
	}
}

func (a *awkArray) clear() {
	a.dense, a.ndense = nil, 0
	clear(a.ints)
	clear(a.strs)
}

func (a *awkArray) len() int { return a.ndense + len(a.ints) + len(a.strs) }

// keys are the keys in for-in's order (awkSortKeys'): integers
// ascending, then the rest by bytes.
func (a *awkArray) keys() []string {
	ints := make([]int64, 0, len(a.ints))
	for n := range a.ints {
		ints = append(ints, n)
	}
	slices.Sort(ints)
	strs := make([]string, 0, len(a.strs))
	for s := range a.strs {
		strs = append(strs, s)
	}
	slices.Sort(strs)
	keys := make([]string, 0, a.len())
	i := 0
	for ; i < len(ints) && ints[i] < 1; i++ {
		keys = append(keys, strconv.FormatInt(ints[i], 10))
	}
	for n, e := range a.dense {
		if e != nil {
			keys = append(keys, strconv.Itoa(n+1))
		}
	}
	for ; i < len(ints); i++ {
		keys = append(keys, strconv.FormatInt(ints[i], 10))
	}
	return append(keys, strs...)
}

// awkElemExpr is a[key]. Reading an element that is not there makes it,
// as in awk.
type awkElemExpr struct {
	arr int
	key awkExpr
}

func (e *awkElemExpr) val(m *awkVM) awkVal { return *e.ref(m) }

// ref is the element, made if it is not there; a key that points into
// the line is copied before the array keeps it.
func (e *awkElemExpr) ref(m *awkVM) *awkVal { return m.arrays[e.arr].ref(e.key.val(m)) }

func (e *awkElemExpr) num(m *awkVM) float64 { return e.ref(m).num() }
func (e *awkElemExpr) store(*awkVM)         {}

// awkInExpr is (key) in a.
type awkInExpr struct {
	key awkExpr
	arr int
}

func (e *awkInExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkInExpr) num(m *awkVM) float64 {
	return awkBool(m.arrays[e.arr].has(e.key.val(m)))
}

func awkBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// awkAssignExpr is lv = x, or lv OP= x.
type awkAssignExpr struct {
	lv awkLvalue
	op byte // 0 for =
	x  awkExpr
}

func (e *awkAssignExpr) val(m *awkVM) awkVal {
	if e.op == 0 {
		v := e.x.val(m).own()
		*e.lv.ref(m) = v
		e.lv.store(m)
		return v
	}
	r := e.x.num(m)
	p := e.lv.ref(m)
	v := awkNumVal(awkArith(e.op, p.num(), r))
	*p = v
	e.lv.store(m)
	return v
}

func (e *awkAssignExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkIncrExpr is ++lv, --lv, lv++ or lv--.
type awkIncrExpr struct {
	lv    awkLvalue
	delta float64
	post  bool
}

func (e *awkIncrExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkIncrExpr) num(m *awkVM) float64 {
	p := e.lv.ref(m)
	old := p.num()
	*p = awkNumVal(old + e.delta)
	e.lv.store(m)
	if e.post {
		return old
	}
	return old + e.delta
}

// awkUnaryExpr is -x, +x or !x.
type awkUnaryExpr struct {
	op byte
	x  awkExpr
}

func (e *awkUnaryExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkUnaryExpr) num(m *awkVM) float64 {
	switch e.op {
	case '-':
		return -e.x.num(m)
	case '+':
		return e.x.num(m)
	}
	return awkBool(!e.x.val(m).truth())
}

// awkArithExpr is l OP r for + - * / % ^.
type awkArithExpr struct {
	op   byte
	l, r awkExpr
}

func (e *awkArithExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkArithExpr) num(m *awkVM) float64 {
	return awkArith(e.op, e.l.num(m), e.r.num(m))
}

// awkArith applies op to a and b as gawk does: a zero divisor is fatal,
// % is C's fmod, and ^ with an integer exponent multiplies.
func awkArith(op byte, a, b float64) float64 {
	switch op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	case '/':
		if b == 0 {
			panic(awkFatal{"division by zero attempted"})
		}
		return a / b
	case '%':
		if b == 0 {
			panic(awkFatal{"division by zero attempted in `%'"})
		}
		return awkCNaN(a, b, math.Mod(a, b))
	}
	return awkCNaN(a, b, awkPow(a, b))
}

// awkCNaN is r as C's fmod and pow give it on the machines gawk runs on:
// a NaN operand comes back as it was, sign and all, and a NaN made from
// numbers is the processor's default, whose sign is set (gawk prints
// -nan); Go's math returns a NaN of its own.
func awkCNaN(a, b, r float64) float64 {
	switch {
	case !math.IsNaN(r):
		return r
	case math.IsNaN(a):
		return a
	case math.IsNaN(b):
		return b
	}
	return math.Copysign(math.NaN(), -1)
}

// awkPow is a^b: for an integer b by squaring and multiplying, as gawk
// computes it (so the last bits agree), else pow.
func awkPow(a, b float64) float64 {
	if b != math.Trunc(b) || math.Abs(b) > 1<<62 {
		return math.Pow(a, b)
	}
	n := int64(b)
	if n == 0 {
		return 1
	}
	neg := n < 0
	if neg {
		n = -n
	}
	acc := 1.0
	for n > 1 {
		if n%2 == 1 {
			acc *= a
		}
		a *= a
		n /= 2
	}
	r := acc * a
	if neg {
		return 1 / r
	}
	return r
}

// awkCompareExpr is l OP r for < <= == != > >=.
type awkCompareExpr struct {
	op   string
	l, r awkExpr
}

func (e *awkCompareExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkCompareExpr) num(m *awkVM) float64 {
	l, r := e.l.val(m), e.r.val(m)
	c := &awkCompare{op: e.op}
	if a, ok := l.asNumber(); ok {
		if b, ok := r.asNumber(); ok {
			if math.IsNaN(a) || math.IsNaN(b) {
				// As C compares a NaN, but for gawk 5.2's one quirk: a
				// NaN read from input (+nan, -nan) is greater than a
				// number on its right.
				gt := e.op == ">" && l.k == awkStrNum && !math.IsNaN(b)
				return awkBool(e.op == "!=" || gt)
			}
			return awkBool(c.holds(compareFloat(a, b)))
		}
	}
	return awkBool(c.holds(strings.Compare(l.cmpStr(), r.cmpStr())))
}

// awkConcatExpr is l r.
type awkConcatExpr struct{ l, r awkExpr }

func (e *awkConcatExpr) val(m *awkVM) awkVal {
	l, r := e.l.val(m), e.r.val(m)
	ls, rs := l.str(), r.str()
	switch {
	case rs == "":
		// Go's + hands back the other string itself: it may point into
		// the line.
		return awkVal{k: awkStr, borrowed: l.borrowed, s: ls}
	case ls == "":
		return awkVal{k: awkStr, borrowed: r.borrowed, s: rs}
	}
	return awkVal{k: awkStr, s: ls + rs}
}
func (e *awkConcatExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkLogicExpr is l && r or l || r.
type awkLogicExpr struct {
	and  bool
	l, r awkExpr
}

func (e *awkLogicExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkLogicExpr) num(m *awkVM) float64 {
	l := e.l.val(m).truth()
	if e.and != l {
		return awkBool(l)
	}
	return awkBool(e.r.val(m).truth())
}

// awkCondExpr is c ? a : b.
type awkCondExpr struct{ c, a, b awkExpr }

func (e *awkCondExpr) val(m *awkVM) awkVal {
	if e.c.val(m).truth() {
		return e.a.val(m)
	}
	return e.b.val(m)
}
func (e *awkCondExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkMatchExpr is x ~ /re/ or x !~ /re/ (x nil: the line).
type awkMatchExpr struct {
	x   awkExpr
	re  grepMatcher
	not bool
}

func (e *awkMatchExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkMatchExpr) num(m *awkVM) float64 {
	var b []byte
	switch x := e.x.(type) {
	case nil:
		b = m.line
	case *awkFieldExpr:
		b = m.field(x.index(m))
	default:
		b = awkBytes(x.val(m).str())
	}
	return awkBool(e.re.match(b) != e.not)
}

// awkLengthExpr is length(x), in characters in a UTF-8 locale, or the
// number of elements of an array (arr >= 0).
type awkLengthExpr struct {
	x   awkExpr
	arr int
}

func (e *awkLengthExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkLengthExpr) num(m *awkVM) float64 {
	if e.arr >= 0 {
		return float64(m.arrays[e.arr].len())
	}
	s := e.x.val(m).str()
	if m.prog.utf8 {
		return float64(utf8.RuneCountInString(s))
	}
	return float64(len(s))
}

// awkSubstrExpr is substr(s, start[, n]), with gawk's rounding, in
// characters in a UTF-8 locale.
type awkSubstrExpr struct{ s, start, n awkExpr }

func (e *awkSubstrExpr) val(m *awkVM) awkVal {
	v := e.s.val(m)
	s := v.str()
	length := len(s)
	if m.prog.utf8 {
		length = utf8.RuneCountInString(s)
	}
	// gawk truncates both numbers, and starts a start below 1 at 1
	// with the length kept.
	a := e.start.num(m)
	if math.IsNaN(a) {
		a = 1 // not >= 1, so 1
	}
	start := math.Max(math.Trunc(a), 1)
	end := float64(length) + 1
	if e.n != nil {
		n := e.n.num(m)
		if math.IsNaN(n) {
			return awkVal{k: awkStr}
		}
		end = math.Min(end, start+math.Trunc(n))
	}
	if end <= start || start > float64(length) {
		return awkVal{k: awkStr}
	}
	from, to := int(start)-1, int(end)-1
	if m.prog.utf8 {
		from, to = awkRuneOffset(s, from), awkRuneOffset(s, to)
	}
	return awkVal{k: awkStr, borrowed: v.borrowed, s: s[from:to]}
}
func (e *awkSubstrExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkRuneOffset is the byte offset of character n of s.
func awkRuneOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// awkIndexExpr is index(s, t), in characters in a UTF-8 locale.
type awkIndexExpr struct{ s, t awkExpr }

func (e *awkIndexExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkIndexExpr) num(m *awkVM) float64 {
	// index's first argument, an element never set, becomes the empty
	// string for good, as print's items do (awkItems).
	v, p := awkItemRef(m, e.s)
	if p != nil && p.k == awkUninit {
		*p = awkVal{k: awkStr}
	}
	s := v.str()
	i := strings.Index(s, e.t.val(m).str())
	if i < 0 {
		return 0
	}
	if m.prog.utf8 {
		return float64(utf8.RuneCountInString(s[:i]) + 1)
	}
	return float64(i + 1)
}

// awkSplitExpr is split(s, a[, "C"]): a cleared, then holding s's
// pieces under 1..n, each a string that may look like a number, as
// fields are; n is the value.
type awkSplitExpr struct {
	s   awkExpr
	arr int
	sep int // the separator byte, 0 for runs of blanks, -1 for FS's, awkSplitChars for ""
}

// awkSplitChars is split(s, a, "")'s separator: each character a piece,
// a byte outside a UTF-8 locale (and with -b), as gawk splits.
const awkSplitChars = -2

func (e *awkSplitExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkSplitExpr) num(m *awkVM) float64 {
	s := e.s.val(m).str()
	a := m.arrays[e.arr]
	a.clear()
	sep := byte(e.sep)
	if e.sep < 0 {
		sep = m.prog.sep
	}
	n := 0
	add := func(piece string) {
		n++
		*a.ref(awkNumVal(float64(n))) = awkVal{k: awkStrNum, s: strings.Clone(piece)}
	}
	switch {
	case s == "":
	case e.sep == awkSplitChars:
		for s != "" {
			n := 1
			if m.prog.utf8 {
				_, n = utf8.DecodeRuneInString(s)
			}
			add(s[:n])
			s = s[n:]
		}
	case sep != 0:
		for {
			i := strings.IndexByte(s, sep)
			if i < 0 {
				add(s)
				break
			}
			add(s[:i])
			s = s[i+1:]
		}
	default:
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
			add(f)
		}
	}
	return float64(n)
}

// awkSubExpr is sub(/re/, repl[, target]) or gsub: the first match (or
// every one, none overlapping) of re in target, $0 when target is nil,
// replaced by repl, where & is the match, \& a plain &, and \\& a
// backslash and the match (gawk's reading since 1996; any other
// backslash is itself). re never matches the empty string (the parser
// leaves such to GoAWK). The value is how many were replaced.
type awkSubExpr struct {
	re     grepMatcher
	repl   awkExpr
	target awkLvalue
	global bool
}

func (e *awkSubExpr) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkSubExpr) num(m *awkVM) float64 {
	repl := e.repl.val(m).str()
	var t string
	var p *awkVal
	if e.target == nil {
		t = unsafe.String(unsafe.SliceData(m.line), len(m.line))
	} else {
		p = e.target.ref(m)
		if _, ok := e.target.(*awkElemExpr); ok && p.k == awkUninit {
			*p = awkVal{k: awkStr} // an element never set becomes "" (gawk's)
		}
		t = p.str()
	}
	found := e.re.find(awkBytes(t), m.matches[:0])
	m.matches = found[:0]
	if len(found) == 0 {
		if _, ok := e.target.(*awkFieldLvalue); ok && m.fieldRef > m.nf() {
			// gawk makes the field (NF grows) and leaves $0 as it was
			m.fieldsApart()
			for len(m.fvals) < m.fieldRef {
				m.fvals = append(m.fvals, awkVal{k: awkStrNum})
			}
		}
		return 0
	}
	if !e.global {
		found = found[:1]
	}
	var b []byte
	last := 0
	for _, f := range found {
		b = append(b, t[last:f[0]]...)
		b = awkReplace(b, repl, t[f[0]:f[1]])
		last = f[1]
	}
	b = append(b, t[last:]...)
	if e.target == nil {
		// a new line each time: values taken from the old one stay
		m.line, m.split, m.fields, m.at, m.subbed, m.fmode = b, false, m.fields[:0], 0, true, false
	} else {
		*p = awkVal{k: awkStr, s: string(b)}
		e.target.store(m)
	}
	return float64(len(found))
}

// awkReplace appends repl with each & the match, as sub reads it.
func awkReplace(b []byte, repl, match string) []byte {
	for i := 0; i < len(repl); i++ {
		switch {
		case strings.HasPrefix(repl[i:], `\\\&`):
			b = append(b, `\&`...)
			i += 3
		case strings.HasPrefix(repl[i:], `\\&`):
			b = append(append(b, '\\'), match...)
			i += 2
		case strings.HasPrefix(repl[i:], `\&`):
			b = append(b, '&')
			i++
		case repl[i] == '&':
			b = append(b, match...)
		default:
			b = append(b, repl[i])
		}
	}
	return b
}

// awkMatchFunc is match(s, /re/): where re first matches s (leftmost,
// longest), from 1, in characters in a UTF-8 locale, and 0 if nowhere;
// RSTART is set to it, RLENGTH to the match's length or -1.
type awkMatchFunc struct {
	s  awkExpr
	re grepMatcher
}

func (e *awkMatchFunc) val(m *awkVM) awkVal { return awkNumVal(e.num(m)) }
func (e *awkMatchFunc) num(m *awkVM) float64 {
	s := e.s.val(m).str()
	found := e.re.find(awkBytes(s), m.matches[:0])
	m.matches = found[:0]
	start, length := 0, -1
	if len(found) > 0 {
		start, length = found[0][0]+1, found[0][1]-found[0][0]
		if m.prog.utf8 {
			start = utf8.RuneCountInString(s[:found[0][0]]) + 1
			length = utf8.RuneCountInString(s[found[0][0]:found[0][1]])
		}
	}
	m.vars[m.prog.rstart], m.vars[m.prog.rlength] = awkNumVal(float64(start)), awkNumVal(float64(length))
	return float64(start)
}

// awkIntExpr is int(x).
type awkIntExpr struct{ x awkExpr }

func (e *awkIntExpr) val(m *awkVM) awkVal  { return awkNumVal(e.num(m)) }
func (e *awkIntExpr) num(m *awkVM) float64 { return math.Trunc(e.x.num(m)) }

// awkCaseExpr is tolower(x) or toupper(x): ASCII letters outside a UTF-8
// locale, every letter in one.
type awkCaseExpr struct {
	upper bool
	x     awkExpr
}

func (e *awkCaseExpr) val(m *awkVM) awkVal {
	v := e.x.val(m)
	s := v.str()
	var r string
	switch {
	case m.prog.utf8 && e.upper:
		r = strings.Map(unicode.ToUpper, s)
	case m.prog.utf8:
		r = strings.Map(unicode.ToLower, s)
	case e.upper:
		r = awkMapASCII(s, 'a', 'A')
	default:
		r = awkMapASCII(s, 'A', 'a')
	}
	return awkVal{k: awkStr, borrowed: v.borrowed && r == s, s: r}
}
func (e *awkCaseExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkSprintfExpr is sprintf(format, args...).
type awkSprintfExpr struct {
	format *awkFormat
	args   []awkExpr
}

func (e *awkSprintfExpr) val(m *awkVM) awkVal {
	base := len(m.stack)
	awkItems(m, e.args, e.format.strs)
	s := string(e.format.appendTo(nil, m.stack[base:], m.prog.utf8))
	m.stack = m.stack[:base]
	return awkVal{k: awkStr, s: s}
}
func (e *awkSprintfExpr) num(m *awkVM) float64 { return e.val(m).num() }

// awkMaxWidth bounds a printf width or precision (gawk has no bound; a
// larger one would only exhaust memory).
const awkMaxWidth = 1 << 30

// awkFormat is a printf format read once: text, and conversions.
type awkFormat struct {
	parts []awkConv
	nargs int    // the arguments it takes
	strs  []bool // which of them %s takes
}

// awkConv is text, then one conversion (verb 0: none).
type awkConv struct {
	text      string
	flags     string
	width     int // -1: none; -2: from an argument
	prec      int // -1: none; -2: from an argument
	verb      byte
	widthStar bool
}

// newAwkFormat reads format, with ok false for one the builtin leaves to
// GoAWK or gawk (a conversion it does not know, %c, or too few
// arguments).
func newAwkFormat(format string, nargs int) (*awkFormat, bool) {
	f := &awkFormat{}
	var text strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			text.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			text.WriteByte('%')
			i++
			continue
		}
		conv := awkConv{width: -1, prec: -1}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ 0", format[j]) >= 0 {
			j++
		}
		conv.flags = format[i+1 : j]
		num := func() int {
			if j < len(format) && format[j] == '*' {
				j++
				f.nargs++
				f.strs = append(f.strs, false)
				return -2
			}
			start := j
			for j < len(format) && '0' <= format[j] && format[j] <= '9' {
				j++
			}
			if j == start {
				return -1
			}
			n, _ := strconv.Atoi(format[start:j])
			return min(n, awkMaxWidth)
		}
		conv.width = num()
		if j < len(format) && format[j] == '.' {
			j++
			if conv.prec = num(); conv.prec == -1 {
				conv.prec = 0
			}
		}
		if j < len(format) && strings.IndexByte("hlL", format[j]) >= 0 {
			j++ // a length modifier, which gawk skips
		}
		stars := conv.width == -2 || conv.prec == -2
		if j >= len(format) {
			if stars {
				return nil, false
			}
			text.WriteString(format[i:]) // an unfinished conversion is text to gawk
			break
		}
		switch format[j] {
		case 'd', 'i', 's', 'e', 'E', 'f', 'F', 'g', 'G', 'c', 'o', 'x', 'X', 'u':
			conv.verb = format[j]
		case 'a', 'A':
			// C's hexadecimal float: without a precision (whose
			// rounding C does not renormalize) and zero padding.
			if conv.prec != -1 || strings.IndexByte(conv.flags, '0') >= 0 {
				return nil, false
			}
			conv.verb = format[j]
		case '#', '\'', '$':
			return nil, false // left to GoAWK, as are the flags # and '
		case '%':
			if stars {
				return nil, false
			}
			text.WriteByte('%') // %5% is %
			i = j
			continue
		default:
			if stars || format[j] >= 0x80 {
				return nil, false
			}
			text.WriteString(format[i : j+1]) // gawk writes what it does not know as it is
			i = j
			continue
		}
		f.nargs++
		f.strs = append(f.strs, format[j] == 's')
		conv.text = text.String()
		text.Reset()
		f.parts = append(f.parts, conv)
		i = j
	}
	f.parts = append(f.parts, awkConv{text: text.String()})
	return f, f.nargs <= nargs
}

// appendTo appends the format applied to the values args.
func (f *awkFormat) appendTo(b []byte, args []awkVal, utf bool) []byte {
	next := 0
	arg := func() awkVal {
		next++
		return args[next-1]
	}
	for _, c := range f.parts {
		b = append(b, c.text...)
		if c.verb == 0 {
			continue
		}
		flags, width, prec := c.flags, c.width, c.prec
		if width == -2 {
			w := int(arg().num())
			if w < 0 {
				flags, w = flags+"-", -w
			}
			width = min(w, awkMaxWidth)
		}
		if prec == -2 {
			p := int(arg().num())
			prec = min(p, awkMaxWidth)
			if p < 0 {
				prec = -1
			}
		}
		v := arg()
		b = awkConvert(b, c.verb, flags, width, prec, v, utf)
	}
	return b
}

// awkConvert appends v converted as printf's %verb with flags, width and
// precision (-1: none) would, as gawk does.
func awkConvert(b []byte, verb byte, flags string, width, prec int, v awkVal, utf bool) []byte {
	if verb == 's' {
		s := v.str()
		if prec >= 0 {
			if utf {
				s = s[:awkRuneOffset(s, prec)]
			} else if prec < len(s) {
				s = s[:prec]
			}
		}
		return awkPad(b, s, flags, width, utf)
	}
	if verb == 'c' {
		// gawk pads a character made from a number by its bytes
		return awkPad(b, awkChar(v, utf), flags, width, utf && !(v.k == awkNum || v.k == awkStrNum && v.numeric()))
	}
	n := v.num()
	if math.IsNaN(n) || math.IsInf(n, 0) {
		if verb == 'X' || verb == 'E' || verb == 'F' || verb == 'G' || verb == 'A' {
			return append(b, strings.ToUpper(string(awkFormatNumber(nil, n)))...)
		}
		return awkFormatNumber(b, n) // gawk pads no infinity or NaN
	}
	spec := []byte{'%'}
	spec = append(spec, flags...)
	if width >= 0 {
		spec = strconv.AppendInt(spec, int64(width), 10)
	}
	switch verb {
	case 'a', 'A':
		h := awkHexFloat(n)
		switch {
		case h[0] == '-':
		case strings.IndexByte(flags, '+') >= 0:
			h = "+" + h
		case strings.IndexByte(flags, ' ') >= 0:
			h = " " + h
		}
		if verb == 'A' {
			h = strings.ToUpper(h)
		}
		return awkPad(b, h, flags, width, false)
	case 'o', 'x', 'X', 'u':
		// unsigned: a negative number as its two's complement, a sign
		// flag ignored as C ignores it; past 2^64, %g's digits (gawk's)
		spec = []byte{'%'}
		spec = append(spec, strings.NewReplacer("+", "", " ", "").Replace(flags)...)
		if width >= 0 {
			spec = strconv.AppendInt(spec, int64(width), 10)
		}
		t := math.Trunc(n)
		var u uint64
		switch {
		case t >= math.MinInt64 && t < math.MaxInt64:
			u = uint64(int64(t))
		case t >= 0 && t < 1.8e19:
			u = uint64(t)
		default:
			return fmt.Appendf(b, string(append(spec, ".6g"...)), n)
		}
		if prec >= 0 {
			spec = append(append(spec, '.'), strconv.Itoa(prec)...)
		}
		if verb == 'u' {
			verb = 'd'
		}
		return fmt.Appendf(b, string(append(spec, verb)), u)
	case 'd', 'i':
		t := math.Trunc(n)
		if t >= -9.2e18 && t <= 9.2e18 {
			if prec >= 0 {
				spec = append(append(spec, '.'), strconv.Itoa(prec)...)
			}
			return fmt.Appendf(b, string(append(spec, 'd')), int64(t))
		}
		// past a long: the integer's digits, as %.0f writes them
		return fmt.Appendf(b, string(append(spec, ".0f"...)), t)
	}
	if prec < 0 {
		prec = 6
	}
	spec = append(append(spec, '.'), strconv.Itoa(prec)...)
	return fmt.Appendf(b, string(append(spec, verb)), n)
}

// awkHexFloat is n as C's %a writes it (glibc): the fewest hex digits
// that hold n exactly, and an exponent without leading zeros; a
// subnormal number as 0x0.digits p-1022. n is finite.
func awkHexFloat(n float64) string {
	if n != 0 && math.Abs(n) < 0x1p-1022 {
		sign := ""
		if n < 0 {
			sign = "-"
		}
		frac := math.Float64bits(n) & (1<<52 - 1)
		return sign + "0x0." + strings.TrimRight(fmt.Sprintf("%013x", frac), "0") + "p-1022"
	}
	h := strconv.FormatFloat(n, 'x', -1, 64) // 0x1.5p+05
	i := strings.LastIndexByte(h, 'p') + 2
	exp := strings.TrimLeft(h[i:], "0")
	if exp == "" {
		exp = "0"
	}
	return h[:i] + exp
}

// awkChar is %c's character: for a number, the character of that code
// (a UTF-8 one in a UTF-8 locale, else the byte), for a string its first
// character, for the empty string a NUL, as gawk writes them.
func awkChar(v awkVal, utf bool) string {
	if v.k == awkNum || v.k == awkStrNum && v.numeric() {
		n := v.num()
		if math.IsNaN(n) || math.Abs(n) > 1<<62 {
			return "\x00"
		}
		code := int64(n)
		if utf && code >= 0 && code < utf8.MaxRune && utf8.ValidRune(rune(code)) {
			return string(rune(code))
		}
		return string([]byte{byte(code)})
	}
	s := v.str()
	switch {
	case s == "":
		return "\x00"
	case utf:
		_, size := utf8.DecodeRuneInString(s)
		return s[:size]
	}
	return s[:1]
}

// awkPad appends s padded to width (with spaces; on the right with -),
// counting characters in a UTF-8 locale.
func awkPad(b []byte, s, flags string, width int, utf bool) []byte {
	n := len(s)
	if utf {
		n = utf8.RuneCountInString(s)
	}
	left := strings.IndexByte(flags, '-') >= 0
	if !left {
		for ; n < width; n++ {
			b = append(b, ' ')
		}
	}
	b = append(b, s...)
	for ; n < width; n++ {
		b = append(b, ' ')
	}
	return b
}
