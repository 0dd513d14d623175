package sedlang

import (
	"errors"
	"strings"
	"testing"
)

// parseErrorTests are scripts GNU sed 4.9 rejects, with where and why, as
// it says so: "-e expression #EXPR, char CHAR: MSG".
var parseErrorTests = []struct {
	pieces []string
	ere    bool
	expr   int
	char   int
	msg    string
}{
	{[]string{"s/a/b"}, false, 1, 5, "unterminated `s' command"},
	{[]string{"s/a"}, false, 1, 3, "unterminated `s' command"},
	{[]string{"s/a/b/z"}, false, 1, 7, "unknown option to `s'"},
	{[]string{"/a"}, false, 1, 2, "unterminated address regex"},
	{[]string{"p x"}, false, 1, 3, "extra characters after command"},
	{[]string{"3,"}, false, 1, 2, "unexpected `,'"},
	{[]string{`s/\(a/b/`}, false, 1, 8, `Unmatched ( or \(`},
	{[]string{`s/a/\1/`}, false, 1, 7, "invalid reference \\1 on `s' command's RHS"},
	{[]string{`s/(a)|b/\2/`}, true, 1, 11, "invalid reference \\2 on `s' command's RHS"},
	{[]string{"q q"}, false, 1, 3, "extra characters after command"},
	{[]string{"{p"}, false, 1, 0, "unmatched `{'"},
	{[]string{"p}"}, false, 1, 2, "unexpected `}'"},
	{[]string{"s/a/b/gg"}, false, 1, 8, "multiple `g' options to `s' command"},
	{[]string{"s/a/b/pp"}, false, 1, 8, "multiple `p' options to `s' command"},
	{[]string{"s/a/b/0"}, false, 1, 7, "number option to `s' command may not be zero"},
	{[]string{"s/a/b/1g2"}, false, 1, 9, "multiple number options to `s' command"},
	{[]string{"1,2,3p"}, false, 1, 4, "unknown command: `,'"},
	{[]string{"0p"}, false, 1, 2, "invalid usage of line address 0"},
	{[]string{"1!!p"}, false, 1, 3, "multiple `!'s"},
	{[]string{"y/abc/de/"}, false, 1, 9, "strings for `y' command are different lengths"},
	{[]string{"p", "s/a"}, false, 2, 3, "unterminated `s' command"},
	{[]string{"p", "}"}, false, 2, 1, "unexpected `}'"},
	{[]string{"p", "p", "y/a/"}, false, 3, 4, "unterminated `y' command"},
	{[]string{"p;\n/x"}, false, 1, 5, "unterminated address regex"},
	{[]string{"k"}, false, 1, 1, "unknown command: `k'"},
	{[]string{"s/[[:foo:]]/x/"}, false, 1, 14, "Invalid character class name"},
	{[]string{"s/a{2,1}/x/"}, true, 1, 11, `Invalid content of \{\}`},
	{[]string{"s/*a/x/"}, true, 1, 7, "Invalid preceding regular expression"},
	{[]string{"s/a)/x/"}, true, 1, 7, `Unmatched ) or \)`},
	{[]string{"s/a**/x/"}, false, 1, 8, "Invalid preceding regular expression"},

	// Fixed bugs.
	{[]string{`\`}, false, 1, 1, "unterminated address regex"}, // was "unexpected end of file"
	{[]string{`1,\`}, false, 1, 3, "unterminated address regex"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorTests {
		_, err := Parse(Exprs(tc.pieces...), Options{Extended: tc.ere})
		var e *Error
		if !errors.As(err, &e) || e.Expr != tc.expr || e.Char != tc.char || e.Msg != tc.msg {
			t.Errorf("%q: got %v; want -e expression #%d, char %d: %s", tc.pieces, err, tc.expr, tc.char, tc.msg)
		}
	}
}

// What tpipe does not run is refused when parsed, with a message that
// says so.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		script string
		o      Options
		msg    string
	}{
		{"e echo hi", Options{}, "command `e' is not supported"},
		{"s/a/date/e", Options{}, "option `e' to `s' is not supported"},
		{"r /dev/stdin", Options{}, "reading /dev/stdin is not supported"},
		{"s/a\\{1001\\}/x/", Options{}, "repetition count over 1000"},
	} {
		_, err := Parse(Exprs(tc.script), tc.o)
		var e *Error
		if !errors.As(err, &e) || !e.Unsupported || !strings.Contains(e.Msg, tc.msg) || e.What == "" {
			t.Errorf("%q: %v; want an unsupported %q", tc.script, err, tc.msg)
		}
	}
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		script string
		o      Options
		quits  bool
		quiet  bool
		cmds   int
	}{
		{"p", Options{}, false, false, 1},
		{"p", Options{Quiet: true}, false, true, 1},
		{"#n\np", Options{}, false, true, 1},
		{"#n p", Options{}, false, true, 0}, // GNU 4.9 looks only at "#n"
		{" #n\np", Options{}, false, false, 1},
		{"2q", Options{}, true, false, 1},
		{"/x/{Q}", Options{}, true, false, 3},
		{" ; p ;; p # two\n", Options{}, false, false, 2},
		{"", Options{}, false, false, 0},
	} {
		sc, err := Parse(Exprs(tc.script), tc.o)
		if err != nil {
			t.Errorf("%q: %v", tc.script, err)
			continue
		}
		if sc.Quits() != tc.quits || sc.quiet != tc.quiet || len(sc.cmds) != tc.cmds {
			t.Errorf("%q: quits %v quiet %v, %d commands; want %v %v %d", tc.script, sc.Quits(), sc.quiet, len(sc.cmds), tc.quits, tc.quiet, tc.cmds)
		}
	}
	if sc, err := Parse(nil, Options{}); err != nil || len(sc.cmds) != 0 {
		t.Errorf("no pieces: %v", err)
	}
}
