package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tpipe/tpipe/builtin"
)

// runText runs the command with args and returns its stdout, failing the
// test on another status than want.
func runText(t *testing.T, want int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if st := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); st != want {
		t.Fatalf("tpipe %q: status %d, want %d; stderr %q", args, st, want, stderr.String())
	}
	return stdout.String()
}

// Every help text fits an 80-column terminal.
func TestHelpFits80Columns(t *testing.T) {
	texts := map[string]string{
		"tpipe -h":        runText(t, 0, "-h"),
		"tpipe --help":    runText(t, 0, "--help"),
		"tpipe help":      runText(t, 0, "help"),
		"tpipe --version": runText(t, 0, "--version"),
	}
	for _, f := range cmdForms {
		if f.name != "" {
			texts["tpipe help "+f.name] = runText(t, 0, "help", f.name)
		}
	}
	for _, name := range builtin.Names() {
		texts["tpipe help "+name] = runText(t, 0, "help", name)
		texts["tpipe '"+name+" --help'"] = runText(t, 0, name+" --help")
	}
	var repl bytes.Buffer
	writeReplHelp(&repl)
	texts["help in the shell"] = repl.String()
	for name, text := range replTopics {
		texts["help "+name+" in the shell"] = text
	}
	for what, text := range texts {
		if text == "" {
			t.Errorf("%s: no text", what)
		}
		for i, line := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s: line %d is %d columns: %q", what, i+1, n, line)
			}
		}
	}
}

func TestHelpCommand(t *testing.T) {
	s, _ := builtin.Lookup("sort")
	if got := runText(t, 0, "help", "sort"); got != s.HelpText() {
		t.Errorf("tpipe help sort: %q, want sort's HelpText", got)
	}
	if got := runText(t, 0, "help"); !strings.Contains(got, "tpipe serve [flags] DIR 'PIPELINE'") || !strings.Contains(got, " stabilize ") {
		t.Errorf("tpipe help does not list the forms and the builtins:\n%s", got)
	}
	if got := runText(t, 0, "help", "gc"); !strings.HasPrefix(got, "usage: tpipe gc") {
		t.Errorf("tpipe help gc: %q", got)
	}
	runText(t, 1, "help", "nosuch")
	runText(t, 2, "help", "sort", "head")
}

func TestVersionText(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "7094f97c1b2e3d4f5a6b7c8d9e0f1a2b3c4d5e6f"
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want []string // lines, the Go toolchain's left out
	}{
		{"go install of a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, true,
			[]string{"tpipe v1.2.0"}},
		{"go build in a clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101120000-7094f97c1b2e"},
			Settings: vcs("vcs.revision", rev, "vcs.time", "2026-01-01T12:00:00Z", "vcs.modified", "false")}, true,
			[]string{"tpipe v0.0.0-20260101120000-7094f97c1b2e", "revision " + rev, "committed 2026-01-01T12:00:00Z"}},
		{"(devel) with changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", rev, "vcs.modified", "true")}, true,
			[]string{"tpipe (devel)", "revision " + rev + ", with changes not committed"}},
		{"-buildvcs=false", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true,
			[]string{"tpipe (devel)", "no revision recorded: built with -buildvcs=false, or not in a git clone", "(go build reads none in a git worktree)"}},
		{"no build information", nil, false,
			[]string{"tpipe (devel)", "no revision recorded: built with -buildvcs=false, or not in a git clone", "(go build reads none in a git worktree)"}},
	} {
		lines := strings.Split(strings.TrimSuffix(versionText(tc.bi, tc.ok), "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "built with go") {
			t.Errorf("%s: last line %q, want the toolchain", tc.name, last)
		}
		if got := strings.Join(lines[:len(lines)-1], "\n"); got != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, strings.Join(tc.want, "\n"))
		}
	}
}
