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
// Check src first (CheckScript): a script that does not compile fails
// every job.
func Script(src string, cfg runner.Config) Func {
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
	}
}

// CheckScript compiles src as Script will, and reports a syntax error, a
// broken edge rule or a bad option on stderr as tpipe does, with the
// status it means; 0 when src is fine.
func CheckScript(src string, cfg runner.Config, stderr io.Writer) int {
	cfg.Stderr = stderr
	r := runner.New(cfg)
	defer r.Close()
	if _, _, err := r.Commands(src); err != nil {
		return r.Report(src, err)
	}
	return 0
}
