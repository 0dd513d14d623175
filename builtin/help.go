package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/task"
)

// Every builtin answers --help, as GNU's tools do: getopt reports the
// word --help where it stands for an option (errHelp), and New then makes
// a command that prints the builtin's help (Spec.HelpText) and exits 0,
// whatever else is on the line. The help builtin prints the same text by
// name, so that `help sort` works in a script, a pipeline and the
// interactive shell alike.

func init() {
	register(&Spec{
		Name:  "help",
		Usage: "help [NAME]...",
		Help: "Print the help of each builtin NAME, as NAME --help does; with no NAME, " +
			"list the builtins. A NAME that is no builtin is an error (status 1). " +
			"tpipe help lists the forms of the tpipe command itself.",
		New: helpNew,
	})
}

// errHelp is what getopt returns for the word --help in option position;
// New turns it into the builtin's help. Only the whole word counts: an
// abbreviation (--hel) is left to the command's own long options, and
// --help taken as an option's argument (grep -e --help) or after "--" is
// no request for help.
var errHelp = errors.New("builtin: --help")

// HelpText is the builtin's help as NAME --help and help NAME print it:
// "Usage: " and the synopsis, the Help paragraph and, for a builtin named
// after a GNU tool, where the options it lacks go. Every line fits
// in say.Width columns (but for a word longer than that).
func (s *Spec) HelpText() string {
	var b strings.Builder
	name, rest, _ := strings.Cut(s.Usage, " ")
	lead := "Usage: " + name + " "
	for i, line := range say.Fill(synopsisWords(rest), say.Width-len(lead)) {
		if i == 0 {
			b.WriteString(lead)
		} else {
			b.WriteString(strings.Repeat(" ", len(lead)))
		}
		b.WriteString(line + "\n")
	}
	if rest == "" {
		b.WriteString(strings.TrimSpace(lead) + "\n")
	}
	paragraph(&b, s.Help)
	// The builtin's getopt refuses what it lacks, and the runner runs the
	// system's tool then; join's own help says what its fallback is.
	if gnuTools[s.Name] && !s.EdgesOnly {
		paragraph(&b, fmt.Sprintf("Options and forms this builtin lacks run the system's %s instead, "+
			"unless the fallback is off (--no-fallback, set fallback off).", s.Name))
	}
	return b.String()
}

// paragraph writes text, if any, after a blank line, wrapped.
func paragraph(b *strings.Builder, text string) {
	if text == "" {
		return
	}
	b.WriteString("\n")
	for _, line := range say.Wrap(text, say.Width) {
		b.WriteString(line + "\n")
	}
}

// synopsisWords splits a synopsis into the words a line may break
// between: at spaces outside brackets and quotes, so that "[-A|-B|-C NUM]"
// and "['PROGRAM' | -f FILE]..." stay whole.
func synopsisWords(syn string) []string {
	var words []string
	depth, quote, start := 0, byte(0), -1
	for i := 0; i <= len(syn); i++ {
		c := byte(' ')
		if i < len(syn) {
			c = syn[i]
		}
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '{':
			depth++
		case (c == ']' || c == '}') && depth > 0:
			depth--
		case c == ' ' && depth == 0:
			if start >= 0 {
				words = append(words, syn[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return words
}

// helpCmd is the command that prints s's help.
func helpCmd(s *Spec) *Cmd {
	return &Cmd{Name: s.Name, Source: textSource(s.HelpText())}
}

// textSource writes text, lines that each end in '\n', a line a record.
func textSource(text string) *task.Source {
	var rest string
	return &task.Source{
		Start: func(context.Context, *buffer.Ports) error {
			rest = text
			return nil
		},
		Next: func() ([]byte, error) {
			if rest == "" {
				return nil, io.EOF
			}
			line, after, _ := strings.Cut(rest, "\n")
			rest = after
			return []byte(line + "\n"), nil
		},
	}
}

func helpNew(env *Env, args []string) (*Cmd, error) {
	names, err := getopt{cmd: "help"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return &Cmd{Source: textSource(helpList())}, nil
	}
	var b strings.Builder
	for i, n := range names {
		s, ok := registry[n]
		if !ok {
			return nil, &UsageError{Cmd: "help", Status: 1,
				Msg: fmt.Sprintf("no help topics match '%s'; help alone lists the builtins", visible.Controls(n))}
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s.HelpText())
	}
	return &Cmd{Source: textSource(b.String())}, nil
}

// helpList is what help alone prints: the builtins, and where to read on.
func helpList() string {
	var b strings.Builder
	b.WriteString("tpipe's builtins (help NAME or NAME --help shows one):\n\n")
	for _, line := range say.Fill(Names(), say.Width-2) {
		b.WriteString("  " + line + "\n")
	}
	paragraph(&b, "The shell has cd, export, unset, pwd and exit of its own (help cd). Any "+
		"other command is the program of that name on PATH. tpipe help lists the forms of "+
		"the tpipe command; its README tells the rest.")
	return b.String()
}
