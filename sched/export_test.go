package sched

import "github.com/tpipe/tpipe/internal/sysmem"

// SetAvailableMemory makes MakePlan see a machine that can hold l (ok
// false: one where nothing can be read) until the returned func is called.
func SetAvailableMemory(l sysmem.Limit, ok bool) (restore func()) {
	old := availableMemory
	availableMemory = func() (sysmem.Limit, bool) { return l, ok }
	return func() { availableMemory = old }
}

var ApproxBytes = approxBytes
