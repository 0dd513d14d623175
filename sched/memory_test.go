package sched_test

import (
	"errors"
	"testing"

	"github.com/tpipe/tpipe/internal/sysmem"
	"github.com/tpipe/tpipe/sched"
)

// A plan whose B x S the machine cannot hold is refused with the numbers a
// caller needs to word its advice; one that fits, or a machine that says
// nothing, plans as before.
func TestMakePlanRefusesWhatMemoryCannotHold(t *testing.T) {
	var out [][]byte
	g := dsChain(1, 3, &out)
	for _, tc := range []struct {
		name     string
		buffers  int
		size     int
		limit    uint64
		ok       bool
		refusing bool
	}{
		{"fits", 4, 1 << 10, 1 << 20, true, false},
		{"exactly", 4, 1 << 10, 4 << 10, true, false},
		{"one byte over", 4, 1 << 10, 4<<10 - 1, true, true},
		{"huge B", 2_000_000_000, 256 << 10, 24 << 30, true, true},
		{"unknown machine", 2_000_000_000, 256 << 10, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer sched.SetAvailableMemory(sysmem.Limit{Bytes: tc.limit, From: "test"}, tc.ok)()
			pl, err := sched.MakePlan(g, sched.Options{Policy: sched.Concurrent, Buffers: tc.buffers, RecordSize: tc.size})
			var me *sched.MemoryError
			if tc.refusing {
				if !errors.As(err, &me) || me.Buffers != tc.buffers || me.RecordSize != tc.size || me.Available != tc.limit || me.From != "test" {
					t.Fatalf("MakePlan = %v, %v; want a MemoryError with the plan's numbers", pl, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMemoryErrorText(t *testing.T) {
	e := &sched.MemoryError{Buffers: 100000, RecordSize: 1 << 30, Available: 23 << 30, From: "MemAvailable in /proc/meminfo"}
	want := "100000 buffers of 1 GiB are 97.7 TiB of record memory, more than the 23 GiB this machine can hold (MemAvailable in /proc/meminfo)"
	if e.Error() != want {
		t.Fatalf("got  %q\nwant %q", e.Error(), want)
	}
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 256 << 10: "256 KiB", 1 << 62: "4 EiB"} {
		if got := sched.ApproxBytes(n); got != want {
			t.Errorf("approxBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
