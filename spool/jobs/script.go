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
// A script that does not compile is an error, for runner.Runner.Report.
func Script(src string, cfg runner.Config) (Func, error) {
	r := runner.New(runner.Config{Getenv: cfg.Getenv, NoFallback: cfg.NoFallback})
	_, _, err := r.Commands(src)
	r.Close()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, j *Job) (int, error) {
		in, err := os.Open(j.In[0])
		if err != nil {
			return -1, err
		}
		defer in.Close()
		c := cfg
		c.Stdin, c.Stdout, c.Stderr = in, io.Discard, j.Stderr
		if len(j.Out) > 0 {
			c.Stdout = j.Out[0]
		}
		r := runner.New(c)
		defer r.Close()
		return r.RunScript(ctx, src), nil
	}, nil
}
