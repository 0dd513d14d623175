package builtin_test

import "testing"

// util-linux rev works on characters, and in the C locale rejects bytes
// past ASCII; the cases stay within ASCII (without NUL, at which it stops).
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

func TestRevBytes(t *testing.T) {
	got := runBuiltin(t, "", []string{"rev"}, "a\x00b\xc3\xa9\nz")
	if want := "\xa9\xc3b\x00a\nz"; got.out != want || got.code != 0 {
		t.Errorf("rev: %+v, want %q", got, want)
	}
	filesSameUsage(t, []filesCase{filesC("rev -x", "")})
}
