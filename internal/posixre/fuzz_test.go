package posixre

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTranslate checks, for any pattern in any dialect, that translation
// does not panic; that a refusal is an *Error pointing inside the pattern;
// that a translation compiles, but for RE2's limits on size; that a
// pattern with no special character matches as a plain string does; and
// that a Matcher decides as its regexp does.
func FuzzTranslate(f *testing.F) {
	for _, tc := range translateTests {
		f.Add(tc.pat, tc.o.ere, tc.o.icase, tc.o.sed)
	}
	for _, tc := range errorTests {
		f.Add(tc.pat, tc.o.ere, tc.o.icase, tc.o.sed)
	}
	for _, s := range []string{"ERROR.*timeout", "^foo$", `\<w\>`, "[]x-]", "a[Bb]c", "x\xffy", "é*"} {
		f.Add(s, false, false, false)
		f.Add(s, true, true, true)
	}
	f.Fuzz(func(t *testing.T, pat string, ere, icase, sed bool) {
		d := dialect{ere: ere, icase: icase, sed: sed}
		syn, fl := d.args()
		src, err := Translate(pat, syn, fl)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" || e.Offset < 0 || e.Offset > len(pat) {
				t.Fatalf("%q %+v: error %#v", pat, d, err)
			}
			return
		}
		re, err := regexp.Compile(src)
		if err != nil {
			if isLimit(err) {
				return
			}
			t.Fatalf("%q %+v: translation %q does not compile: %v", pat, d, src, err)
		}
		if len(pat) > 256 {
			// Go's regexp takes time in the product of pattern and line
			// lengths: long inputs would stall the fuzzer, not find more.
			return
		}
		lines := probes(pat)
		if IsLiteral(pat, syn) && utf8.ValidString(pat) {
			for _, line := range lines {
				want := strings.Contains(line, pat)
				if icase {
					want = bytes.Contains(LowerASCII([]byte(line)), LowerASCII([]byte(pat)))
				}
				if got := re.MatchString(line); got != want {
					t.Fatalf("literal %q %+v (%q) on %q: %v, want %v", pat, d, src, line, got, want)
				}
			}
		}
		m := NewMatcher(re)
		for _, line := range lines {
			if got, want := m.Match([]byte(line)), re.MatchString(line); got != want {
				t.Fatalf("%q %+v (%q) on %q: Matcher says %v, regexp %v", pat, d, src, line, got, want)
			}
		}
	})
}

// isLimit reports whether err is RE2 refusing a valid pattern for its
// size, as GNU would not: Compile reports those as an *Error.
func isLimit(err error) bool {
	for _, s := range []string{"expression too large", "expression nests too deeply", "invalid repeat count"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// probes returns lines to try a pattern on: itself, inside other text, in
// the other case, cut short, and empty.
func probes(pat string) []string {
	return []string{
		pat,
		"x" + pat + "\ny",
		strings.ToUpper(pat),
		strings.ToLower(pat),
		pat[:len(pat)/2],
		pat + pat,
		"",
	}
}
