package builtin_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/sched"
)

func TestTailSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	seq := seqLines(1, 30)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("tail", seq),
		filesC("tail", ""),
		filesC("tail", "a\nb"),
		filesC("tail -n 3", seq),
		filesC("tail -n3", seq),
		filesC("tail -3", seq),
		filesC("tail -n -3", seq),
		filesC("tail -n 0", seq),
		filesC("tail -0", seq),
		filesC("tail -n 100", seq),
		filesC("tail -n 1", "a\nb"),
		filesC("tail -n 1", "\n\n"),
		filesC("tail -n +1", seq),
		filesC("tail -n +0", seq),
		filesC("tail -n +25", seq),
		filesC("tail -n +100", seq),
		filesC("tail +28", seq),
		filesC("tail -n 1K", seq),
		filesC("tail -n +2", "a\nb"),
		filesC("tail f2", ""),
		filesC("tail -n 1 nonl f2", ""),
		filesC("tail -n +2 nonl - f2", "s1\ns2\n"),
		filesC("tail -q -n 1 f2 nonl", ""),
		filesC("tail -v f2", ""),
		filesC("tail -n 3 long", ""),
		filesC("tail -n 2 empty long f2", ""),
		filesC("tail missing f2", ""),
		filesC("tail d f2", ""),
		filesC("tail -2 f2", ""),
		filesC("tail +2 f2", ""),
		filesC("tail -c 5", seq),
		filesC("tail -c 0", seq),
		filesC("tail -c 1000", seq),
		filesC("tail -c 1K", seq),
		filesC("tail -c +5", seq),
		filesC("tail -c +0", seq),
		filesC("tail -c +1000", seq),
		filesC("tail -c 3", "a\nb"),
		filesC("tail -c 4 nonl f2", ""),
		filesC("tail -c +2 nonl - f2", "s1\ns2\n"),
		filesC("tail -c 20 -n 2 long", ""),
		filesC("tail -n 2 -c 20 long", ""),
		filesC("tail -v -c 7 long words", ""),
		filesC("tail -5c", seq),
		filesC("tail +5c", seq),
		filesC("tail -3c nonl", ""),
		filesC("tail -3l nonl", ""),
	})
}

// tail -c, head's and tail's long options, and wc -L, against GNU.
func TestTailHeadWcOptionsSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	seq := seqLines(1, 30)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("tail -c 5", seq),
		filesC("tail -c 3", "a\nb"),
		filesC("tail -c 0", seq),
		filesC("tail -c 1000", seq),
		filesC("tail -c +5", seq),
		filesC("tail -c +1", seq),
		filesC("tail -c +0", seq),
		filesC("tail -c +500", seq),
		filesC("tail -c 2", "\n\n\n"),
		filesC("tail -c 7 nonl f2 long", ""),
		filesC("tail -c +3 nonl - f2", "s1\ns2\n"),
		filesC("tail -c 1K long", ""),
		filesC("tail --bytes=4", seq),
		filesC("tail --lines=2", seq),
		filesC("tail --lines=+28", seq),
		filesC("tail --quiet -n1 f2 nonl", ""),
		filesC("tail --silent -n1 f2 nonl", ""),
		filesC("tail --verbose -n1 f2", ""),
		filesC("tail --line=2", seq),
		filesC("head --lines=3", seq),
		filesC("head --lines=-28", seq),
		filesC("head --bytes=5", seq),
		filesC("head --bytes=-50", seq),
		filesC("head --quiet -n1 f2 nonl", ""),
		filesC("head --verbose -n1 f2", ""),
		filesC("wc -L", "a\tb\nlonger line\x01\x80\n\r\fx"),
		filesC("wc -L", ""),
		filesC("wc -L", "no newline at all"),
		filesC("wc -lL", "12345678\t\n"),
		filesC("wc -L f2 long words nonl", ""),
		filesC("wc --max-line-length long", ""),
		filesC("wc --lines --words --chars --bytes", seq),
		filesC("wc -Lc - f2", "tab\there\n"),
	})
}

func TestTailErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("tail missing", ""),
		filesC("tail f2 missing", ""),
		filesC("tail d", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("tail -n x", ""),
		filesC("tail -n -x", ""),
		filesC("tail -n +x", ""),
		filesC("tail -n ++5", ""),
		filesC("tail -n 1.5", ""),
		filesC("tail -n", ""),
		filesC("tail -x", ""),
		filesC("tail -c x", ""),
		filesC("tail -c", ""),
	})
}

// tail -n N, head -n -N and head -c -N hold their lines in a FIFO bounded
// by Env.SortMemory: with a budget far below what they hold, they spill to
// disk and still print what GNU prints, leaving no file behind.
func TestTailHeadSpill(t *testing.T) {
	var in strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&in, "%d %s\n", i, strings.Repeat("x", i%37))
	}
	for _, argv := range [][]string{
		{"tail", "-n", "15000"}, {"tail", "-n", "3"}, {"tail", "-n", "+4000"},
		{"head", "-n", "-15000"}, {"head", "-n", "-3"}, {"head", "-c", "-100000"},
		{"tail", "-c", "150000"}, {"tail", "-c", "+1000"}, {"head", "-c", "-1"},
	} {
		tmp := t.TempDir()
		var stdout, stderr bytes.Buffer
		env := &builtin.Env{Stderr: &stderr, TempDir: tmp, SortMemory: 4 << 10}
		got := runWithEnv(t, env, &stdout, &stderr, argv, in.String())
		want := runGNU(t, "", argv, in.String())
		if got.out != want.out || got.code != want.code {
			t.Errorf("%q: %d bytes (status %d), GNU %d bytes (status %d)", argv, len(got.out), got.code, len(want.out), want.code)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("%q: %d files left in TMPDIR", argv, len(ents))
		}
	}
}

// Issue 13, part D: the tools that count bytes (head -c, tail -c) move
// pieces and never hold a line whole, so a line far longer than both S and
// the longest line a task may reassemble (MaxRecord) goes through them,
// from a file or a port, and what they write is still cut into lines.
func TestByteCountsNeverHoldALine(t *testing.T) {
	long := strings.Repeat("0123456789", 20000) // 200,000 bytes, no '\n'
	for _, in := range []string{long, "a\n" + long + "\nb\n", long + "\n" + long} {
		dir := textFiles(t, "in", in)
		for _, argv := range [][]string{
			{"head", "-c", "-5"}, {"head", "-c", "-150000"}, {"head", "-c", "7"},
			{"tail", "-c", "7"}, {"tail", "-c", "150000"}, {"tail", "-c", "+3"},
		} {
			want := runGNU(t, dir, append(argv[:len(argv):len(argv)], "in"), "")
			for _, file := range []bool{false, true} {
				args := argv
				if file {
					args = append(argv[:len(argv):len(argv)], "in")
				}
				env := &builtin.Env{Stderr: io.Discard, TempDir: t.TempDir(), SortMemory: 16 << 10,
					Open: func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }}
				// S = 4 KiB, and no task may hold a line over 8 KiB whole.
				got, code := runLinesChecked(t, env, args, strings.NewReader(in), sched.Options{RecordSize: 4096, MaxRecord: 8192})
				if got != want.out || code != 0 {
					t.Errorf("%q (from a file: %v): status %d, %d bytes; GNU %d bytes", args, file, code, len(got), len(want.out))
				}
			}
		}
	}
}

// tail -n N holds blocks of bytes and the count of line ends in each, not
// lines (issue 30): what it prints must still be GNU's for any N, line
// lengths, a last line with or without '\n', lines longer than S (a
// port's blocks then end inside a line), from a port or a file, and with
// a budget that spills most blocks to disk.
func TestTailLinesBlocksSameAsGNU(t *testing.T) {
	var mixed strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&mixed, "%d %s\n", i, strings.Repeat("y", i*7%90))
		if i%1000 == 999 {
			mixed.WriteString(strings.Repeat("long", 300) + "\n") // 1200 bytes: over S
		}
	}
	inputs := map[string]string{
		"seq":     seqLines(1, 3000),
		"mixed":   mixed.String(),
		"no-nl":   strings.TrimSuffix(mixed.String(), "\n"),
		"blank":   strings.Repeat("\n", 2500),
		"one":     "just one line, no newline",
		"empty":   "",
		"longend": "a\nb\n" + strings.Repeat("z", 5000),
	}
	counts := []string{"1", "2", "9", "10", "999", "1000", "1001", "2499", "2500", "2501", "2999", "3000", "3001", "5004", "5005", "5006", "100000"}
	for name, in := range inputs {
		dir := textFiles(t, "in", in)
		for _, n := range counts {
			argv := []string{"tail", "-n", n}
			want := runGNU(t, "", argv, in)
			for _, budget := range []int{4 << 10, 0} {
				for _, size := range []int{64, 1 << 16} {
					var stdout, stderr bytes.Buffer
					env := &builtin.Env{Stderr: &stderr, TempDir: t.TempDir(), SortMemory: budget}
					got := runGraph(t, env, &stdout, &stderr, argv, strings.NewReader(in), size)
					if got.out != want.out || got.code != want.code {
						t.Errorf("%s: tail -n %s (budget %d, S %d): %d bytes (status %d), GNU %d bytes (status %d)",
							name, n, budget, size, len(got.out), got.code, len(want.out), want.code)
					}
					if ents, _ := os.ReadDir(env.TempDir); len(ents) != 0 {
						t.Errorf("%s: tail -n %s: %d files left in TMPDIR", name, n, len(ents))
					}
				}
				file := append(argv[:len(argv):len(argv)], "in")
				env := &builtin.Env{Stderr: io.Discard, TempDir: t.TempDir(), SortMemory: budget,
					Open: func(name string) (ioReadCloser, error) { return os.Open(join(dir, name)) }}
				got, code := runLinesChecked(t, env, file, strings.NewReader(""), sched.Options{RecordSize: 4096})
				if got != want.out || code != 0 {
					t.Errorf("%s: tail -n %s in (budget %d): %d bytes (status %d), GNU %d bytes", name, n, budget, len(got), code, len(want.out))
				}
			}
		}
	}
}
