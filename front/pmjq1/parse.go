package pmjq1

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// Args is pmjq 1.0's command line, parsed.
type Args struct {
	QuitWhenEmpty bool
	Inputs        []string // DIR/REGEX, as given
	Invariant     string
	HasInvariant  bool
	Command       string
	Outputs       []string
	Stderr        string
	Errors        []string
	Help, Version bool
	// Extra are the options pmjq 1.0 does not have, in order, for the
	// caller to read (tpipe's --workers, --lease, --max-load, ...: those
	// Parse's own said it knows): each is its name and its values.
	Extra [][]string
}

// UsageError is a command line pmjq 1.0 would refuse; the tpipe command
// prints it with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Usage is pmjq 1.0's synopsis.
const Usage = `usage: pmjq [--quit-when-empty] --input=DIR/REGEX... [--invariant=TEMPLATE]
            CMDTEMPLATE --output=TEMPLATE... [--stderr=TEMPLATE] [--error=TEMPLATE...]
`

// IsPmjq1 reports whether args (after the command's name) are in pmjq
// 1.0's form, as docopt read them: an --input option.
func IsPmjq1(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--input" || strings.HasPrefix(a, "--input=") {
			return true
		}
	}
	return false
}

// Parse reads pmjq 1.0's options, with docopt's spellings: --opt=VALUE or
// --opt VALUE, options anywhere, -- before a command that starts with -.
// own tells the options of tpipe's that the caller takes as well, and how
// many values each takes; Parse keeps them in Args.Extra.
func Parse(args []string, own func(name string) (arity int, ok bool)) (*Args, error) {
	a := &Args{}
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(arg, "=")
		if n, ok := own(name); ok {
			vals := []string{}
			if hasValue && n == 0 {
				return nil, usagef("%s takes no value", name)
			}
			if hasValue {
				vals = append(vals, value)
			}
			for len(vals) < n {
				i++
				if i >= len(args) {
					return nil, usagef("%s needs %d value(s)", name, n)
				}
				vals = append(vals, args[i])
			}
			a.Extra = append(a.Extra, append([]string{name}, vals...))
			continue
		}
		value1 := func() (string, error) {
			if hasValue {
				return value, nil
			}
			i++
			if i >= len(args) {
				return "", usagef("%s needs a value", name)
			}
			return args[i], nil
		}
		var err error
		switch name {
		case "-h", "--help":
			a.Help = true
		case "--version":
			a.Version = true
		case "--quit-when-empty":
			if hasValue {
				return nil, usagef("--quit-when-empty takes no value")
			}
			a.QuitWhenEmpty = true
		case "--input":
			var v string
			v, err = value1()
			a.Inputs = append(a.Inputs, v)
		case "--invariant":
			a.Invariant, err = value1()
			a.HasInvariant = true
		case "--output":
			var v string
			v, err = value1()
			a.Outputs = append(a.Outputs, v)
		case "--stderr":
			a.Stderr, err = value1()
		case "--error":
			var v string
			v, err = value1()
			a.Errors = append(a.Errors, v)
		default:
			return nil, usagef("unknown option %s", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.Help || a.Version {
		return a, nil
	}
	switch {
	case len(a.Inputs) == 0:
		return nil, usagef("no --input=DIR/REGEX")
	case len(a.Outputs) == 0:
		return nil, usagef("no --output=TEMPLATE")
	case len(positional) == 0:
		return nil, usagef("no command template")
	case len(positional) > 1:
		return nil, usagef("one command template, quoted as one argument; got %d: %q", len(positional), positional)
	case len(a.Errors) > 0 && len(a.Errors) != len(a.Inputs):
		return nil, usagef("%d --error for %d --input: give one per input, or none", len(a.Errors), len(a.Inputs))
	}
	a.Command = positional[0]
	return a, nil
}

// Spec is a parsed command line made ready to run: folders made absolute,
// regexps and templates compiled.
type Spec struct {
	Quit      bool
	Inputs    []InputSpec
	Invariant string // "" when not given
	Command   []*template.Template
	Words     []string // the command's word templates, as text
	Outputs   []Target
	Log       *Target
	Errors    []Target
}

// InputSpec is one --input.
type InputSpec struct {
	Dir     string
	Pattern *regexp.Regexp
}

// Target is a --output, --stderr or --error: a folder and a template of
// a file name in it.
type Target struct {
	Dir  string
	Name *template.Template
	Text string
}

// Compile checks a and compiles its regexps and templates.
func (a *Args) Compile() (*Spec, error) {
	s := &Spec{Quit: a.QuitWhenEmpty}
	if a.HasInvariant {
		s.Invariant = a.Invariant
	}
	for _, in := range a.Inputs {
		dir, pat := filepath.Split(in)
		if pat == "" {
			pat = ".*" // a bare DIR/: every file
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, usagef("--input=%s: %v", in, err)
		}
		abs, err := absDir(dir)
		if err != nil {
			return nil, usagef("--input=%s: %v", in, err)
		}
		s.Inputs = append(s.Inputs, InputSpec{Dir: abs, Pattern: re})
	}
	words, err := SplitTemplate(a.Command)
	if err != nil {
		return nil, usagef("%v", err)
	}
	s.Words = words
	for i, w := range words {
		t, err := parseTemplate(fmt.Sprintf("command word %d", i+1), w)
		if err != nil {
			return nil, err
		}
		s.Command = append(s.Command, t)
	}
	target := func(opt, text string) (Target, error) {
		dir, name := filepath.Split(text)
		if name == "" {
			name = "{{.Input 0}}" // ends in '/': the first input's name
		}
		abs, err := absDir(dir)
		if err != nil {
			return Target{}, usagef("%s=%s: %v", opt, text, err)
		}
		t, err := parseTemplate(opt+"="+text, name)
		return Target{Dir: abs, Name: t, Text: text}, err
	}
	for _, o := range a.Outputs {
		t, err := target("--output", o)
		if err != nil {
			return nil, err
		}
		s.Outputs = append(s.Outputs, t)
	}
	if a.Stderr != "" {
		t, err := target("--stderr", a.Stderr)
		if err != nil {
			return nil, err
		}
		s.Log = &t
	}
	for _, e := range a.Errors {
		t, err := target("--error", e)
		if err != nil {
			return nil, err
		}
		s.Errors = append(s.Errors, t)
	}
	return s, nil
}

func parseTemplate(what, text string) (*template.Template, error) {
	t, err := template.New(what).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, usagef("%s: %v", what, strings.TrimPrefix(err.Error(), "template: "))
	}
	return t, nil
}

// absDir makes dir ("" for the current folder) absolute.
func absDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	return filepath.Abs(dir)
}
