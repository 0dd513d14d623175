package builtin_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tpipe/tpipe/builtin"
)

// Every builtin answers --help with its usage on its output and status 0,
// whatever the rest of the line, and the text fits a terminal.
func TestEveryBuiltinHelps(t *testing.T) {
	for _, name := range builtin.Names() {
		s, _ := builtin.Lookup(name)
		if s.Usage == "" || s.Help == "" {
			t.Errorf("%s: Usage %q, Help %q: want both", name, s.Usage, s.Help)
		}
		if first, _, _ := strings.Cut(s.Usage, " "); first != name {
			t.Errorf("%s: Usage %q does not begin with the name", name, s.Usage)
		}
		got := runBuiltin(t, "", []string{name, "--help"}, "")
		if got.code != 0 || got.err != "" || !strings.HasPrefix(got.out, "Usage: "+name) {
			t.Errorf("%s --help: status %d, stderr %q, stdout %q", name, got.code, got.err, got.out)
		}
		if got.out != s.HelpText() {
			t.Errorf("%s --help printed %q, not HelpText", name, got.out)
		}
		checkWidth(t, name+" --help", got.out)
	}
}

// checkWidth fails the test for a line of text wider than 80 columns.
func checkWidth(t *testing.T, what, text string) {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("%s: line %d is %d columns: %q", what, i+1, n, line)
		}
	}
}

// --help counts where getopt would read an option, as GNU's tools permute
// them; as an option's argument, after "--", or where a command stops
// reading options, it is a word like any other.
func TestHelpWherever(t *testing.T) {
	for _, tc := range []struct {
		argv  []string
		stdin string
		help  bool
		out   string // when not help
	}{
		{argv: []string{"sort", "-r", "--help"}, help: true},
		{argv: []string{"sort", "nosuch", "--help"}, help: true},
		{argv: []string{"grep", "-c", "x", "--help"}, help: true},
		{argv: []string{"head", "-n", "3", "--help"}, help: true},
		{argv: []string{"awk", "--help"}, help: true},
		{argv: []string{"sed", "s/a/b/", "--help"}, help: true},
		{argv: []string{"yes", "--help"}, help: true},
		{argv: []string{"prefix", "--help"}, help: true},
		{argv: []string{"route", "--help"}, help: true},
		// An option's argument.
		{argv: []string{"grep", "-e", "--help"}, stdin: "a\n--help\n", out: "--help\n"},
		{argv: []string{"grep", "--regexp", "--help"}, stdin: "a\n--help\n", out: "--help\n"},
		{argv: []string{"sed", "-e", "s/a/b/", "-e", "s/b/c/"}, stdin: "a\n", out: "c\n"},
		// After "--".
		{argv: []string{"grep", "--", "--help"}, stdin: "--help\n", out: "--help\n"},
		{argv: []string{"prefix", "--", "--help"}, stdin: "x\n", out: "--help\nx\n"},
		// Where options end: awk's program, tr's sets, seq's operands.
		{argv: []string{"awk", "{print $1}", "--help"}, out: "awk: fatal: cannot open file `--help'"},
		{argv: []string{"tr", "a", "--help"}, stdin: "aaa\n", out: "---\n"},
		{argv: []string{"cat", "--", "--help"}, out: "cat: --help: No such file"},
		// A prefix of the word is not the word.
		{argv: []string{"prefix", "--help", "x"}, out: "prefix: extra operand"},
	} {
		got := runBuiltin(t, t.TempDir(), tc.argv, tc.stdin)
		isHelp := strings.HasPrefix(got.out, "Usage: ")
		switch {
		case isHelp != tc.help:
			t.Errorf("%q: help %v, want %v (stdout %q, stderr %q)", tc.argv, isHelp, tc.help, got.out, got.err)
		case tc.help && got.code != 0:
			t.Errorf("%q: status %d, want 0", tc.argv, got.code)
		case !tc.help && got.out != tc.out && !strings.HasPrefix(got.err, tc.out):
			t.Errorf("%q: stdout %q, stderr %q; want %q", tc.argv, got.out, got.err, tc.out)
		}
	}
}

func TestHelpBuiltin(t *testing.T) {
	got := runBuiltin(t, "", []string{"help"}, "")
	if got.code != 0 || !strings.Contains(got.out, " sort ") || !strings.Contains(got.out, "tpipe help") {
		t.Errorf("help: status %d, stdout %q, stderr %q", got.code, got.out, got.err)
	}
	checkWidth(t, "help", got.out)

	s, _ := builtin.Lookup("decode")
	got = runBuiltin(t, "", []string{"help", "decode"}, "")
	if got.code != 0 || got.out != s.HelpText() {
		t.Errorf("help decode: status %d, stdout %q", got.code, got.out)
	}
	h, _ := builtin.Lookup("head")
	got = runBuiltin(t, "", []string{"help", "decode", "head"}, "")
	if got.out != s.HelpText()+"\n"+h.HelpText() {
		t.Errorf("help decode head: stdout %q", got.out)
	}

	_, err := builtin.New(nil, []string{"help", "nosuch"})
	ue, ok := err.(*builtin.UsageError)
	if !ok || ue.ExitStatus() != 1 || ue.Message() != "help: no help topics match 'nosuch'; help alone lists the builtins\n" {
		t.Errorf("help nosuch: %v", err)
	}
}

func TestHelpText(t *testing.T) {
	s, _ := builtin.Lookup("grep")
	text := s.HelpText()
	lines := strings.Split(text, "\n")
	// The synopsis breaks between bracketed groups, never inside one, and
	// goes on under the command's first argument.
	if !strings.HasPrefix(lines[0], "Usage: grep [-") || !strings.HasPrefix(lines[1], strings.Repeat(" ", len("Usage: grep "))+"[") {
		t.Errorf("grep's synopsis:\n%s\n%s", lines[0], lines[1])
	}
	for _, l := range lines[:2] {
		if strings.Count(l, "[") != strings.Count(l, "]") {
			t.Errorf("a bracket cut at the end of the line: %q", l)
		}
	}
	if !strings.Contains(text, "run the system's grep") {
		t.Errorf("grep's help does not say where its other options go:\n%s", text)
	}
	c, _ := builtin.Lookup("copy")
	if want := "Usage: copy\n\nCopy the input to the output unchanged: the paper's COPY.\n"; c.HelpText() != want {
		t.Errorf("copy's help %q, want %q", c.HelpText(), want)
	}
}
