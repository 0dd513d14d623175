package builtin

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tpipe/tpipe/internal/posixre"
	"pgregory.net/rapid"
)

// grepAlphabet draws bytes that make needles meet often: a few letters in
// both cases, a digit, punctuation, a space, a NUL and a byte that is not
// ASCII.
var grepAlphabet = []byte("abAB1- _\x00\xc3")

// indexFoldModel is the obvious search for a lower case pat in s,
// ignoring the case of ASCII letters.
func indexFoldModel(s, pat []byte) int {
	for i := 0; i+len(pat) <= len(s); i++ {
		if bytes.Equal(lowerASCII(s[i:i+len(pat)]), pat) {
			return i
		}
	}
	return -1
}

func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = grepLower[c]
	}
	return out
}

// A needle finds what bytes.Index finds, and with fold what a byte by
// byte search ignoring case finds, whichever byte it picks to look for.
func TestGrepNeedleIndex(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pat := rapid.SliceOfN(rapid.SampledFrom(grepAlphabet), 0, 6).Draw(rt, "pat")
		s := rapid.SliceOfN(rapid.SampledFrom(grepAlphabet), 0, 200).Draw(rt, "s")
		fold := rapid.Bool().Draw(rt, "fold")
		if fold {
			pat = lowerASCII(pat)
		}
		n := newGrepNeedle(pat, fold)
		want := bytes.Index(s, pat)
		if fold {
			want = indexFoldModel(s, pat)
		}
		if got := n.index(s); got != want {
			rt.Fatalf("needle %q (fold %v, rare byte at %d) in %q: %d, want %d", pat, fold, n.rare, s, got, want)
		}
	})
}

// The rarest byte of a needle is the one it looks for: in " 404 ", a
// digit, not the space.
func TestGrepNeedleRareByte(t *testing.T) {
	for _, tc := range []struct {
		text string
		fold bool
		want byte
	}{
		{" 404 ", false, '4'},
		{"took ", false, 'k'},
		{"user13 ERROR request 1234", false, 'q'},
		{"q", false, 'q'},
		{"error", true, 'r'},
	} {
		n := newGrepNeedle([]byte(tc.text), tc.fold)
		if got := tc.text[n.rare]; got != tc.want {
			t.Errorf("%q: looks for %q, want %q", tc.text, got, tc.want)
		}
	}
}

// grepSeqPieces are pieces of basic regular expressions that make
// sequences of fixed length, and a few that do not.
var grepSeqPieces = []string{"a", "b", "A", "1", " ", "-", "[0-9]", "[ab]", "[^a]", "[[:upper:]]", "[[:space:]]",
	`\{2\}`, "x", ".", "*", `\w`, "_"}

// A pattern that grepSeqOf takes matches the lines its regexp matches,
// under every mode and with -i; seek finds the first line that matches
// in lines joined back to back.
func TestGrepSeqAgreesWithRegexp(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var pat strings.Builder
		if rapid.Bool().Draw(rt, "begin") {
			pat.WriteString("^")
		}
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(grepSeqPieces), 1, 5).Draw(rt, "pieces") {
			pat.WriteString(p)
		}
		if rapid.Bool().Draw(rt, "end") {
			pat.WriteString("$")
		}
		mode := grepMode(rapid.IntRange(0, 2).Draw(rt, "mode"))
		icase := rapid.Bool().Draw(rt, "icase")
		m, err := grepNewMatcher([]string{pat.String()}, 'G', icase, mode)
		if err != nil {
			rt.Skip(err)
		}
		seq, ok := m.(*grepSeqRegex)
		if !ok {
			rt.Skip("not a sequence")
		}
		lines := rapid.SliceOfN(rapid.SliceOfN(rapid.SampledFrom([]byte("abAB1- _x\xc3\xa9")), 0, 12), 1, 6).Draw(rt, "lines")
		what := fmt.Sprintf("%q (mode %d, -i %v)", pat.String(), mode, icase)
		data, first := decideLines(rt, what, lines, seq.match, seq.grepRegex.match)
		at, sure := seq.seek(data)
		if gotLine := lineOf(data, at); gotLine != first || at >= 0 && !sure {
			rt.Fatalf("%q (mode %d, -i %v) on %q: seek finds line %d (sure %v), want %d", pat.String(), mode, icase, data, gotLine, sure, first)
		}
	})
}

// decideLines checks that match decides each of lines as model does, and
// returns them joined, each with its '\n', and the index of the first
// that matches, or -1.
func decideLines(t interface{ Fatalf(string, ...any) }, what string, lines [][]byte, match, model func([]byte) bool) (data []byte, first int) {
	first = -1
	for i, line := range lines {
		got, want := match(line), model(line)
		if got != want {
			t.Fatalf("%s on %q: %v, the model says %v", what, line, got, want)
		}
		if got && first < 0 {
			first = i
		}
		data = append(append(data, line...), '\n')
	}
	return data, first
}

// lineOf returns the index of the line of data that holds offset at, or
// -1 for an offset of -1.
func lineOf(data []byte, at int) int {
	if at < 0 {
		return -1
	}
	return bytes.Count(data[:at], []byte{'\n'})
}

// Which patterns are sequences: the shapes of fixed length over ASCII
// classes, and not those whose match a byte at a time would differ from
// Go's regexp's (a '.' or a negated class takes a whole UTF-8 character).
func TestGrepSeqShapes(t *testing.T) {
	for _, tc := range []struct {
		pat string
		seq bool
	}{
		{"took [0-9]ms", true},
		{`" [23]0[0-9] `, true},
		{"^2026-11-21 12:0", true},
		{`a[0-9]\{3\}$`, true},
		{`\(ab\)[[:digit:]]`, true},
		{"took .ms", false},
		{"[^a]b", false},
		{"a*b", false},
		{`a\|b`, false},
		{"[0-9][0-9]", false}, // nothing to search for
	} {
		m, err := grepNewMatcher([]string{tc.pat}, 'G', false, grepAny)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*grepSeqRegex); ok != tc.seq {
			t.Errorf("%q: a sequence %v, want %v", tc.pat, ok, tc.seq)
		}
	}
}

// Seeking and matching allocate nothing, for every matcher that runs no
// regexp (Go's keeps its machines in a sync.Pool, which the race detector
// empties at random).
func TestGrepSeekAllocs(t *testing.T) {
	data := []byte(strings.Repeat("2026-11-21 12:00:01 host1 user2 INFO request 7 took 12ms\n", 200) +
		"2026-11-21 12:00:02 host1 user2 ERROR request 8 took 5ms\n")
	for _, tc := range []struct {
		pats  []string
		icase bool
		mode  grepMode
	}{
		{[]string{"ERROR"}, false, grepAny},
		{[]string{"error"}, true, grepAny},
		{[]string{"ERROR", "WARN"}, false, grepAny},
		{[]string{"ERROR", "WARN", "DEBUG", "took 5ms"}, false, grepAny},
		{[]string{"error", "warn", "debug", "took 5ms"}, true, grepWord},
		{[]string{"ERROR"}, false, grepWord},
		{[]string{"took [0-9]ms"}, false, grepAny},
		{[]string{"^2026.*ERROR"}, false, grepAny},
		{[]string{"ERROR.*took 5"}, false, grepAny},
	} {
		m, err := grepNewMatcher(tc.pats, 'G', tc.icase, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			for pos := 0; pos < len(data); {
				at, _ := m.seek(data[pos:])
				if at < 0 {
					break
				}
				end := pos + at + bytes.IndexByte(data[pos+at:], '\n') + 1
				m.match(data[pos : end-1])
				pos = end
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations", tc.pats, allocs)
		}
	}
}

// With many patterns, the automaton decides what the patterns one by one
// decide, in every mode, and finds the same first line.
func TestGrepACAgreesWithNeedles(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		words := rapid.SliceOfN(rapid.SliceOfN(rapid.SampledFrom([]byte("abAB1 -")), 1, 4), grepACMin, 12).Draw(rt, "words")
		pats := make([]string, len(words))
		for i, w := range words {
			pats[i] = string(w)
		}
		mode := grepMode(rapid.IntRange(0, 2).Draw(rt, "mode"))
		icase := rapid.Bool().Draw(rt, "icase")
		m, err := grepNewMatcher(pats, 'F', icase, mode)
		if err != nil {
			rt.Fatal(err)
		}
		l := m.(*grepLiteral)
		if l.ac == nil {
			rt.Fatalf("%q: no automaton", pats)
		}
		model := *l
		model.ac = nil
		lines := rapid.SliceOfN(rapid.SliceOfN(rapid.SampledFrom([]byte("abAB1 -_x")), 0, 16), 1, 6).Draw(rt, "lines")
		what := fmt.Sprintf("%q (mode %d, -i %v)", pats, mode, icase)
		data, first := decideLines(rt, what, lines, l.match, model.match)
		at, _ := l.seek(data)
		gotLine := lineOf(data, at)
		// Under -w and -x the line seek finds is a candidate: no line
		// before it matches.
		if mode == grepAny && gotLine != first || first >= 0 && (gotLine < 0 || gotLine > first) {
			rt.Fatalf("%q (mode %d, -i %v) on %q: seek finds line %d, first match on %d", pats, mode, icase, data, gotLine, first)
		}
	})
}

// A pattern that spells out a few strings (an alternation of literals)
// becomes those strings, and decides every line as its regexp does, in
// every mode, with and without -i.
func TestGrepLiteralsAgreeWithRegexp(t *testing.T) {
	pieces := []string{"a", "b", "B", "1", " ", "|", "(", ")", "[ab]", "[Bb]", "[0-2]", "ab", "x*", "."}
	rapid.Check(t, func(rt *rapid.T) {
		var pat strings.Builder
		for _, p := range rapid.SliceOfN(rapid.SampledFrom(pieces), 1, 7).Draw(rt, "pieces") {
			pat.WriteString(p)
		}
		mode := grepMode(rapid.IntRange(0, 2).Draw(rt, "mode"))
		icase := rapid.Bool().Draw(rt, "icase")
		var fl posixre.Flags
		if icase {
			fl = posixre.IgnoreCase
		}
		src, err := posixre.Translate(pat.String(), posixre.Extended, fl)
		if err != nil {
			rt.Skip(err)
		}
		l := grepLiteralsAll([]string{src}, mode)
		if l == nil {
			rt.Skip("not a few strings")
		}
		wrapped := map[grepMode]string{
			grepAny:  src,
			grepLine: "^(?:" + src + ")$",
			grepWord: `(?:^|[^0-9A-Z_a-z])(?:` + src + `)(?:[^0-9A-Z_a-z]|$)`,
		}[mode]
		re, err := regexp.Compile(wrapped)
		if err != nil {
			rt.Skip(err)
		}
		for _, line := range rapid.SliceOfN(rapid.SliceOfN(rapid.SampledFrom([]byte("abAB1 2_x")), 0, 10), 1, 8).Draw(rt, "lines") {
			if got, want := l.match(line), re.Match(line); got != want {
				rt.Fatalf("%q (mode %d, -i %v, %d strings) on %q: %v, regexp says %v", pat.String(), mode, icase, len(l.pats), line, got, want)
			}
		}
	})
}

// FuzzGrepMatchers checks, for any pattern list in either dialect and
// mode, that the matcher grep picks (strings, an automaton, a sequence, a
// regexp with a needle) decides each line as one regexp of all the
// patterns does, and that seek stops at no line after the first that
// matches, and at that very line when it says sure.
func FuzzGrepMatchers(f *testing.F) {
	for _, s := range []string{"ERROR", "took [0-9]ms", `" [23]0[0-9] `, "^2026-11-21 12:0", "ERROR|WARN",
		"a\nb\nc\nd", "x$", "(al|be)(pha|ta)", "ERROR.*took 1", "[Kk]elvin", "", "a\n", "é|e"} {
		f.Add(s, true, false, uint8(0), "2026-11-21 12:00 ERROR took 5ms\nWARN x\n\" 404 \nalpha beta\nKELVIN")
		f.Add(s, false, true, uint8(1), "error\nk\n\xc3\xa9 e\nbeta")
	}
	f.Fuzz(func(t *testing.T, pat string, ere, icase bool, mode uint8, text string) {
		if len(pat) > 64 || len(text) > 1024 || strings.ContainsFunc(pat, func(r rune) bool { return r >= utf8.RuneSelf }) {
			// A pattern that is not ASCII is matched as bytes where it
			// is a string, and as UTF-8 by the regexp, which differ
			// (posixre's package doc).
			return
		}
		syn, matcher := posixre.Basic, byte('G')
		if ere {
			syn, matcher = posixre.Extended, 'E'
		}
		var fl posixre.Flags
		if icase {
			fl = posixre.IgnoreCase
		}
		md := grepMode(mode % 3)
		patterns := strings.Split(pat, "\n")
		m, err := grepNewMatcher(patterns, matcher, icase, md)
		if err != nil {
			return
		}
		srcs := make([]string, len(patterns))
		for i, p := range patterns {
			if srcs[i], err = posixre.Translate(p, syn, fl); err != nil {
				return // a back-reference: the backtracker's
			}
		}
		all := "(?:" + strings.Join(srcs, ")|(?:") + ")"
		wrapped := map[grepMode]string{
			grepAny:  all,
			grepLine: "^(?:" + all + ")$",
			grepWord: `(?:^|[^0-9A-Z_a-z])(?:` + all + `)(?:[^0-9A-Z_a-z]|$)`,
		}[md]
		re, err := regexp.Compile(wrapped)
		if err != nil {
			return
		}
		lines := strings.Split(text, "\n")
		first := -1
		for i, line := range lines {
			got, want := m.match([]byte(line)), re.MatchString(line)
			if md == grepWord && got != want {
				// -w tries each start's matches longest first, as
				// GNU does, which one regexp cannot say: the
				// backtracker is the model there.
				return
			}
			if got != want {
				t.Fatalf("%q (-E %v, -i %v, mode %d) on %q: %v, the regexp says %v", pat, ere, icase, md, line, got, want)
			}
			if got && first < 0 {
				first = i
			}
		}
		data := []byte(text)
		at, sure := m.seek(data)
		if at < 0 {
			if first >= 0 && len(data) > 0 {
				t.Fatalf("%q (-E %v, -i %v, mode %d) on %q: seek finds nothing, line %d matches", pat, ere, icase, md, text, first)
			}
			return
		}
		line := bytes.Count(data[:at], []byte{'\n'})
		if first >= 0 && line > first || sure && line != first {
			t.Fatalf("%q (-E %v, -i %v, mode %d) on %q: seek finds line %d (sure %v), the first match is on %d", pat, ere, icase, md, text, line, sure, first)
		}
	})
}
