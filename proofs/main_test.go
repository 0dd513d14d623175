package proofs_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var long = flag.Bool("long", false, "check chains of up to 5 tasks (the default is 4) and run more random schedules")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// maxTasks is the longest chain most checks try: 5 with -long, 4 by
// default, 3 under -short or the race detector. The race detector slows
// the checker (plain single-threaded code, nothing for it to find) about
// 18 times.
func maxTasks() int {
	switch {
	case *long:
		return 5
	case testing.Short() || raceEnabled:
		return 3
	}
	return 4
}

// span is one part of the sweep: chains of n tasks, capacities 1 to maxCap.
type span struct{ n, maxCap int }

// sweepPlan is what the sweep covers. Under the race detector it keeps
// chains of 4 tasks, with capacities up to 2.
func sweepPlan() []span {
	plan := []span{{2, 3}, {3, 3}}
	switch {
	case *long:
		plan = append(plan, span{4, 3}, span{5, 3})
	case testing.Short():
	case raceEnabled:
		plan = append(plan, span{4, 2})
	default:
		plan = append(plan, span{4, 3})
	}
	return plan
}
