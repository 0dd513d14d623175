package ext_test

import (
	"context"
	"fmt"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// An external `tr a-z A-Z` between two in-process tasks: the command is two
// tasks of the graph, one feeding its stdin and one reading its stdout.
func ExampleCmd() {
	path, err := ext.LookPath("tr")
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := ext.New(ext.Options{Args: []string{"tr", "a-z", "A-Z"}, Path: path})

	var out [][]byte
	g := &graph.Graph{}
	src := g.Add("src", 0, 1, task.Records([]byte("hello\n"), []byte("world\n")))
	in := g.Add("tr <", 1, 0, tr.Input())
	res := g.Add("tr >", 0, 1, tr.Output())
	sink := g.Add("sink", 1, 0, task.Collect(&out))
	g.Connect(src, 0, in, 0, 0)
	g.Connect(res, 0, sink, 0, 0)

	if _, err := sched.Run(context.Background(), g, sched.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	for _, rec := range out {
		fmt.Printf("%q\n", rec)
	}
	// Output:
	// "HELLO\n"
	// "WORLD\n"
}
