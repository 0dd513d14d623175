package sched

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/tpipe/tpipe/spool"
)

// A disk error is worded with the spool's DIR once: package spool's
// *spool.DirError has said it already.
func TestSpoolDiskErr(t *testing.T) {
	full := &os.PathError{Op: "write", Path: "/sp/a/1", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "<nil>"},
		{full, "spool /sp: disk full (write /sp/a/1: no space left on device); free space and run again: the run resumes where it stopped"},
		{&spool.DirError{Dir: "/sp", Err: full}, "disk full (spool /sp: write /sp/a/1: no space left on device); free space and run again: the run resumes where it stopped"},
		{&spool.DirError{Dir: "/sp", Err: os.ErrPermission}, "spool /sp: permission denied; give tpipe write access to it, or another --spool directory"},
		{fmt.Errorf("other"), "other"},
	} {
		if got := fmt.Sprint(spoolDiskErr("/sp", tc.err)); got != tc.want {
			t.Errorf("spoolDiskErr(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
