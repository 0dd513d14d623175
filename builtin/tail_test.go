package builtin_test

import "testing"

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
	})
}
