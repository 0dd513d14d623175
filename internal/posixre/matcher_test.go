package posixre

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		pat     string
		o       dialect
		chained bool
		need    string
	}{
		{"ERROR.*timeout", dialect{}, true, "timeout"},
		{"^foo", dialect{}, true, "foo"},
		{"foo$", dialect{}, true, "foo"},
		{"^foo$", dialect{}, true, "foo"},
		{"^$", dialect{}, true, ""},
		{"^.*x.*$", dialect{}, true, ""},
		{"a.b", dialect{}, false, ""},
		{"err.*DISK", dialect{icase: true}, true, "disk"},
		{"id=[0-9]", dialect{icase: true}, false, "id="},
		{`[0-9]\+ms`, dialect{}, false, "ms"},
		{`x\(abc\)\+y`, dialect{}, false, "abc"},
		{"ab|cd", dialect{ere: true}, false, ""},
		{"a*b", dialect{}, false, ""},
		{"a[Bb]c", dialect{}, false, "abc"}, // folded b only: no chain
		{"x.*y", dialect{sed: true}, true, ""},
	} {
		src, err := translate(tc.pat, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMatcher(regexp.MustCompile(src))
		if m.chained != tc.chained || string(m.need.text) != tc.need {
			t.Errorf("%q: chained %v need %q; want %v %q", tc.pat, m.chained, m.need.text, tc.chained, tc.need)
		}
	}
}

// The quick paths of Matcher decide as the regexp does, on patterns
// made of the pieces they look for.
func TestMatcherProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "B", "-", ".*", ".", "^", "$", "[bB]", "b*"}), 0, 6).Draw(t, "pieces")
		pat := strings.Join(pieces, "")
		o := dialect{icase: rapid.Bool().Draw(t, "icase"), sed: rapid.Bool().Draw(t, "sed")}
		src, err := translate(pat, o)
		if err != nil {
			return
		}
		re := regexp.MustCompile(src)
		m := NewMatcher(re)
		for range 20 {
			line := rapid.StringOfN(rapid.SampledFrom([]rune("abAB-")), 0, 8, -1).Draw(t, "line")
			if got, want := m.Match([]byte(line)), re.Match([]byte(line)); got != want {
				t.Fatalf("%q (%s, chained %v) on %q: %v, regexp says %v", pat, src, m.chained, line, got, want)
			}
		}
	})
}

func TestIndexFold(t *testing.T) {
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
		if got := IndexFold([]byte(tc.s), []byte(tc.pat)); got != tc.want {
			t.Errorf("IndexFold(%q, %q) = %d, want %d", tc.s, tc.pat, got, tc.want)
		}
	}
}
