package sched_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// A bounded three-stage pipeline: its record memory is B x S, fixed before
// the run starts, whatever the input size.
func Example() {
	var got [][]byte
	g := graph.Chain(2,
		&graph.Task{Name: "src", Out: 1, Fn: task.Records([]byte("a\n"), []byte("bb\n"), []byte("c\n"))},
		&graph.Task{Name: "upper", In: 1, Out: 1, Rec: ptr(task.Map(func(r, s []byte) []byte { return bytes.ToUpper(append(s, r...)) }))},
		&graph.Task{Name: "sink", In: 1, Fn: task.Collect(&got)},
	)
	st, err := sched.Run(context.Background(), g, sched.Options{RecordSize: 64})
	fmt.Printf("%q %v\n", got, err)
	fmt.Printf("B=%d S=%d memory=%d bytes\n", st.Buffers, st.RecordSize, st.Buffers*st.RecordSize)
	// Output:
	// ["A\n" "BB\n" "C\n"] <nil>
	// B=4 S=64 memory=256 bytes
}

func ptr[T any](v T) *T { return &v }
