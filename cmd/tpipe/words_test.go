package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The acceptance test of issue 28, "the words people type": tpipe expands
// the words of a script as bash does (tilde, parameters, braces, field
// splitting, pathnames, quoting), keeps assignments, cd, &&, || and ! with
// bash's meaning, and reports bad input in one line. Each case is a line
// typed at both shells; bash is the reference, run as
// `bash -o pipefail -c LINE` because tpipe's pipelines always fail as
// under pipefail.
//
// A case also states what bash prints, and the test checks bash against
// it before comparing tpipe with bash: a case on which bash does not do
// what its author meant would compare nothing useful.

// errKind says what a case may write to stderr.
type errKind int

const (
	quiet    errKind = iota // nothing, from either shell
	noisy                   // something, from both; stdout and status still compared
	badInput                // an error, one line from tpipe (see bad and oneLineError)
)

// anyStatus stands for a bash status that means nothing for tpipe: bash
// has no error there, or its status is an accident of how it was started.
const anyStatus = -1

// A wordCase is one script line and what bash makes of it.
type wordCase struct {
	name   string
	script string
	// out is bash's stdout, with {dir} for the work directory and
	// {home} for $HOME; status is bash's exit status.
	out    string
	status int
	errs   errKind
	// setup, if set, runs in the fresh work directory before each shell.
	setup func(t *testing.T, dir string)
}

// Builders for the table, one per kind of case.

func same(name, script, out string) wordCase {
	return wordCase{name: name, script: script, out: out}
}

func exits(name, script, out string, status int) wordCase {
	return wordCase{name: name, script: script, out: out, status: status}
}

func noise(name, script, out string, status int) wordCase {
	return wordCase{name: name, script: script, out: out, status: status, errs: noisy}
}

// bad is bad input: tpipe's status must be non-zero and, unless status
// is anyStatus, bash's; stdout is not compared.
func bad(name, script string, status int) wordCase {
	return wordCase{name: name, script: script, status: status, errs: badInput}
}

// wordGroups are the cases by feature of the issue. The work directory
// holds the files of wordFixtures; $HOME holds known.txt.
var wordGroups = []struct {
	feature string
	cases   []wordCase
}{
	{"tilde", []wordCase{
		same("alone", `echo ~`, "{home}\n"),
		same("slash", `echo ~/x`, "{home}/x\n"),
		same("file", `cat ~/known.txt`, "home file\n"),
		same("quoted", `echo "~" '~' \~ x~`, "~ ~ ~ x~\n"),
		same("assignment", `X=~/a; echo $X`, "{home}/a\n"),
		same("glob", `echo ~/*`, "{home}/known.txt\n"),
		// ~user is optional in tpipe, but a user that does not exist
		// leaves the word as written either way.
		same("unknown-user", `echo ~nosuchuser28 ~nosuchuser28/x`, "~nosuchuser28 ~nosuchuser28/x\n"),
	}},
	{"parameters", []wordCase{
		same("plain", `X=hi; echo $X ${X} "$X"`, "hi hi hi\n"),
		same("braces-delimit", `X=hi; echo "${X}s" $Xs.`, "his .\n"),
		same("unset-empty", `echo "[$NOPE]" "[${NOPE}]"`, "[] []\n"),
		same("default", `E=; echo "[${E:-d}][${E-d}][${NOPE:-d}][${NOPE-d}]"`, "[d][][d][d]\n"),
		same("alternative", `E=; X=x; echo "[${E:+a}][${E+a}][${NOPE+a}][${X:+a}]"`, "[][a][][a]\n"),
		same("assign-default", `echo ${NOPE:=v}; echo $NOPE`, "v\nv\n"),
		same("word-expanded", `Y=w; echo ${NOPE:-$Y} ${NOPE:-~}`, "w {home}\n"),
		// The error forms, where they are no error (see group bad).
		same("error-forms-set", `X=1; E=; echo ${X?unset} ${X:?null} "[${E?unset}]"`, "1 1 []\n"),
		same("length", `X=file.tar.gz; echo ${#X} ${#NOPE}`, "11 0\n"),
		same("strip-prefix", `X=file.tar.gz; echo ${X#*.} ${X##*.}`, "tar.gz gz\n"),
		same("strip-suffix", `X=file.tar.gz; echo ${X%.*} ${X%%.*}`, "file.tar file\n"),
		same("replace", `X=file.tar.gz; echo ${X/a/A} ${X//a/A} ${X/zz/y}`,
			"file.tAr.gz file.tAr.gz file.tar.gz\n"),
		same("substring", `X=file.tar.gz; echo ${X:2:3} ${X: -2} ${X:5}`, "le. gz tar.gz\n"),
		same("status", `echo $?; false; echo $?; echo $?`, "0\n1\n0\n"),
		same("status-grep", `grep zzz c.txt; echo $?; grep -q cherry c.txt; echo $?`, "1\n0\n"),
		// bash -c with no arguments: no positional parameters.
		same("no-positionals", `echo "$#,$1,$*"; printf '[%s]\n' x "$@" y`, "0,,\n[x]\n[y]\n"),
	}},
	{"quoting", []wordCase{
		same("star", `echo '*' "*" \*`, "* * *\n"),
		same("dollar", `X=hi; echo "$X" '$X' \$X "\$X"`, "hi $X $X $X\n"),
		same("spaces", `echo a  b "a  b" 'a  b'`, "a b a  b a  b\n"),
		same("backslash", `echo "a\b" 'a\b' a\b "\"q\" \\"`, "a\\b a\\b ab \"q\" \\\n"),
		same("empty-words", `printf '[%s]\n' '' "" x`, "[]\n[]\n[x]\n"),
		same("nested-quotes", `echo "'x'" '"$X"'`, "'x' \"$X\"\n"),
		// @name is a named edge of tpipe's graph; quoted it is a word.
		same("edge-quoted", `echo '@a'`, "@a\n"),
	}},
	{"glob", []wordCase{
		same("star", `echo *`, "Z.log a.log b.log c.txt empty my file.txt sub\n"),
		same("suffix-C-order", `echo *.log`, "Z.log a.log b.log\n"),
		same("question", `echo ?.log`, "Z.log a.log b.log\n"),
		same("class", `echo [ab].log [a-c].*`, "a.log b.log a.log b.log c.txt\n"),
		same("negated-class", `echo [!a].log`, "Z.log b.log\n"),
		same("subdir", `echo sub/*.txt s*/x*`, "sub/x.txt sub/y.txt sub/x.txt\n"),
		same("dirs-only", `echo */`, "empty/ sub/\n"),
		same("quoted-part", `echo "sub"/* *'.log'`, "sub/x.txt sub/y.txt Z.log a.log b.log\n"),
		// A dotfile needs a pattern that starts with a dot: neither ?
		// nor [.] matches the leading dot. (.* is left out: bash 5.2
		// stopped matching . and .. with it.)
		same("dotfiles", `echo .h* ?hidden [.]hidden`, ".hidden ?hidden [.]hidden\n"),
		same("no-match", `echo *.none nodir/* empty/* "x"*.none`, "*.none nodir/* empty/* x*.none\n"),
		same("one-word-each", `printf '[%s]\n' *.txt`, "[c.txt]\n[my file.txt]\n"),
		same("operands", `cat *.txt sub/*`, "cherry\nspaced\nx\ny\n"),
		same("ls", `ls *.log sub`, "Z.log\na.log\nb.log\n\nsub:\nx.txt\ny.txt\n"),
	}},
	{"brace", []wordCase{
		same("list", `echo {a,b}`, "a b\n"),
		same("range", `echo {1..3} {3..1} {a..c} {1..10..3}`, "1 2 3 3 2 1 a b c 1 4 7 10\n"),
		same("affixes", `echo x{a,b}y a{,.log}`, "xay xby a a.log\n"),
		same("nested", `echo {a,b{1,2}} {a,b}{1,2}`, "a b1 b2 a1 a2 b1 b2\n"),
		same("not-braces", `echo {a} '{a,b}' "{a,b}" \{a,b}`, "{a} {a,b} {a,b} {a,b}\n"),
		same("quoted-item", `printf '[%s]\n' {"x y",z}`, "[x y]\n[z]\n"),
		// Braces come before globs, and names need not exist.
		same("then-glob", `echo {a,c}.* {a,z}.log *.{log,txt}`, "a.log c.txt a.log z.log Z.log a.log b.log c.txt my file.txt\n"),
		// Braces come before parameters: a comma from a variable
		// makes no list.
		same("before-parameters", `X=1; Y=a,b; echo {$X,2} {$Y}`, "1 2 {a,b}\n"),
	}},
	{"splitting", []wordCase{
		same("two-words", `X="a b"; printf '[%s]\n' $X "$X"`, "[a]\n[b]\n[a b]\n"),
		same("trimmed", `X="  a   b  "; printf '[%s]\n' $X "$X"`, "[a]\n[b]\n[  a   b  ]\n"),
		same("tab-newline", "X='a\tb\nc'; printf '[%s]\\n' $X", "[a]\n[b]\n[c]\n"),
		same("empty-no-word", `E=; printf '[%s]\n' $E x "$E" $NOPE`, "[x]\n[]\n"),
		same("blank-no-word", `X=" "; printf '[%s]\n' x$X y`, "[x]\n[y]\n"),
		same("joined", `X="a b"; printf '[%s]\n' x${X}y`, "[xa]\n[by]\n"),
		same("default-word", `printf '[%s]\n' ${NOPE:-a b} "${NOPE:-a b}"`, "[a]\n[b]\n[a b]\n"),
		same("assignment-no-split", `X="a b"; Y=$X; printf '[%s]\n' "$Y"`, "[a b]\n"),
		// Split fields are then globbed; quoted they are not.
		same("then-glob", `X='*.log'; Y=sub/*; echo $X "$X" $Y "$Y"`, "Z.log a.log b.log *.log sub/x.txt sub/y.txt sub/*\n"),
		same("default-glob", `echo ${NOPE:-*.log} "${NOPE:-*.log}"`, "Z.log a.log b.log *.log\n"),
	}},
	{"assignments", []wordCase{
		same("prefix-sh", `X=1 sh -c 'echo $X'; echo "[$X]"`, "1\n[]\n"),
		same("prefix-awk", `X=1 awk 'BEGIN{print ENVIRON["X"]}'; echo "[$X]"`, "1\n[]\n"),
		same("prefix-sort", `printf 'b\nB\na\n' | LC_ALL=C sort`, "B\na\nb\n"),
		same("prefix-two", `X=1 Y=2 sh -c 'echo $X$Y'`, "12\n"),
		same("prefix-true", `X=1 true; echo "[$X]"`, "[]\n"),
		// The words are expanded before the prefix takes effect.
		same("prefix-late", `X=3; X=5 seq $X; echo $X`, "1\n2\n3\n3\n"),
		same("prefix-shadows", `X=1; X=2 sh -c 'echo $X'; echo $X`, "2\n1\n"),
		same("shell-variable", `X=1; echo $X; sh -c 'echo "[$X]"'`, "1\n[]\n"),
		same("expanded-value", `A=1; B=$A$A; echo $B`, "11\n"),
		same("export-later", `X=1; export X; sh -c 'echo "[$X]"'`, "[1]\n"),
		same("export-value", `export X=1; X=2; sh -c 'echo "[$X]"'`, "[2]\n"),
		same("unset", `export X=1; unset X; sh -c 'echo "[$X]"'; echo "[$X]"`, "[]\n[]\n"),
		same("env-grep", `X=1 env | grep '^X='`, "X=1\n"),
	}},
	{"cd", []wordCase{
		same("pwd", `cd sub; pwd`, "{dir}/sub\n"),
		same("relative-file", `cd sub; cat x.txt; wc -l < y.txt`, "x\n1\n"),
		same("glob", `cd sub; echo *`, "x.txt y.txt\n"),
		same("programs", `cd sub; ls; sh -c 'cat y.txt'`, "x.txt\ny.txt\ny\n"),
		same("redirect", `cd sub && echo hi > new.txt; cd ..; cat sub/new.txt`, "hi\n"),
		same("empty-dir", `cd empty; echo *`, "*\n"),
		same("home", `cd; pwd; cat known.txt`, "{home}\nhome file\n"),
		same("tilde", `cd ~; pwd`, "{home}\n"),
		same("dotdot", `cd sub; cd ..; pwd`, "{dir}\n"),
		// cd - prints where it goes.
		same("back", `cd sub; cd -; pwd`, "{dir}\n{dir}\n"),
		noise("no-oldpwd", `cd -`, "", 1),
		noise("nosuchdir", `cd nosuchdir`, "", 1),
		noise("nosuchdir-goes-on", `cd nosuchdir; echo $?; pwd`, "1\n{dir}\n", 0),
		noise("file-goes-on", `cd c.txt; echo $?`, "1\n", 0),
	}},
	{"andor", []wordCase{
		same("and", `true && echo yes`, "yes\n"),
		exits("and-skips", `false && echo no`, "", 1),
		same("and-status", `false && echo no; echo $?`, "1\n"),
		same("or", `false || echo yes`, "yes\n"),
		same("or-skips", `true || echo no; echo $?`, "0\n"),
		exits("not-true", `! true`, "", 1),
		same("not-status", `! true; echo $?; ! false; echo $?`, "1\n0\n"),
		// ! takes the whole pipeline, whose status is pipefail's.
		same("not-pipeline", `! false | true; echo $?; ! true | false; echo $?`, "0\n0\n"),
		same("pipefail", `false | true; echo $?; true | false | true; echo $?`, "1\n1\n"),
		same("grep-or", `grep -q zzz c.txt || echo none`, "none\n"),
		same("pipeline-and", `seq 3 | grep 2 && echo found`, "2\nfound\n"),
		same("chain-then", `true && echo b || echo c`, "b\n"),
		same("chain-else", `false && echo b || echo c; true && false || echo c`, "c\nc\n"),
		// a || b && c is (a || b) && c.
		same("left-assoc", `true || false && echo b; false || false && echo b; echo $?`, "b\n1\n"),
		same("not-chain", `! false && echo yes || echo no`, "yes\n"),
		same("newline-after", "true &&\necho yes", "yes\n"),
		noise("not-found", `nosuchcmd28; echo $?`, "127\n", 0),
		same("missing-file", `cat nosuch 2>/dev/null; echo $?`, "1\n"),
	}},
	// A command whose records are not lines (tr -d '\n', a newline that
	// awk or cut prints inside one, sort -z) hands the next command the
	// lines a pipe would: it once got the records, one "line" each.
	{"lines", []wordCase{
		same("tr-joins", `seq 5 | tr '\n' ' ' | sort`, "1 2 3 4 5 \n"),
		same("tr-deletes", `seq 5 | tr -d '\n' | sed -n 1p`, "12345"),
		same("tr-nul", `seq 3 | tr '\n' '\0' | cut -c2- | od -An -c`, "  \\0   2  \\0   3  \\0  \\n\n"),
		same("awk-newline", `seq 3 | awk '{print $0 "\n" $0}' | sort -u | wc -l`, "3\n"),
		same("awk-fields", `printf 'a,b\nc,d\n' | awk -F, '{print $1 "\n" $2}' | sort -r`, "d\nc\nb\na\n"),
		same("cut-delimiter", `printf 'a,b\nc,d\n' | cut -d, -f1,2 --output-delimiter=$'\n' | head -n 1`, "a\n"),
		same("nl-separator", `seq 3 | nl -s $'\n' | head -n 2`, "     1\n1\n"),
		same("sort-z", `printf 'b1\nb2\0a1\na2\0' | sort -z | head -n 1`, "a1\n"),
		same("uniq-z", `printf 'b1\nb2\0a1\na2\0' | uniq -z | tail -n 1 | od -An -c`, "   a   2  \\0\n"),
		same("yes-newline", `yes $'a\nb' | head -n 3; echo done`, "a\nb\na\ndone\n"),
		same("colon", `: | wc -l`, "0\n"),
	}},
	// wc sizes its columns by the size of its regular files, a '<' file
	// included (GNU's fstat of stdin); a pipe gets 7 columns.
	{"wc-stdin", []wordCase{
		same("redirect", `printf 'a b\nc d e\nfff\n' > f; wc < f`, " 3  6 14\n"),
		same("empty", `: > e; wc < e`, "0 0 0\n"),
		same("dash", `printf 'abc\n' > f; wc - f < f`, "1 1 4 -\n1 1 4 f\n2 2 8 total\n"),
		same("pipe", `printf 'abc\n' | wc`, "      1       1       4\n"),
	}},
	// cat refuses to append a file to itself, which would grow it until
	// the disk is full; a file truncated first is only empty.
	{"cat-itself", []wordCase{
		noise("append", `printf 'abc\n' > s; cat s >> s; echo $?; cat s`, "1\nabc\n", 0),
		noise("dash", `printf 'abc\n' > s; printf 'x\n' > t; cat - t < s >> s; echo $?; cat s`, "1\nabc\nx\n", 0),
		same("truncate", `printf 'abc\n' > s; cat s > s; echo $?; wc -c < s`, "0\n0\n"),
	}},
	{"bad", []wordCase{
		bad("unterminated-brace", `echo ${X`, 2),
		bad("unterminated-in-quotes", `echo "${X"`, 2),
		// bash exits 127 under -c but 1 running a file: no status to
		// match.
		bad("unset-error", `echo ${NOPE?not set}`, anyStatus),
		bad("null-error", `E=; echo ${E:?empty}`, anyStatus),
		bad("cd-file", `cd c.txt`, 1),
		// bash leaves the pattern as written, silently; tpipe says it
		// cannot read the directory.
		{name: "unreadable-dir", script: `echo noperm/*`, status: anyStatus, errs: badInput, setup: unreadableDir},
	}},
}

// unreadableDir makes dir/noperm, a directory nobody may list; it skips
// the test where that does not hold (root lists anything).
func unreadableDir(t *testing.T, dir string) {
	p := filepath.Join(dir, "noperm")
	if err := os.Mkdir(p, 0o000); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(p); err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
		if err == nil || errors.Is(err, io.EOF) {
			t.Skip("a directory of mode 000 is readable here (running as root)")
		}
	}
}

// wordFixtures are the files of the work directory; names ending in /
// are directories.
var wordFixtures = map[string]string{
	"a.log":       "alpha\nerror one\n",
	"b.log":       "beta\n",
	"Z.log":       "zulu\n", // before a.log in C order
	"c.txt":       "cherry\n",
	"my file.txt": "spaced\n",
	".hidden":     "secret\n",
	"sub/x.txt":   "x\n",
	"sub/y.txt":   "y\n",
	"empty/":      "",
}

// wordRoot is a fresh pair of directories for one case: root/work, the
// current directory, with the fixtures, and root/home, $HOME, with
// known.txt. Both shells run in the same paths (made afresh between
// them), so that paths in the output compare as they are.
type wordRoot struct{ root, dir, home string }

func newWordRoot(t *testing.T) wordRoot {
	t.Helper()
	// Resolved, so that pwd (physical) and bash's $PWD (logical) agree.
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return wordRoot{root, filepath.Join(root, "work"), filepath.Join(root, "home")}
}

// fresh makes the work and home directories anew.
func (w wordRoot) fresh(t *testing.T) {
	t.Helper()
	for _, d := range []string{w.dir, w.home} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"home/known.txt": "home file\n"}
	for name, text := range wordFixtures {
		files["work/"+name] = text
	}
	for name, text := range files {
		p := filepath.Join(w.root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// env is the whole environment of both shells: nothing of the user's.
func (w wordRoot) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "LC_ALL=C"}
}

// expand puts the directories in a case's expected output.
func (w wordRoot) expand(s string) string {
	return strings.NewReplacer("{dir}", w.dir, "{home}", w.home).Replace(s)
}

// shellRun is what one shell did with a case.
type shellRun struct {
	stdout, stderr string
	status         int
	err            error // the shell could not be run, or timed out
}

// runShell runs argv in dir with env and stdin /dev/null (exec's nil
// Stdin), within the deadline.
func runShell(dir string, env []string, argv ...string) shellRun {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	r := shellRun{stdout: stdout.String(), stderr: stderr.String()}
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("no exit within %v", deadline)
	case cmd.ProcessState != nil:
		r.status = exitStatus(cmd.ProcessState)
	default:
		r.err = err
	}
	return r
}

func (r shellRun) String() string {
	if r.err != nil {
		return fmt.Sprintf("error: %v\n    stdout: %q\n    stderr: %q", r.err, r.stdout, r.stderr)
	}
	return fmt.Sprintf("status %d\n    stdout: %q\n    stderr: %q", r.status, r.stdout, r.stderr)
}

// caretLine is the line under a shown source line that points at the
// error.
var caretLine = regexp.MustCompile(`^ *\^[\^~]*$`)

// oneLineError reports whether stderr is one line of error, maybe with a
// caret under the place: either the caret line alone, or the source line
// and the caret line, as tpipe shows a syntax error (errors.txtar).
func oneLineError(stderr string) bool {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	switch {
	case stderr == "" || !strings.HasSuffix(stderr, "\n"):
		return false
	case len(lines) == 1:
		return true
	case len(lines) == 2 || len(lines) == 3:
		return caretLine.MatchString(lines[len(lines)-1])
	}
	return false
}

// checkBash fails the case if bash does not say what the case expects;
// it returns false then, and the comparison with tpipe is skipped.
func checkBash(t *testing.T, c wordCase, want string, bash shellRun) bool {
	t.Helper()
	var wrong []string
	switch {
	case bash.err != nil:
		wrong = append(wrong, bash.err.Error())
	case c.errs == badInput:
		if c.status != anyStatus && (bash.status != c.status || bash.stderr == "") {
			wrong = append(wrong, fmt.Sprintf("want status %d and an error", c.status))
		}
	default:
		if bash.stdout != want {
			wrong = append(wrong, fmt.Sprintf("want stdout %q", want))
		}
		if bash.status != c.status {
			wrong = append(wrong, fmt.Sprintf("want status %d", c.status))
		}
		if (bash.stderr != "") != (c.errs == noisy) {
			wrong = append(wrong, map[bool]string{true: "want stderr", false: "want no stderr"}[c.errs == noisy])
		}
	}
	if len(wrong) > 0 {
		t.Errorf("the case is wrong about bash (%s):\n  script: %s\n  bash: %v", strings.Join(wrong, "; "), c.script, bash)
		return false
	}
	return true
}

// compare fails the case if tpipe does not do what bash did.
func compare(t *testing.T, c wordCase, bash, tp shellRun) {
	t.Helper()
	var diffs []string
	switch {
	case tp.err != nil:
		diffs = append(diffs, tp.err.Error())
	case c.errs == badInput:
		if tp.status == 0 {
			diffs = append(diffs, "status 0 on bad input")
		} else if c.status != anyStatus && tp.status != bash.status {
			diffs = append(diffs, "status differs")
		}
		if !oneLineError(tp.stderr) {
			diffs = append(diffs, "stderr is not one line of error (plus a caret)")
		}
	default:
		if tp.stdout != bash.stdout {
			diffs = append(diffs, "stdout differs")
		}
		if tp.status != bash.status {
			diffs = append(diffs, "status differs")
		}
		if c.errs == noisy && tp.stderr == "" {
			diffs = append(diffs, "no stderr")
		}
		if c.errs == quiet && tp.stderr != "" {
			diffs = append(diffs, "stderr where bash has none")
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s\n  script: %s\n  bash:  %v\n  tpipe: %v", strings.Join(diffs, "; "), c.script, bash, tp)
	}
}

// TestWords runs every case through bash and through tpipe, each in the
// same fresh directories, and compares them.
func TestWords(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	bin := tpipeBinary(t)
	for _, g := range wordGroups {
		t.Run(g.feature, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					w := newWordRoot(t)
					setup := func() {
						w.fresh(t)
						if c.setup != nil {
							c.setup(t, w.dir)
						}
					}
					setup()
					bash := runShell(w.dir, w.env(), bashPath, "-o", "pipefail", "-c", c.script)
					if !checkBash(t, c, w.expand(c.out), bash) {
						return
					}
					setup()
					compare(t, c, bash, runShell(w.dir, w.env(), bin, c.script))
				})
			}
		})
	}
}

// A scriptCase is a script file run with arguments: bash script.sh ARGS
// against tpipe -f script.tp ARGS (same text; $0 differs and is left out).
type scriptCase struct {
	name   string
	script string
	args   []string
	out    string // bash's stdout, as in wordCase
}

var scriptCases = []scriptCase{
	{"count", `echo $#; echo "$1|$2|${3:-none}"`, []string{"a", "b c"}, "2\na|b c|none\n"},
	{"quoted-at", `printf '[%s]\n' "$@"`, []string{"a", "b  c", "*.log"}, "[a]\n[b  c]\n[*.log]\n"},
	// Unquoted, $@ and $* are split and globbed.
	{"unquoted-at", `printf '[%s]\n' $@`, []string{"a", "b  c", "*.log"}, "[a]\n[b]\n[c]\n[Z.log]\n[a.log]\n[b.log]\n"},
	{"star", `printf '[%s]\n' "$*" $*`, []string{"a", "b  c"}, "[a b  c]\n[a]\n[b]\n[c]\n"},
	// $10 is ${1}0.
	{"tenth", `echo "${10}" "$10"`, []string{"a", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}, "ten a0\n"},
	// With no arguments "$@" is no word, but printf prints its format once.
	{"none", `echo "$#"; printf '[%s]\n' "$@"; printf '<%s>\n' x "$@" y`, nil, "0\n[]\n<x>\n<y>\n"},
	{"forms", `echo ${1#*.} ${1%.*} ${#1} ${2:-def}`, []string{"file.tar.gz"}, "tar.gz file.tar 11 def\n"},
	{"lines", "X=$1\ncd sub &&\n  cat $X\necho $?", []string{"x.txt"}, "x\n0\n"},
}

// TestWordsScript runs scriptCases, comparing stdout and status.
func TestWordsScript(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	bin := tpipeBinary(t)
	for _, c := range scriptCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWordRoot(t)
			w.fresh(t)
			sh, tp := filepath.Join(w.root, "script.sh"), filepath.Join(w.root, "script.tp")
			for _, name := range []string{sh, tp} {
				if err := os.WriteFile(name, []byte(c.script+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wc := wordCase{name: c.name, script: c.script + "\n  args: " + fmt.Sprintf("%q", c.args), out: c.out}
			bash := runShell(w.dir, w.env(), append([]string{bashPath, "-o", "pipefail", sh}, c.args...)...)
			if !checkBash(t, wc, w.expand(c.out), bash) {
				return
			}
			w.fresh(t)
			compare(t, wc, bash, runShell(w.dir, w.env(), append([]string{bin, "-f", tp}, c.args...)...))
		})
	}
}
