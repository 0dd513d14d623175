package sedlang

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// fuzzLines are the lines every script that parses is run on, after the
// fuzzer's own input: a few words, an empty line, a last line without its
// newline.
const fuzzLines = "one two three\nfoo bar foo\n\n(a|b) {1,2} x*y+z?\nlast"

// errFuzzStop ends a fuzzed run that loops too long.
var errFuzzStop = errors.New("fuzz: looped too long")

// fuzzIO bounds a fuzzed run: a script may loop or grow its spaces
// without end (":a;ba", ":a;G;h;ba"), as in GNU sed; Stop and MaxSpace
// end it. Files read as empty and written to nowhere.
func fuzzIO() IO {
	stops := 0
	return IO{
		Open:   func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("r1\nr2\n")), nil },
		Create: func(string) (io.WriteCloser, error) { return nopWriteCloser{io.Discard}, nil },
		Stderr: io.Discard,
		Stop: func() error {
			if stops++; stops > 2 {
				return errFuzzStop
			}
			return nil
		},
		MaxSpace: 256,
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// fuzzSeeds are scripts that reach every command and address form.
var fuzzSeeds = []string{
	"s/[a-z]*/<&>/g", `s/\(foo\) \(bar\)/\2 \1/`, "s,foo\\,bar,X,", "s.o\\.b.X.",
	"s/ /\\\n/", "y,a\\,b,\\\\x\\,,", "/foo/,/qux/p", "0,/foo/p", "1~2p", "$!N",
	"/x/I,+2{s/a/b/2g;=}", "\\%a%p", "s/a/\\t\\n&\\0/", "2q7", "#n\n$=",
	"$!N;P;D", ":a;N;$!ba;s/\\n/,/g", "1!G;h;$!d", "x;G;H;g;h", "n;n;d", "N;N;D",
	"a\\\nfoo\\\nbar", "i hello", "2,3c\\gone", "r f", "R f", "w f", "W f", "s/o/0/w f",
	"w /dev/stdout", "l;l 5;l 0", "F;z", "s/\\w\\+/\\u\\L&/g", "s/x*$/-/;s/^ */>/",
	"s/[/]/x/g", `s/[\/]/x/`, "2d;2,4p", "/a/,~3!d", "v 4.2", "bx;:x;tx;Tx",
	":a;s/^.\\{1,5\\}$/ &/;ta", "/^$/M,/x/Mp", "s/a.b/X/M", "0r f", "Q3",
	`s/\(.\)\1/<\1>/2g`, `/\(o\)\1/Is//\U&/`, `$!N;/^\(.*\)\n\1$/!P;D`, `N;s/^\(.\)\1/x/Mg`,
	`s/\(a*\)*b\1/x/`, `s/\>/|/g`,
}

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
	for _, s := range fuzzSeeds {
		f.Add(s, false, false, "")
		f.Add(s, true, true, "a\nb")
	}
	f.Fuzz(func(t *testing.T, script string, ere, quiet bool, input string) {
		sc, err := Parse(Exprs(script), Options{Extended: ere, Quiet: quiet})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" || !e.NoPlace && (e.Expr != 1 || e.Char < 0 || e.Char > len(script)) {
				t.Fatalf("%q: error %#v", script, err)
			}
			return
		}
		in := input + "\n" + fuzzLines
		out1, status1, err1 := fuzzRun(sc, in)
		out2, status2, err2 := fuzzRun(sc, in)
		if out1 != out2 || status1 != status2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: two runs differ: %q %d %v, then %q %d %v", script, out1, status1, err1, out2, status2, err2)
		}
		var e *Error
		var se *SpaceError
		if err1 != nil && !errors.As(err1, &e) && !errors.As(err1, &se) && err1 != errFuzzStop {
			t.Fatalf("%q: run error %#v", script, err1)
		}
	})
}

// FuzzLines runs fixed scripts on fuzzed input, NUL-separated or not: no
// panic, and every output record but the last ends in a newline.
func FuzzLines(f *testing.F) {
	f.Add("a\nb\nc", false)
	f.Add("a\x00b\nc\x00", true)
	f.Add("\n\n\x00", true)
	f.Fuzz(func(t *testing.T, input string, nul bool) {
		for _, script := range fuzzSeeds {
			sc, err := Parse(Exprs(script), Options{NullData: nul})
			if err != nil {
				continue
			}
			r := NewRun(sc, fuzzIO())
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			var recs []string
			emit := func(rec []byte) error {
				recs = append(recs, string(rec))
				return nil
			}
			delim := "\n"
			if nul {
				delim = "\x00"
			}
			for _, line := range strings.SplitAfter(input, delim) {
				if line != "" && r.Line([]byte(line), emit) != nil {
					break
				}
			}
			r.End(emit)
			r.Close()
			for i, rec := range recs {
				if i < len(recs)-1 && !strings.HasSuffix(rec, "\n") {
					t.Fatalf("%q on %q: record %d of %d lacks its newline: %q", script, input, i, len(recs), rec)
				}
			}
		}
	})
}

// fuzzRun runs sc on input with fuzzIO's bounds.
func fuzzRun(sc *Script, input string) (string, int, error) {
	r := NewRun(sc, fuzzIO())
	if err := r.Start(); err != nil {
		return "", 0, err
	}
	defer r.Close()
	return feed(r, input)
}
