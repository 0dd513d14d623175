package builtin_test

import "testing"

// util-linux rev works on characters, and in the C locale rejects bytes
// past ASCII; the cases stay within ASCII.
func TestRevSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("rev", ""),
		filesC("rev", "abc\nde\n"),
		filesC("rev", "abc\nde"),
		filesC("rev", "\n\n"),
		filesC("rev", "a\rb\tc\n"),
		filesC("rev -", "xy\n"),
		filesC("rev f2", ""),
		filesC("rev nonl f2", ""),
		filesC("rev nonl - f2", "in"),
		filesC("rev long", ""),
		filesC("rev missing f2", ""),
	})
}

// A NUL cuts what util-linux rev reads of a line short; the line goes on
// with the next read.
func TestRevNUL(t *testing.T) {
	dir := filesFixture(t)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("rev", "ab\x00cd\nxy\n"),
		filesC("rev", "ab\x00cd"),
		filesC("rev", "\x00\nq\x00\x00r\n"),
		filesC("rev", "a\x00\nb\x00\nc\n"),
		filesC("rev", "x\x00y\n\n"),
		filesC("rev - f2", "ab\x00cd"),
	})
}

func TestRevBytes(t *testing.T) {
	got := runBuiltin(t, "", []string{"rev"}, "ab\xc3\xa9\nz")
	if want := "\xa9\xc3ba\nz"; got.out != want || got.code != 0 {
		t.Errorf("rev: %+v, want %q", got, want)
	}
	filesSameUsage(t, []filesCase{filesC("rev -x", "")})
}
