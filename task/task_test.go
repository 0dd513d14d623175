package task_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

func run(t *testing.T, s int, tasks ...*graph.Task) error {
	t.Helper()
	_, err := sched.Run(context.Background(), graph.Chain(2, tasks...), sched.Options{RecordSize: s})
	return err
}

func rec(name string, r task.PerRecord) *graph.Task {
	return &graph.Task{Name: name, In: 1, Out: 1, Rec: &r}
}

// A stream goes through lines framing and back unchanged, including a last
// line without a newline and empty lines; every framing round-trips.
func TestReadFromWriteToRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		f  record.Framing
		in string
	}{
		{record.Lines, "a\n\nbb\nlast without newline"},
		{record.Lines, ""},
		{record.NUL, "x\x00y\x00"},
		{record.LengthPrefixed, "\x00\x00\x00\x02hi\x00\x00\x00\x00"},
		{record.Fixed(3), "abcdefghi"},
	} {
		var out bytes.Buffer
		err := run(t, 32,
			&graph.Task{Name: "read", Out: 1, Fn: task.ReadFrom(strings.NewReader(tc.in), tc.f)},
			rec("copy", task.Copy()),
			&graph.Task{Name: "write", In: 1, Fn: task.WriteTo(&out, tc.f)},
		)
		if err != nil {
			t.Fatalf("%s: %v", tc.f.Name(), err)
		}
		if out.String() != tc.in {
			t.Errorf("%s: got %q, want %q", tc.f.Name(), out.String(), tc.in)
		}
	}
}

// A line longer than S goes from a reader to a writer as a chain.
func TestReadFromLongLine(t *testing.T) {
	const in = "short\nthis line is longer than a buffer\nunterminated, and long too"
	var out bytes.Buffer
	err := run(t, 8,
		&graph.Task{Name: "read", Out: 1, Fn: task.ReadFrom(strings.NewReader(in), record.Lines)},
		&graph.Task{Name: "write", In: 1, Fn: task.WriteTo(&out, record.Lines)},
	)
	if err != nil || out.String() != in {
		t.Fatalf("err = %v, out %q", err, out.String())
	}
}

func TestLibraryTasks(t *testing.T) {
	var out bytes.Buffer
	err := run(t, 64,
		&graph.Task{Name: "read", Out: 1, Fn: task.ReadFrom(strings.NewReader("1\n22\n333\n4444\n"), record.Lines)},
		rec("prefix", task.Prefix([]byte("H\n"))),
		// Odd lengths (newline included) keep "22\n" and "4444\n" only.
		rec("odd", task.Filter(func(r []byte) bool { return len(r)%2 == 1 })),
		rec("dup", task.Duplicate()),
		rec("count", task.Count()),
		&graph.Task{Name: "write", In: 1, Fn: task.WriteTo(&out, record.Lines)},
	)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "4\n" {
		t.Fatalf("got %q, want 4 records (22 and 4444, duplicated)", out.String())
	}
}

func TestPerRecordNeedsOneBody(t *testing.T) {
	err := run(t, 64,
		&graph.Task{Name: "read", Out: 1, Fn: task.Records([]byte("x"))},
		rec("bad", task.PerRecord{}),
		&graph.Task{Name: "write", In: 1, Fn: task.Collect(new([][]byte))},
	)
	if !errors.Is(err, task.ErrNoBody) {
		t.Fatalf("err = %v", err)
	}
}
