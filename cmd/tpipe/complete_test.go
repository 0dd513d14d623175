package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpipe/tpipe/runner"
)

// testCompleter is a completer on a temporary tree:
//
//	dir/   the shell's directory: app.log, apps/ (a.txt), my file.txt,
//	       @odd, .hidden, what?[1].txt, link -> apps
//	home/  $HOME: notes.txt, src/
//	bin/   $PATH: sortx and tpipe-tool (executable), readme (not)
func testCompleter(t *testing.T) *completer {
	t.Helper()
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"dir/app.log", "dir/apps/a.txt", "dir/my file.txt", "dir/@odd", "dir/.hidden", "dir/what?[1].txt", "home/notes.txt", "home/src/x.go"} {
		mk(f, 0o644)
	}
	mk("bin/sortx", 0o755)
	mk("bin/tpipe-tool", 0o755)
	mk("bin/readme", 0o644)
	if err := os.Symlink("apps", filepath.Join(root, "dir", "link")); err != nil {
		t.Fatal(err)
	}
	return &completer{
		Dir:      filepath.Join(root, "dir"),
		Home:     filepath.Join(root, "home"),
		Path:     filepath.Join(root, "bin") + string(os.PathListSeparator) + filepath.Join(root, "nosuch"),
		Lines:    []string{"seq 10 | tee @evens > @odds", "cat @odds 'not@this' @a.txt"},
		Commands: []string{"cat", "seq", "sort", "help", "set", "cd", "export"},
		Topics:   []string{"sort", "seq", "set"},
		Settings: runner.Settings,
	}
}

func TestComplete(t *testing.T) {
	c := testCompleter(t)
	for _, tc := range []struct {
		line string
		pos  int // -1: the end
		head string
		want []string
		tail string
	}{
		// Command position: the first word, and after | ; && || !.
		{line: "so", pos: -1, head: "", want: []string{"sort", "sortx"}},
		{line: "sor", pos: -1, want: []string{"sort", "sortx"}},
		{line: "tpipe-", pos: -1, want: []string{"tpipe-tool "}},
		{line: "seq 3 | se", pos: -1, head: "seq 3 | ", want: []string{"seq", "set"}},
		{line: "seq 3;c", pos: -1, head: "seq 3;", want: []string{"cat", "cd"}},
		{line: "a && ex", pos: -1, head: "a && ", want: []string{"export "}},
		{line: "a || ex", pos: -1, head: "a || ", want: []string{"export "}},
		{line: "! ex", pos: -1, head: "! ", want: []string{"export "}},
		{line: "< in.txt ex", pos: -1, head: "< in.txt ", want: []string{"export "}},
		{line: "read", pos: -1, want: nil}, // not executable
		// Elsewhere, file names in the shell's directory.
		{line: "cat ap", pos: -1, head: "cat ", want: []string{"app.log", "apps/"}},
		{line: "cat app.", pos: -1, head: "cat ", want: []string{"app.log "}},
		{line: "cat apps", pos: -1, head: "cat ", want: []string{"apps/"}},
		{line: "cat apps/", pos: -1, head: "cat apps/", want: []string{"a.txt "}},
		{line: "cat li", pos: -1, head: "cat ", want: []string{"link/"}},
		{line: "sort > ap", pos: -1, head: "sort > ", want: []string{"app.log", "apps/"}},
		{line: "sort 2>ap", pos: -1, head: "sort 2>", want: []string{"app.log", "apps/"}},
		{line: "cat .h", pos: -1, head: "cat ", want: []string{".hidden "}},
		{line: "cat m", pos: -1, head: "cat ", want: []string{`my\ file.txt `}},
		{line: `cat my\ f`, pos: -1, head: "cat ", want: []string{`my\ file.txt `}},
		{line: "cat @o", pos: -1, head: "cat ", want: []string{"@odds "}},
		{line: "cat ./@", pos: -1, head: "cat ./", want: []string{"@odd "}},
		{line: "cat \\@", pos: -1, head: "cat ", want: []string{`\@odd `}},
		{line: "cat wh", pos: -1, head: "cat ", want: []string{`what\?\[1\].txt `}},
		{line: "./ap", pos: -1, head: "./", want: []string{"app.log", "apps/"}},
		{line: "cat nosuch/x", pos: -1, head: "cat nosuch/", want: nil},
		// ~/ is $HOME's, and stays as typed.
		{line: "cat ~/no", pos: -1, head: "cat ~/", want: []string{"notes.txt "}},
		{line: "cat ~/s", pos: -1, head: "cat ~/", want: []string{"src/"}},
		{line: "cat ~", pos: -1, head: "cat ", want: []string{"~/"}},
		// @ words: the edges of the session and of this line.
		{line: "merge @", pos: -1, head: "merge ", want: []string{"@evens", "@odds"}},
		{line: "merge @e", pos: -1, head: "merge ", want: []string{"@evens "}},
		{line: "tee @new | merge @n", pos: -1, head: "tee @new | merge ", want: []string{"@new "}},
		{line: "merge @n < @nx", pos: len("merge @n"), head: "merge ", want: []string{"@nx"}, tail: " < @nx"},
		// set: names, then the values a setting lists.
		{line: "set ", pos: -1, head: "set ", want: settingNames()},
		{line: "set po", pos: -1, head: "set ", want: []string{"policy "}},
		{line: "set policy r", pos: -1, head: "set policy ", want: []string{"ros "}},
		{line: "set fallback ", pos: -1, head: "set fallback ", want: []string{"off", "on"}},
		{line: "set compress ", pos: -1, head: "set compress ", want: []string{"none", "s2", "zstd"}},
		{line: "set buffers ", pos: -1, head: "set buffers ", want: []string{"bound "}},
		{line: "set record-size ", pos: -1, head: "set record-size ", want: nil},
		{line: "set policy ros x", pos: -1, head: "set policy ros ", want: nil},
		// help: the topics.
		{line: "help se", pos: -1, head: "help ", want: []string{"seq", "set"}},
		// The cursor inside the line: the word before it, the rest kept.
		{line: "so | wc", pos: 2, head: "", want: []string{"sort", "sortx"}, tail: " | wc"},
		{line: "cat app.| wc", pos: len("cat app."), head: "cat ", want: []string{"app.log "}, tail: "| wc"},
		{line: "cat app. x", pos: len("cat app."), head: "cat ", want: []string{"app.log"}, tail: " x"},
		// Quotes and comments: nothing.
		{line: "cat 'ap", pos: -1, head: "cat 'ap", want: nil},
		{line: `cat "a"p`, pos: -1, head: `cat "a"p`, want: nil},
		{line: "seq 3 # so", pos: -1, head: "seq 3 # so", want: nil},
	} {
		pos := tc.pos
		if pos < 0 {
			pos = len([]rune(tc.line))
		}
		head, got, tail := c.complete(tc.line, pos)
		if head != tc.head || !slices.Equal(got, tc.want) || tail != tc.tail {
			t.Errorf("complete(%q, %d) = %q, %q, %q; want %q, %q, %q", tc.line, pos, head, got, tail, tc.head, tc.want, tc.tail)
		}
	}
}

func settingNames() []string {
	var names []string
	for _, s := range runner.Settings {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// The cursor is counted in runes, as liner counts it.
func TestCompleteRunes(t *testing.T) {
	c := testCompleter(t)
	head, got, tail := c.complete("echo é | so", len([]rune("echo é | so")))
	if head != "echo é | " || !slices.Equal(got, []string{"sort", "sortx"}) || tail != "" {
		t.Errorf("got %q, %q, %q", head, got, tail)
	}
}

func TestSettingValues(t *testing.T) {
	for name, want := range map[string][]string{
		"policy":      {"auto", "concurrent", "ros", "fused", "serial", "spool"},
		"cap":         {"auto", "default"},
		"sort-memory": {"auto"},
		"spool":       {"none"},
		"progress":    {"on", "off", "auto"},
		"stats":       {"on", "off"},
		"segment":     nil,
	} {
		s, ok := runner.LookupSetting(name)
		if !ok {
			t.Fatalf("no setting %s", name)
		}
		if got := settingValues(s); !slices.Equal(got, want) {
			t.Errorf("settingValues(%s) = %q, want %q", name, got, want)
		}
	}
}

// After an assignment the command's name is still to come; cd takes
// directories alone.
func TestCompleteAfterAssignmentAndCd(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sum.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &completer{Dir: dir, Commands: []string{"sort", "cd"}}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"LC_ALL=C so", []string{"sort "}},
		{"X=1 Y=2 so", []string{"sort "}},
		{"cd su", []string{"sub/"}},
		{"cat su", []string{"sub/", "sum.txt"}},
	} {
		_, got, _ := c.complete(tc.line, len([]rune(tc.line)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("complete(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
