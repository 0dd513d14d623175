package main

import (
	"context"
	"fmt"
	"io"
)

// pmjqJobs is tpipe pmjq's own form, INDIR 'FILTER' OUTDIR, with its
// workers, leases, retries and failed place: issue 15 part A (branch
// wt-jobs). MERGE: part A's command takes this function's place; until
// then the form says where it is.
func pmjqJobs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "tpipe pmjq: the form INDIR 'FILTER' OUTDIR is not in this build (issue 15 part A); use --inputs PATTERN DIR... --cmd CMD, or pmjq 1.0's --input=DIR/REGEX (see tpipe pmjq --help)")
	return 2
}
