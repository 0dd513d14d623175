package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/shell"
)

// Tab completion in the interactive shell. complete is a function of the
// line, the cursor and what a completer holds (the shell's directory, the
// environment, the lines typed so far); it reads directories, and nothing
// else, so tests drive it with a temporary one. The shell hands it to
// liner as a WordCompleter (repl.go).

// completer is what completion knows besides the line. The zero value
// completes nothing but the words it is given.
type completer struct {
	// Dir is the shell's current directory, which relative names are
	// completed against (runner.Runner.Dir).
	Dir string
	// Home is what a leading ~/ stands for; "" leaves ~/ alone.
	Home string
	// Path is the list of directories that programs are looked up in, as
	// in $PATH.
	Path string
	// Lines are the lines of the script being typed before the one being
	// edited (a statement continued over lines), whose named edges
	// (@name) a word that starts with @ completes to, as the edges the
	// line itself names do: an edge lives in one script.
	Lines []string
	// Commands are the words known in command position besides the
	// programs on Path: the builtins and the shell's own words.
	Commands []string
	// Topics are the words that help completes to.
	Topics []string
	// Settings are what set completes: their names, then their values.
	Settings []*runner.Setting
}

// complete returns what liner.WordCompleter does for line with the
// cursor at pos (in runes): the text before the word being completed,
// the words that may replace it, and the text after the cursor. The word
// is the part of it before the cursor. A single candidate that ends a
// word (not a directory's "/") comes with a space after it. A word with
// quotes in it, or in a comment, gets nothing.
func (c *completer) complete(line string, pos int) (head string, words []string, tail string) {
	r := []rune(line)
	pos = max(0, min(pos, len(r)))
	before, tail := string(r[:pos]), string(r[pos:])
	w := scanLine(before)
	if w.quoted || w.comment {
		return before, nil, tail
	}
	head = before[:w.start]
	raw := before[w.start:]
	ends := true // whether a single candidate ends the word
	for len(w.cmd) > 0 && isAssignment(w.cmd[0]) {
		w.cmd = w.cmd[1:] // X=1 cmd: cmd is in command position
	}
	switch {
	case strings.HasPrefix(raw, "@"): // an escaped \@ is a file's
		words = matching(edgesIn(append(slices.Clone(c.Lines), head+" "+tail)), w.value)
	case !w.redirect && len(w.cmd) == 0 && !strings.ContainsRune(w.value, '/') && w.value != "~":
		words = matching(append(slices.Clone(c.Commands), programs(c.Path, w.value)...), w.value)
	case !w.redirect && len(w.cmd) == 1 && w.cmd[0] == "help":
		words = matching(c.Topics, w.value)
	case !w.redirect && len(w.cmd) >= 1 && w.cmd[0] == "set":
		words = matching(c.setWords(w.cmd[1:]), w.value)
	default:
		var dirPart string
		dirPart, words, ends = c.files(raw, w.value)
		head += dirPart
		if !w.redirect && len(w.cmd) == 1 && w.cmd[0] == "cd" {
			words = slices.DeleteFunc(words, func(s string) bool { return !strings.HasSuffix(s, "/") })
			ends = false
		}
	}
	if len(words) == 1 && ends && (tail == "" || !isBlank(tail[0])) {
		words[0] += " "
	}
	return head, words, tail
}

// isAssignment reports whether word is NAME=value.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	return ok && shell.IsName(name)
}

// setWords are the words set takes after args: a setting's name, then
// its values.
func (c *completer) setWords(args []string) []string {
	var out []string
	switch len(args) {
	case 0:
		for _, s := range c.Settings {
			out = append(out, s.Name)
		}
	case 1:
		for _, s := range c.Settings {
			if s.Name == args[0] {
				out = settingValues(s)
			}
		}
	}
	return out
}

// settingValues are the values a setting lists: the one-word values its
// Values names ("a number of at least 1, or bound" gives bound; "on, off
// or auto" all three), leaving out descriptions and examples (a size,
// 64K). The table has no list of values apart from that text.
func settingValues(s *runner.Setting) []string {
	var out []string
	for _, part := range strings.Split(s.Values, ",") {
		for _, v := range strings.Split(part, " or ") {
			v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "or "))
			if isValueWord(v) && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// isValueWord reports whether v is a value itself, not words about one:
// a lowercase letter, then lowercase letters, digits and '-'.
func isValueWord(v string) bool {
	if v == "" || v[0] < 'a' || v[0] > 'z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if b := v[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-') {
			return false
		}
	}
	return true
}

// files completes the file name raw (as typed; value without its
// escapes): it returns the part of raw up to its last '/', which stays,
// and the names in that directory that complete the rest, each escaped,
// a directory's with a "/" after it. ends is false when the only name is
// a directory's: the word goes on.
func (c *completer) files(raw, value string) (dirPart string, words []string, ends bool) {
	if value == "~" && c.Home != "" {
		return "", []string{"~/"}, false
	}
	i := strings.LastIndexByte(raw, '/')
	dirPart = raw[:i+1]
	j := strings.LastIndexByte(value, '/')
	dir, base := value[:j+1], value[j+1:]
	switch {
	case strings.HasPrefix(dir, "~/") && c.Home != "":
		dir = filepath.Join(c.Home, dir[2:])
	case dir == "":
		dir = c.Dir
	case !filepath.IsAbs(dir):
		dir = filepath.Join(c.Dir, dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return dirPart, nil, true
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		word := escapeName(name, dirPart == "")
		if isDir(filepath.Join(dir, name), e) {
			word += "/"
		}
		words = append(words, word)
	}
	slices.Sort(words)
	return dirPart, words, len(words) != 1 || !strings.HasSuffix(words[0], "/")
}

// isDir reports whether the entry is a directory, or a symbolic link to
// one.
func isDir(path string, e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// escapeName writes a file name as a word of the shell would spell it:
// a backslash before each byte the shell reads as more than itself
// (quotes, operators, $, globs and braces), and, at the word's start,
// before an @ (an edge), a ~ (home), a # (a comment) or a ! (negation).
func escapeName(name string, atStart bool) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if strings.IndexByte(" \t\n|;&<>()'\"\\$`*?[]{}", ch) >= 0 || i == 0 && atStart && strings.IndexByte("@~#!", ch) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// programs lists the executable files on path whose names begin with
// prefix.
func programs(path, prefix string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue // the current directory, which a shell should not search
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, prefix) || e.IsDir() {
				continue
			}
			fi, err := os.Stat(filepath.Join(dir, name))
			if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				out = append(out, name)
			}
		}
	}
	return out
}

// matching returns the words that begin with prefix, sorted, each once.
func matching(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// edgesIn returns the named edges written in lines: the words @name, a
// letter or '_' and then letters, digits and '_', that stand alone
// between blanks and operators.
func edgesIn(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r < 0x80 && isBreak(byte(r)) }) {
			if isEdgeWord(f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func isEdgeWord(w string) bool {
	if len(w) < 2 || w[0] != '@' {
		return false
	}
	for i := 1; i < len(w); i++ {
		b := w[i]
		letter := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
		if !letter && (i == 1 || b < '0' || b > '9') {
			return false
		}
	}
	return true
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// isBreak reports whether b ends a word: a blank, a newline or an
// operator's byte.
func isBreak(b byte) bool { return strings.IndexByte(" \t\n|;&<>()", b) >= 0 }

// lineWord is the word a line ends in, as scanLine reads it.
type lineWord struct {
	start   int    // its byte offset in the line
	value   string // its text with escapes undone
	quoted  bool   // it has quotes in it, or ends in a lone backslash
	comment bool   // it is in a comment
	// cmd are the words of its command before it, redirections left
	// out; redirect says that it is a redirection's file.
	cmd      []string
	redirect bool
}

// scanLine reads s, the line up to the cursor, as the shell's lexer
// would, as far as completion needs: where the last word starts, what
// command it belongs to, and whether it is a command's name, an argument
// or a redirection's file. Operators are those of a POSIX shell that
// start a command (| ; && || ! and a newline) and the redirections (< >
// >> 2> 2>>); an operator tpipe refuses is read as the shell it comes from
// would, since the line is not finished.
func scanLine(s string) lineWord {
	var w lineWord
	var val strings.Builder
	in := false // in a word
	end := func() {
		if !in {
			return
		}
		if w.redirect {
			w.redirect = false
		} else {
			w.cmd = append(w.cmd, val.String())
		}
		in, w.quoted = false, false
		val.Reset()
	}
	begin := func(i int) {
		if !in {
			in, w.start = true, i
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\':
			begin(i)
			if i+1 == len(s) {
				w.quoted = true
				continue
			}
			i++
			val.WriteByte(s[i])
		case ch == '\'' || ch == '"':
			begin(i)
			w.quoted = true
			close := strings.IndexByte(s[i+1:], ch)
			if close < 0 {
				i = len(s)
				continue
			}
			val.WriteString(s[i+1 : i+1+close])
			i += close + 1
		case ch == '#' && !in:
			return lineWord{start: len(s), comment: true}
		case ch == '!' && !in && len(w.cmd) == 0 && !w.redirect && i+1 < len(s) && isBlank(s[i+1]):
			// ! before a pipeline: the next word is still a command's.
		case ch == '<' || ch == '>':
			if in && !w.quoted && val.String() == "2" && w.start == i-1 {
				in = false // the 2 of 2>
				val.Reset()
			}
			end()
			w.redirect = true
		case isBreak(ch) && !isBlank(ch):
			end()
			w.cmd, w.redirect = nil, false
		case isBlank(ch):
			end()
		default:
			begin(i)
			val.WriteByte(ch)
		}
	}
	if !in {
		w.start = len(s)
		val.Reset()
	}
	w.value = val.String()
	return w
}
