package builtin

import (
	"strings"
	"testing"

	"github.com/benhoyt/goawk/parser"
)

// The rewriting of for-in loops: loops in code are rewritten, words in
// strings, regular expressions and comments are not, a / is told from a
// regular expression as awk's grammar tells it, and a function with a
// loop gets the snapshot as extra parameters.
func TestAwkOrderForInRewrite(t *testing.T) {
	for _, tc := range []struct {
		src   string
		sites int      // loops rewritten
		keep  []string // texts that must stay as written
	}{
		{`BEGIN { for (k in a) print k }`, 1, nil},
		{`BEGIN { print "for (k in a)" }`, 0, nil},
		{"# for (k in a)\nBEGIN { print 1 }", 0, nil},
		{`$0 ~ /for \(k in a\)/ { print }`, 0, nil},
		{`{ x = $1 / 2; y = x / 3 } /for (k in a)/ { n++ } END { for (k in c) print k / 2 }`, 1, []string{"/for (k in a)/"}},
		{`{ n = length / 2 } END { for (k in c) print k }`, 1, nil},
		{"function f() {\n\tfor (k in a) print k\n}\nBEGIN { f() }", 1, []string{"function f(__tpk1, __tpi1)"}},
		{"function g(x, y,   k) { for (k in x) for (j in y) n++; return n }\nBEGIN { g(a, b) }", 2,
			[]string{"function g(x, y,   k, __tpk1, __tpi1, __tpk2, __tpi2)"}},
		{`BEGIN { for (k in ENVIRON) n++; print n > 0 }`, 0, nil},
		{`BEGIN { for (i = 0; i < 3; i++) for (k in a) print k }`, 1, nil},
		{`BEGIN { for ((k) in a) print k }`, 0, nil},
	} {
		out, ok := awkRewrite(tc.src, true)
		if !ok {
			if tc.sites != 0 {
				t.Errorf("%q: not rewritten", tc.src)
			}
			continue
		}
		if got := strings.Count(out, "__tpkeys(") - 1; got != tc.sites { // one in the function itself
			t.Errorf("%q: %d loops rewritten, want %d:\n%s", tc.src, got, tc.sites, out)
		}
		for _, k := range tc.keep {
			if !strings.Contains(out, k) {
				t.Errorf("%q: lost %q:\n%s", tc.src, k, out)
			}
		}
		if _, err := parser.ParseProgram([]byte(out), &parser.ParserConfig{Funcs: (&awkKeys{}).funcs()}); err != nil {
			t.Errorf("%q: the rewritten program does not parse: %v\n%s", tc.src, err, out)
		}
	}
}

// Keys in order: integers as awk writes them by value, then the rest by
// bytes.
func TestAwkSortKeys(t *testing.T) {
	got := awkSortKeys(strings.Split("b,10,-3,2,01,1.5,,a,0,-0,+4,99999999999999999999,9", ","))
	want := "-3,0,2,9,10,,+4,-0,01,1.5,99999999999999999999,a,b"
	if strings.Join(got, ",") != want {
		t.Errorf("got %s, want %s", strings.Join(got, ","), want)
	}
}

// A program GoAWK parses still parses once rewritten, and a rewriting
// changes nothing where nothing needs it.
func FuzzAwkRewrite(f *testing.F) {
	for _, s := range []string{
		`BEGIN { for (k in a) print k }`,
		`function f(x,  k) { for (k in x) n++; return n } { a[$1]; print f(a) }`,
		`{ x = $1 / 2 / 3; print "for (k in a)", /for (k in b)/ }`,
		"BEGIN { print \"a\\\nb\", \"\\u20\", toupper(\"x\"), 0x1F, 017 }",
		`END { for (i in arr) for (j in arr) print i, j }`,
		`{ print length / 2; for (k in c) delete c[k] }`,
		`BEGIN { getline line < "f"; split(line, p); for (i in p) print p[i] }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if _, err := parser.ParseProgram([]byte(src), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})}); err != nil {
			return
		}
		if out, ok := awkRewriteNumbers(src); ok {
			if _, err := parser.ParseProgram([]byte(out), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})}); err != nil {
				t.Fatalf("%q parses, but not with its numbers rewritten: %v\n%s", src, err, out)
			}
		}
		for _, utf8 := range []bool{false, true} {
			out, ok := awkRewrite(src, utf8)
			if !ok {
				continue
			}
			if _, err := parser.ParseProgram([]byte(out), &parser.ParserConfig{Funcs: awkFuncs(&awkKeys{})}); err != nil {
				t.Fatalf("%q parses, but not once rewritten: %v\n%s", src, err, out)
			}
		}
	})
}

// Whatever the program, reading awk's command line (the checks that send
// it to gawk, the fast forms, the rewriting) ends in a command or an
// error, never a panic.
func FuzzAwkCommandLine(f *testing.F) {
	for _, s := range []string{
		`$9 != 200 {print $7}`, `/a[\]]b/`, `$1 ~ /^[[:digit:]]\./ {n++} END {print n}`, `split($0, a, "")`,
		`{print $(-1)}`, `BEGIN {FS = "\""} NF {print NR ": " $2, NF}`, `{s[$1] += $2} END {for (k in s) print k, s[k]}`,
		`END {print NR}`, `{print and(1, 3), 0x1f}`,
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, prog string, utf8 bool) {
		loc := "LC_ALL=C"
		if utf8 {
			loc = "LC_ALL=C.UTF-8"
		}
		awkNew(&Env{Environ: []string{loc}}, []string{prog})
	})
}
