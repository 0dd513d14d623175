package sedlang

import (
	"errors"
	"strings"
	"testing"
)

// fuzzLines are the lines every script that parses is run on, after the
// fuzzer's own input: a few words, an empty line, a last line without its
// newline.
const fuzzLines = "one two three\nfoo bar foo\n\n(a|b) {1,2} x*y+z?\nlast"

// FuzzParse checks that no script text makes Parse panic, that a refusal
// is an *Error inside the script, and that a script that parses runs on a
// few lines without panicking, the same way twice.
func FuzzParse(f *testing.F) {
	for _, tc := range runTests {
		f.Add(tc.script, false, tc.quiet, tc.in)
	}
	for _, tc := range parseErrorTests {
		f.Add(strings.Join(tc.pieces, "\n"), tc.ere, false, "")
	}
	for _, s := range []string{
		"s/[a-z]*/<&>/g", `s/\(foo\) \(bar\)/\2 \1/`, "s,foo\\,bar,X,", "s.o\\.b.X.",
		"s/ /\\\n/", "y,a\\,b,\\\\x\\,,", "/foo/,/qux/p", "0,/foo/p", "1~2p", "$!N",
		"/x/I,+2{s/a/b/2g;=}", "\\%a%p", "s/a/\\t\\n&\\0/", "2q7", "#n\n$=",
	} {
		f.Add(s, false, false, "")
		f.Add(s, true, true, "a\nb")
	}
	f.Fuzz(func(t *testing.T, script string, ere, quiet bool, input string) {
		sc, err := Parse(Exprs(script), Options{Extended: ere, Quiet: quiet})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Expr != 1 || e.Char < 0 || e.Char > len(script) || e.Msg == "" {
				t.Fatalf("%q: error %#v", script, err)
			}
			return
		}
		r := NewRun(sc, IO{})
		in := input + "\n" + fuzzLines
		out1, status1, err1 := feed(r, in)
		r.Reset()
		out2, status2, err2 := feed(r, in)
		if out1 != out2 || status1 != status2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: two runs differ: %q %d %v, then %q %d %v", script, out1, status1, err1, out2, status2, err2)
		}
		var e *Error
		if err1 != nil && !errors.As(err1, &e) {
			t.Fatalf("%q: run error %#v", script, err1)
		}
	})
}
