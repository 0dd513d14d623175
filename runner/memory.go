package runner

import (
	"fmt"

	"github.com/tpipe/tpipe/internal/sysmem"
	"github.com/tpipe/tpipe/record"
)

// TaskMemoryError is a job whose memory as a whole is more than the
// machine can hold: its record memory B x S (which sched.MakePlan has
// found within the machine on its own; the buffers tasks keep, such as
// stabilize's lookahead, are among the B) and the budget of each task
// that spills (Job.Spilling: sort, join, tail, at Config.SortMemory
// each). A run that reached all of it could end in the runtime's
// out-of-memory crash, so it is refused before it starts.
type TaskMemoryError struct {
	Record   int64 // B x S
	Spilling int   // tasks that spill
	Budget   int64 // what each keeps before it spills
	// Available is what the machine can hold, and From says who said so.
	Available uint64
	From      string
}

func (e *TaskMemoryError) Error() string {
	total := e.Record + int64(e.Spilling)*e.Budget
	what := fmt.Sprintf("%s of record memory", human(e.Record))
	switch {
	case e.Spilling == 1:
		what += fmt.Sprintf(", a task that spills keeping %s", human(e.Budget))
	case e.Spilling > 1:
		what += fmt.Sprintf(", %d tasks that spill keeping %s each", e.Spilling, human(e.Budget))
	}
	return fmt.Sprintf("%s: %s in all, more than the %s this machine can hold (%s)",
		what, human(total), human(int64(e.Available)), e.From)
}

// availableMemory is sysmem.Available; tests may replace it.
var availableMemory = sysmem.Available

// checkTaskMemory refuses a job whose memory as a whole the machine cannot
// hold (see TaskMemoryError). The budgets of the tasks that spill count
// when they were set by hand (set is --sort-memory's value, 0 for auto):
// an automatic budget is tpipe's own share of the machine, an eighth of
// it for the job (each task at least builtin.MinAutoSortMemory), and a
// pipeline of many sorts must not be refused for it.
func checkTaskMemory(j *Job, set int) error {
	l, ok := availableMemory()
	if !ok {
		return nil
	}
	e := &TaskMemoryError{Record: j.Plan.Memory(), Available: l.Bytes, From: l.From}
	if set > 0 {
		e.Spilling, e.Budget = len(j.Spilling), j.TaskMemory
	}
	if total := e.Record + int64(e.Spilling)*e.Budget; total < 0 || uint64(total) > l.Bytes {
		return e
	}
	return nil
}

// budgetAdvice proposes a --sort-memory, a power of two of at least 64
// KiB, that brings the job within half of what the machine can hold; ""
// when none would do (the spilling tasks are not what is too large).
func budgetAdvice(e *TaskMemoryError) string {
	if e.Spilling == 0 {
		return ""
	}
	room := int64(e.Available/2) - e.Record
	b := int64(1) << 30
	for b >= 64<<10 && b*int64(e.Spilling) > room {
		b >>= 1
	}
	if b < 64<<10 || b >= e.Budget {
		return ""
	}
	return record.FormatSize(b)
}
