package posixre

import (
	"errors"
	"regexp"
	"testing"
)

// dialect is a test's short way to write a Syntax with its Flags.
type dialect struct{ ere, icase, sed bool }

func (d dialect) args() (Syntax, Flags) {
	syn, fl := Basic, Flags(0)
	if d.ere {
		syn = Extended
	}
	if d.icase {
		fl |= IgnoreCase
	}
	if d.sed {
		fl |= Sed
	}
	return syn, fl
}

func translate(pat string, d dialect) (string, error) {
	syn, fl := d.args()
	return Translate(pat, syn, fl)
}

var (
	bre   = dialect{}
	ere   = dialect{ere: true}
	icase = dialect{icase: true}
	sed   = dialect{sed: true}
)

// translateTests are patterns and their translations; the fuzz target
// starts from them too.
var translateTests = []struct {
	pat  string
	o    dialect
	want string
}{
	{"abc", bre, "abc"},
	{"a.c", bre, "a.c"},
	{"a*", bre, "a*"},
	{"*a", bre, `\*a`},
	{"^*a", bre, `^\*a`},
	{"^^*", bre, `^\^*`},
	{"^^", ere, "^^"},
	{`\(*a\)`, bre, `(\*a)`},
	{`a\|*b`, bre, `a|\*b`},
	{`a\+b\?`, bre, "a+b?"},
	{`\+a`, bre, `\+a`},
	{"a+b?", bre, `a\+b\?`},
	{`a\{2\}`, bre, "a{2}"},
	{`a\{2,\}`, bre, "a{2,}"},
	{`a\{,3\}`, bre, "a{0,3}"},
	{`a\{1,3\}`, bre, "a{1,3}"},
	{`\{1\}`, bre, `\{1\}`},
	{"a**", bre, "(?:a*)*"},
	{`a*\{2\}`, bre, "(?:a*){2}"},
	{`\(ab\)*`, bre, "(ab)*"},
	{"(a|b)", bre, `\(a\|b\)`},
	{"{a}", bre, `\{a\}`},
	{"^a$", bre, "^a$"},
	{"a^b$c", bre, `a\^b\$c`},
	{`\(^a$\)`, bre, "(^a$)"},
	{`a$\|^b`, bre, "a$|^b"},
	{`a\.b\*c\[d\]\\`, bre, `a\.b\*c\[d\]\\`},
	{`\w\W\s\S`, bre, `[0-9A-Z_a-z][^0-9A-Z_a-z][\t-\r ][^\t-\r ]`},
	{`\bx\B`, bre, `\bx\B`},
	{"\\`a\\'", bre, `\Aa\z`},
	{`\<ab\>`, bre, `\bab\b`},
	{`\<\w\+`, bre, `\b[0-9A-Z_a-z]+`},
	{`\n\t\d`, bre, "ntd"},
	{"a|b", ere, "a|b"},
	{"(a|b)+c?", ere, "(a|b)+c?"},
	{`\(a\|b\)`, ere, `\(a\|b\)`},
	{"*a", ere, "a"},
	{"a|*b", ere, "a|b"},
	{"(+a)", ere, "(a)"},
	{"^*a", ere, "a"},
	{"^+a", ere, "^a"},
	{"a$? ", ere, "a "},
	{"a${1}", ere, "a$"},
	{"{1}a", ere, "a"},
	{"a{2}", ere, "a{2}"},
	{"a{,2}", ere, "a{0,2}"},
	{"a{,}", ere, "a{0,}"},
	{"a{1", ere, `a\{1`},
	{"a{x}", ere, `a\{x\}`},
	{"a{1}{2}", ere, "(?:a{1}){2}"},
	{"a+?", ere, "(?:a+)?"},
	{"a*?", ere, "(?:a*)?"},
	{"a)", ere, `a\)`},
	{"()", ere, "()"},
	{"a|", ere, "a|"},
	{"a^b", ere, "a^b"},
	{"[abc]", bre, "[a-c]"},
	{"[]a]", bre, `[\]a]`},
	{"[^]a]", bre, `[^\]a]`},
	{"[a-]", bre, `[\-a]`},
	{"[]-a]", bre, `[\]-a]`},
	{`[\]`, bre, `[\\]`},
	{"[[:digit:]x]", bre, "[0-9x]"},
	{"[^[:space:]]", bre, `[^\x{9}-\x{d} ]`},
	{"[[.-.][=a=]]", bre, `[\-a]`},
	{"[a-c]", icase, "[A-Ca-c]"},
	{"aB1", icase, "[Aa][Bb]1"},
	{"é", bre, "é"},
	{"[é]", bre, "[é]"},
	{`a\nb\tc`, sed, "(?s)a\\x{a}b\\x{9}c"},
	{"a.b", sed, "(?s)a.b"},
}

func TestTranslate(t *testing.T) {
	for _, tc := range translateTests {
		got, err := translate(tc.pat, tc.o)
		if err != nil || got != tc.want {
			t.Errorf("%q %+v: got %q, %v; want %q", tc.pat, tc.o, got, err, tc.want)
			continue
		}
		if _, err := regexp.Compile(got); err != nil {
			t.Errorf("%q: translation %q does not compile: %v", tc.pat, got, err)
		}
	}
}

// errorTests are patterns that are refused, with the message and the
// offset of the refusal.
var errorTests = []struct {
	pat  string
	o    dialect
	want string
	at   int
}{
	{`\(a`, bre, errParen, 0},
	{`a\)`, bre, errRParen, 1},
	{`a\(b\)\)`, bre, errRParen, 6},
	{"(a", ere, errParen, 0},
	{"a(b(c)", ere, errParen, 1},
	{`a\{1`, bre, errBrace, 1},
	{`a\{x\}`, bre, errInterval, 1},
	{`a\{2,1\}`, bre, errInterval, 1},
	{"a{}", ere, errInterval, 1},
	{"a{2,1}", ere, errInterval, 1},
	{"a{99999}", ere, errTooBig, 1},
	{"a{1001}", ere, "repetition count over 1000 is not supported", 1},
	{"[a", bre, errBracket, 0},
	{"[[:alpha:]", bre, errBracket, 0},
	{"[[:nope:]]", bre, errClass, 1},
	{"[:alpha:]", bre, "character class syntax is [[:space:]], not [:space:]", 0},
	{"[z-a]", bre, errRange, 1},
	{"[a-[:digit:]]", bre, errRange, 3},
	{`a\`, bre, errTrailing, 1},
	{`\(a\)\1`, bre, errBackref, 5},
	{`(a)\1`, ere, errBackref, 3},
	{`\<.`, bre, errWordEdge, 0},
	{`.\>`, bre, errWordEdge, 1},
	{`\<a*`, bre, errWordEdge, 0},
	{`\x41`, sed, `the escape \x is not supported`, 0},
	{"a**", sed, errPreceding, 2},
	{`\{1\}a`, sed, errPreceding, 0},
	{"*a", dialect{ere: true, sed: true}, errPreceding, 0},
	{"a)", dialect{ere: true, sed: true}, errRParen, 1},
	{"a{1", dialect{ere: true, sed: true}, errBrace, 1},
	// A range's end does not start another; a group of stray repetitions
	// is unmatched, as GNU grep -E says (issue 30).
	{"a[1-3-5]c", dialect{ere: true}, errRange, 2},
	{"a[1-3-5]c", bre, errRange, 2},
	{"(*)b", dialect{ere: true}, errParen, 0},
	{"x(+?)", dialect{ere: true}, errParen, 1},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorTests {
		_, err := translate(tc.pat, tc.o)
		var e *Error
		if !errors.As(err, &e) || e.Msg != tc.want || e.Offset != tc.at {
			t.Errorf("%q %+v: got error %#v, want %q at %d", tc.pat, tc.o, err, tc.want, tc.at)
		}
	}
}

// A pattern RE2 refuses once translated is an *Error about the whole
// pattern.
func TestCompileLimit(t *testing.T) {
	_, err := Compile(`\(\(a\{1000\}\)\{1000\}\)`, Basic, 0)
	var e *Error
	if !errors.As(err, &e) || e.Offset != -1 || e.Msg != "invalid repeat count: `{1000}`" {
		t.Fatalf("got %#v", err)
	}
}

func TestCompileAny(t *testing.T) {
	re, err := CompileAny([]string{"a\\+", "^b$"}, Basic, IgnoreCase)
	if err != nil {
		t.Fatal(err)
	}
	if want := "(?:[Aa]+)|(?:^[Bb]$)"; re.String() != want {
		t.Errorf("source %q, want %q", re.String(), want)
	}
	for s, want := range map[string]bool{"xAAx": true, "B": true, "bb": false, "": false} {
		if re.MatchString(s) != want {
			t.Errorf("%q: %v", s, !want)
		}
	}
	if _, err := CompileAny([]string{"a", "\\(b"}, Basic, 0); err == nil || err.Error() != errParen {
		t.Errorf("a bad second pattern: %v", err)
	}
}

func TestIsLiteral(t *testing.T) {
	for _, tc := range []struct {
		pat      string
		bre, ere bool
	}{
		{"hello world", true, true},
		{"", true, true},
		{"a+b", true, false},
		{"a|b", true, false},
		{"(x)", true, false},
		{"a{1}", true, false},
		{"a.b", false, false},
		{"a*", false, false},
		{`a\b`, false, false},
		{"[a]", false, false},
		{"^a", false, false},
		{"a$", false, false},
	} {
		if got := IsLiteral(tc.pat, Basic); got != tc.bre {
			t.Errorf("%q BRE: %v", tc.pat, got)
		}
		if got := IsLiteral(tc.pat, Extended); got != tc.ere {
			t.Errorf("%q ERE: %v", tc.pat, got)
		}
	}
}

// Newline and Multiline are sed's M flag: ^ and $ hold at each newline,
// and neither '.' nor a negated list matches one. Newline alone (sed -z
// with M) keeps ^ and $ at the ends.
func TestNewline(t *testing.T) {
	for _, tc := range []struct {
		pat, text string
		want      bool
	}{
		{"^b", "a\nb", true},
		{"a$", "a\nb", true},
		{"a.b", "a\nb", false},
		{"a[^x]b", "a\nb", false},
		{`a[^x]b`, "a-b", true},
		{"a[\n]b", "a\nb", true},
		{"\\`a", "b\na", false},
		{"a\\'", "a\nb", false},
	} {
		re, err := Compile(tc.pat, Basic, Sed|Newline|Multiline)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if got := re.MatchString(tc.text); got != tc.want {
			t.Errorf("%q on %q: %v, want %v", tc.pat, tc.text, got, tc.want)
		}
		// Without the flag, sed's '.' and lists take the newline, and
		// ^ and $ hold at the ends only.
		plain, _ := Compile(tc.pat, Basic, Sed)
		if tc.pat == "a.b" && !plain.MatchString(tc.text) {
			t.Errorf("%q without Newline: no match on %q", tc.pat, tc.text)
		}
		half, _ := Compile(tc.pat, Basic, Sed|Newline)
		if tc.pat == "^b" && half.MatchString(tc.text) || tc.pat == "a.b" && half.MatchString(tc.text) {
			t.Errorf("%q with Newline alone: a match on %q", tc.pat, tc.text)
		}
	}
}

// What GNU accepts and RE2 cannot run is marked Unsupported; GNU's own
// errors are not.
func TestUnsupported(t *testing.T) {
	for pat, want := range map[string]bool{
		`\(a\)\1`:                   true,
		`a\{1001\}`:                 true,
		`\(a`:                       false,
		`[[:nope:]]`:                false,
		`\(\(a\{1000\}\)\{1000\}\)`: true,
	} {
		_, err := Compile(pat, Basic, Sed)
		var e *Error
		if !errors.As(err, &e) || e.Unsupported != want {
			t.Errorf("%q: %#v, want Unsupported %v", pat, err, want)
		}
	}
}
