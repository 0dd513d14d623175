package builtin_test

import (
	"os"
	"path/filepath"
	"testing"
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
	})
}
