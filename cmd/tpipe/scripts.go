package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tpipe/tpipe/front/scripts"
	"github.com/tpipe/tpipe/internal/visible"
)

const scriptsUsage = `usage: tpipe scripts [-o OUTDIR] DIR 'PIPELINE'

Writes pmjq's setup.sh, launch.sh and cleanup.sh into OUTDIR (default:
the current folder) for a linear PIPELINE (a | b | c) laid out in DIR:
one place per edge (in, 1_a, 2_b, out), one worker per stage, each stage
its own user and group with the paper's permission model. Read them, then
run them as root.
`

// scriptsCommand is `tpipe scripts`.
func scriptsCommand(args []string, stdout, stderr io.Writer) int {
	const prog = "tpipe scripts"
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", ".", "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, scriptsUsage)
			return 0
		}
		return pmjqUsageError(stderr, prog, "%v", err)
	}
	if fs.NArg() != 2 {
		return pmjqUsageError(stderr, prog, "want a folder and a pipeline")
	}
	p, err := scripts.Plan(fs.Arg(0), fs.Arg(1))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 2
	}
	for _, name := range []string{"setup.sh", "launch.sh", "cleanup.sh"} {
		path := filepath.Join(*out, name)
		if err := writeFileAtomic(path, []byte(p.Files()[name]), 0o755); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
			return 1
		}
		fmt.Fprintln(stdout, visible.Controls(path))
	}
	return 0
}

// writeFileAtomic writes path under a temporary name and renames it.
func writeFileAtomic(path string, b []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
