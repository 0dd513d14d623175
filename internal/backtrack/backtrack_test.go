package backtrack

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/internal/posixre"
)

// Back-references, as GNU grep and sed read them: a table of cases whose
// answers GNU gives (TestAgainstGNUGrep runs the same through grep -o).
var backRefTests = []struct {
	pat  string
	ere  bool
	fold bool
	in   string
	want []int // FindSubmatchIndex; nil for no match
}{
	{pat: `\(a\)\1`, in: "xaay", want: []int{1, 3, 1, 2}},
	{pat: `\(a\)\1`, in: "xay", want: nil},
	{pat: `\([a-z]*\)-\1`, in: "abc-abc", want: []int{0, 7, 0, 3}},
	{pat: `\([a-z]*\)-\1`, in: "abc-abd", want: []int{3, 4, 3, 3}},
	{pat: `^\(.*\)\1$`, in: "abcabc", want: []int{0, 6, 0, 3}},
	{pat: `^\(.*\)\1$`, in: "abcab", want: nil},
	{pat: `(a|b)\1`, ere: true, in: "abba", want: []int{1, 3, 1, 2}},
	{pat: `(.)(.)\2\1`, ere: true, in: "xyzzyq", want: []int{1, 5, 1, 2, 2, 3}},
	{pat: `\(a\)\1`, fold: true, in: "aA", want: []int{0, 2, 0, 1}},
	{pat: `\(x*\)y\1`, in: "xxyxx", want: []int{0, 5, 0, 2}},
	{pat: `\(x*\)y\1`, in: "xxyx", want: []int{1, 4, 1, 2}},
	{pat: `\(a*\)*b\1`, in: "aab", want: []int{0, 3, 2, 2}},
	{pat: `\(\(a\)\|b\)\2`, in: "baa", want: []int{1, 3, 1, 2, 1, 2}},
	{pat: `\(a\)\{2\}\1`, in: "aaa", want: []int{0, 3, 1, 2}},
	{pat: `\<\(\w\+\) \1\>`, in: "the the cat", want: []int{0, 7, 0, 3}},
	{pat: `\<\(\w\+\) \1\>`, in: "the theme", want: nil},
	{pat: `a\>.`, in: "ab a-", want: []int{3, 5}},
	{pat: `.\<b`, in: "ab -b", want: []int{3, 5}},
	{pat: `\(a\)\(c\|b\1\)`, in: "xaba", want: []int{1, 4, 1, 2, 2, 4}},
	// A repeated group matches the empty string only if it must: it
	// keeps "b" here (it held "" before the fix, after an empty pass).
	{pat: `\(b*\)*`, in: "b", want: []int{0, 1, 0, 1}},
	{pat: `\(b*\)*\1`, in: "bb", want: []int{0, 2, 0, 1}},
	{pat: `\(a*\)\{2\}`, in: "a", want: []int{0, 1, 1, 1}},
	// A group repeated zero times is still a group (FuzzCompile).
	{pat: `\(\)\{0\}\1`, in: "0", want: nil},
	{pat: `\(a\)\{0\}\(b\)\2`, in: "abb", want: []int{1, 3, -1, -1, 1, 2}},
}

func TestBackRefs(t *testing.T) {
	for _, tc := range backRefTests {
		syn, fl := posixre.Basic, posixre.Flags(0)
		if tc.ere {
			syn = posixre.Extended
		}
		if tc.fold {
			fl = posixre.IgnoreCase
		}
		re, err := Compile(tc.pat, syn, fl)
		if err != nil {
			t.Errorf("%q: %v", tc.pat, err)
			continue
		}
		got := re.FindSubmatchIndex([]byte(tc.in))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q on %q: %v, want %v", tc.pat, tc.in, got, tc.want)
		}
		if m := re.Match([]byte(tc.in)); m != (tc.want != nil) {
			t.Errorf("%q on %q: Match %v", tc.pat, tc.in, m)
		}
		if pre := re.Prefilter(); pre == nil || tc.want != nil && !pre.MatchString(tc.in) {
			t.Errorf("%q on %q: prefilter %v lets a match by", tc.pat, tc.in, pre)
		}
	}
}

// GNU grep -o prints the leftmost-longest matches: the same spans as the
// table's, checked against the real grep where it is installed.
func TestAgainstGNUGrep(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("grep is not on PATH")
	}
	for _, tc := range backRefTests {
		args := []string{"-o"}
		if tc.ere {
			args = append(args, "-E")
		}
		if tc.fold {
			args = append(args, "-i")
		}
		cmd := exec.Command(grep, append(args, "-e", tc.pat)...)
		cmd.Env = []string{"LC_ALL=C"}
		cmd.Stdin = strings.NewReader(tc.in + "\n")
		out, _ := cmd.Output()
		want := ""
		if tc.want != nil && tc.want[1] > tc.want[0] {
			want = tc.in[tc.want[0]:tc.want[1]] + "\n"
		}
		if first, _, _ := strings.Cut(string(out), "\n"); tc.want != nil && first+"\n" != want || tc.want == nil && len(out) > 0 {
			t.Errorf("%q on %q: GNU grep -o says %q, the table %q", tc.pat, tc.in, out, want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ pat, msg string }{
		{`\(a\)\2`, "Invalid back reference"},
		{`\1\(a\)`, "Invalid back reference"},
		{`\(a\1\)`, "Invalid back reference"},
		{`\(\(.*\)\1\)`, "Invalid back reference"},
		// A group of another branch of the alternation, as GNU's
		// regcomp has it.
		{`\(a\)\|b\1`, "Invalid back reference"},
		{`\(\(a\)\|b\2\)`, "Invalid back reference"},
		{`\(a\)\|\(b\|\1\)`, "Invalid back reference"},
		{`\(a`, `Unmatched ( or \(`},
	} {
		_, err := Compile(tc.pat, posixre.Basic, 0)
		var e *posixre.Error
		if !errors.As(err, &e) || e.Msg != tc.msg {
			t.Errorf("%q: error %v, want %q", tc.pat, err, tc.msg)
		}
	}
}

// FindSubmatchIndexAt treats what comes before from as context, as sed's
// s///g needs.
func TestFindAt(t *testing.T) {
	re := MustCompile(`^a`, posixre.Basic, 0)
	if m := re.FindSubmatchIndexAt([]byte("aa"), 1); m != nil {
		t.Errorf("^a found at %v after the start", m)
	}
	re = MustCompile(`\bb`, posixre.Basic, 0)
	if m := re.FindSubmatchIndexAt([]byte("ab b"), 1); !slices.Equal(m, []int{3, 4}) {
		t.Errorf(`\bb from 1 in "ab b": %v, want [3 4]`, m)
	}
	re = MustCompile(`\(a\)\1`, posixre.Basic, 0)
	var ends []int
	re.MatchAt([]byte("aaa"), 0, func(end int) bool { ends = append(ends, end); return false })
	if !slices.Equal(ends, []int{2}) {
		t.Errorf("ends %v", ends)
	}
}

// sed's M flag (Newline and Multiline): '^' and '$' hold at each line of
// a pattern space too, '.' stops at a newline; \` and \' still mean the
// ends of the text. The answers are GNU sed's (s/PAT/[&]/M).
func TestMultiline(t *testing.T) {
	const m = posixre.Sed | posixre.Newline | posixre.Multiline
	for _, tc := range []struct {
		pat  string
		fl   posixre.Flags
		in   string
		from int
		want []int
	}{
		{pat: `^\(a\)\1`, fl: m, in: "b\naa", want: []int{2, 4, 2, 3}},
		{pat: `^\(a\)\1`, fl: posixre.Sed, in: "b\naa", want: nil},
		{pat: `\(a\)\1$`, fl: m, in: "aa\nb", want: []int{0, 2, 0, 1}},
		{pat: `\(a\)\1$`, fl: posixre.Sed, in: "aa\nb", want: nil},
		{pat: `^\(.*\)\n\1$`, fl: m, in: "x\nab\nab", want: []int{2, 7, 2, 4}},
		{pat: `\(.\).*\1`, fl: m, in: "ab\na", want: nil},                         // '.' stops at the newline
		{pat: `\(.\).*\1`, fl: posixre.Sed, in: "ab\na", want: []int{0, 4, 0, 1}}, // without M it does not
		{pat: "\\`\\(b\\)\\1", fl: m, in: "a\nbb", want: nil},
		{pat: `\(b\)\1\'`, fl: m, in: "bb\na", want: nil},
		{pat: `^\(a\)\1`, fl: m, in: "aa\naa", from: 1, want: []int{3, 5, 3, 4}},
		{pat: `^\(a\)\1`, fl: m, in: "aa\naa", from: 3, want: []int{3, 5, 3, 4}},
		{pat: `$`, fl: m, in: "a\nb", from: 1, want: []int{1, 1}},
	} {
		re, err := Compile(tc.pat, posixre.Basic, tc.fl)
		if err != nil {
			t.Errorf("%q: %v", tc.pat, err)
			continue
		}
		got := re.FindSubmatchIndexAt([]byte(tc.in), tc.from)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q on %q from %d: %v, want %v", tc.pat, tc.in, tc.from, got, tc.want)
		}
		if pre := re.Prefilter(); pre != nil && tc.want != nil && !pre.MatchString(tc.in) {
			t.Errorf("%q on %q: prefilter %v lets a match by", tc.pat, tc.in, pre)
		}
	}
}

// Without back-references, the backtracker must agree with Go's regexp in
// leftmost-longest mode on whether and where a pattern matches: a
// property over small random patterns and lines of a few letters, with
// and without sed's M flag.
func TestAgreesWithRE2(t *testing.T) {
	atoms := []string{"a", "b", ".", "[ab]", "[^a]", `\(a\)`, `\(a*\)`, `\(ab\|b\)`, "^", "$", `\<`, `\>`, `\b`}
	ops := []string{"", "", "*", `\{1,2\}`, `\+`, `\?`}
	rapid.Check(t, func(t *rapid.T) {
		var pat strings.Builder
		for range rapid.IntRange(1, 5).Draw(t, "pieces") {
			a := rapid.SampledFrom(atoms).Draw(t, "atom")
			pat.WriteString(a)
			if a != "^" && a != "$" && !strings.HasPrefix(a, `\<`) && !strings.HasPrefix(a, `\>`) && a != `\b` {
				pat.WriteString(rapid.SampledFrom(ops).Draw(t, "op"))
			}
		}
		line := rapid.StringMatching(`[ab \n]{0,8}`).Draw(t, "line")
		fl := rapid.SampledFrom([]posixre.Flags{0, posixre.Sed, posixre.Sed | posixre.Newline | posixre.Multiline}).Draw(t, "flags")
		re, err := Compile(pat.String(), posixre.Basic, fl)
		if err != nil {
			return // a pattern GNU refuses, such as \< before a non-word
		}
		src, err := posixre.Translate(pat.String(), posixre.Basic, fl)
		if err != nil {
			return // \< or \> where RE2 cannot say the same
		}
		gore := regexp.MustCompile(src)
		gore.Longest()
		want := gore.FindIndex([]byte(line))
		got := re.FindSubmatchIndex([]byte(line))
		if (want == nil) != (got == nil) || want != nil && !slices.Equal(got[:2], want) {
			t.Fatalf("%q on %q: backtrack %v, RE2 %v", pat.String(), line, got, want)
		}
		if re.Match([]byte(line)) != (want != nil) {
			t.Fatalf("%q on %q: Match disagrees", pat.String(), line)
		}
	})
}

// FuzzCompile checks that no pattern makes Compile or a search panic,
// that a search returns offsets inside the line with the groups inside
// the match, that the prefilter lets every match by, and that a pattern
// without back-references matches where Go's regexp does.
func FuzzCompile(f *testing.F) {
	for _, tc := range backRefTests {
		f.Add(tc.pat, tc.ere, tc.fold, tc.in)
	}
	f.Add(`a*b`, false, false, "aaab")
	f.Add(`(x|xy)z`, true, false, "xyz")
	f.Fuzz(func(t *testing.T, pat string, ere, fold bool, line string) {
		if len(pat) > 24 || len(line) > 32 {
			return // backtracking is exponential in the worst case
		}
		syn, fl := posixre.Basic, posixre.Flags(0)
		if ere {
			syn = posixre.Extended
		}
		if fold {
			fl = posixre.IgnoreCase
		}
		re, err := Compile(pat, syn, fl)
		if err != nil {
			var e *posixre.Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error %v is not a *posixre.Error", pat, err)
			}
			return
		}
		m := re.FindSubmatchIndex([]byte(line))
		if m != nil {
			if len(m) != 2*(re.NumSubexp()+1) || m[0] < 0 || m[0] > m[1] || m[1] > len(line) {
				t.Fatalf("%q on %q: bad match %v", pat, line, m)
			}
			for i := 2; i < len(m); i += 2 {
				if m[i] >= 0 && (m[i] < m[0] || m[i+1] > m[1] || m[i] > m[i+1]) {
					t.Fatalf("%q on %q: group %d at %v outside the match %v", pat, line, i/2, m[i:i+2], m[:2])
				}
			}
		}
		if pre := re.Prefilter(); m != nil && pre != nil && !pre.MatchString(line) {
			t.Fatalf("%q on %q: matches, but its prefilter %q does not", pat, line, pre)
		}
		src, err := posixre.Translate(pat, syn, fl)
		if err != nil {
			return // a back-reference: RE2 has nothing to say
		}
		gore, err := regexp.Compile(src)
		if err != nil {
			return
		}
		gore.Longest()
		want := gore.FindIndex([]byte(line))
		if (want == nil) != (m == nil) || want != nil && !bytes.Equal([]byte(line[want[0]:want[1]]), []byte(line[m[0]:m[1]])) || want != nil && want[0] != m[0] {
			t.Fatalf("%q on %q: backtrack %v, RE2 %v", pat, line, m, want)
		}
	})
}

// A repetition of a piece that can match in several ways (\(.*\)*) has
// exponentially many ways to cut a line into passes; the search remembers
// the states it failed from and takes polynomial time. Before, 25
// characters took 17 seconds (found by FuzzParse in package sedlang), so
// these 86 would not end; the test's deadline is go test's, not a timing
// assertion.
func TestNoExponentialCuts(t *testing.T) {
	line := []byte(strings.Repeat("one two three ", 6) + "\nx")
	for _, pat := range []string{`^\(.*\)*n\1$`, `\(a*\)*b\1`, `\(\(o\|t\)*.\)*x\1`, `\(\(.*\) \)*\2q`, `\(o\|on\|one\)*z\1`} {
		re := MustCompile(pat, posixre.Basic, posixre.Sed)
		if m := re.FindSubmatchIndex(line); m != nil {
			t.Errorf("%q: a match %v where there is none", pat, m)
		}
		if re.Match(line) {
			t.Errorf("%q: Match", pat)
		}
	}
}
