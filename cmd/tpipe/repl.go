package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/peterh/liner"
	"golang.org/x/term"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/shell"
)

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

const replIntro = `Type a pipeline, such as: seq 10 | grep 1 | wc -l
A line ending in | or inside quotes continues on the next line.
Tab completes commands, file names, @edges and settings.
Ctrl-C stops the running pipeline (or clears the line); Ctrl-D leaves.
Pipelines here read no terminal input: use < FILE.

`

// writeReplHelp writes the shell's help: its own commands, the settings
// with their values, the policies and the builtins.
func writeReplHelp(w io.Writer) {
	fmt.Fprint(w, replIntro)
	writeRows(w, 26, []row{
		{"  help [NAME]", "this text, or NAME's: a builtin or one of these"},
		{"  set", "show the settings"},
		{"  set NAME VALUE", "change a setting (below)"},
		{"  cd [DIR]", "change the shell's directory ($HOME; - the last one)"},
		{"  export [NAME[=VALUE]]...", "give variables to the programs run; alone, list them"},
		{"  unset NAME...", "remove variables"},
		{"  exit [N]", "leave"},
	})
	fmt.Fprint(w, "\nsettings, and the values they take:\n")
	var rows []row
	for _, s := range runner.Settings {
		rows = append(rows, row{"  " + s.Name, s.Values + "\n" + s.Help})
	}
	writeRows(w, termColumn(rows, 16), rows)
	fmt.Fprintln(w)
	writeWrapped(w, "policies: ", strings.Join(sched.PolicyNames(), ", "))
	writeWrapped(w, "builtins: ", strings.Join(builtin.Names(), " "))
}

// replTopics is the help of the shell's own commands (help set, help
// cd); help NAME for any other NAME runs the help builtin, which knows
// the builtins.
var replTopics = map[string]string{
	"set": "Usage: set [NAME VALUE]\n" + wrapped("With no argument, shows the settings; set NAME VALUE "+
		"changes one for the pipelines that follow. help lists the settings and the values they take."),
	"exit": "Usage: exit [N]\n" + wrapped("Leaves the shell, as Ctrl-D does, with status N or that of the last pipeline."),
}

// shellTopic is the help of one of the runner's shell commands, as the
// shell's own topics are shown; "" for any other name.
func shellTopic(name string) string {
	usage, text, ok := runner.ShellHelp(name)
	if !ok {
		return ""
	}
	return "Usage: " + usage + "\n" + wrapped(text)
}

// interactive runs the shell on a terminal. Line editing and the history
// file come from github.com/peterh/liner, which reads the terminal itself.
//
// SIGTERM, SIGHUP and SIGQUIT end the shell (e); at the prompt they find it
// in a read of the terminal, so e exits without it, after putting the
// terminal back in the mode it had.
func interactive(ctx context.Context, e *exiter, cfg runner.Config, o options, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg.Stdin = nil // the terminal belongs to the line editor
	r := runner.New(cfg)
	defer r.Close()
	r.Advise = func(setting, value string) string { return fmt.Sprintf("try: set %s %s", setting, value) }
	if f, ok := stdin.(*os.File); ok {
		if st, err := term.GetState(int(f.Fd())); err == nil {
			e.atExit(func() { term.Restore(int(f.Fd()), st) })
		}
	}
	line := liner.NewLiner()
	defer line.Close()
	line.SetCtrlCAborts(true)
	hist := historyFile()
	if fi, err := os.Stat(hist); err == nil && fi.Mode().IsRegular() {
		if f, err := os.Open(hist); err == nil {
			line.ReadHistory(f)
			f.Close()
		}
	}
	defer func() {
		// What a user typed is theirs alone to read, as with bash's
		// history: 0600, and an older file made so too. Only a regular
		// file: TPIPE_HISTORY=/dev/null keeps no history, and /dev/null
		// keeps its mode.
		if fi, err := os.Stat(hist); err == nil && !fi.Mode().IsRegular() {
			return
		}
		f, err := os.OpenFile(hist, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "tpipe: history not kept: %s\n", fileError(err))
			return
		}
		f.Chmod(0o600)
		line.WriteHistory(f)
		f.Close()
	}()
	// SIGINT is caught for the whole session: at the prompt the editor
	// reads Ctrl-C as a key; while a pipeline runs it cancels that
	// pipeline; in between it is ignored. It never kills the shell.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	fmt.Fprintln(stdout, "tpipe interactive shell; type help, or Ctrl-D to leave")
	status := 0
	var src string
	line.SetTabCompletionStyle(liner.TabPrints)
	line.SetWordCompleter(func(text string, pos int) (string, []string, string) {
		return replCompleter(r, []string{src}).complete(text, pos)
	})
	for {
		var se *runner.SignalError
		if errors.As(context.Cause(ctx), &se) {
			return se.Status()
		}
		prompt := "tpipe> "
		if src != "" {
			prompt = "> "
		}
		text, err := line.Prompt(prompt)
		switch {
		case errors.Is(err, liner.ErrPromptAborted):
			src = ""
			continue
		case err == io.EOF && src != "":
			// Ctrl-D inside an open quote or after |: say what was
			// left open and drop it, as bash does.
			if _, perr := r.Parse(src); perr != nil {
				fmt.Fprintf(stderr, "\ntpipe: unexpected end of input: %s\n", visible.Controls(perr.Error()))
			}
			src = ""
			status = runner.StatusUsage
			continue
		case err == io.EOF:
			fmt.Fprintln(stdout)
			return status
		case err != nil:
			fmt.Fprintf(stderr, "tpipe: %v\n", err)
			return 1
		}
		if src != "" {
			src += "\n"
		}
		src += text
		if _, err := r.Parse(src); err != nil {
			var pe *shell.ParseError
			if errors.As(err, &pe) && pe.Incomplete {
				continue
			}
		}
		cmd := src
		src = ""
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		// One line, without the blank a completion leaves at its end, so
		// that the same statement is kept once.
		line.AppendHistory(strings.TrimRight(strings.ReplaceAll(cmd, "\n", " "), " \t"))
		if done, st := meta(cmd, r, stdout, stderr); done {
			if st < 0 {
				return status
			}
			status = st
			continue
		}
		status = runInterruptible(ctx, r, cmd, sig)
		if r.Exited() {
			return status
		}
	}
}

// shellWords are the words the shell itself reads in command position.
var shellWords = []string{"cd", "export", "unset", "pwd", "help", "set", "exit"}

// replCompleter is what Tab completes from at this moment: the shell's
// directory and variables, which cd and export change, and lines, those
// of the script being typed before the line edited.
func replCompleter(r *runner.Runner, lines []string) *completer {
	getenv := func(name string) string {
		v, _ := r.Var(name) // the session's: after cd, export PATH=...
		return v
	}
	topics := builtin.Names()
	for t := range replTopics {
		topics = append(topics, t)
	}
	for _, t := range shellWords {
		if shellTopic(t) != "" {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	return &completer{
		Dir:      r.Dir(),
		Home:     getenv("HOME"),
		Path:     getenv("PATH"),
		Lines:    lines,
		Commands: append(builtin.Names(), shellWords...),
		Topics:   topics,
		Settings: runner.Settings,
	}
}

// runInterruptible runs one script; Ctrl-C cancels it, not the shell.
func runInterruptible(ctx context.Context, r *runner.Runner, src string, sig <-chan os.Signal) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for len(sig) > 0 {
		<-sig // a Ctrl-C from before this pipeline started
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-sig:
			cancel()
		case <-done:
		}
	}()
	defer func() {
		close(done)
		wg.Wait()
	}()
	return r.RunScript(ctx, src)
}

// meta runs the shell's own commands: help (alone, or of the commands of
// replTopics), set, exit. It reports whether line was one, and the status (-1: leave
// the shell).
func meta(line string, r *runner.Runner, stdout, stderr io.Writer) (bool, int) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return false, 0
	}
	switch f[0] {
	case "exit", "quit":
		if len(f) == 1 {
			return true, -1
		}
	case "help":
		switch {
		case len(f) == 1:
			writeReplHelp(stdout)
			return true, 0
		case len(f) == 2 && replTopics[f[1]] != "":
			fmt.Fprint(stdout, replTopics[f[1]])
			return true, 0
		case len(f) == 2 && shellTopic(f[1]) != "":
			fmt.Fprint(stdout, shellTopic(f[1]))
			return true, 0
		}
		// help NAME, help | head: the help builtin's.
	case "set":
		return true, set(f[1:], r, stdout, stderr)
	}
	return false, 0
}

// set shows the settings, or changes one (runner.Settings).
func set(args []string, r *runner.Runner, stdout, stderr io.Writer) int {
	c := r.Config()
	if len(args) == 0 {
		for _, s := range runner.Settings {
			fmt.Fprintf(stdout, "%s %s\n", s.Name, s.Get(&c))
		}
		return 0
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tpipe: set: %s\n", visible.Controls(fmt.Sprintf(format, a...)))
		return 2
	}
	if len(args) != 2 {
		return bad("want: set NAME VALUE (see help)")
	}
	s, ok := runner.LookupSetting(args[0])
	if !ok {
		return bad("%s: no such setting (see help)", args[0])
	}
	if err := s.Set(&c, args[1]); err != nil {
		return bad("%v", err)
	}
	r.SetConfig(c)
	return 0
}

func historyFile() string {
	if h := os.Getenv("TPIPE_HISTORY"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), ".tpipe_history")
	}
	return filepath.Join(home, ".tpipe_history")
}
