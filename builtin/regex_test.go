package builtin

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestRegexTranslate(t *testing.T) {
	bre := regexOptions{}
	ere := regexOptions{ere: true}
	icase := regexOptions{icase: true}
	sed := regexOptions{sed: true}
	for _, tc := range []struct {
		pat  string
		o    regexOptions
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
	} {
		got, err := regexTranslate(tc.pat, tc.o)
		if err != nil || got != tc.want {
			t.Errorf("%q %+v: got %q, %v; want %q", tc.pat, tc.o, got, err, tc.want)
			continue
		}
		if _, err := regexp.Compile(got); err != nil {
			t.Errorf("%q: translation %q does not compile: %v", tc.pat, got, err)
		}
	}
}

func TestRegexErrors(t *testing.T) {
	ere := regexOptions{ere: true}
	for _, tc := range []struct {
		pat  string
		o    regexOptions
		want string
	}{
		{`\(a`, regexOptions{}, regexErrParen},
		{`a\)`, regexOptions{}, regexErrRParen},
		{"(a", ere, regexErrParen},
		{`a\{1`, regexOptions{}, regexErrBrace},
		{`a\{x\}`, regexOptions{}, regexErrInterval},
		{`a\{2,1\}`, regexOptions{}, regexErrInterval},
		{"a{}", ere, regexErrInterval},
		{"a{2,1}", ere, regexErrInterval},
		{"a{99999}", ere, regexErrTooBig},
		{"a{1001}", ere, "repetition count over 1000 is not supported"},
		{"[a", regexOptions{}, regexErrBracket},
		{"[[:alpha:]", regexOptions{}, regexErrBracket},
		{"[[:nope:]]", regexOptions{}, regexErrClass},
		{"[:alpha:]", regexOptions{}, "character class syntax is [[:space:]], not [:space:]"},
		{"[z-a]", regexOptions{}, regexErrRange},
		{"[a-[:digit:]]", regexOptions{}, regexErrRange},
		{`a\`, regexOptions{}, regexErrTrailing},
		{`\(a\)\1`, regexOptions{}, regexErrBackref},
		{`(a)\1`, ere, regexErrBackref},
		{`\<.`, regexOptions{}, regexErrWordEdge},
		{`.\>`, regexOptions{}, regexErrWordEdge},
		{`\<a*`, regexOptions{}, regexErrWordEdge},
		{`\x41`, regexOptions{sed: true}, `the escape \x is not supported`},
	} {
		_, err := regexTranslate(tc.pat, tc.o)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got error %v, want %q", tc.pat, err, tc.want)
		}
	}
}

func TestRegexIsLiteral(t *testing.T) {
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
		if got := regexIsLiteral(tc.pat, false); got != tc.bre {
			t.Errorf("%q BRE: %v", tc.pat, got)
		}
		if got := regexIsLiteral(tc.pat, true); got != tc.ere {
			t.Errorf("%q ERE: %v", tc.pat, got)
		}
	}
}

func TestRegexMatcher(t *testing.T) {
	for _, tc := range []struct {
		pat     string
		o       regexOptions
		chained bool
		need    string
	}{
		{"ERROR.*timeout", regexOptions{}, true, "timeout"},
		{"^foo", regexOptions{}, true, "foo"},
		{"foo$", regexOptions{}, true, "foo"},
		{"^foo$", regexOptions{}, true, "foo"},
		{"^$", regexOptions{}, true, ""},
		{"^.*x.*$", regexOptions{}, true, ""},
		{"a.b", regexOptions{}, false, ""},
		{"err.*DISK", regexOptions{icase: true}, true, "disk"},
		{"id=[0-9]", regexOptions{icase: true}, false, "id="},
		{`[0-9]\+ms`, regexOptions{}, false, "ms"},
		{`x\(abc\)\+y`, regexOptions{}, false, "abc"},
		{"ab|cd", regexOptions{ere: true}, false, ""},
		{"a*b", regexOptions{}, false, ""},
		{"a[Bb]c", regexOptions{}, false, "abc"}, // folded b only: no chain
		{"x.*y", regexOptions{sed: true}, true, ""},
	} {
		src, err := regexTranslate(tc.pat, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		m := regexNewMatcher(src, regexp.MustCompile(src))
		if m.chained != tc.chained || string(m.need.text) != tc.need {
			t.Errorf("%q: chained %v need %q; want %v %q", tc.pat, m.chained, m.need.text, tc.chained, tc.need)
		}
	}
}

// The quick paths of regexMatcher decide as the regexp does, on patterns
// made of the pieces they look for.
func TestRegexMatcherProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "B", "-", ".*", ".", "^", "$", "[bB]", "b*"}), 0, 6).Draw(t, "pieces")
		pat := strings.Join(pieces, "")
		o := regexOptions{icase: rapid.Bool().Draw(t, "icase"), sed: rapid.Bool().Draw(t, "sed")}
		src, err := regexTranslate(pat, o)
		if err != nil {
			return
		}
		re := regexp.MustCompile(src)
		m := regexNewMatcher(src, re)
		for range 20 {
			line := rapid.StringOfN(rapid.SampledFrom([]rune("abAB-")), 0, 8, -1).Draw(t, "line")
			if got, want := m.match([]byte(line)), re.Match([]byte(line)); got != want {
				t.Fatalf("%q (%s, chained %v) on %q: %v, regexp says %v", pat, src, m.chained, line, got, want)
			}
		}
	})
}

func TestGrepFoldIndex(t *testing.T) {
	for _, tc := range []struct {
		s, pat string
		want   int
	}{
		{"Hello World", "world", 6},
		{"HELLO", "hello", 0},
		{"aaaaAAAb", "aab", 5},
		{"xyz", "", 0},
		{"abc", "abcd", -1},
		{"a-b A-B", "-b", 1},
		{"aAaA", "b", -1},
		{"[Q]", "[q]", 0},
	} {
		if got := grepFoldIndex([]byte(tc.s), []byte(tc.pat)); got != tc.want {
			t.Errorf("grepFoldIndex(%q, %q) = %d, want %d", tc.s, tc.pat, got, tc.want)
		}
	}
}

// Every translation is valid RE2 that matches like the pattern does when
// the pattern is a plain string.
func FuzzRegexTranslate(f *testing.F) {
	for _, s := range []string{"a", `\(a\)*`, "[[:alpha:]]x", "a{1,2}", "(a|b)+", `\<w\>`, "^*", "[]x-]"} {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, pat string, ere, icase bool) {
		src, err := regexTranslate(pat, regexOptions{ere: ere, icase: icase})
		if err != nil {
			return
		}
		if _, err := regexp.Compile(src); err != nil && !strings.Contains(err.Error(), "invalid UTF-8") &&
			!strings.Contains(err.Error(), "expression too large") && !strings.Contains(err.Error(), "nesting depth") {
			t.Fatalf("%q (ere %v): translation %q: %v", pat, ere, src, err)
		}
	})
}
