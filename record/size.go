package record

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ParseSize parses a positive size in bytes: decimal digits, optionally
// followed by a unit K, M, G, T, P or E (powers of 1024), which may be
// spelt with a trailing "B" or "iB" and in either case: "512", "64K",
// "64KiB", "4MB", "1g". A bare "B" suffix is accepted too ("512B").
//
// It rejects signs, spaces, zero and sizes that do not fit an int; the
// error of one too large wraps ErrSizeTooLarge.
func ParseSize(s string) (int, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	return n, nil
}

var errSizeSyntax = errors.New("want digits and an optional unit K, M, G or T")

// ErrSizeTooLarge is wrapped by ParseSize's error for a size that does
// not fit an int.
var ErrSizeTooLarge = errors.New("too large")

func parseSize(s string) (int, error) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	digits, unit := s[:i], strings.ToUpper(s[i:])
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("size %q: must be positive", s)
	}
	if digits == "" {
		return 0, fmt.Errorf("size %q: %w", s, errSizeSyntax)
	}
	var mult uint64
	switch unit {
	case "", "B":
		mult = 1
	case "K", "KB", "KIB":
		mult = 1 << 10
	case "M", "MB", "MIB":
		mult = 1 << 20
	case "G", "GB", "GIB":
		mult = 1 << 30
	case "T", "TB", "TIB":
		mult = 1 << 40
	case "P", "PB", "PIB":
		mult = 1 << 50
	case "E", "EB", "EIB":
		mult = 1 << 60
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (want K, M, G or T)", s, s[i:])
	}
	var n uint64
	for _, c := range []byte(digits) {
		d := uint64(c - '0')
		if n > (math.MaxInt-d)/10 {
			return 0, fmt.Errorf("size %q: %w", s, ErrSizeTooLarge)
		}
		n = n*10 + d
	}
	if n > math.MaxInt/mult {
		return 0, fmt.Errorf("size %q: %w", s, ErrSizeTooLarge)
	}
	if n == 0 {
		return 0, fmt.Errorf("size %q: must be positive", s)
	}
	return int(n * mult), nil
}

// FormatSize writes n bytes the way ParseSize reads them, with the largest
// unit that divides n exactly: 262144 is "256K", 4194304 is "4M", 1000 is
// "1000".
func FormatSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprint(n)
}
