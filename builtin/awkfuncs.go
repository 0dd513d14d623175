package builtin

// gawk's bit functions, which GoAWK lacks (a program calling them failed
// to parse and ran on the system's awk), as Go functions GoAWK calls
// (interp.Config.Funcs): and, or and xor of two or more values, lshift
// and rshift. Values are truncated to unsigned integers as gawk's are; a
// negative one stops the program with gawk's message. compl is left out:
// gawk's answer depends on its number precision.

import (
	"fmt"
	"math"
)

// awkBitFuncs are the bit functions by name.
var awkBitFuncs = map[string]any{
	"and": func(v ...float64) (float64, error) {
		return awkBitsOf("and", v, func(a, b uint64) uint64 { return a & b })
	},
	"or": func(v ...float64) (float64, error) {
		return awkBitsOf("or", v, func(a, b uint64) uint64 { return a | b })
	},
	"xor": func(v ...float64) (float64, error) {
		return awkBitsOf("xor", v, func(a, b uint64) uint64 { return a ^ b })
	},
	"lshift": func(v, n float64) (float64, error) {
		return awkShift("lshift", v, n, func(a uint64, n uint) uint64 { return a << n })
	},
	"rshift": func(v, n float64) (float64, error) {
		return awkShift("rshift", v, n, func(a uint64, n uint) uint64 { return a >> n })
	},
}

// awkBitsOf folds op over the values of the function name.
func awkBitsOf(name string, v []float64, op func(a, b uint64) uint64) (float64, error) {
	if len(v) < 2 {
		return 0, fmt.Errorf("fatal: %s: called with less than two arguments", name)
	}
	var r uint64
	for i, x := range v {
		if x < 0 {
			return 0, fmt.Errorf("fatal: %s: argument %d negative value %s is not allowed", name, i+1, awkFormatNumber(nil, x))
		}
		if i == 0 {
			r = awkUint(x)
		} else {
			r = op(r, awkUint(x))
		}
	}
	return float64(r), nil
}

// awkShift shifts v by n bits, the count taken modulo 64 as the
// machine's shift takes it under gawk.
func awkShift(name string, v, n float64, op func(a uint64, n uint) uint64) (float64, error) {
	if v < 0 || n < 0 {
		return 0, fmt.Errorf("fatal: %s(%f, %f): negative values are not allowed", name, v, n)
	}
	return float64(op(awkUint(v), uint(awkUint(n)&63))), nil
}

// awkUint is x truncated to an unsigned integer, 0 past the largest.
func awkUint(x float64) uint64 {
	if math.IsNaN(x) || x >= 1<<64 {
		return 0
	}
	return uint64(x)
}
