package builtin_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

// grepText is a small input with upper and lower case, empty lines,
// punctuation and a final line without a newline.
const grepText = "Alpha beta\nalpha\n\nGAMMA delta alpha\nfoo.bar foo-bar\nx+y=z (a|b)\n  indented\nlast line"

// textFiles writes files (name, content pairs) in a new directory and
// returns it.
func textFiles(t *testing.T, nameContent ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i+1 < len(nameContent); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, nameContent[i]), []byte(nameContent[i+1]), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGrepSameAsGNU(t *testing.T) {
	dir := textFiles(t,
		"a.txt", "one\ntwo alpha\nthree\n",
		"b.txt", "alpha\nbeta\nalpha again",
		"empty", "")
	type tc struct {
		argv  []string
		stdin string
	}
	in := func(stdin string, argv ...string) tc { return tc{argv, stdin} }
	cases := []tc{
		// Plain literals: the Keep form.
		in(grepText, "grep", "alpha"),
		in(grepText, "grep", "line"), // final line without '\n'
		in(grepText, "grep", "nothing here"),
		in(grepText, "grep", ""),
		in("", "grep", "x"),
		in("", "grep", "-v", "x"),
		in("\n\n", "grep", "-c", ""),
		in(grepText, "grep", "-v", "alpha"),
		in(grepText, "grep", "-i", "ALPHA"),
		in(grepText, "grep", "-vi", "alpha"),
		in(grepText, "grep", "-iv", "a"),
		in(grepText, "grep", "-i", "-e", "GAMMA", "-e", "Foo"),
		in(grepText, "grep", "alpha\nfoo"),
		in(grepText, "grep", "-F", "foo.bar"),
		in(grepText, "grep", "-F", "(a|b)"),
		in(grepText, "grep", "-Fi", "X+Y"),
		in(grepText, "grep", "-F", "-e", "beta", "-e", "delta"),
		in(grepText, "grep", "-F", ""),
		in(grepText, "grep", "-F", "x\n"),
		in("abc\nABC\naBc", "grep", "-i", "b"),
		in("abc\nABC\naBc", "grep", "-i", "1"),
		in("aaaAAb\nab\n", "grep", "-i", "aab"),
		// -c, -n, -o, -q.
		in(grepText, "grep", "-c", "alpha"),
		in(grepText, "grep", "-c", "zzz"),
		in(grepText, "grep", "-cv", "alpha"),
		in(grepText, "grep", "-n", "a"),
		in(grepText, "grep", "-nv", "a"),
		in(grepText, "grep", "-n", "line"),
		in(grepText, "grep", "-o", "alpha"),
		in(grepText, "grep", "-oi", "ALPHA"),
		in(grepText, "grep", "-on", "a."),
		in(grepText, "grep", "-o", "line"),
		in(grepText, "grep", "-ov", "alpha"),
		in(grepText, "grep", "-oc", "a"),
		in(grepText, "grep", "-o", ""),
		in(grepText, "grep", "-o", "b*"),
		in("abcabcab\n", "grep", "-oF", "ab\nabc\nbca"),
		in("abababa\n", "grep", "-o", "aba"),
		in(grepText, "grep", "-q", "alpha"),
		in(grepText, "grep", "-q", "zzz"),
		in(grepText, "grep", "-qv", "alpha"),
		in(grepText, "grep", "-qc", "alpha"),
		// BRE.
		in(grepText, "grep", "^alpha"),
		in(grepText, "grep", "alpha$"),
		in(grepText, "grep", "^$"),
		in(grepText, "grep", "-c", "^"),
		in(grepText, "grep", "-o", "fo*"),
		in(grepText, "grep", "-o", "a.*a"),
		in(grepText, "grep", "-o", "[[:upper:]]\\+"),
		in(grepText, "grep", "-o", "[^a-z ]\\{2,\\}"),
		in(grepText, "grep", "-o", "\\(al\\|de\\)[a-z]*"),
		in(grepText, "grep", "-o", "x+y"),
		in(grepText, "grep", "-o", "(a|b)"),
		in(grepText, "grep", "-o", "a\\?l"),
		in(grepText, "grep", "-o", "foo.bar"),
		in(grepText, "grep", "-o", "foo\\.bar"),
		in(grepText, "grep", "-o", "\\w\\+"),
		in(grepText, "grep", "-o", "\\W"),
		in(grepText, "grep", "-o", "\\s\\S"),
		in(grepText, "grep", "-o", "\\bal"),
		in(grepText, "grep", "-o", "a\\B."),
		in(grepText, "grep", "-o", "\\<a[a-z]*"),
		in(grepText, "grep", "-o", "[a-z]a\\>"),
		in(grepText, "grep", "-io", "[a-c]\\{2\\}"),
		in(grepText, "grep", "-o", "[]a]"),
		in(grepText, "grep", "-o", "[^]a ]*"),
		in(grepText, "grep", "-o", "[a-]"),
		in(grepText, "grep", "-o", "[[:punct:]]"),
		in(grepText, "grep", "-o", "[[:space:]][[:alpha:]]"),
		in(grepText, "grep", "-o", "[[.-.][=a=]]"),
		in("*star\na*b\n", "grep", "-o", "*star"),
		in("*star\na*b\n", "grep", "-o", "^*"),
		in("*star\na*b\n", "grep", "-o", "\\(*\\)"),
		in("a^b$c\n", "grep", "-o", "a^b$c"),
		in("a^b$c\n", "grep", "-o", "b$"),
		in("a{1}b\n", "grep", "-o", "\\{1\\}b"),
		in("a{1}b\naab\n", "grep", "-o", "a\\{1,\\}"),
		in("a{1}b\naab\n", "grep", "-o", "a\\{,1\\}b"),
		in("aab\n", "grep", "-o", "a**"),
		in("a\\b\n", "grep", "-o", "a\\\\b"),
		in("tab\there\n", "grep", "-c", "\\t"),
		// ERE.
		in(grepText, "grep", "-E", "alpha|delta"),
		in(grepText, "grep", "-Eo", "(al|de)[a-z]+"),
		in(grepText, "grep", "-Eo", "a{2}|l{1,2}"),
		in(grepText, "grep", "-Eo", "x\\+y"),
		in(grepText, "grep", "-Eo", "\\(a\\|b\\)"),
		in(grepText, "grep", "-Eo", "a?l"),
		in(grepText, "grep", "-Eo", "(a|b)*c?"),
		in(grepText, "grep", "-Ec", "^(alpha|)$"),
		in("a{1\na{,2}\naaa\n", "grep", "-Eo", "a{1"),
		in("a{1\na{,2}\naaa\n", "grep", "-Eo", "a{,2}"),
		in("a{1\na{x}\naaa\n", "grep", "-Eo", "a{x}"),
		in("a)b\n", "grep", "-Eo", "a)"),
		in("b*b\n", "grep", "-Eo", "a|*b"),
		in("aaa\n", "grep", "-Eo", "a+?"),
		in("aaa\n", "grep", "-Eo", "a*{2}"),
		in("ab\nb\n", "grep", "-E", "^*a"),
		in("a$b\n", "grep", "-E", "a$b"),
		in("x|y\n", "grep", "-c", "x|y"),
		// Fixed bugs, found by comparing random patterns with GNU.
		in("^^a\n*b\n", "grep", "-o", "^^"),
		in("^^a\n*b\n", "grep", "-o", "^^*"),
		in(grepText, "grep", "-E", "a$? "),
		in(grepText, "grep", "-cvE", "^?a"),
		// Options: clusters, -e, --, permutation.
		in(grepText, "grep", "-ce", "alpha"),
		in(grepText, "grep", "-ealpha", "-n"),
		in(grepText, "grep", "alpha", "-c"),
		in("-v\n-x\n", "grep", "--", "-v"),
		in("-v\n-x\n", "grep", "-e", "-x"),
		in(grepText, "grep", "--count", "--ignore-case", "alpha"),
		in(grepText, "grep", "--regexp=beta", "--line-num"),
		// Files.
		in("", "grep", "alpha", "a.txt"),
		in("", "grep", "alpha", "a.txt", "b.txt"),
		in("", "grep", "-c", "alpha", "a.txt", "b.txt", "empty"),
		in("", "grep", "-n", "alpha", "a.txt", "b.txt"),
		in("", "grep", "-on", "al", "a.txt", "b.txt"),
		in("", "grep", "-v", "alpha", "b.txt"),
		in("", "grep", "-q", "alpha", "a.txt", "b.txt"),
		in("", "grep", "zzz", "a.txt", "b.txt"),
		in("stdin alpha\n", "grep", "alpha", "-", "a.txt"),
		in("stdin alpha\n", "grep", "-c", "alpha", "a.txt", "-"),
		// Missing files: status 2 but go on; -q with a match is 0.
		in("", "grep", "alpha", "nope"),
		in("", "grep", "alpha", "nope", "a.txt"),
		in("", "grep", "-c", "alpha", "a.txt", "nope"),
		in("alpha\n", "grep", "-q", "alpha", "nope", "-"),
		in("alpha\n", "grep", "-q", "alpha", "-", "nope"),
		in("beta\n", "grep", "-q", "alpha", "-", "nope"),
		// Errors: status 2.
		in(grepText, "grep", "\\(a"),
		in(grepText, "grep", "-E", "(a"),
		in(grepText, "grep", "a\\{1"),
		in(grepText, "grep", "[a"),
		in(grepText, "grep", "[[:nope:]]"),
		in(grepText, "grep", "[z-a]"),
		in(grepText, "grep", "a\\"),
		in(grepText, "grep", "-E", "a{2,1}"),
		in(grepText, "grep", "-j", "a"),
		in(grepText, "grep", "-E", "-F", "a"),
		in(grepText, "grep"),
		in(grepText, "grep", "-e"),
	}
	for _, c := range cases {
		sameAsGNU(t, dir, c.argv, c.stdin)
	}
}

// Random patterns built from the pieces of both dialects, on a fixed seed,
// against GNU: a bounded number of runs, as each one starts a process.
func TestGrepRandomPatterns(t *testing.T) {
	pieces := []string{"a", "b", "c", "(", ")", "\\(", "\\)", "{", "}", "\\{", "\\}", "1", "2", ",",
		"*", "+", "?", "\\+", "\\?", "|", "\\|", "^", "$", "[", "]", "[^", "[:alpha:]", "[[:digit:]]",
		"-", ".", "\\.", "\\w", "\\W", "\\s", " ", "x", "[]a]", "[a-c]"}
	input := "abc abc\naabbcc\n(a|b) {1,2} x*y+z?\n^start$ end$\n\nabcabc cab\na.b-c_d e\n  bb  \n12 ab1c a2\nc"
	r := rand.New(rand.NewPCG(1, 2))
	for range 60 {
		var pat strings.Builder
		for range 1 + r.IntN(6) {
			pat.WriteString(pieces[r.IntN(len(pieces))])
		}
		if strings.HasPrefix(pat.String(), "{") || strings.HasPrefix(pat.String(), "*{") {
			continue // GNU's two matchers disagree on a leading ERE {
		}
		argv := [][]string{{"grep", "-on"}, {"grep", "-onE"}, {"grep", "-oni"}, {"grep", "-cvE"}}[r.IntN(4)]
		argv = append(argv[:len(argv):len(argv)], pat.String())
		want := runGNU(t, "", argv, input)
		got := runBuiltin(t, "", argv, input)
		if want.code == 2 && got.code == 2 {
			continue // both reject it
		}
		if got.out != want.out || got.code != want.code {
			t.Errorf("%q:\n tpipe: status %d, %q %q\n   GNU: status %d, %q", argv, got.code, got.out, got.err, want.code, want.out)
		}
	}
}

func TestGrepMessages(t *testing.T) {
	dir := textFiles(t, "a.txt", "alpha\n")
	sameMessages(t, dir, [][]string{
		{"grep", "a", "nope"},
		{"grep", "-c", "a", "a.txt", "nope"},
		{"grep", "\\(a"},
		{"grep", "-E", "a)\\)(b"},
		{"grep", "[[:nope:]]"},
		{"grep", "[:space:]"},
		{"grep", "-E", "-F", "a"},
		{"grep", "-j", "a"},
		{"grep", "--nope", "a"},
		{"grep", "-e"},
	})
}

// poolKeeps reports whether sync.Pool keeps what is put in it. Go's regexp
// keeps its matchers in one, so a match allocates nothing only when it
// does; the race detector makes a pool drop items at random.
func poolKeeps() bool {
	var p sync.Pool
	return testing.AllocsPerRun(10, func() {
		for range 100 {
			b, _ := p.Get().(*[64]byte)
			if b == nil {
				b = new([64]byte)
			}
			p.Put(b)
		}
	}) == 0
}

// sameMessages checks that each command line gives the same status and
// first line on stderr as GNU, on empty input. GNU adds a usage line after
// an option error; tpipe's usage errors are one line.
func sameMessages(t *testing.T, dir string, argvs [][]string) {
	t.Helper()
	for _, argv := range argvs {
		want := runGNU(t, dir, argv, "")
		got := runBuiltin(t, dir, argv, "")
		// GNU names itself by the path it was run as.
		wantFirst, _, _ := strings.Cut(strings.ReplaceAll(want.err, gnuPath(argv[0])+": ", argv[0]+": "), "\n")
		if got.err != wantFirst+"\n" || got.code != want.code {
			t.Errorf("%q:\n tpipe: status %d, %q\n   GNU: status %d, %q", argv, got.code, got.err, want.code, want.err)
		}
	}
}

// gnuPath is the path runGNU runs name as, which GNU tools put before
// their messages.
func gnuPath(name string) string {
	p, _ := exec.LookPath(name)
	return p
}

// The plain filter is a Keep, so that the runtime can pass lines on
// without copying them; the other forms read their input themselves.
func TestGrepForms(t *testing.T) {
	for _, tc := range []struct {
		argv       []string
		rec, reads bool
	}{
		{[]string{"grep", "x"}, true, true},
		{[]string{"grep", "-vi", "x.*y"}, true, true},
		{[]string{"grep", "-n", "x"}, false, true},
		{[]string{"grep", "-c", "x"}, false, true},
		{[]string{"grep", "-q", "x"}, false, true},
		{[]string{"grep", "-o", "x"}, false, true},
		{[]string{"grep", "x", "file"}, false, false},
		{[]string{"grep", "x", "file", "-"}, false, true},
	} {
		c, err := builtin.New(nil, tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Rec != nil && c.Rec.Keep != nil; got != tc.rec {
			t.Errorf("%q: Keep form %v, want %v", tc.argv, got, tc.rec)
		}
		if c.ReadsInput != tc.reads {
			t.Errorf("%q: ReadsInput %v, want %v", tc.argv, c.ReadsInput, tc.reads)
		}
	}
}

// grep -q stops reading at the first match: an endless input ends.
func TestGrepQuietStopsEarly(t *testing.T) {
	got := runBuiltin(t, "", []string{"grep", "-q", "needle"}, strings.Repeat("hay\n", 1000)+"needle\n"+strings.Repeat("hay\n", 100000))
	if got.code != 0 || got.out != "" {
		t.Fatalf("status %d, out %q", got.code, got.out)
	}
}

func TestGrepKeepAllocs(t *testing.T) {
	lines := [][]byte{
		[]byte("2024-01-01 INFO all is well\n"),
		[]byte("2024-01-01 ERROR disk is full\n"),
		[]byte("2024-01-01 warn: error rate high\n"),
	}
	pooled := poolKeeps()
	for _, tc := range []struct {
		argv   []string
		regexp bool
	}{
		{[]string{"grep", "ERROR"}, false},
		{[]string{"grep", "-i", "error"}, false},
		{[]string{"grep", "-v", "INFO"}, false},
		{[]string{"grep", "-F", "-e", "disk", "-e", "rate"}, false},
		{[]string{"grep", "E[A-Z]*R d"}, true},
		{[]string{"grep", "-i", "error.*full"}, true},
		{[]string{"grep", "-E", "INFO|warn"}, true},
	} {
		if tc.regexp && !pooled {
			continue
		}
		argv := tc.argv
		c, err := builtin.New(nil, argv)
		if err != nil {
			t.Fatal(err)
		}
		keep := c.Rec.Keep
		allocs := testing.AllocsPerRun(100, func() {
			for _, l := range lines {
				keep(l)
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per 3 lines", argv, allocs)
		}
	}
}

func BenchmarkGrepKeep(b *testing.B) {
	line := []byte("2024-01-01T10:00:00Z host-17 service[1234]: INFO request served in 12ms path=/api/v1/items\n")
	for _, argv := range [][]string{
		{"grep", "ERROR"},
		{"grep", "-i", "error"},
		{"grep", "ERR.*timeout"},
		{"grep", "-E", "[0-9]+ms"},
	} {
		b.Run(strings.Join(argv[1:], " "), func(b *testing.B) {
			c, err := builtin.New(nil, argv)
			if err != nil {
				b.Fatal(err)
			}
			keep := c.Rec.Keep
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				keep(line)
			}
		})
	}
}

// Bytes >= 0x80 against GNU grep in the C locale (issue 30): every byte
// is a character, so that a stray byte of a pattern matches that byte
// only and '.' takes one byte, on each of grep's matchers.
func TestGrepBytesLikeGNU(t *testing.T) {
	input := "\xb7\xa1x\n\xc2\xe7y\n\xc3\xa9x \xc3\xa9\xc3\xa9\nab\xff\xffcd\n\xe2\x82\xac x\xa9\nplain\n"
	var cases [][]string
	for _, pat := range []string{
		// Fixed bugs: a stray byte matched any other.
		"x*\xc2\xe7", "\xc2\xe7\\|zz", "[\xc2]\xe7",
		// Neighbours.
		"\xc2\xe7", "^.x", "^..x", "^\xc3.x", ".\xa9", "[\x80-\xff]\\+", "[^a-z ]\\{2\\}",
		"[a-\xff]*d", "\xa9*x", "\\(\xc3\xa9\\)\\1", "\\(.\\)\\1", "\\W\\W", "\\<x", "x\\>", "\\bx\\b",
	} {
		for _, opts := range []string{"-n", "-on", "-c", "-ow", "-x", "-oi"} {
			cases = append(cases, []string{"grep", opts, pat})
		}
	}
	cases = append(cases,
		[]string{"grep", "-onE", "(.)\\1|\xa9+"},
		[]string{"grep", "-oE", "\xc3.|x."},
		[]string{"grep", "-ciE", "X.*\xa9"},
		[]string{"grep", "-e", "\xa1x", "-e", "^."},
	)
	for _, argv := range cases {
		sameAsGNU(t, "", argv, input)
	}
}
