package builtin_test

import "testing"

func TestNlSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	in := "a\n\nb\n \n\tc\n\n"
	sections := "h0\n\\:\\:\\:\nhead\n\n\\:\\:\nbody\n\nbody2\n\\:\nfoot\n\\:\\:\nagain\n\\:\\:\\:"
	filesSameAsGNU(t, dir, []filesCase{
		filesC("nl", ""),
		filesC("nl", in),
		filesC("nl", "a\nb"),
		filesC("nl", "\n"),
		filesC("nl", sections),
		filesC("nl", "\\:\\:\\:x\n\\: \n"),
		filesC("nl -p", sections),
		filesC("nl -ba", in),
		filesC("nl -bn", in),
		filesC("nl -ha -fa", sections),
		filesC("nl -ht -ft -bn", sections),
		filesC("nl -n ln", in),
		filesC("nl -n rz", in),
		filesC("nl -w 2", in),
		filesC("nl -w 1 -v 98", in),
		filesC("nl -s :", in),
		filesC("nl -s abc", in),
		filesC("nl -v 0 -i 5", in),
		filesC("nl -v -3 -n rz -w 4", in),
		filesC("nl -v -3 -n ln -w 4", in),
		filesC("nl -i 0", in),
		filesC("nl -v 5 -i 2", sections),
		filesC("nl f2 nonl f2", ""),
		filesC("nl long", ""),
		filesC("nl - f2", in),
		filesC("nl blank", ""),
		filesC("nl missing f2", ""),
		filesC("nl d", ""),
	})
}

func TestNlErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("nl missing f2", ""),
		filesC("nl d", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("nl -b x", ""),
		filesC("nl -h x", ""),
		filesC("nl -n xx", ""),
		filesC("nl -w 0", ""),
		filesC("nl -w x", ""),
		filesC("nl -v x", ""),
		filesC("nl -i x", ""),
		filesC("nl -x", ""),
	})
}
