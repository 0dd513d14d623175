package builtin

import (
	"context"
	"math/big"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/buffer"
)

func init() {
	register(&Spec{
		Name:  "seq",
		Usage: "seq [FIRST [INCR]] LAST",
		Help: "Write the numbers from FIRST (default 1) to LAST by INCR (default 1), one a " +
			"line. Decimal numbers (1.5, -.5, 2e3) are printed with as many decimals as " +
			"FIRST or INCR has; arithmetic is exact.",
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

func seqNew(env *Env, args []string) (*Cmd, error) {
	// Like GNU seq, stop at the first operand, and take "-1" or "-.5" for
	// a (negative) operand rather than an option.
	var operands []string
	for i, a := range args {
		if a == "--" {
			operands = args[i+1:]
			break
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '.' && !headIsDigit(a[1]) {
			if strings.HasPrefix(a, "--") {
				return nil, usagef("seq", "unrecognized option '%s'", a)
			}
			return nil, usagef("seq", "invalid option -- '%c'", a[1])
		}
		operands = args[i:]
		break
	}
	switch {
	case len(operands) == 0:
		return nil, usagef("seq", "missing operand")
	case len(operands) > 3:
		return nil, usagef("seq", "extra operand '%s'", operands[3])
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
		return nil, usagef("seq", "invalid Zero increment value: '%s'", operands[1])
	}
	return &Cmd{Fn: seqRun(first, incr, last)}, nil
}

// seqParse parses a decimal number: blanks, an optional sign, digits with
// an optional point, an optional exponent. GNU also takes hexadecimal and
// inf; tpipe does not.
func seqParse(arg string) (seqNumber, error) {
	bad := func() (seqNumber, error) {
		return seqNumber{}, usagef("seq", "invalid floating point argument: '%s'", arg)
	}
	s := strings.TrimLeft(arg, " \t\n\v\f\r")
	var n seqNumber
	if s != "" && (s[0] == '+' || s[0] == '-') {
		n.neg = s[0] == '-'
		s = s[1:]
	}
	if strings.EqualFold(s, "nan") {
		return seqNumber{}, usagef("seq", "invalid 'not-a-number' argument: '%s'", arg)
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

func seqRun(first, incr, last seqNumber) func(context.Context, *buffer.Ports) error {
	prec := max(first.prec, incr.prec)
	scale := max(prec, last.scale, first.scale, incr.scale)
	f, d, l := seqScaled(first, scale), seqScaled(incr, scale), seqScaled(last, scale)
	// x is printed with prec decimals; it has no more than that (its scale is
	// at most prec), so the division below is exact.
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-prec)), nil)
	negZero := first.neg && first.coef.Sign() == 0
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		var line []byte
		if f.IsInt64() && d.IsInt64() && l.IsInt64() && div.IsInt64() {
			return seqInt64(out, f.Int64(), d.Int64(), l.Int64(), div.Int64(), prec, negZero)
		}
		x, q := new(big.Int).Set(f), new(big.Int)
		up := d.Sign() > 0
		for i := 0; ; i++ {
			if c := x.Cmp(l); up && c > 0 || !up && c < 0 {
				return nil
			}
			q.Quo(x, div)
			line = line[:0]
			if i == 0 && negZero {
				line = append(line, '-')
			}
			line = seqFormat(line, q.Append(nil, 10), prec)
			if err := out.Write(line); err != nil {
				return err
			}
			x.Add(x, d)
		}
	}
}

// seqInt64 is seqRun's loop when every number fits an int64 at the common
// scale: no allocation per line.
func seqInt64(out *buffer.Output, x, d, l, div int64, prec int, negZero bool) error {
	var line, num []byte
	for i := 0; ; i++ {
		if d > 0 && x > l || d < 0 && x < l {
			return nil
		}
		line = line[:0]
		if i == 0 && negZero {
			line = append(line, '-')
		}
		num = strconv.AppendInt(num[:0], x/div, 10)
		line = seqFormat(line, num, prec)
		if err := out.Write(line); err != nil {
			return err
		}
		next := x + d
		if (next > x) != (d > 0) {
			return nil // overflow: past any int64 limit, so past l
		}
		x = next
	}
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
