package shell_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/shell"
)

// The package doc promises bash's word rules. These properties check that
// promise against bash itself, on lines without unquoted operators: each
// line is run as the arguments of printf in bash, in an empty directory,
// and the fields are compared with the Expander's.
//
// Where the two differ on purpose the generators do not go: tpipe rejects
// backquotes and $( (it runs no command to make a word), an unquoted '#'
// where a word begins starts a comment in both, and $- and $$ name the
// shell's flags and process, which differ.

const (
	plainBytes = "aZ09_-./=,:@%+*?!~{}[]^"
	// operators and quotes, literal inside quotes or after a backslash
	specialBytes = "|;&<>()#'\"$\\`"
)

// é is no name in bash (nor here): $é is the text $é.
var names = []string{"A", "B", "EMPTY", "_x1", "1", "é", "NOPE"}

var (
	// tpipe takes \r for a blank (a script saved with CRLF line ends
	// runs), where bash takes it for a byte of a word.
	genBlank = rapid.SampledFrom([]string{" ", "  ", "\t"})
	genPlain = rapid.StringOfN(rapid.RuneFrom([]rune(plainBytes+"é世")), 1, 4, -1)
	genName  = rapid.SampledFrom(names)
	genParam = rapid.Custom(func(t *rapid.T) string {
		name := genName.Draw(t, "name")
		if rapid.Bool().Draw(t, "braced") {
			return "${" + name + "}"
		}
		return "$" + name
	})
	// A '$' that begins no name, with what follows it.
	genLoneDollar = rapid.SampledFrom([]string{"$.", "$/", "$ ", "$#", "$?", "$@", "$*"})
	genSingle     = rapid.Custom(func(t *rapid.T) string {
		body := rapid.StringOfN(rapid.RuneFrom([]rune(plainBytes+specialBytes+" \t\n")), 0, 6, -1).
			Filter(func(s string) bool { return !strings.Contains(s, "'") }).Draw(t, "body")
		return "'" + body + "'"
	})
	genDouble = rapid.Custom(func(t *rapid.T) string {
		parts := rapid.SliceOfN(rapid.OneOf(
			genPlain,
			rapid.SampledFrom([]string{" ", "\t", "\n", "'", "|", ";", "&", "<", ">", "(", ")", "#", "{", "}"}),
			rapid.SampledFrom([]string{`\"`, `\\`, `\$`, "\\`"}),
			genParam,
			genLoneDollar,
		), 0, 4).Draw(t, "parts")
		return `"` + strings.Join(parts, "") + `"`
	})
	genEscape = rapid.Custom(func(t *rapid.T) string {
		// plainBytes has no t or n, which shellwords would turn into tab
		// and newline.
		c := rapid.RuneFrom([]rune(plainBytes+specialBytes+" \t")).Draw(t, "c")
		return `\` + string(c)
	})
	// genLine makes a line of words with every kind of part, separated by
	// blanks. A word never begins with '#', so there is no comment.
	genLine = rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for i, n := 0, rapid.IntRange(0, 5).Draw(t, "words"); i < n; i++ {
			if i > 0 || rapid.Bool().Draw(t, "lead") {
				b.WriteString(genBlank.Draw(t, "blank"))
			}
			for j, m := 0, rapid.IntRange(1, 3).Draw(t, "parts"); j < m; j++ {
				b.WriteString(rapid.OneOf(genPlain, genSingle, genDouble, genEscape, genParam, genLoneDollar).Draw(t, "part"))
			}
		}
		if rapid.Bool().Draw(t, "trail") {
			b.WriteString(genBlank.Draw(t, "blank"))
		}
		return b.String()
	})
	// Values may hold anything: they must never be read as syntax.
	// "1" and é cannot be in bash's environment; $1 is "first".
	genEnv = rapid.MapOf(rapid.SampledFrom(names[:4]), rapid.StringOfN(rapid.RuneFrom([]rune("ab \t\n'\"$\\|;#{}*")), 0, 5, -1))
)

// bashFields runs line as printf's arguments in bash, in dir, with env
// set and "first" as $1, and returns the fields, or an error when bash
// fails.
func bashFields(t *rapid.T, dir, line string, env map[string]string) ([]string, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH to compare with")
	}
	cmd := exec.Command(bash, "-c", "printf '%s\\0' MARK "+line, "bash", "first")
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "HOME=/home/u"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	fields := strings.Split(string(out), "\x00")
	if len(fields) < 2 || fields[0] != "MARK" {
		t.Fatalf("bash printed %q for %q", out, line)
	}
	return fields[1 : len(fields)-1], nil
}

var emptyAfterSplit = regexp.MustCompile(`\$\{?[A-Za-z_0-9]+\}?(""|'')`)

var dirStack = regexp.MustCompile(`(^|[ \t=:])~[0-9+-]`)

var loneDollar = regexp.MustCompile(`\$([^A-Za-z_0-9{?#@*$!'"(-]|$)`)

// agree parses and expands line and fails t if bash disagrees.
func agree(t *rapid.T, line string, env map[string]string) {
	dir, err := os.MkdirTemp("", "shell-agree")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	want, bashErr := bashFields(t, dir, line, env)

	x := &shell.Expander{
		Lookup: func(n string) (string, bool) {
			if n == "HOME" {
				return "/home/u", true
			}
			v, ok := env[n]
			return v, ok
		},
		Params: []string{"first"},
		Dir:    dir,
	}
	// After a command name, as printf's arguments are: "!" and A=1
	// are words there.
	s, err := shell.Parse("p "+line, shell.Options{})
	var got []string
	if err == nil {
		got, err = fields(t, x, s)
		if err == nil {
			got = got[1:]
		}
	}
	switch {
	case err != nil && bashErr != nil:
		return
	case err != nil:
		t.Fatalf("Parse(%q): %v; bash: %q", line, err, want)
	case bashErr != nil:
		t.Fatalf("Parse(%q) = %q; bash: %v", line, got, bashErr)
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		if emptyAfterSplit.MatchString(line) {
			// mvdan.cc/sh drops the empty field bash makes of $A"" when
			// $A ends in a blank; known, and left (docs/language.md).
			t.Skip("an empty quoted part after a split expansion")
		}
		if strings.Contains(line, "{") && slices.Equal(nonEmpty(got), nonEmpty(want)) {
			// {,""}: bash drops the empty word of the braces and keeps
			// the quoted one; the library does not say which field was
			// quoted, so both stay.
			t.Skip("empty words of braces in a quoted word")
		}
		if dirStack.MatchString(line) || strings.Contains(line, "{}") {
			// ~0 ~+ ~- name bash's directory stack; in a{},b} bash
			// looks past the "{}" for a brace: corners not copied.
			t.Skip("the directory stack or an empty pair of braces")
		}
		if loneDollar.MatchString(line) {
			// bash 5.2 splits no field of a word that holds a '$'
			// starting nothing ($a$ with a="x y" is one field); a
			// quirk not copied.
			t.Skip("a lone $ in a split word")
		}
		t.Fatalf("Parse(%q)\n got %q\nwant %q (bash)", line, got, want)
	}
}

func nonEmpty(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(f string) bool { return f == "" })
}

// fields expands the words of a Script of one command.
func fields(t *rapid.T, x *shell.Expander, s *shell.Script) ([]string, error) {
	var out []string
	for _, pl := range s.Pipelines {
		for _, c := range pl.Cmds {
			if len(c.Redirs) > 0 || len(c.Assigns) > 0 {
				t.Fatalf("redirections or assignments in %s", show(s))
			}
			ws, err := x.Fields(c.Args)
			if err != nil {
				return nil, err
			}
			for _, w := range ws {
				out = append(out, w.Value)
			}
		}
	}
	if len(s.Pipelines) > 1 || (len(s.Pipelines) == 1 && len(s.Pipelines[0].Cmds) > 1) {
		t.Fatalf("more than one command in %s", show(s))
	}
	return out, nil
}

func TestBashAgreesOnWords(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		agree(t, genLine.Draw(t, "line"), genEnv.Draw(t, "env"))
	})
}

// The same on a soup of quotes, blanks and dollars with no structure, so
// that unterminated quotes are common. Both must fail on the same lines.
func TestBashAgreesOnSoup(t *testing.T) {
	soup := rapid.StringOfN(rapid.RuneFrom([]rune("aB '\"$\t{,}")), 0, 12, -1)
	rapid.Check(t, func(t *rapid.T) {
		line := soup.Draw(t, "line")
		if strings.Contains(line, "$$") {
			t.Skip("$$ is the shell's process: it differs")
		}
		agree(t, line, map[string]string{"a": "x y", "B": "", "aB": " z "})
	})
}
