package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/front/pmjq1"
	"github.com/tpipe/tpipe/front/stages"
	"github.com/tpipe/tpipe/internal/argv"
	"github.com/tpipe/tpipe/internal/syncio"
	"github.com/tpipe/tpipe/spool/jobs"
)

// pmjqCommand is `tpipe pmjq ...`, and tpipe called as pmjq. Three forms
// share the name, each a front end of the one job engine: pmjq 1.0's
// (--input=DIR/REGEX ...), tpipe's and-merge (--inputs PATTERN DIR...
// --cmd CMD), and tpipe's own INDIR 'FILTER' OUTDIR (pmjqJobs).
func pmjqCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, e := exitOn(ctx, exitSignals...)
	defer e.stop()
	switch {
	case pmjq1.IsPmjq1(args) || len(args) == 1 && args[0] == "--version":
		return pmjq1Command(ctx, args, stdout, stderr)
	case hasArg(args, "--inputs"):
		return inputsCommand(ctx, args, stdout, stderr)
	}
	return pmjqJobs(ctx, args, stdout, stderr)
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// pmjq1Command runs pmjq 1.0's command line, with tpipe's flags beside its
// options.
func pmjq1Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "pmjq"
	var f jobFlags
	fs := f.flagSet(formPmjq1)
	a, err := pmjq1.Parse(args, arity(fs))
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	if a.Help {
		fmt.Fprint(stdout, pmjq1.Usage)
		fmt.Fprintf(stdout, "\ntpipe's flags, taken here too:\n")
		printFlags(stdout, fs)
		return 0
	}
	if a.Version {
		fmt.Fprintln(stdout, "pmjq 1.0.0 command line, run by tpipe")
		return 0
	}
	var own []string
	for _, x := range a.Extra {
		own = append(own, x...)
	}
	if _, status, ok := f.parse(fs, pmjq1.Usage, own, stdout, stderr); !ok {
		return status
	}
	f.o.Once = a.QuitWhenEmpty
	spec, err := a.Compile()
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	w, err := f.worker()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer w.Close()
	st, err := spec.Stage(w, f.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
		return 1
	}
	st.Retries = f.retries
	return f.run(ctx, []jobs.Stage{st}, w, stderr)
}

// inputsCommand runs tpipe's and-merge form:
// [flags] --inputs PATTERN DIR1 DIR2 ... --cmd 'CMD $1 $2' [--output OUTDIR].
func inputsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "tpipe pmjq"
	// --inputs PATTERN DIR... is cut out first: its folders are the
	// words up to the next flag.
	var pattern string
	var dirs, flags []string
	for i := 0; i < len(args); i++ {
		if args[i] != "--inputs" {
			flags = append(flags, args[i])
			continue
		}
		if i+1 >= len(args) {
			return pmjqUsageError(stderr, prog, "--inputs needs a PATTERN and folders")
		}
		pattern = args[i+1]
		for i += 2; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
			dirs = append(dirs, args[i])
		}
		i--
	}
	var f jobFlags
	rest, status, ok := f.parse(f.flagSet(formPmjq), pmjqJobsUsage, flags, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(rest) > 0:
		return pmjqUsageError(stderr, prog, "unexpected %q: the folders go right after --inputs PATTERN", rest[0])
	case len(dirs) == 0:
		return pmjqUsageError(stderr, prog, "--inputs %s: no folder", pattern)
	case f.cmd == "":
		return pmjqUsageError(stderr, prog, "no --cmd 'CMD $1 $2...'")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return pmjqUsageError(stderr, prog, "--inputs %s: %v", pattern, err)
	}
	if re.NumSubexp() < 1 {
		return pmjqUsageError(stderr, prog, "--inputs %s: the pattern needs a group, such as (.*)\\.txt, whose value pairs the files", pattern)
	}
	words, err := argv.Words(f.cmd)
	if err != nil {
		return pmjqUsageError(stderr, prog, "--cmd: %v", err)
	}
	if _, err := ext.LookPath(words[0]); err != nil {
		return pmjqUsageError(stderr, prog, "--cmd: %v", err)
	}
	st := jobs.Stage{Name: filepath.Base(words[0]), Retries: f.retries}
	patterns := make([]*regexp.Regexp, len(dirs))
	for i, d := range dirs {
		abs, err := absDir(d)
		if err != nil {
			return pmjqUsageError(stderr, prog, "%s: %v", d, err)
		}
		st.In = append(st.In, abs)
		patterns[i] = re
	}
	st.Key = jobs.PatternKey(patterns, "$1")
	if f.output != "" {
		out, err := absDir(f.output)
		if err != nil {
			return pmjqUsageError(stderr, prog, "--output: %v", err)
		}
		st.Out = [][]string{{out}}
	}
	st.Run = stages.Argv(words, syncio.NewLockedWriter(stdout), f.cfg)
	return f.run(ctx, []jobs.Stage{st}, nil, stderr)
}
