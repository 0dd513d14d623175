package shell_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/shell"
)

// FuzzParse checks, for any text: Parse does not panic; a Script has a
// command name in every command and every position on a byte of the
// text, in source order; an error is a *ParseError on a byte of the text;
// and printing the Script with every word single-quoted and parsing that
// again gives the same words (quoting in the printer and in the parser
// agree).
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in, tt.env)
	}
	f.Add("cat <in |\n  grep \"a b\" >>out ; wc\n\n# note\nsort 2>err\\\n  -r", false)
	f.Add("echo x$SP\n  $SP'q' $TAB", true)

	f.Fuzz(func(t *testing.T, src string, env bool) {
		var opts shell.Options
		if env {
			opts.Getenv = testGetenv
		}
		s, err := shell.Parse(src, opts)
		if err != nil {
			var (
				perr *shell.ParseError
				eerr *shell.ExpandError
				pos  shell.Pos
			)
			switch {
			case errors.As(err, &perr):
				pos = perr.Pos
			case env && errors.As(err, &eerr):
				pos = eerr.Pos
			default:
				t.Fatalf("Parse(%q): error %T is not a *ParseError", src, err)
			}
			if s != nil {
				t.Fatalf("Parse(%q): non-nil Script with an error", src)
			}
			if _, ok := offset(src, pos); !ok {
				t.Fatalf("Parse(%q): error position %s is not in the text: %v", src, pos, err)
			}
			_ = pos.Caret(src)
			return
		}
		checkScript(t, src, s, env)
		for _, pl := range s.Pipelines {
			for _, c := range pl.Cmds {
				if len(c.Args) == 0 && len(c.Assigns) == 0 {
					return // expanded to nothing: there is nothing to print
				}
			}
		}

		again, err := shell.Parse(quoteScript(s), shell.Options{})
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which printed as %q does not parse: %v", src, show(s), quoteScript(s), err)
		}
		if got, want := showValues(again), showValues(s); got != want {
			t.Fatalf("Parse(%q) = %s; printed and parsed again: %s", src, want, got)
		}
	})
}

// offset turns p back into a byte offset of src, if p is on a byte of src
// other than a newline.
func offset(src string, p shell.Pos) (int, bool) {
	if p.Line < 1 || p.Col < 1 {
		return 0, false
	}
	start := 0
	for line := 1; line < p.Line; line++ {
		nl := strings.IndexByte(src[start:], '\n')
		if nl < 0 {
			return 0, false
		}
		start += nl + 1
	}
	end := len(src)
	if nl := strings.IndexByte(src[start:], '\n'); nl >= 0 {
		end = start + nl
	}
	if start+p.Col-1 >= end {
		return 0, false
	}
	return start + p.Col - 1, true
}

func checkScript(t *testing.T, src string, s *shell.Script, env bool) {
	t.Helper()
	last := -1
	// at checks that p is in src and not before the previous node that
	// must come earlier.
	at := func(what string, p shell.Pos, ordered bool) int {
		off, ok := offset(src, p)
		if !ok {
			t.Fatalf("Parse(%q): %s at %s is not in the text", src, what, p)
		}
		if ordered {
			if off < last {
				t.Fatalf("Parse(%q): %s at %s comes before the node before it", src, what, p)
			}
			last = off
		}
		return off
	}
	for _, pl := range s.Pipelines {
		if len(pl.Cmds) == 0 {
			t.Fatalf("Parse(%q): pipeline at %s has no commands", src, pl.Pos)
		}
		if pl.Pos != pl.Cmds[0].Pos {
			// Only a '!' comes before a pipeline's first command.
			if off := at("!", pl.Pos, true); src[off] != '!' {
				t.Fatalf("Parse(%q): pipeline at %s, its first command at %s", src, pl.Pos, pl.Cmds[0].Pos)
			}
		}
		for _, c := range pl.Cmds {
			if len(c.Args) == 0 && (len(c.Assigns) == 0 || env) {
				// Expanded, a command's words may all vanish; parsed,
				// one has a name or is only assignments.
				if !env {
					t.Fatalf("Parse(%q): command at %s has no words", src, c.Pos)
				}
			}
			start := at("command", c.Pos, true)
			for _, a := range c.Assigns {
				at("assignment "+a.Name, a.Pos, true)
			}
			for _, w := range c.Args {
				at("word "+w.Value, w.Pos, true)
			}
			end := last
			last = start
			for _, r := range c.Redirs {
				off := at("redirection", r.Pos, true)
				if b := src[off]; b != '<' && b != '>' && !(b == '2' && (r.Op == shell.RedirErr || r.Op == shell.RedirErrAppend)) {
					t.Fatalf("Parse(%q): redirection %s at %s is on %q", src, r.Op, r.Pos, b)
				}
				at("redirection target", r.Target.Pos, true)
			}
			last = max(last, end)
		}
	}
}

// quoteScript prints s back as source with every word single-quoted.
func quoteScript(s *shell.Script) string {
	q := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	var b strings.Builder
	for _, pl := range s.Pipelines {
		if pl.Negated {
			b.WriteString("! ")
		}
		for j, c := range pl.Cmds {
			if j > 0 {
				b.WriteString(" | ")
			}
			for _, a := range c.Assigns {
				b.WriteString(a.Name + "=" + q(a.Value.Value) + " ")
			}
			for _, w := range c.Args {
				b.WriteString(q(w.Value) + " ")
			}
			for _, r := range c.Redirs {
				b.WriteString(r.Op.String() + q(r.Target.Value) + " ")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// showValues is show without the Quoted flags, which quoteScript sets on
// every word.
func showValues(s *shell.Script) string {
	var b strings.Builder
	for _, pl := range s.Pipelines {
		b.WriteString("P")
		if pl.Negated {
			b.WriteString("!")
		}
		for _, c := range pl.Cmds {
			b.WriteString("|C")
			for _, a := range c.Assigns {
				b.WriteString(" " + a.Name + "=" + strconv.Quote(a.Value.Value))
			}
			for _, w := range c.Args {
				b.WriteString(" " + strconv.Quote(w.Value))
			}
			for _, r := range c.Redirs {
				b.WriteString(" " + r.Op.String() + strconv.Quote(r.Target.Value))
			}
		}
		b.WriteString(";")
	}
	return b.String()
}
