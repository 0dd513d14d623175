package sched

import (
	"errors"
	"testing"

	"github.com/tpipe/tpipe/task"
)

func TestPipefail(t *testing.T) {
	hard1, hard2 := errors.New("hard 1"), errors.New("hard 2")
	st := func(i int) error { return &TaskError{Task: "t", Index: i, Err: task.Exit(1)} }
	s1, s2, s3 := st(1), st(2), st(3)
	type call struct {
		at  int   // for an exit
		err error // hard if at < 0
	}
	for _, tc := range []struct {
		name  string
		calls []call
		want  error
	}{
		{"none", nil, nil},
		{"one status", []call{{1, s1}}, s1},
		{"rightmost status", []call{{1, s1}, {3, s3}, {2, s2}}, s3},
		{"rightmost status, in order", []call{{1, s1}, {2, s2}}, s2},
		{"hard over status", []call{{3, s3}, {-1, hard1}}, hard1},
		{"first hard", []call{{-1, hard1}, {-1, hard2}, {2, s2}}, hard1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pipefail
			firsts := 0
			for _, c := range tc.calls {
				if c.at < 0 {
					if p.fail(c.err) {
						firsts++
					}
					continue
				}
				p.exit(c.at, c.err)
			}
			if got := p.err(); got != tc.want {
				t.Errorf("err() = %v, want %v", got, tc.want)
			}
			if p.first != nil && firsts != 1 {
				t.Errorf("fail reported %d firsts, want 1", firsts)
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	te := &TaskError{Task: "t", Index: 2, Err: task.Exit(3)}
	if got, code, ok := exitStatus(te); !ok || code != 3 || got != te {
		t.Errorf("exitStatus(status) = %v, %d, %v", got, code, ok)
	}
	for _, err := range []error{nil, errors.New("x"), &TaskError{Task: "t", Err: errors.New("x")}, task.Exit(1)} {
		if _, _, ok := exitStatus(err); ok {
			t.Errorf("exitStatus(%v) is a status", err)
		}
	}
}
