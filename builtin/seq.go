package builtin

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

func init() {
	register(&Spec{
		Name:  "seq",
		Usage: "seq [-w] [-f FORMAT] [-s SEP] [FIRST [INCR]] LAST",
		Help: "Write the numbers from FIRST (default 1) to LAST by INCR (default 1), one a " +
			"line. Decimal numbers (1.5, -.5, 2e3) are printed with as many decimals as " +
			"FIRST or INCR has; arithmetic is exact. -w pads with zeros to equal width, -s SEP " +
			"separates the numbers with SEP instead of a newline, -f FORMAT prints each " +
			"with a printf %e, %f or %g conversion.",
		New: seqNew,
	})
}

// seqNumber is an operand of seq: the value coef×10^-scale, as written
// (sign included, so that "-0" prints as GNU prints it), and the number of
// decimals it asks for.
type seqNumber struct {
	coef  *big.Int
	scale int  // decimal digits after the point; negative for 1e3
	neg   bool // written with a '-' (the value may be zero)
	prec  int  // decimals GNU prints for it: max(0, scale)
}

// seqOptions are seq's options: -f FORMAT, -s SEP, -w.
type seqOptions struct {
	format    string
	hasFormat bool // -f given, maybe empty
	sep       string
	equal     bool
}

var seqLongs = []longOpt{
	{name: "format", short: 'f', hasArg: true},
	{name: "separator", short: 's', hasArg: true},
	{name: "equal-width", short: 'w'},
}

func seqNew(env *Env, args []string) (*Cmd, error) {
	// Like GNU seq, stop at the first operand, and take "-1" or "-.5" for
	// a (negative) operand rather than an option.
	end := 0
	for end < len(args) {
		a := args[end]
		if a == "--" || len(a) < 2 || a[0] != '-' || a[1] == '.' || headIsDigit(a[1]) {
			break
		}
		end++
		if a == "-f" || a == "-s" || a == "--format" || a == "--separator" {
			end++ // its argument, whatever it looks like
		}
	}
	o := seqOptions{sep: "\n"}
	opts, err := getopt{cmd: "seq", shorts: "f:s:w", longs: seqLongs}.parse(args[:min(end, len(args))], func(c byte, arg string) error {
		switch c {
		case 'f':
			o.format, o.hasFormat = arg, true
		case 's':
			o.sep = arg
		case 'w':
			o.equal = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	operands := append(opts, args[min(end, len(args)):]...)
	if len(operands) > 0 && operands[0] == "--" {
		operands = operands[1:]
	}
	switch {
	case len(operands) == 0:
		return nil, usageTryf("seq", "missing operand")
	case len(operands) > 3:
		return nil, usageTryf("seq", "extra operand '%s'", operands[3])
	case o.hasFormat && o.equal:
		return nil, usageTryf("seq", "format string may not be specified when printing equal width strings")
	}
	if o.hasFormat {
		if _, _, err := seqVerb(o.format); err != nil {
			return nil, err
		}
	}
	nums := make([]seqNumber, len(operands))
	for i, s := range operands {
		n, err := seqParse(s)
		if err != nil {
			return nil, err
		}
		nums[i] = n
	}
	one := seqNumber{coef: big.NewInt(1)}
	first, incr, last := one, one, nums[len(nums)-1]
	switch len(nums) {
	case 2:
		first = nums[0]
	case 3:
		first, incr = nums[0], nums[1]
	}
	if incr.coef.Sign() == 0 {
		return nil, usageTryf("seq", "invalid Zero increment value: '%s'", operands[1])
	}
	width := 0
	if o.equal {
		for i, s := range operands {
			if strings.ContainsAny(s, "eE") {
				return nil, unsupportedf("seq", "-w with an exponent")
			}
			if len(nums) == 3 && i == 1 {
				continue
			}
			width = max(width, seqWidth(s, nums[i], max(first.prec, incr.prec)))
		}
	}
	if src := seqSource(first, incr, last, o, width); src != nil {
		return &Cmd{Source: src}, nil
	}
	return &Cmd{Fn: seqRun(first, incr, last, o, width)}, nil
}

// seqWidth is how wide -w prints the operand s, at prec decimals: as GNU
// seq reckons it, from the operand as written ("001" is 3 wide).
func seqWidth(s string, n seqNumber, prec int) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r+")
	w := len(s) + prec - n.prec
	switch {
	case n.prec > 0 && prec == 0:
		w-- // no '.'
	case n.prec == 0 && prec > 0:
		w++ // a '.'
	}
	return w
}

// seqVerb checks a -f FORMAT: one conversion of a floating-point number
// (%e %f %g and their capitals, with flags, width and precision) among
// other text, %% for a '%'. It returns the text before and after the
// conversion, with the conversion as Go's fmt spells it in between, as
// one Go format. A format GNU might take but tpipe does not (%a, %'f) is
// an *UnsupportedError: the system's seq decides.
func seqVerb(format string) (goFormat string, found bool, err error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteString("%%")
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
			j++
		}
		for j < len(format) && headIsDigit(format[j]) {
			j++
		}
		if j < len(format) && format[j] == '.' {
			j++
			for j < len(format) && headIsDigit(format[j]) {
				j++
			}
		}
		if j >= len(format) || strings.IndexByte("eEfFgG", format[j]) < 0 || found {
			return "", false, unsupportedf("seq", "-f %s", format)
		}
		b.WriteString(format[i : j+1])
		found = true
		i = j
	}
	if !found {
		return "", false, unsupportedf("seq", "-f %s", format)
	}
	return b.String(), true, nil
}

// seqParse parses a decimal number: blanks, an optional sign, digits with
// an optional point, an optional exponent. GNU also takes hexadecimal and
// inf (seq 1 inf counts without end): those are the system's seq's, and
// nan is GNU's error.
func seqParse(arg string) (seqNumber, error) {
	bad := func() (seqNumber, error) {
		return seqNumber{}, usageTryf("seq", "invalid floating point argument: '%s'", arg)
	}
	s := strings.TrimLeft(arg, " \t\n\v\f\r")
	var n seqNumber
	if s != "" && (s[0] == '+' || s[0] == '-') {
		n.neg = s[0] == '-'
		s = s[1:]
	}
	switch l := strings.ToLower(s); {
	case l == "inf" || l == "infinity":
		return n, unsupportedf("seq", "an infinite operand")
	case strings.HasPrefix(l, "0x"):
		return n, unsupportedf("seq", "a hexadecimal operand")
	case l == "nan":
		return n, usageTryf("seq", "invalid 'not-a-number' argument: '%s'", arg)
	}
	var digits []byte
	i, frac, sawPoint := 0, 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case headIsDigit(c):
			digits = append(digits, c)
			if sawPoint {
				frac++
			}
			continue
		case c == '.' && !sawPoint:
			sawPoint = true
			continue
		}
		break
	}
	if len(digits) == 0 {
		return bad()
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		e := s[i+1:]
		sign := 1
		if e != "" && (e[0] == '+' || e[0] == '-') {
			if e[0] == '-' {
				sign = -1
			}
			e = e[1:]
		}
		if e == "" {
			return bad()
		}
		for _, c := range []byte(e) {
			if !headIsDigit(c) {
				return bad()
			}
			if exp < 1e6 {
				exp = exp*10 + int(c-'0')
			}
		}
		exp *= sign
		i = len(s)
	}
	if i != len(s) {
		return bad()
	}
	if exp > 1e5 || exp < -1e5 {
		return bad() // far past anything seq can count to or print
	}
	n.coef, _ = new(big.Int).SetString(string(digits), 10)
	if n.neg {
		n.coef.Neg(n.coef)
	}
	n.scale = frac - exp
	n.prec = max(0, n.scale)
	return n, nil
}

// seqScaled returns n×10^scale, an integer for scale >= n.scale.
func seqScaled(n seqNumber, scale int) *big.Int {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-n.scale)), nil)
	return p.Mul(p, n.coef)
}

func seqRun(first, incr, last seqNumber, o seqOptions, width int) func(context.Context, *buffer.Ports) error {
	f, d, l, div, prec, negZero := seqScale(first, incr, last)
	goFormat := ""
	if o.hasFormat {
		goFormat, _, _ = seqVerb(o.format)
	}
	return func(ctx context.Context, p *buffer.Ports) error {
		w := &textWriter{out: p.Out(0)}
		var line, num []byte
		x, q := new(big.Int).Set(f), new(big.Int)
		up := d.Sign() > 0
		for i := 0; ; i++ {
			if c := x.Cmp(l); up && c > 0 || !up && c < 0 {
				break
			}
			q.Quo(x, div)
			num = num[:0]
			if i == 0 && negZero {
				num = append(num, '-')
			}
			num = seqFormat(num, q.Append(nil, 10), prec)
			num = num[:len(num)-1] // its '\n'
			line = line[:0]
			if i > 0 {
				line = append(line, o.sep...)
			}
			switch {
			case goFormat != "":
				v, _ := strconv.ParseFloat(string(num), 64)
				line = fmt.Appendf(line, goFormat, v)
			case len(num) < width:
				line = append(line, seqPad(num, width)...)
			default:
				line = append(line, num...)
			}
			if err := w.write(line); err != nil {
				return err
			}
			x.Add(x, d)
		}
		if w.started {
			if err := w.write([]byte{'\n'}); err != nil {
				return err
			}
		}
		return w.flush()
	}
}

// seqScale puts the operands at their common scale: the sequence runs
// from f by d to l, and each x of it is printed as x/div with prec
// decimals (x has no more than that: its scale is at most prec, so the
// division is exact). negZero says the first number is printed "-0".
func seqScale(first, incr, last seqNumber) (f, d, l, div *big.Int, prec int, negZero bool) {
	prec = max(first.prec, incr.prec)
	scale := max(prec, last.scale, first.scale, incr.scale)
	f, d, l = seqScaled(first, scale), seqScaled(incr, scale), seqScaled(last, scale)
	div = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-prec)), nil)
	return f, d, l, div, prec, first.neg && first.coef.Sign() == 0
}

// seqSource is seq in per-record form, a number a record, when every
// number fits an int64 at the common scale and is printed plainly (no -f,
// -s or -w): no allocation per line, and under ros a source run as calls
// from the scheduler. It returns nil for any other seq.
func seqSource(first, incr, last seqNumber, o seqOptions, width int) *task.Source {
	f, d, l, div, prec, negZero := seqScale(first, incr, last)
	if o.hasFormat || o.sep != "\n" || width != 0 || !f.IsInt64() || !d.IsInt64() || !l.IsInt64() || !div.IsInt64() {
		return nil
	}
	x, dx, lx, divx := f.Int64(), d.Int64(), l.Int64(), div.Int64()
	if dx == 1 && divx == 1 && prec == 0 && x >= 0 && !negZero {
		return seqCount(x, lx)
	}
	var line, num []byte
	done := false
	i := 0
	return &task.Source{Next: func() ([]byte, error) {
		if done || dx > 0 && x > lx || dx < 0 && x < lx {
			return nil, io.EOF
		}
		line = line[:0]
		if i == 0 && negZero {
			line = append(line, '-')
		}
		i++
		num = strconv.AppendInt(num[:0], x/divx, 10)
		line = seqFormat(line, num, prec)
		next := x + dx
		if (next > x) != (dx > 0) {
			done = true // overflow: past any int64 limit, so past l
		}
		x = next
		return line, nil
	}}
}

// seqPad pads num with zeros after its sign to width, as printf's %0W.
func seqPad(num []byte, width int) []byte {
	sign := 0
	if len(num) > 0 && num[0] == '-' {
		sign = 1
	}
	pad := width - len(num)
	out := make([]byte, 0, width)
	out = append(out, num[:sign]...)
	for range pad {
		out = append(out, '0')
	}
	return append(out, num[sign:]...)
}

// seqCount is seqSource for the commonest seq, whole numbers from x >= 0
// up by one to l: the line is kept as text and its digits carried in
// place, as a person counts, rather than formatted anew for every number.
func seqCount(x, l int64) *task.Source {
	line := append(strconv.AppendInt(nil, x, 10), '\n')
	first := true
	return &task.Source{Next: func() ([]byte, error) {
		if first {
			first = false
		} else {
			if x == l {
				return nil, io.EOF
			}
			x++
			i := len(line) - 2
			for i >= 0 && line[i] == '9' {
				line[i] = '0'
				i--
			}
			if i < 0 {
				line = append(line[:1], line...)
				line[0] = '1'
			} else {
				line[i]++
			}
		}
		if x > l {
			return nil, io.EOF
		}
		return line, nil
	}}
}

// seqFormat appends the integer num (decimal digits, maybe with a '-')
// divided by 10^prec, with exactly prec decimals and a newline.
func seqFormat(line, num []byte, prec int) []byte {
	if len(num) > 0 && num[0] == '-' {
		line = append(line, '-')
		num = num[1:]
	}
	if prec == 0 {
		line = append(line, num...)
		return append(line, '\n')
	}
	if n := len(num); n > prec {
		line = append(line, num[:n-prec]...)
		line = append(line, '.')
		line = append(line, num[n-prec:]...)
	} else {
		line = append(line, '0', '.')
		for ; n < prec; n++ {
			line = append(line, '0')
		}
		line = append(line, num...)
	}
	return append(line, '\n')
}
