package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
)

const gcUsage = `usage: tpipe gc [--intermediate | --all] DIR

Cleans the spool DIR of a --spool run. A spool keeps what its runs wrote
until it is cleaned: the records of every place, so that a rerun resumes
or finds stages cached. gc drops the places the graph in DIR/graph no
longer has, the tokens its last complete run did not use, and what killed
runs left behind.

  --intermediate  also empty the places between stages, keeping those the
                  outputs read: a rerun of the same pipeline still only
                  reads its last place; a changed one runs again what it
                  needs. Refused until a run of the graph has finished.
  --all           empty DIR.

A directory that is not a spool is refused, and so is one a run is using.
`

// gcCommand is `tpipe gc [--intermediate | --all] DIR`.
func gcCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpipe gc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	all := fs.Bool("all", false, "empty the spool")
	inter := fs.Bool("intermediate", false, "empty the places between stages")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, gcUsage)
			return 0
		}
		fmt.Fprintf(stderr, "tpipe gc: %s (see tpipe gc --help)\n", visible.Controls(err.Error()))
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "tpipe gc: give one spool directory, as in tpipe gc DIR\n")
		return 2
	}
	if *all && *inter {
		fmt.Fprintf(stderr, "tpipe gc: give --all or --intermediate, not both (--all empties the spool)\n")
		return 2
	}
	dir := fs.Arg(0)
	// A spool that is not there is a typo, not an empty spool (opening
	// one would make it).
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = &os.PathError{Path: dir, Err: errors.New("not a directory")}
		}
		fmt.Fprintf(stderr, "tpipe gc: %s; give the DIR of a --spool run\n", fileError(err))
		return 1
	}
	gc := func(dir string, o place.Options) (spool.GCStats, error) { return spool.GC(dir, *all, o) }
	if *inter {
		gc = spool.GCIntermediate
	}
	st, err := gc(dir, place.Options{})
	var ns *spool.NotSpoolError
	switch {
	case errors.As(err, &ns):
		fmt.Fprintf(stderr, "tpipe gc: %s holds files and no graph: it is not the spool of a --spool run; nothing removed\n", visible.Controls(ns.Dir))
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "tpipe gc: %s\n", fileError(err))
		return 1
	}
	fmt.Fprintf(stdout, "removed %d tokens and %d places, %d bytes\n", st.Tokens, st.Places, st.Bytes)
	return 0
}
