package sched

import (
	"fmt"

	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/task"
)

// spoolStderrMax is the most bytes of a task's stderr the spool keeps: a
// chatty program must not fill the spool, and a message meant for a
// person is far shorter.
const spoolStderrMax = 1 << 20

// keepsStderr reports whether stage s keeps what its tasks write to
// stderr with its outputs: a whole-stream stage, with outputs named by
// causal hash, whose tasks have a graph.Task.Stderr. A map stage writes
// none (a stateless per-record form has no stderr; what goes wrong ends
// the run with an error), and a stage without causal hashes runs every
// time.
func (s *spoolStage) keepsStderr() bool {
	return !s.isMap && !s.content && len(s.outs) > 0 && len(s.taps) > 0
}

// replayStderr writes e, the stderr a task of stage s wrote on the run that
// made its cached outputs, to the task's stderr again, and says how much
// was not kept.
func (r *spoolRun) replayStderr(s *spoolStage, tap *task.Stderr, e spool.Stderr) {
	tap.Replay(e.Bytes) // as the first run, which went on when stderr failed
	if e.Lost > 0 {
		nl := ""
		if len(e.Bytes) > 0 && e.Bytes[len(e.Bytes)-1] != '\n' {
			nl = "\n"
		}
		name := r.g.Tasks[s.tasks[0]].Name
		for _, i := range s.tasks {
			if r.g.Tasks[i].Stderr == tap {
				name = r.g.Tasks[i].Name
				break
			}
		}
		tap.Replay(fmt.Appendf(nil, "%stpipe: %s: ... %d bytes of stderr not kept (the spool keeps the first %d of a stage's)\n", nl, name, e.Lost, spoolStderrMax))
	}
}
