package builtin_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

// grep's general form reads a file in blocks and a port a buffer at a
// time, searches each as one string and takes the lines between matches
// in runs: the same output and status as GNU grep for every option that
// changes what a line costs, with blocks small enough that lines and
// matches fall across their ends, binary input (a NUL in the first line,
// or further on but within the probe) and a last line without '\n'.
func TestGrepBlocksSameAsGNU(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	argvs := [][]string{
		{"ERROR"}, {"-v", "ERROR"}, {"-c", "ERROR"}, {"-cv", "zz"}, {"-n", "alpha"}, {"-nv", "a"},
		{"-b", "beta"}, {"-bv", "z"}, {"-H", "delta"}, {"-Hv", "e"}, {"-l", "ERROR"}, {"-L", "zzz"},
		{"-lv", "a"}, {"-q", "Gamma"}, {"-qv", "a"}, {"-m3", "a"}, {"-m3", "-v", "a"}, {"-m2", "-c", "a"},
		{"-o", "ERROR"}, {"-ov", "x"}, {"-x", "zz"}, {"-w", "error"}, {"-wv", "z"}, {"-i", "gamma"},
		{"-e", "delta", "-e", "zz"}, {"-v", "-e", "beta", "-e", "a\x01b"}, {"-c", "-e", "z", "-e", "zz z"},
		{"E[RO]R"}, {"-v", "^alpha"}, {"-c", "[ab]e"}, {"-x", "z[a-z]"}, {"-w", "z[a-z]"}, {"-vn", "[xy]$"},
		{"-n", "ERROR.*z"}, {"-vn", "ERROR.*error"}, {"-c", "^$"}, {"-c", ""}, {"-A1", "ERROR"},
		{"-B2", "-n", "beta"}, {"-E", "ERROR|zz"}, {"-vcE", "a|b"}, {"-E", "(al|be)(pha|ta)"}, {"-wiE", "error|gamma"},
		{"-xE", "zz|z"}, {"-oE", "al|alpha"}, {`ERROR\|delta`}, {"-E", "ERR[OE]R|a.b"}, {"-a", "a.b"}, {"-I", "a"}, {"-cI", "a"}, {"--binary-files=without-match", "a"}, {"-m2", "-c", "zz"}, {"-c", `\(zz\).*\1`},
	}
	for _, size := range []struct {
		n     int
		final bool
	}{{0, false}, {1, true}, {7, false}, {300, false}, {1200, true}} {
		n, final := size.n, size.final
		in := batchText(r, n, final)
		early, mid := in, in
		if len(in) > 0 {
			at := r.IntN(min(len(in), 100))
			early = in[:at] + "\x00" + in[at:]
			at = min(len(in), 16000+r.IntN(8000))
			mid = in[:at] + "\x00" + in[at:]
		}
		dir := textFiles(t, "in", in, "early", early, "mid", mid)
		for _, args := range argvs {
			for _, file := range []string{"in", "early", "mid"} {
				argv := append(append([]string{"grep"}, args...), file)
				want := runGNU(t, dir, argv, "")
				for _, block := range []int{64, 4096} {
					restore := builtin.SetGrepBlockSize(block)
					got := runSized(t, dir, argv, strings.NewReader(""), 1<<12)
					restore()
					if got.out != want.out || got.code != want.code {
						t.Errorf("%q on %d lines (final newline %v), blocks of %d:\n tpipe: status %d, %d bytes %.200q\n   GNU: status %d, %d bytes %.200q",
							argv, n, final, block, got.code, len(got.out), got.out, want.code, len(want.out), want.out)
					}
				}
			}
			// The same from the input port, in buffers of 4 KiB.
			argv := append([]string{"grep"}, args...)
			want := runGNU(t, dir, argv, mid)
			if got := runSized(t, dir, argv, strings.NewReader(mid), 1<<12); got.out != want.out || got.code != want.code {
				t.Errorf("%q on %d lines of stdin: tpipe status %d, %d bytes; GNU status %d, %d bytes",
					argv, n, got.code, len(got.out), want.code, len(want.out))
			}
		}
	}
}

// A NUL past the first grepBinaryProbe bytes makes the input binary from
// its line on (GNU decides per buffer of its reads, which no test can
// line up with): the lines before it are text, searched in bulk, and a
// selected line from it on says "binary file matches". So the output is
// GNU's on the text part alone.
func TestGrepBinaryLate(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	text := batchText(r, 1500, true) // some 60 KiB
	bin := "alpha\x00beta ERROR\n" + batchText(r, 50, true)
	dir := textFiles(t, "text", text, "all", text+bin)
	defer builtin.SetGrepBlockSize(4096)()
	for _, args := range [][]string{{"ERROR"}, {"-n", "alpha"}, {"-v", "zz"}, {"-b", "-v", "a"}, {"-w", "beta"}} {
		want := runGNU(t, dir, append(append([]string{"grep"}, args...), "text"), "")
		argv := append(append([]string{"grep"}, args...), "all")
		got := runSized(t, dir, argv, strings.NewReader(""), 1<<12)
		if got.out != want.out || got.code != 0 || got.err != "grep: all: binary file matches\n" {
			t.Errorf("%q: status %d, %d bytes, %q; want status 0, %d bytes and the message", argv, got.code, len(got.out), got.err, len(want.out))
		}
	}
}

// Several FILE operands: names before lines, counts per file, and the
// first block of each file searched afresh.
func TestGrepBlocksFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	dir := textFiles(t, "a", batchText(r, 400, false), "b", batchText(r, 3, true), "c", "", "d", "alpha\x00beta\n")
	defer builtin.SetGrepBlockSize(100)()
	for _, args := range [][]string{
		{"alpha"}, {"-v", "alpha"}, {"-c", "zz"}, {"-cv", "zz"}, {"-l", "beta"}, {"-L", "beta"}, {"-n", "beta"},
		{"-h", "-v", "a"}, {"-o", "-b", "delta"},
	} {
		argv := append(append([]string{"grep"}, args...), "a", "b", "c", "d", "nope")
		sameAsGNUSized(t, dir, argv)
	}
}

// sameAsGNUSized compares argv with GNU's on empty stdin, with records of
// 4 KiB.
func sameAsGNUSized(t *testing.T, dir string, argv []string) {
	t.Helper()
	want := runGNU(t, dir, argv, "")
	got := runSized(t, dir, argv, strings.NewReader(""), 1<<12)
	if got.out != want.out || got.code != want.code {
		t.Errorf("%q:\n tpipe: status %d, %q\n   GNU: status %d, %q", argv, got.code, got.out, want.code, want.out)
	}
}

// A line longer than the block grows it, up to the longest line a task
// holds whole.
func TestGrepBlocksLongLine(t *testing.T) {
	long := strings.Repeat("x", 10000)
	dir := textFiles(t, "f", "a\n"+long+"ERROR"+long+"\nb ERROR\n"+long)
	defer builtin.SetGrepBlockSize(64)()
	for _, args := range [][]string{{"ERROR"}, {"-c", "x"}, {"-v", "a"}, {"-n", "b"}} {
		sameAsGNUSized(t, dir, append(append([]string{"grep"}, args...), "f"))
	}
}

// The general form allocates nothing per line: a file of twice the
// lines costs no more allocations, whatever the search.
func TestGrepBlocksAllocs(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "2026-11-21 12:%02d:%02d host%d %s request %d took %dms\n", i/60%60, i%60, i%7,
				[]string{"INFO", "WARN", "ERROR"}[i%3], i, i%250)
		}
		return b.String()
	}
	dir := textFiles(t, "small", lines(10000), "large", lines(20000))
	for _, args := range [][]string{
		{"ERROR"}, {"-v", "ERROR"}, {"-c", "INFO"}, {"-n", "WARN"}, {"-cv", "zzz"}, {"took [0-9]ms"},
		{"-i", "error"}, {"-e", "ERROR", "-e", "WARN"}, {"-w", "ERROR"}, {"ERROR.*took 1"},
	} {
		allocs := func(file string) float64 {
			argv := append(append([]string{"grep"}, args...), file)
			return testing.AllocsPerRun(3, func() { runSized(t, dir, argv, strings.NewReader(""), 1<<16) })
		}
		small, large := allocs("small"), allocs("large")
		// 10000 more lines (700 KiB, about 11 more blocks of 64 KiB):
		// an allocation or two a block at most (measured up to 15 in
		// all, and more when the scheduler wakes tasks more often on a
		// loaded machine), never one a line (10000), nor one in a
		// hundred lines.
		if large-small > 100 {
			t.Errorf("%q: %v allocations for 10000 lines, %v for 20000", args, small, large)
		}
	}
}

// Patterns from a file (-f), few and many (the automaton), as strings
// and as words, lines, ignoring case; against GNU.
func TestGrepManyPatternsSameAsGNU(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	in := batchText(r, 2000, false)
	vocab := []string{"alpha", "beta", "Gamma", "delta", "ERROR", "error", "zz", "z", "x\ty", "a\x01b", "ta", "lph", "rr", "ERR", "amm"}
	pick := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(vocab[r.IntN(len(vocab))] + "\n")
		}
		return b.String()
	}
	dir := textFiles(t, "in", in, "few", pick(2), "some", pick(5), "many", pick(40), "nomatch", "qqq\nwww\nyyy\nkkk\n")
	defer builtin.SetGrepBlockSize(1000)()
	for _, file := range []string{"few", "some", "many", "nomatch"} {
		for _, args := range [][]string{{"-F"}, {"-Fv"}, {"-Fc"}, {"-Fw"}, {"-Fx"}, {"-Fi"}, {"-Fwi"}, {"-Fo"}, {"-Fn", "-v"}} {
			sameAsGNUSized(t, dir, append(append([]string{"grep"}, args...), "-f", file, "in"))
		}
	}
}
