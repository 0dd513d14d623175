package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/spool/natsq"
	"github.com/tpipe/tpipe/spool/place"
)

const putUsage = `usage: tpipe put [flags] DIR FILE...
       tpipe put [flags] DIR --name NAME < DATA
       tpipe put [flags] nats://HOST:PORT/NAME[/PLACE] FILE...

Submits jobs to a folder served by tpipe pmjq or tpipe serve, the safe
way: each FILE is copied under the folder's temporary name (DIR/.tmp),
synced, and renamed into DIR under its base name, so that no worker ever
sees part of it. DIR is pmjq's input folder, or serve's folder (its jobs
go to DIR/in). With no FILE, or FILE -, the job is stdin, named --name.
A job of a name already waiting is refused. Another program can do the
same: write elsewhere on the same file system, then mv into DIR.

On NATS, each job is published to the place in of the net NAME (the
stream NAME, made if missing), or to PLACE, and put exits 0 once the
server has stored every one. A net does not refuse a name already
waiting: both jobs run.

flags:
`

// putCommand is `tpipe put [flags] DIR [FILE...]`.
func putCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const prog = "tpipe put"
	fset := flag.NewFlagSet(prog, flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	name := fset.String("name", "", "the job's `NAME` (for stdin, or a single FILE)")
	create := fset.Bool("create", false, "make DIR if it does not exist; on NATS, send to a place no worker served yet")
	noSync := fset.Bool("no-sync", false, "do not fsync the job and the folder: faster; a power cut may lose it")
	pos, err := parseInterspersed(fset, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, putUsage)
		printFlags(stdout, fset)
		return 0
	}
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	if len(pos) == 0 {
		return pmjqUsageError(stderr, prog, "want DIR and FILE..., or DIR --name NAME < DATA")
	}
	dir, files := pos[0], pos[1:]
	if len(files) == 0 {
		files = []string{"-"}
	}
	if *name != "" && len(files) > 1 {
		return pmjqUsageError(stderr, prog, "--name names one job, and %d files are given", len(files))
	}
	for _, f := range files {
		if f == "-" && *name == "" {
			if len(pos) == 1 {
				return pmjqUsageError(stderr, prog, "no FILE, and stdin needs --name NAME")
			}
			return pmjqUsageError(stderr, prog, "- (stdin) needs --name NAME")
		}
	}
	if m := mistypedAddr(dir); m != "" {
		return pmjqUsageError(stderr, prog, "%s", m)
	}
	if natsq.IsAddr(dir) {
		return putNATS(dir, *name, *create, files, stdin, stderr)
	}
	abs, err := absDir(dir)
	if err != nil {
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	f := jobFlags{create: *create}
	if status := f.inputFolder(prog, "", dir, abs, stderr); status != 0 {
		return status
	}
	target, shown := servedIntake(abs, dir)
	w, err := place.NewWorker(place.Options{NoSync: *noSync})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer w.Close()
	p, err := w.Open(target)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
		return 1
	}
	status := 0
	for _, file := range files {
		job := *name
		if job == "" {
			job = filepath.Base(file)
		}
		if err := putOne(p, file, job, *name != "", stdin); err != nil {
			fmt.Fprintf(stderr, "%s: %s: %s\n", prog, visible.Controls(filepath.Join(shown, job)), err)
			status = 1
		}
	}
	return status
}

// putOne copies file ("-": stdin) into the place p as the job name
// (given says it is --name's).
func putOne(p *place.Place, file, name string, given bool, stdin io.Reader) error {
	fix := "; give --name"
	if given {
		fix = "; give another --name"
	}
	if err := place.ValidName(name); err != nil {
		return fmt.Errorf("%s%s", nameReason(err), fix)
	}
	if place.Partial(name) {
		return fmt.Errorf("a name for a file still being written is never a job (%s)%s", place.PartialNames(), fix)
	}
	if ok, err := p.Has(name); err != nil {
		return errors.New(fileError(err))
	} else if ok {
		return errors.New("a job of that name is waiting; give --name, or remove it")
	}
	src := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				pe.Path = file
			}
			return errors.New(fileError(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a folder; a job is a file", file)
		}
		src = f
	}
	return p.Put(name, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// nameReason is why place.ValidName refused a name, in words.
func nameReason(err error) string {
	var ne *place.NameError
	if errors.As(err, &ne) {
		return "a job's name " + ne.Reason
	}
	return err.Error()
}

// servedIntake returns where jobs for the folder abs go: abs itself (a
// pmjq input folder), or abs/in when abs is a folder served by tpipe
// serve (it holds in/, and out/ or serve's .status/). shown is the same
// for messages, from the name the user gave.
func servedIntake(abs, given string) (dir, shown string) {
	isDir := func(name string) bool {
		fi, err := os.Stat(filepath.Join(abs, name))
		return err == nil && fi.IsDir()
	}
	if isDir("in") && (isDir("out") || isDir(".status")) {
		return filepath.Join(abs, "in"), filepath.Join(given, "in")
	}
	return abs, given
}

// parseInterspersed parses args with fs, flags before, between or after
// the operands (tpipe put DIR --name N), and returns the operands. "--"
// ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
