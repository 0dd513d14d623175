package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestUniqSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	in := "a\na\nb\nc\nc\nc\n\n\nd\na\na"
	filesSameAsGNU(t, dir, []filesCase{
		filesC("uniq", ""),
		filesC("uniq", in),
		filesC("uniq", "a\na"),
		filesC("uniq", "a\nb"),
		filesC("uniq", "x"),
		filesC("uniq", "\n\n\n"),
		filesC("uniq", "a\x00b\na\x00c\n"),
		filesC("uniq -c", in),
		filesC("uniq -c", "a\n"),
		filesC("uniq -d", in),
		filesC("uniq -u", in),
		filesC("uniq -du", in),
		filesC("uniq -cd", in),
		filesC("uniq -cu", in),
		filesC("uniq -c -d -u", in),
		filesC("uniq -", in),
		filesC("uniq nonl", ""),
		filesC("uniq -c long", ""),
		filesC("uniq blank", ""),
		filesC("uniq -c blank", ""),
		filesC("uniq missing", ""),
		filesC("uniq d", ""),
	})
	fields := "a b\na  b\nA b\nx b\n\tb\nxb\nab c\nab  c\nAB C\nabc\nabd\n\n\nq\n"
	var cases []filesCase
	for _, args := range []string{
		"-f1", "-f 2", "-f5", "-s1", "-s2 -c", "-s9", "-w1", "-w2 -c", "-w0", "-i", "-i -c", "-f1 -s1", "-f1 -w1 -i",
		"-s1 -w1", "-d -f1", "-u -i", "-z", "-z -c", "-z -i", "-f+1", "--skip-fields=1", "--skip-chars 1",
		"--check-chars=1", "--ignore-case", "--count", "--repeated", "--unique", "--zero-terminated", "--count --ign",
		"-f 99999999999999999999999",
	} {
		cases = append(cases, filesCase{argv: append([]string{"uniq"}, strings.Fields(args)...), stdin: fields})
	}
	cases = append(cases, filesC("uniq -z", "a\x00a\x00b"), filesC("uniq -z -c", "a\nb\x00a\nb\x00\x00x\n"),
		filesC("uniq -z nonl", ""), filesC("uniq -c -z long", ""))
	filesSameAsGNU(t, dir, cases)
}

func TestUniqOutputFile(t *testing.T) {
	dir := filesFixture(t)
	got := runBuiltin(t, dir, []string{"uniq", "-c", "blank", "out"}, "")
	data, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil || got.out != "" || got.code != 0 || string(data) != "      3 \n" {
		t.Errorf("uniq -c blank out: %+v, file %q, %v", got, data, err)
	}
}

func TestUniqErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("uniq missing", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("uniq -x", ""),
		filesC("uniq a b c", ""),
		filesC("uniq -f x", ""),
		filesC("uniq -s -1", ""),
		filesC("uniq -w 1x", ""),
		filesC("uniq --skip-fields", ""),
	})
	// GNU has -D and --group; tpipe's uniq does not, and says so.
	if got := runBuiltin(t, "", []string{"uniq", "-D"}, ""); got.code != 2 || got.err != "uniq: invalid option -- 'D'\n" {
		t.Errorf("uniq -D: %+v", got)
	}
}

// The property: on random lines with few distinct fields, uniq with
// random options gives GNU's output.
func TestUniqRapidAgainstGNU(t *testing.T) {
	if _, err := exec.LookPath("uniq"); err != nil {
		t.Skip("uniq not installed")
	}
	rapid.Check(t, func(rt *rapid.T) {
		words := []string{"a", "A", "b", " ", "\t", "ab", "aB", "x y", ""}
		var b strings.Builder
		for range rapid.IntRange(0, 30).Draw(rt, "lines") {
			for range rapid.IntRange(0, 3).Draw(rt, "words") {
				b.WriteString(rapid.SampledFrom(words).Draw(rt, "w"))
			}
			b.WriteByte('\n')
		}
		argv := []string{"uniq"}
		for _, o := range []string{"-c", "-d", "-u", "-i"} {
			if rapid.IntRange(0, 3).Draw(rt, o) == 0 {
				argv = append(argv, o)
			}
		}
		for _, o := range []string{"-f", "-s", "-w"} {
			if rapid.IntRange(0, 2).Draw(rt, o) == 0 {
				argv = append(argv, o, strconv.Itoa(rapid.IntRange(0, 3).Draw(rt, o+"n")))
			}
		}
		in := b.String()
		want := runGNU(t, "", argv, in)
		got := runBuiltin(t, "", argv, in)
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("%q on %q:\n tpipe: %d %q\n   GNU: %d %q", argv, in, got.code, got.out, want.code, want.out)
		}
	})
}
