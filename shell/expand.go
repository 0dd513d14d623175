package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Expander expands words as bash does before it runs a command, in bash's
// order: braces, tilde, parameters and $((...)), field splitting of what
// was expanded unquoted, pathname expansion, quote removal. The work is
// done by mvdan.cc/sh's expand package; the Expander is the shell's state
// it reads. A word with nothing to expand (Word.Expands false) comes out
// as it went in, a named edge included.
//
// The zero Expander expands with no variables set and no pathname
// expansion.
type Expander struct {
	// Lookup returns a variable's value and whether it is set; nil: none
	// is. HOME is read from it for ~, IFS for splitting (unset: blank,
	// tab, newline).
	Lookup func(name string) (string, bool)
	// Assign sets a variable, for ${NAME:=word} and ${NAME=word}; nil
	// makes those an error.
	Assign func(name, value string)
	// Names lists the variables set, for ${!prefix*}; nil: none.
	Names func() []string
	// Params are $1, $2, ... ($@ and $* all of them, $# how many); Arg0
	// is $0.
	Params []string
	Arg0   string
	// Status is $?.
	Status int
	// Dir is the current directory: $PWD, and where relative patterns are
	// matched. "" turns pathname expansion off.
	Dir string
}

// ExpandError is a word that cannot be expanded: ${NAME?message}, a bad
// substitution, a directory a pattern cannot read.
type ExpandError struct {
	Pos Pos    // the word's position
	Msg string // lowercase, without the position
	// Fatal marks the errors that end a script in bash: ${NAME?} and a
	// bad substitution. An ambiguous redirect or an unreadable
	// directory fails its command alone.
	Fatal bool
}

func (e *ExpandError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Fields expands words into the fields of a command line. A field keeps
// the position of the word it came from and its Quoted.
func (x *Expander) Fields(words []Word) ([]Word, error) {
	var out []Word
	for _, w := range words {
		if w.syntax == nil {
			out = append(out, w)
			continue
		}
		fs, err := expand.Fields(x.config(true), w.syntax)
		if err != nil {
			return nil, x.wrap(w, err)
		}
		if fs, err = x.hideDotfiles(w, fs); err != nil {
			return nil, x.wrap(w, err)
		}
		for _, f := range fs {
			if f == "" && !w.Quoted {
				// Only quotes make an empty field; the library keeps
				// the empty words of braces ({,a}), which bash drops.
				continue
			}
			out = append(out, Word{Pos: w.Pos, Value: f, Quoted: w.Quoted, Raw: w.Raw})
		}
	}
	return out, nil
}

// hideDotfiles drops from fs, the fields of w, the names a pattern matched
// with a leading '?' or bracket expression: in bash only a leading '.'
// written as such matches a dot at the start of a name, where the library
// only keeps '*' from it. A pattern left with no match stays as written.
func (x *Expander) hideDotfiles(w Word, fs []string) ([]string, error) {
	if x.Dir == "" || !strings.ContainsAny(w.Raw, "?[") {
		return fs, nil
	}
	pat := strings.Split(w.Raw, "/")
	dropped := false
	kept := fs[:0:0]
	for _, f := range fs {
		parts := strings.Split(f, "/")
		hidden := false
		if len(parts) == len(pat) {
			for i, p := range parts {
				if strings.HasPrefix(p, ".") && (strings.HasPrefix(pat[i], "?") || strings.HasPrefix(pat[i], "[")) {
					hidden = true
				}
			}
		}
		if hidden {
			dropped = true
			continue
		}
		kept = append(kept, f)
	}
	if !dropped || len(kept) > 0 {
		return kept, nil
	}
	cfg := x.config(false)
	return expand.Fields(cfg, w.syntax)
}

// Literal expands w into one string, as the value of an assignment is:
// no field splitting and no pathname expansion.
func (x *Expander) Literal(w Word) (string, error) {
	if w.syntax == nil {
		return w.Value, nil
	}
	s, err := expand.Literal(x.config(false), w.syntax)
	if err != nil {
		return "", x.wrap(w, err)
	}
	return s, nil
}

// Target expands the file name of a redirection, which must come out as
// exactly one field ("ambiguous redirect" otherwise, as in bash).
func (x *Expander) Target(w Word) (Word, error) {
	fs, err := x.Fields([]Word{w})
	if err != nil {
		return Word{}, err
	}
	if len(fs) != 1 {
		return Word{}, &ExpandError{Pos: w.Pos, Msg: fmt.Sprintf("%s: ambiguous redirect (the file name expands to %d words)", w.Raw, len(fs))}
	}
	return fs[0], nil
}

// Cmd returns a copy of c with its words, its redirections' file names and
// its assignments' values expanded. Its Args may be empty: every word
// expanded to nothing.
//
// As in bash, the words are expanded first, and then the assignments from
// left to right, each seeing those before it (A=1 B=$A); an expanded
// NAME+=value holds the whole new value.
func (x *Expander) Cmd(c *Cmd) (*Cmd, error) {
	out := &Cmd{Pos: c.Pos}
	args, err := x.Fields(c.Args)
	if err != nil {
		return nil, err
	}
	out.Args = args
	for _, r := range c.Redirs {
		t, err := x.Target(r.Target)
		if err != nil {
			return nil, err
		}
		out.Redirs = append(out.Redirs, &Redir{Pos: r.Pos, Op: r.Op, Target: t})
	}
	if len(c.Assigns) == 0 {
		return out, nil
	}
	seen := map[string]string{}
	ax := *x
	ax.Lookup = func(name string) (string, bool) {
		if v, ok := seen[name]; ok {
			return v, true
		}
		if x.Lookup == nil {
			return "", false
		}
		return x.Lookup(name)
	}
	for _, a := range c.Assigns {
		v, err := ax.Literal(a.Value)
		if err != nil {
			return nil, err
		}
		if a.Append {
			old, _ := ax.Lookup(a.Name)
			v = old + v
		}
		seen[a.Name] = v
		out.Assigns = append(out.Assigns, &Assign{Pos: a.Pos, Name: a.Name, Value: Word{Pos: a.Value.Pos, Value: v, Quoted: a.Value.Quoted, Raw: a.Value.Raw}})
	}
	return out, nil
}

func (x *Expander) config(glob bool) *expand.Config {
	cfg := &expand.Config{Env: environ{x}}
	if glob && x.Dir != "" {
		cfg.ReadDir2 = readDir
	}
	return cfg
}

// readDir is os.ReadDir for pathname expansion: a directory that does not
// exist (or a file) matches nothing, as in bash; one that cannot be read
// is an error, where bash would silently leave the pattern as it is.
func readDir(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
		return nil, err // the library skips these itself
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &globError{dir: dir, err: err}
	}
	return ents, nil
}

type globError struct {
	dir string
	err error
}

func (e *globError) Error() string {
	return fmt.Sprintf("cannot read directory %s: %v", e.dir, e.err)
}

// wrap turns an error of the expand package into an ExpandError at w.
func (x *Expander) wrap(w Word, err error) error {
	var (
		ue expand.UnsetParameterError
		ge *globError
	)
	msg, fatal := err.Error(), true
	switch {
	case errors.As(err, &ue):
		name := ue.Node.Param.Value
		switch m := ue.Message; {
		case m != "" && m != "unbound variable":
			msg = name + ": " + m
		case ue.Node.Exp != nil && ue.Node.Exp.Op == syntax.ErrorUnset:
			msg = name + ": parameter not set"
		default:
			msg = name + ": parameter null or not set"
		}
	case errors.As(err, &ge):
		msg, fatal = fmt.Sprintf("%s: %v (quote the word to keep it as written)", w.Raw, ge), false
	case msg == "unsupported":
		msg = fmt.Sprintf("%s: bad substitution", w.Raw)
	default:
		msg = fmt.Sprintf("%s: %s", w.Raw, msg)
	}
	return &ExpandError{Pos: w.Pos, Msg: msg, Fatal: fatal}
}

// started is when the shell started, for $SECONDS.
var started = time.Now()

// environ is the Expander seen as the library's environment.
type environ struct{ x *Expander }

func str(s string) expand.Variable {
	return expand.Variable{Set: true, Kind: expand.String, Str: s}
}

func (e environ) Get(name string) expand.Variable {
	x := e.x
	switch name {
	case "?":
		return str(strconv.Itoa(x.Status))
	case "#":
		return str(strconv.Itoa(len(x.Params)))
	case "@", "*":
		// Never nil: the library reads a nil list as no list at all, and
		// "$@" would then be one empty field instead of none.
		return expand.Variable{Set: true, Kind: expand.Indexed, List: append([]string{}, x.Params...)}
	case "$":
		return str(strconv.Itoa(os.Getpid()))
	case "0":
		return str(x.Arg0)
	case "PPID":
		return str(strconv.Itoa(os.Getppid()))
	case "UID":
		return str(strconv.Itoa(os.Getuid()))
	case "EUID":
		return str(strconv.Itoa(os.Geteuid()))
	case "RANDOM":
		return str(strconv.Itoa(rand.IntN(32768)))
	case "SECONDS":
		return str(strconv.Itoa(int(time.Since(started).Seconds())))
	case "PWD":
		if x.Dir != "" {
			return str(x.Dir)
		}
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 && name[0] != '0' {
		if n <= len(x.Params) {
			return str(x.Params[n-1])
		}
		return expand.Variable{}
	}
	if x.Lookup == nil || strings.ContainsRune(name, ' ') {
		// "HOME user" asks for user's home: left to the library.
		return expand.Variable{}
	}
	if v, ok := x.Lookup(name); ok {
		return str(v)
	}
	return expand.Variable{}
}

// Each lists the variables, for ${!prefix*}.
func (e environ) Each(f func(string, expand.Variable) bool) {
	if e.x.Names == nil {
		return
	}
	for _, n := range e.x.Names() {
		if v := e.Get(n); v.IsSet() && !f(n, v) {
			return
		}
	}
}

func (e environ) Set(name string, vr expand.Variable) error {
	if e.x.Assign == nil {
		return fmt.Errorf("%s: cannot assign in this expansion", name)
	}
	e.x.Assign(name, vr.String())
	return nil
}

// expandNow expands every word of s with getenv, for Options.Getenv.
func expandNow(s *Script, getenv func(string) string) error {
	x := &Expander{Lookup: func(n string) (string, bool) { v := getenv(n); return v, v != "" }}
	for _, pl := range s.Pipelines {
		for i, c := range pl.Cmds {
			ec, err := x.Cmd(c)
			if err != nil {
				return err
			}
			pl.Cmds[i] = ec
		}
	}
	return nil
}

var _ expand.WriteEnviron = environ{}
