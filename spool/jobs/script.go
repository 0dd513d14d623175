package jobs

import (
	"context"
	"io"
	"os"

	"github.com/tpipe/tpipe/runner"
)

// Script returns the Func that runs src, a tpipe script, on each job as
// pmjq runs its filter: standard input is the job's first input, standard
// output its first output, messages go to the job's Stderr, and the exit
// status is the script's (pipefail, as tpipe's). Builtins run in this
// process: a job of builtins starts no process. A program on PATH is
// started per job, with the files themselves as its stdin and stdout.
// cfg gives the runner's settings (policy, buffers, record size, ...);
// its Stdin, Stdout and Stderr are the job's.
//
// src is parsed and checked once, here (runner.Prepare); a script that
// does not compile is an error, for runner.Runner.Report.
func Script(src string, cfg runner.Config) (Func, error) {
	p, err := runner.Prepare(src, cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, j *Job) (int, error) {
		in, err := os.Open(j.In[0])
		if err != nil {
			return -1, err
		}
		defer in.Close()
		var out io.Writer = io.Discard
		if len(j.Out) > 0 {
			out = j.Out[0]
		}
		return p.Run(ctx, in, out, j.Stderr), nil
	}, nil
}
