package stages

import (
	"context"
	"io"

	"github.com/tpipe/tpipe/spool/jobs"

	"github.com/tpipe/tpipe/runner"
)

// Script returns the jobs.Func that runs src, a tpipe script, on each job as
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
func Script(src string, cfg runner.Config) (jobs.Func, error) {
	p, err := runner.Prepare(src, cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, j *jobs.Job) (int, error) {
		var out io.Writer = io.Discard
		if len(j.Out) > 0 {
			out = j.Out[0]
		}
		return p.RunFile(ctx, j.In[0], out, j.Stderr)
	}, nil
}
