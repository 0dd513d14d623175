package sched

import (
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/internal/sysmem"
)

// MemoryError is returned by MakePlan when a plan's record memory, B x S,
// is more than this machine can hold (its available memory, or its cgroup's
// limit if lower). Such a run could end in the runtime's out-of-memory
// crash, so it is refused before it starts; a caller words the advice in
// its own terms (a flag, a setting).
type MemoryError struct {
	Buffers    int
	RecordSize int
	// Available is what the machine can hold, and From says who said so.
	Available uint64
	From      string
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("%d buffers of %s are %s of record memory, more than the %s this machine can hold (%s)",
		e.Buffers, approxBytes(uint64(e.RecordSize)), approxBytes(uint64(e.Buffers)*uint64(e.RecordSize)),
		approxBytes(e.Available), e.From)
}

// availableMemory is sysmem.Available; tests replace it.
var availableMemory = sysmem.Available

// checkMemory refuses a plan whose B x S the machine cannot hold. The pool
// allocates buffers only as the run needs them, so a small run with a huge
// B would often fit; but B x S is the bound the plan promises, and a bound
// beyond the machine promises nothing.
func checkMemory(pl *Plan) error {
	l, ok := availableMemory()
	if !ok {
		return nil
	}
	if need := uint64(pl.Buffers) * uint64(pl.RecordSize); need > l.Bytes {
		return &MemoryError{Buffers: pl.Buffers, RecordSize: pl.RecordSize, Available: l.Bytes, From: l.From}
	}
	return nil
}

// approxBytes writes n in the largest binary unit it reaches, with one
// decimal where the unit does not divide it: 262144 is "256 KiB", 1.5 GiB
// is "1.5 GiB".
func approxBytes(n uint64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	u, f := -1, float64(n)
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + " " + units[u]
}
