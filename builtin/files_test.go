package builtin_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// filesFixture makes a directory of files the coreutils tests use as FILE
// operands: short and long files, one without a final newline, an empty
// one, and a subdirectory (which reads fail on).
func filesFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var long strings.Builder
	for i := range 300 {
		long.WriteString(strings.Repeat("w", i%7) + " line " + string(rune('a'+i%26)) + "\n")
	}
	files := map[string]string{
		"f2":    "x\ny\n",
		"nums":  "10\n9\n-1\n2.5\n\n  3\nabc\n10\n",
		"nonl":  "a\nb",
		"empty": "",
		"blank": "\n\n\n",
		"long":  long.String(),
		"words": "the quick  brown\tfox\n\njumps\x01over\x80 the\n lazy dog",
		"a b":   "space in name\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// filesCase is one command line and its input, for a table of
// comparisons with GNU.
type filesCase struct {
	argv  []string
	stdin string
}

// filesC builds a filesCase from a command line in one string, split at
// spaces.
func filesC(cmd, stdin string) filesCase {
	return filesCase{argv: strings.Fields(cmd), stdin: stdin}
}

// filesSameAsGNU runs every case against GNU in dir.
func filesSameAsGNU(t *testing.T, dir string, cases []filesCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(strings.Join(c.argv, " "), func(t *testing.T) {
			sameAsGNU(t, dir, c.argv, c.stdin)
		})
	}
}

// filesGNU runs argv with GNU as runGNU does, with the program named as
// the user typed it in its messages (runGNU runs it by its full path, which
// GNU then uses as its name).
func filesGNU(t *testing.T, dir string, argv []string, stdin string) result {
	t.Helper()
	r := runGNU(t, dir, argv, stdin)
	if path, err := exec.LookPath(argv[0]); err == nil {
		r.err = strings.ReplaceAll(r.err, path, argv[0])
	}
	return r
}

// filesSameStderr checks that the builtin and GNU say the same thing on
// stderr and give the same status, for a problem found while running (a
// missing file).
func filesSameStderr(t *testing.T, dir string, cases []filesCase) {
	t.Helper()
	for _, c := range cases {
		want := filesGNU(t, dir, c.argv, c.stdin)
		got := runBuiltin(t, dir, c.argv, c.stdin)
		if got != want {
			t.Errorf("%q:\n tpipe: status %d, out %q, err %q\n   GNU: status %d, out %q, err %q",
				c.argv, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// filesSameUsage checks that a bad command line is a usage error (status
// 2) whose message is the first line GNU prints for it.
func filesSameUsage(t *testing.T, cases []filesCase) {
	t.Helper()
	for _, c := range cases {
		want := filesGNU(t, "", c.argv, c.stdin)
		got := runBuiltin(t, "", c.argv, c.stdin)
		first, _, _ := strings.Cut(want.err, "\n")
		if got.code != 2 || got.err != first+"\n" || want.code == 0 {
			t.Errorf("%q:\n tpipe: status %d, %q\n   GNU: status %d, %q", c.argv, got.code, got.err, want.code, want.err)
		}
	}
}

// Option parsing shared by the builtins: clusters, attached and detached
// arguments, options after operands, "--" and "-".
func TestCatHeadSortOptionParsing(t *testing.T) {
	dir := filesFixture(t)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("sort -rn nums", ""),
		filesC("sort nums -r", ""),
		filesC("sort -k 2 long", ""),
		filesC("sort -k2 -- long", ""),
		filesC("sort -t: -k1,1n nums", ""),
		filesC("head -n3 long", ""),
		filesC("head -n 3 - f2", "in\nput\n"),
		filesC("cat -- f2", ""),
		filesC("cat f2 - nonl", "in\n"),
	})
}

// The line-by-line builtins allocate nothing per line once warmed up: ten
// times the lines cost next to no more allocations.
func TestCatHeadWcUniqNlRevCopyPrefixAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("counts allocations over large inputs")
	}
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "line %d %s\n", i/3, strings.Repeat("x", i%13))
		}
		return b.String()
	}
	small, large := lines(5000), lines(50000)
	for _, argv := range [][]string{
		{"cat"}, {"cat", "-"}, {"head", "-n", "1000000"}, {"head", "-n", "-5"}, {"tail", "-n", "+2"},
		{"tail", "-n", "5"}, {"wc"}, {"wc", "-l"}, {"uniq"}, {"uniq", "-c"}, {"nl"}, {"rev"},
		{"copy"}, {"prefix", "p"}, {"tee"},
	} {
		count := func(in string) uint64 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			runBuiltin(t, "", argv, in)
			runtime.ReadMemStats(&after)
			return after.Mallocs - before.Mallocs
		}
		count(small) // warm up
		a, b := count(small), count(large)
		if b > a+2000 {
			t.Errorf("%q: %d allocations for %d lines, %d for %d lines", argv, a, 5000, b, 50000)
		}
	}
}

func BenchmarkCatWcHead(b *testing.B) {
	var sb strings.Builder
	for i := range 1000000 {
		fmt.Fprintf(&sb, "line %d of the input\n", i)
	}
	in := sb.String()
	for _, argv := range [][]string{{"cat"}, {"wc", "-l"}, {"wc"}, {"uniq"}, {"nl"}, {"rev"}, {"tail", "-n", "10"}} {
		b.Run(strings.Join(argv, " "), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				runBuiltin(b, "", argv, in)
			}
		})
	}
}
