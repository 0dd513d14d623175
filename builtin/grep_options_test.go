package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

// grepTree makes a small directory tree for -r, -l, -L and friends.
func grepTree(t *testing.T) string {
	t.Helper()
	dir := textFiles(t,
		"a.txt", "one\ntwo alpha\nthree\nalphabet\n",
		"b.log", "alpha\nbeta\nalpha again",
		"empty", "")
	for name, text := range map[string]string{
		"sub/c.txt":      "gamma alpha\ndelta\n",
		"sub/deep/d.txt": "alpha-beta\n",
		"sub/deep/e.log": "nothing here\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Each option of GNU grep that tpipe's grep implements, alone and
// together, byte for byte and status for status against GNU grep.
func TestGrepOptionsSameAsGNU(t *testing.T) {
	dir := grepTree(t)
	seq := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(strings.Repeat("x", i%3) + itoa(i) + "\n")
		}
		return b.String()
	}
	lines := seq(30)
	words := "foo bar\nfoobar\nbar-foo\n_foo\nfoo_\na-b\nthe the cat\nabcabc\nABab\nfoo\n\n"
	for _, tc := range []struct {
		stdin string
		args  string
	}{
		// -w and -x: literals, regexps, several patterns, -i, -v, -o.
		{words, "-w foo"},
		{words, "-x foo"},
		{words, "-wv foo"},
		{words, "-xc foo"},
		{words, "-wo foo"},
		{words, "-w -e foo -e bar"},
		{words, "-wi FOO"},
		{words, "-xF foo"},
		{words, "-w fo*"},
		{words, "-wo fo*"},
		{words, "-x fo*"},
		{words, "-xo fo*"},
		{words, `-ow a-\|a`},
		{words, "-wE (foo|bar)"},
		// Errors GNU gives (issue 30): a range's end starting another, a
		// group of stray repetitions.
		{"a2c\n", "-E a[1-3-5]c"},
		{"a2c\n", "a[1-3-5]c"},
		{"xb\n", "-E (*)b"},
		{"xb\n", "-E (+)b"},
		{"xb\n", "-E ({1})b"},
		{"xb\n", "-E (*b)"},
		{words, "-wn b.r"},
		{words, "-w a*"},
		{words, "-x ''"},
		{words, "-w ''"},
		// Back-references, which RE2 lacks.
		{words, `\(the\) \1`},
		{words, `-o \(abc\)\1`},
		{words, `-E (ab)\1`},
		{words, `-iE (ab)\1`},
		{words, `-w \(.\)\1`},
		{words, `-x \(.*\)\1`},
		{words, `-c \(b\)\1`},
		{words, `-o \<\(\w*\) \1\>`},
		// -m, and its trailing context.
		{lines, "-m2 1"},
		{lines, "-m2 -A3 1"},
		{lines, "-m2 -c 1"},
		{lines, "-m1 -v 1"},
		{lines, "-m0 1"},
		{lines, "-v -m2 -A1 5"},
		// Context: -A, -B, -C, -NUM, separators, -n, -b, -o.
		{lines, "-A1 5"},
		{lines, "-B2 7"},
		{lines, "-C1 [58]"},
		{lines, "-n -C1 [58]"},
		{lines, "-2 20"},
		{lines, "-A0 [24]"},
		{lines, "-o -C1 1[15]"},
		{lines, "-o -C1 1[13]"},
		{lines, "-v -A1 -B1 [0-9][0-9]"},
		{lines, "-C1 --group-separator=XX [16]"},
		{lines, "-C1 --no-group-separator [16]"},
		{lines, "-c -A2 3"},
		{lines, "-b 2"},
		{lines, "-ob 2"},
		{lines, "-nb -H 3"},
		{lines, "-B1 -n -b 30"},
		// Names: -H, -h, --label, -Z.
		{lines, "-H 7"},
		{lines, "--label=in -H 7"},
		{lines, "--label=in -c -H 7"},
		{"", "-h alpha a.txt b.log"},
		{"", "-H alpha a.txt"},
		{"", "-Z alpha a.txt b.log"},
		{"", "-cZ alpha a.txt b.log"},
		// Lists: -l, -L, with -c, -v, -Z, missing files and -s.
		{"", "-l alpha a.txt b.log empty"},
		{"", "-L alpha a.txt b.log empty"},
		{"", "-lZ alpha a.txt b.log"},
		{"", "-lv alpha a.txt b.log"},
		{"", "-lc alpha a.txt b.log"},
		{"", "-L -m0 alpha a.txt"},
		{"", "-l alpha nope a.txt"},
		{"", "-s alpha nope a.txt"},
		{"", "-sq alpha nope"},
		{lines, "-l 1"},
		{lines, "-L 1"},
		// -f FILE.
		{lines, "-f a.txt"},
		{"alpha\none\n", "-f empty"},
		{"alpha\none\n", "-v -f empty"},
		{"alpha\none\n", "-c -f a.txt -e one"},
		// -r and -R: order, names, --include, --exclude, --exclude-dir.
		{"", "-r alpha"},
		{"", "-r alpha ."},
		{"", "-r alpha sub"},
		{"", "-r alpha sub/"},
		{"", "-rh alpha sub"},
		{"", "-rl alpha ."},
		{"", "-rL alpha"},
		{"", "-rc alpha sub"},
		{"", "-r alpha a.txt"},
		{"", "-rn --include=*.txt alpha"},
		{"", "-r --exclude=*.txt alpha"},
		{"", "-r --exclude-dir=deep alpha"},
		{"", "-r --include=*.log --exclude=b* alpha"},
		{"", "-R alpha sub"},
		{"", "-d skip alpha sub a.txt"},
		{"", "alpha sub a.txt"},
		// Long options and their abbreviations.
		{lines, "--max-count=1 --line-number 1"},
		{lines, "--context=1 --regexp=15"},
		{words, "--word-regexp --ignore-case --only-matching FOO"},
		{words, "--line-regexp --invert-match --count foo"},
		{words, "--color=never foo"},
		{words, "--colour foo"},
		{words, "--no-ignore-case -i FOO"},
		{words, "-y FOO"},
		{words, "-G --binary-files=text foo"},
		{words, "--files-with-matches foo"},
		// Usage errors: GNU's statuses.
		{lines, "-A x 1"},
		{lines, "-m x 1"},
		{lines, "--binary-files=nope 1"},
		{words, `\(a\)\2`},
	} {
		argv := append([]string{"grep"}, strings.Fields(strings.ReplaceAll(tc.args, "''", "\x00"))...)
		for i, a := range argv {
			if a == "\x00" {
				argv[i] = ""
			}
		}
		sameAsGNU(t, dir, argv, tc.stdin)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// Options that tpipe's grep leaves to the system's grep say so with an
// *UnsupportedError, which makes the runner fall back.
func TestGrepUnsupported(t *testing.T) {
	for _, args := range [][]string{
		{"-P", `\d`},
		{"-z", "x"},
		{"--null-data", "x"},
		{"-T", "x"},
		{"--color=always", "x"},
		{"-f", "-"},
		{"--exclude-from", "f", "x"},
		{"-d", "nope", "x"},
	} {
		_, err := builtin.New(&builtin.Env{}, append([]string{"grep"}, args...))
		ue, ok := err.(*builtin.UnsupportedError)
		if !ok || ue.Cmd != "grep" || !strings.HasPrefix(ue.What, "grep ") {
			t.Errorf("grep %q: %v, want an *UnsupportedError", args, err)
		}
	}
}
