package suite

import (
	"os/exec"
	"testing"
)

// BenchmarkJoin3M is the hash join of issue 30: 3M keys arriving on two
// edges in opposite orders, so that every line of @a waits for its
// partner until the sort has read all of @b. It runs at the default sort
// memory and with --sort-memory 64M, where the join spills to partition
// files; with TPIPE_BENCH_BASE set, the older binary runs beside.
//
//	go test ./bench/suite -run '^$' -bench Join3M -benchtime 5x
func BenchmarkJoin3M(b *testing.B) {
	const line = `seq 1 3000000 | tee @a @b > /dev/null; sort -rn @b > @c; join -E "^(.*)$" @a @c | wc -l`
	for _, tool := range benchTools(b) {
		b.Run(tool.name, func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tool.path, line) })
		})
		b.Run(tool.name+"-spill", func(b *testing.B) {
			runPeak(b, func() *exec.Cmd { return exec.Command(tool.path, "--sort-memory", "64M", line) })
		})
	}
}
