package builtin

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "cut",
		Usage: "cut -b LIST | -c LIST | -f LIST [-d DELIM] [-s] [--complement] [--output-delimiter=STR] [FILE]...",
		Help: "Print selected parts of each line: bytes (-b, and -c, which is the same " +
			"in the C locale) or fields (-f) separated by DELIM (TAB by default). LIST " +
			"is made of N, N-M, N- and -M separated by commas. A line without the " +
			"delimiter is printed whole unless -s is given.",
		New: newCut,
	})
}

var cutLongs = []longOpt{
	{"bytes", 'b', true},
	{"characters", 'c', true},
	{"fields", 'f', true},
	{"delimiter", 'd', true},
	{"only-delimited", 's', false},
	{"complement", 'C', false},
	{"output-delimiter", 'O', true},
}

// cutRange is a range of positions, 1-based, hi included.
type cutRange struct{ lo, hi int }

const cutOpenEnd = int(^uint(0) >> 1)

// cutCmd is a parsed cut command line.
type cutCmd struct {
	fields   bool
	ranges   []cutRange // sorted, overlaps merged
	delim    byte
	only     bool   // -s
	outDelim []byte // nil: the input delimiter for fields, nothing for bytes
}

func newCut(env *Env, args []string) (*Cmd, error) {
	c := &cutCmd{delim: '\t'}
	mode := byte(0)
	var list string
	delimSet, complement := false, false
	// -n is accepted and ignored, as in GNU cut.
	files, err := getopt{cmd: "cut", shorts: "b:c:f:d:sn", longs: cutLongs}.parse(args, func(o byte, arg string) error {
		switch o {
		case 'b', 'c', 'f':
			if mode != 0 {
				return usagef("cut", "only one list may be specified")
			}
			mode, list = o, arg
		case 'd':
			switch len(arg) {
			case 0:
				c.delim = 0 // GNU: -d '' is the NUL byte
			case 1:
				c.delim = arg[0]
			default:
				return usagef("cut", "the delimiter must be a single character")
			}
			delimSet = true
		case 's':
			c.only = true
		case 'C':
			complement = true
		case 'O':
			c.outDelim = []byte(arg)
			if arg == "" {
				c.outDelim = []byte{0} // as GNU does
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case mode == 0:
		return nil, usagef("cut", "you must specify a list of bytes, characters, or fields")
	case delimSet && mode != 'f':
		return nil, usagef("cut", "an input delimiter may be specified only when operating on fields")
	case c.only && mode != 'f':
		return nil, usagef("cut", "suppressing non-delimited lines makes sense only when operating on fields")
	}
	c.fields = mode == 'f'
	if c.ranges, err = cutParseList(list, c.fields); err != nil {
		return nil, err
	}
	if complement {
		c.ranges = cutComplement(c.ranges)
	}
	if c.fields && c.outDelim == nil {
		c.outDelim = []byte{c.delim}
	}
	reads, err := env.edgeOperands("cut", files)
	if err != nil {
		return nil, err
	}
	cmd := &Cmd{Name: "cut", ReadsInput: readsInput(files), Reads: reads}
	if len(files) == 0 {
		cmd.Rec = c.perRecord()
		return cmd, nil
	}
	cmd.Fn = func(ctx context.Context, p *buffer.Ports) error {
		rec := c.perRecord()
		emit := task.Emit(p.Out(0).Write)
		failed := false
		for _, name := range files {
			err := eachRecord(ctx, env, p, name, func(r []byte) error { return rec.Each(r, emit) })
			var fe *fileError
			if errors.As(err, &fe) {
				warnFile(env, "cut", fe.name, fe.err)
				failed = true
				continue
			}
			if err != nil {
				return err
			}
		}
		if failed {
			return task.Exit(1)
		}
		return nil
	}
	return cmd, nil
}

// cutParseList parses a LIST: items N, N-M, N- or -M separated by commas
// or blanks. Errors have GNU's wording.
func cutParseList(list string, fields bool) ([]cutRange, error) {
	what, invalid, rangeErr, big := "byte/character positions", "byte/character position", "byte or character range", "byte/character offset"
	if fields {
		what, invalid, rangeErr, big = "fields", "field value", "field range", "field number"
	}
	num := func(s string) (int, error) {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, usagef("cut", "invalid %s '%s'", invalid, s)
			}
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n >= uint64(cutOpenEnd) {
			return 0, usagef("cut", "%s '%s' is too large", big, s)
		}
		return int(n), nil
	}
	var ranges []cutRange
	for _, item := range cutSplit(list) {
		if item == "" {
			return nil, usagef("cut", "%s are numbered from 1", what)
		}
		if item == "-" {
			return nil, usagef("cut", "invalid range with no endpoint: -")
		}
		lo, hi, isRange := strings.Cut(item, "-")
		if strings.Contains(hi, "-") {
			return nil, usagef("cut", "invalid %s", rangeErr)
		}
		r := cutRange{lo: 1}
		var err error
		if lo != "" {
			if r.lo, err = num(lo); err != nil {
				return nil, err
			}
			if r.lo == 0 {
				return nil, usagef("cut", "%s are numbered from 1", what)
			}
		}
		switch {
		case !isRange:
			r.hi = r.lo
		case hi == "":
			r.hi = cutOpenEnd
		default:
			if r.hi, err = num(hi); err != nil {
				return nil, err
			}
			if r.hi < r.lo {
				return nil, usagef("cut", "invalid decreasing range")
			}
		}
		ranges = append(ranges, r)
	}
	// Merge overlapping ranges (not adjacent ones: GNU prints an output
	// delimiter between 1-2 and 3-4).
	slices.SortFunc(ranges, func(a, b cutRange) int { return a.lo - b.lo })
	merged := ranges[:0]
	for _, r := range ranges {
		if n := len(merged); n > 0 && r.lo <= merged[n-1].hi {
			merged[n-1].hi = max(merged[n-1].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged, nil
}

// cutSplit splits a LIST at each comma or blank.
func cutSplit(list string) []string {
	return strings.Split(strings.NewReplacer(" ", ",", "\t", ",").Replace(list), ",")
}

// cutComplement returns the ranges not in rs, which are sorted and
// disjoint.
func cutComplement(rs []cutRange) []cutRange {
	var out []cutRange
	next := 1
	for _, r := range rs {
		if r.lo > next {
			out = append(out, cutRange{next, r.lo - 1})
		}
		if r.hi == cutOpenEnd {
			return out
		}
		next = r.hi + 1
	}
	return append(out, cutRange{next, cutOpenEnd})
}

// perRecord is cut's per-record form. Every output line ends with a
// newline, even for a last line without one, as in GNU cut.
func (c *cutCmd) perRecord() *task.PerRecord {
	var buf []byte
	// An output delimiter with a newline in it makes several lines of one
	// (the next task reads them as it would from a pipe).
	newline := bytes.IndexByte(c.outDelim, '\n') >= 0
	each := func(rec []byte, emit task.Emit) error {
		line := record.TrimEOL(rec)
		var ok bool
		if c.fields {
			buf, ok = c.cutFields(buf[:0], line)
			if !ok {
				return nil
			}
		} else {
			buf = c.cutBytes(buf[:0], line)
		}
		if newline {
			return task.EmitLines(emit, append(buf, '\n'))
		}
		return emit(append(buf, '\n'))
	}
	// A line's cut depends on that line alone: copies may share the lines.
	return &task.PerRecord{Each: each, Fresh: c.perRecord}
}

// cutBytes appends the selected bytes of line to buf. An output delimiter,
// if given, goes between ranges.
func (c *cutCmd) cutBytes(buf, line []byte) []byte {
	wrote := false
	for _, r := range c.ranges {
		if r.lo > len(line) {
			break
		}
		if wrote && c.outDelim != nil {
			buf = append(buf, c.outDelim...)
		}
		buf = append(buf, line[r.lo-1:min(r.hi, len(line))]...)
		wrote = true
	}
	return buf
}

// cutFields appends the selected fields of line to buf; ok is false for a
// line to leave out (-s and no delimiter).
func (c *cutCmd) cutFields(buf, line []byte) ([]byte, bool) {
	if bytes.IndexByte(line, c.delim) < 0 {
		if c.only {
			return buf, false
		}
		return append(buf, line...), true
	}
	field, ri := 1, 0
	wrote := false
	for rest := line; ri < len(c.ranges); field++ {
		end := bytes.IndexByte(rest, c.delim)
		f := rest
		if end >= 0 {
			f = rest[:end]
		}
		for ri < len(c.ranges) && c.ranges[ri].hi < field {
			ri++
		}
		if ri < len(c.ranges) && c.ranges[ri].lo <= field {
			if wrote {
				buf = append(buf, c.outDelim...)
			}
			buf = append(buf, f...)
			wrote = true
		}
		if end < 0 {
			break
		}
		rest = rest[end+1:]
	}
	return buf, true
}
