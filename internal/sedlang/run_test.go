package sedlang

import (
	"errors"
	"strings"
	"testing"
)

// runScript parses script and runs it on input, cut into lines as the
// caller's framing would (the last line may lack its '\n'). It returns the
// output, the status, and the run error if any.
func runScript(t testing.TB, script string, o Options, input string) (string, int, error) {
	t.Helper()
	sc, err := Parse(Exprs(script), o)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return feed(NewRun(sc, IO{}), input)
}

func feed(r *Run, input string) (string, int, error) {
	var out strings.Builder
	emit := func(rec []byte) error {
		out.Write(rec)
		return nil
	}
	var runErr error
	for _, line := range strings.SplitAfter(input, "\n") {
		if line == "" || r.Done() {
			continue
		}
		if err := r.Line([]byte(line), emit); err != nil {
			runErr = err
		}
	}
	if err := r.End(emit); err != nil {
		runErr = err
	}
	return out.String(), r.Status(), runErr
}

const text = "one two\nfoo bar foo\n\nlast"

// runTests are scripts with the output GNU sed 4.9 gives in the C locale.
var runTests = []struct {
	script string
	quiet  bool
	in     string
	out    string
	status int
}{
	{"p", false, "a\nb\n", "a\na\nb\nb\n", 0},
	{"p", true, "a\nb\n", "a\nb\n", 0},
	{"#n\np", false, "a\n", "a\n", 0},
	{"d", false, text, "", 0},
	{"=", false, "a\nb", "1\na\n2\nb", 0},
	{"s/foo/X/", false, text, "one two\nX bar foo\n\nlast", 0},
	{"s/foo/X/g", false, text, "one two\nX bar X\n\nlast", 0},
	{"s/o/0/2", false, text, "one tw0\nfo0 bar foo\n\nlast", 0},
	{"s/o/0/2g", false, text, "one tw0\nfo0 bar f00\n\nlast", 0},
	{"s/O/0/gI", false, "oOo\n", "000\n", 0},
	{"s/x*/-/g", false, "abc\n", "-a-b-c-\n", 0},
	{`s/\(o\)\(n\)/\2\1/`, false, "one\n", "noe\n", 0},
	{"s/b/[&]/;s/a/\\n/", false, "ab\n", "\n[b]\n", 0},
	{"s/$/!/", false, "a\nb", "a!\nb!", 0},
	{"s/a/b/p", true, "a\nc\n", "b\n", 0},
	{"y/abc/xyz/", false, "aabbcc\n", "xxyyzz\n", 0},
	{"2q", false, "a\nb\nc\n", "a\nb\n", 0},
	{"2q5", false, "a\nb\nc\n", "a\nb\n", 5},
	{"2Q", false, "a\nb\nc\n", "a\n", 0},
	{"q", false, "a", "a\n", 0}, // q writes its line with a newline
	{"$!d", false, "a\nb\nc\n", "c\n", 0},
	{"$p", true, "", "", 0},
	{"2,3p", true, "a\nb\nc\nd\n", "b\nc\n", 0},
	{"3,2p", true, "a\nb\nc\nd\n", "c\n", 0},
	{"/b/,/c/p", true, "a\nb\nc\nd\nb\n", "b\nc\nb\n", 0},
	{"/b/,+1p", true, "a\nb\nc\nd\n", "b\nc\n", 0},
	{"/a/,~4p", true, "a\nb\nc\nd\ne\n", "a\nb\nc\nd\n", 0},
	{"0,/a/p", true, "a\nb\na\n", "a\n", 0},
	{"1,/a/p", true, "a\nb\na\n", "a\nb\na\n", 0},
	{"0~2p", true, "a\nb\nc\nd\n", "b\nd\n", 0},
	{"2~0p", true, "a\nb\nc\n", "b\n", 0},
	{"/a/{/b/{=;p}}", true, "ab\na\nb\n", "1\nab\n", 0},
	{"2!d", false, "a\nb\nc\n", "b\n", 0},
	{"p;p", true, "a", "a\na", 0}, // a last line without its newline stays so

	// Back-references, on the backtracker.
	{`s/\(.\)\1/<&>/g`, false, "book keeper\n", "b<oo>k k<ee>per\n", 0},
	{`s/\(.\)\1/<\1>/2`, false, "aabbcc\n", "aa<b>cc\n", 0},
	{`s/\(.\)\1/<\1>/2g`, false, "aabbcc\n", "aa<b><c>\n", 0},
	{`s/\(a\)\1/x/Ig`, false, "aA Ab\n", "x Ab\n", 0},
	{`s/\(x*\)\1/-/g`, false, "ab\n", "-a-b-\n", 0},
	{`s/\(a*\)\1/<\1>/g`, false, "aaaaab\n", "<aa>a<>b<>\n", 0},
	{`/\(o\)\1/d`, false, "foo\nbar\n", "bar\n", 0},
	{`/\(o\)\1/s//0/`, false, "foo\nbar\n", "f0\nbar\n", 0},
	{`$!N;/^\(.*\)\n\1$/!P;D`, false, "a\na\nb\n", "a\nb\n", 0},
	{`N;s/^\(.\)\1/[&]/Mg`, false, "aab\nbbc\n", "[aa]b\n[bb]c\n", 0},
	{`N;s/\(.\)\1$/[&]/Mg`, false, "baa\ncbb\n", "b[aa]\nc[bb]\n", 0},
	{`N;s/\(.\).*\1/[&]/M`, false, "ab\na\n", "ab\na\n", 0},
	{`s/\w\>/|/g`, false, "ab cd\n", "a| c|\n", 0},
	{`s/\(.\)\1/\U\1-/g`, false, "aabb\n", "A-B-\n", 0},

	// Fixed bugs.
	{"s/o/0/99999999999999999999", false, "foo\n", "foo\n", 0}, // N overflowed, and s panicked
	{"s/o*/0/99999999999999999999", false, "foo\n", "foo\n", 0},
	{"/b/,+p", true, "a\nb\nc\na\nb\n", "b\nb\n", 0}, // a missing N was refused; GNU reads 0
	{"/b/,~p", true, "a\nb\nc\na\nb\n", "b\nb\n", 0},
	{"2,~p", true, "a\nb\nc\n", "b\n", 0},
}

func TestRun(t *testing.T) {
	for _, tc := range runTests {
		out, status, err := runScript(t, tc.script, Options{Quiet: tc.quiet}, tc.in)
		if out != tc.out || status != tc.status || err != nil {
			t.Errorf("%q on %q: %q, status %d, %v; want %q, status %d", tc.script, tc.in, out, status, err, tc.out, tc.status)
		}
	}
}

func TestRunExtended(t *testing.T) {
	out, _, err := runScript(t, "s/(o+)|(a)/[\\1\\2]/g", Options{Extended: true}, "foo bar\n")
	if want := "f[oo] b[a]r\n"; out != want || err != nil {
		t.Errorf("got %q, %v; want %q", out, err, want)
	}
}

// The empty regex before any other stops the run: an *Error once, status
// 1, and what was pending still written.
func TestRunNoPrevious(t *testing.T) {
	for _, tc := range []struct{ script, in, out string }{
		{"s//x/", "a\nb\n", ""},
		{"2s/a/x/;s//y/", "a\nb\n", ""},
		{"p;//p", "a", "a"},
		{"$!d;s//x/", "a\nb", ""},
	} {
		out, status, err := runScript(t, tc.script, Options{}, tc.in)
		var e *Error
		if !errors.As(err, &e) || e.Msg != "no previous regular expression" || status != 1 || out != tc.out {
			t.Errorf("%q: %q, status %d, %v", tc.script, out, status, err)
		}
	}
}

// A Run takes a new input after Reset, and a Script serves many Runs.
func TestRunReset(t *testing.T) {
	sc, err := Parse(Exprs("$!d;="), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRun(sc, IO{})
	for range 2 {
		if out, _, _ := feed(r, "a\nb\nc\n"); out != "3\nc\n" {
			t.Fatalf("got %q", out)
		}
		r.Reset()
	}
	if out, _, _ := feed(NewRun(sc, IO{}), "x\n"); out != "1\nx\n" {
		t.Fatalf("a second run: %q", out)
	}
}

// An error of emit stops the line and comes back as is.
func TestRunEmitError(t *testing.T) {
	sc, _ := Parse(Exprs("p"), Options{})
	boom := errors.New("boom")
	r := NewRun(sc, IO{})
	if err := r.Line([]byte("a\n"), func([]byte) error { return boom }); err != boom {
		t.Fatalf("got %v", err)
	}
}

func TestLineAllocs(t *testing.T) {
	lines := [][]byte{
		[]byte("2024-01-01 INFO all is well\n"),
		[]byte("2024-01-01 ERROR disk is full\n"),
	}
	emit := func([]byte) error { return nil }
	for _, script := range []string{"s/ERROR/E/g", "/INFO/d", "$p", "y/abc/ABC/", "2,/x/s/a/b/2"} {
		sc, err := Parse(Exprs(script), Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := NewRun(sc, IO{})
		allocs := testing.AllocsPerRun(100, func() {
			for _, l := range lines {
				r.Line(l, emit)
			}
		})
		if allocs > 0 {
			t.Errorf("%q: %v allocations", script, allocs)
		}
	}
}

// A space past IO.MaxSpace ends the run with a *SpaceError, whether it
// grows by G, H, N or s.
func TestRunMaxSpace(t *testing.T) {
	for _, script := range []string{"G;h", "H", ":a;N;ba", "G;s/.*/&&/;h"} {
		sc, err := Parse(Exprs(script), Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = feed(NewRun(sc, IO{MaxSpace: 64}), strings.Repeat("0123456789\n", 40))
		var se *SpaceError
		if !errors.As(err, &se) || se.Max != 64 {
			t.Errorf("%q: got %v", script, err)
		}
	}
}
