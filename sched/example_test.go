package sched_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

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

// A chain whose every task has no loop of its own: a source that makes its
// next record when asked, a filter, and a sink that takes records as they
// come. Under ros the scheduler calls each of them as a function, with no
// coroutine switch, on Theorem 4.1's one buffer; under any other policy
// each runs as its loop, with the same output.
func Example_ends() {
	n := 0
	src := &task.Source{Next: func() ([]byte, error) {
		if n == 20 {
			return nil, io.EOF
		}
		n++
		return strconv.AppendInt(nil, int64(n), 10), nil
	}}
	sum := 0
	sink := &task.Sink{
		Each: func(rec []byte) error { v, err := strconv.Atoi(string(rec)); sum += v; return err },
		End:  func() error { fmt.Println("sum", sum); return nil },
	}
	g := graph.Chain(1,
		&graph.Task{Name: "numbers", Out: 1, Source: src},
		&graph.Task{Name: "sevens", In: 1, Out: 1, Rec: ptr(task.Filter(func(r []byte) bool { return bytes.ContainsRune(r, '7') }))},
		&graph.Task{Name: "sum", In: 1, Sink: sink},
	)
	st, err := sched.Run(context.Background(), g, sched.Options{Policy: sched.ROS, RecordSize: 64})
	fmt.Println(st.Buffers, err)
	// Output:
	// sum 24
	// 1 <nil>
}

func ptr[T any](v T) *T { return &v }
