package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
)

const gcUsage = `usage: tpipe gc [--all] DIR

Cleans the spool DIR of a --spool run: drops the places the graph in
DIR/graph no longer has, the tokens its last complete run did not use, and
what killed runs left behind. --all empties DIR. A directory that is not a
spool is refused.
`

// gcCommand is `tpipe gc [--all] DIR`.
func gcCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpipe gc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	all := fs.Bool("all", false, "empty the spool")
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
	st, err := spool.GC(fs.Arg(0), *all, place.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "tpipe gc: %s\n", fileError(err))
		return 1
	}
	fmt.Fprintf(stdout, "removed %d tokens and %d places, %d bytes\n", st.Tokens, st.Places, st.Bytes)
	return 0
}
