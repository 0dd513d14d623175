package runner

import (
	"fmt"
	"testing"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
)

// advice finds the setting behind an error however it is wrapped, and
// proposes a value that would have been enough.
func TestAdviceValues(t *testing.T) {
	r := &Runner{}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&record.TooLargeError{Size: 70000, Max: 65536}, "; try --record-size 128K"},
		{&record.TooLargeError{Size: 65537, Max: 65536, AtLeast: true}, "; try --record-size 128K"},
		{&record.TooLargeError{Size: 3 << 20, Max: 1 << 20}, "; try --record-size 4M"},
		{&sched.TaskError{Task: "cat", Err: fmt.Errorf("f: %w", &record.TooLargeError{Size: 9, Max: 8})}, "; try --record-size 16"},
		// The limit on a whole record is not S: no flag raises it.
		{&record.TooLargeError{Size: 2 << 30, Max: 1 << 30, Limit: "the longest record a task holds whole"}, ""},
		{&buffer.DeadlockError{Artificial: true, Need: 9, NeedIs: "the bound"}, "; try --buffers 9"},
		{&buffer.DeadlockError{}, ""},
		{fmt.Errorf("something else"), ""},
	} {
		if got := r.advice(tc.err); got != tc.want {
			t.Errorf("advice(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	r.Advise = func(s, v string) string { return "set " + s + " " + v }
	if got := r.advice(&buffer.DeadlockError{Need: 3}); got != "; set buffers 3" {
		t.Errorf("with Advise: %q", got)
	}
}
