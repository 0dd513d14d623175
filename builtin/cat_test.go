package builtin_test

import (
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

func TestCatSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	filesSameAsGNU(t, dir, []filesCase{
		filesC("cat", ""),
		filesC("cat", "a\nb\n"),
		filesC("cat", "no newline"),
		filesC("cat", "\n\n\n"),
		filesC("cat -", "a\nb"),
		filesC("cat f2", ""),
		filesC("cat nonl", ""),
		filesC("cat nonl f2", ""),
		filesC("cat nonl nonl", ""),
		filesC("cat nonl - f2", "in"),
		filesC("cat empty f2 empty", ""),
		filesC("cat f2 missing nonl", ""),
		filesC("cat d f2", ""),
		filesC("cat - -", "twice?\n"),
		filesC("cat long words", ""),
	})
}

// cat's options, each and together, across files whose last line lacks
// its newline, against GNU cat.
func TestCatOptionsSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	in := "a\tb\n\n\n\nc\x01\x7f\x80\x89\xff\n\n"
	var cases []filesCase
	for _, opt := range []string{"-n", "-b", "-s", "-E", "-T", "-v", "-A", "-e", "-t", "-u", "-ns", "-bs", "-nE", "-vT",
		"--number", "--number-nonblank", "--squeeze-blank", "--show-ends", "--show-tabs", "--show-nonprinting", "--show-all", "-nb"} {
		cases = append(cases, filesC("cat "+opt, in), filesC("cat "+opt+" nonl - blank words", in))
	}
	cases = append(cases, filesC("cat -n long", ""), filesC("cat -n missing f2", ""), filesC("cat -s blank blank", ""))
	filesSameAsGNU(t, dir, cases)
}

func TestCatErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("cat missing", ""),
		filesC("cat f2 missing nonl", ""),
		filesC("cat d", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("cat -x", ""),
		filesC("cat --bogus", ""),
	})
}

// Plain cat is a keep-all filter; with FILEs it does not read its input.
func TestCatForms(t *testing.T) {
	c, err := builtin.New(nil, []string{"cat"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReadsInput || c.Rec == nil || c.Rec.Keep == nil || c.Rec.Each != nil {
		t.Errorf("cat: ReadsInput %v, Rec %+v; want a Keep filter", c.ReadsInput, c.Rec)
	}
	c, err = builtin.New(nil, []string{"cat", "f"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ReadsInput {
		t.Error("cat f: ReadsInput")
	}
	c, err = builtin.New(nil, []string{"cat", "f", "-"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReadsInput {
		t.Error("cat f -: !ReadsInput")
	}
}
