package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/sched"
)

// The command's help: its forms (tpipe help, and the top of tpipe
// --help), a form's or a builtin's own help (tpipe help NAME) and the
// version. Every text here is laid out by columns, which keeps it within
// say.Width columns whatever the table it comes from holds.

// cmdForm is one form of the tpipe command.
type cmdForm struct {
	// name is the subcommand's word, "" for the forms that run
	// pipelines.
	name string
	syn  string
	what string
}

// cmdForms are the command's forms, in the order help lists them.
var cmdForms = []cmdForm{
	{"", "tpipe [flags] 'PIPELINE'", ""},
	{"", "tpipe [flags] -f SCRIPT [ARG...]", "$1 $2 ... in the script"},
	{"", "tpipe [flags] < SCRIPT", "a script on stdin that is not a terminal"},
	{"", "tpipe [flags]", "an interactive shell, on a terminal"},
	{"bench", "tpipe bench [-quick] [-out DIR] [-runs N]", "the benchmark suite, run from a checkout: bench/README.md"},
	{"bench", "tpipe bench -video [-quick] [-out DIR] [-runs N]", "stabilize against ffmpeg's deshake, vid.stab"},
	{"gc", "tpipe gc [--intermediate | --all] DIR", "clean the spool DIR of --spool runs"},
	{"pmjq", "tpipe pmjq ...", "folders as places, commands as transitions: tpipe pmjq --help; as pmjq, pmjq 1.0's command line"},
	{"serve", "tpipe serve [flags] DIR 'PIPELINE'", "a pipeline as a service on DIR/in and DIR/out"},
	{"put", "tpipe put [--name NAME] DIR FILE...", "submit jobs to a folder of pmjq or serve, whole"},
	{"get", "tpipe get [--once] nats://HOST:PORT/NAME DIR", "take the finished jobs of a net on NATS into DIR"},
	{"status", "tpipe status [--watch] [--dot | --pnml] DIR", "a spool folder's places, claims, rates, bottleneck"},
	{"scripts", "tpipe scripts [-o OUTDIR] DIR 'PIPELINE'", "pmjq's setup.sh, launch.sh and cleanup.sh"},
	{"help", "tpipe help [NAME]", "this list, or the help of a builtin or a form"},
	{"version", "tpipe version", "the version and revision; also --version"},
}

// formColumn is where a form's description starts.
const formColumn = 35

// writeForms writes the forms that pick takes (nil: all) as a usage
// text: "usage: " before the first, each description in parentheses
// beside or under its form.
func writeForms(w io.Writer, pick func(cmdForm) bool) {
	var rows []row
	for _, f := range cmdForms {
		if pick != nil && !pick(f) {
			continue
		}
		lead := "       "
		if len(rows) == 0 {
			lead = "usage: "
		}
		r := row{lead + f.syn, ""}
		if f.what != "" {
			r.text = "(" + f.what + ")"
		}
		rows = append(rows, r)
	}
	writeRows(w, formColumn, rows)
}

// helpCommand is `tpipe help [NAME]`: the forms and the builtins, or the
// help of one form or builtin.
func helpCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		writeForms(stdout, nil)
		fmt.Fprintln(stdout)
		writeWrapped(stdout, "", "tpipe --help adds the flags and the policies; tpipe help NAME shows one "+
			"builtin or form. In a pipeline, NAME --help or help NAME shows a builtin.")
		fmt.Fprintln(stdout)
		writeWrapped(stdout, "builtins: ", strings.Join(builtin.Names(), " "))
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "tpipe help: give one name, as in tpipe help sort\n")
		return 2
	}
	name := args[0]
	if s, ok := builtin.Lookup(name); ok {
		fmt.Fprint(stdout, s.HelpText())
		return 0
	}
	if t := shellTopic(name); t != "" {
		fmt.Fprint(stdout, t)
		return 0
	}
	switch name {
	case "help":
		fmt.Fprint(stdout, "usage: tpipe help [NAME]\n\n")
		writeWrapped(stdout, "", "Lists the forms of the tpipe command, or shows the help of the builtin "+
			"or form NAME. Within a pipeline, help NAME and NAME --help show a builtin's.")
		return 0
	case "version":
		fmt.Fprint(stdout, "usage: tpipe version\n       tpipe --version\n\n")
		writeWrapped(stdout, "", "Prints tpipe's version, the revision of the checkout it was built from "+
			"and when that was committed, as far as the binary records them, and the Go "+
			"toolchain that built it.")
		return 0
	case "bench":
		// The suite's own --help needs a checkout; its forms here do not.
		writeForms(stdout, func(f cmdForm) bool { return f.name == "bench" })
		fmt.Fprintln(stdout)
		writeWrapped(stdout, "", "tpipe bench --help, run in a checkout, lists the suite's other forms and flags.")
		return 0
	case "pmjq", "serve", "put", "get", "status", "gc", "scripts":
		return run(ctx, []string{name, "--help"}, nil, stdout, stderr)
	}
	fmt.Fprintf(stderr, "tpipe help: no help topics match '%s'; tpipe help lists them\n", visible.Controls(name))
	return 1
}

// versionText says which tpipe this is, from what the Go toolchain
// recorded in the binary (debug.ReadBuildInfo). go install MODULE@VERSION
// records a version; go build in a checkout records the revision too
// (and, since Go 1.24, a version made of it), unless told not to
// (-buildvcs=false); go run and tests may record neither.
func versionText(bi *debug.BuildInfo, ok bool) string {
	version := "(devel)"
	var rev, when, modified string
	if ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tpipe %s\n", version)
	switch {
	case rev != "":
		fmt.Fprintf(&b, "revision %s", rev)
		if modified == "true" {
			b.WriteString(", with changes not committed")
		}
		b.WriteString("\n")
		if when != "" {
			fmt.Fprintf(&b, "committed %s\n", when)
		}
	case version == "(devel)":
		// go build finds a git checkout by a .git directory: a worktree,
		// whose .git is a file, gets no revision either.
		b.WriteString("no revision recorded: built with -buildvcs=false, or not in a git clone\n" +
			"(go build reads none in a git worktree)\n")
	}
	goVersion := runtime.Version()
	if ok && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	fmt.Fprintf(&b, "built with %s for %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// versionCommand is `tpipe version` and `tpipe --version`.
func versionCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "tpipe version: takes no arguments\n")
		return 2
	}
	fmt.Fprint(stdout, versionText(debug.ReadBuildInfo()))
	return 0
}

// row is a term and the text that explains it.
type row struct{ term, text string }

// writeRows writes rows as two columns: each term (with its own indent),
// and its text wrapped in the column that starts at col, on the term's
// line when the term leaves room, else on the lines below. A '\n' in a
// text starts a new line of it.
func writeRows(w io.Writer, col int, rows []row) {
	pad := strings.Repeat(" ", col)
	for _, r := range rows {
		var lines []string
		for _, para := range strings.Split(r.text, "\n") {
			lines = append(lines, say.Wrap(para, say.Width-col)...)
		}
		n := utf8.RuneCountInString(r.term)
		if len(lines) == 0 || n+2 > col {
			fmt.Fprintln(w, r.term)
		} else {
			fmt.Fprintln(w, r.term+strings.Repeat(" ", col-n)+lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintln(w, pad+l)
		}
	}
}

// termColumn is where the text of rows starts: after the longest term and
// two spaces, but at most at column most (a longer term has its text
// below it).
func termColumn(rows []row, most int) int {
	col := 0
	for _, r := range rows {
		if n := utf8.RuneCountInString(r.term) + 2; n <= most {
			col = max(col, n)
		}
	}
	return col
}

// writeWrapped writes text wrapped, its first line after lead and the
// others under the first.
func writeWrapped(w io.Writer, lead, text string) {
	pad := strings.Repeat(" ", utf8.RuneCountInString(lead))
	for i, l := range say.Wrap(text, say.Width-len(pad)) {
		if i == 0 {
			fmt.Fprintln(w, lead+l)
		} else {
			fmt.Fprintln(w, pad+l)
		}
	}
}

// wrapped returns text wrapped at say.Width, each line ending in '\n'.
func wrapped(text string) string {
	var b strings.Builder
	writeWrapped(&b, "", text)
	return b.String()
}

// flagRows are the rows of fs's flags for help: --name ARG, where ARG is
// the setting's (runner.Setting.Arg) or the one the usage quotes, and a
// one-letter flag with one dash.
func flagRows(fs *flag.FlagSet) []row {
	var rows []row
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		if sf, ok := f.Value.(settingFlag); ok && sf.s.Arg != "" {
			arg = sf.s.Arg
		}
		if arg != "" {
			arg = " " + arg
		}
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		rows = append(rows, row{"  " + dash + f.Name + arg, text})
	})
	return rows
}

// writePolicies lists the policies, for tpipe --help.
func writePolicies(w io.Writer) {
	var rows []row
	for _, p := range sched.Policies() {
		rows = append(rows, row{"  " + p.String(), p.Summary() + "; buffers: " + p.Buffers()})
	}
	writeRows(w, termColumn(rows, 16), rows)
}
