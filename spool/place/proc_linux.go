package place

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procStart returns the start time of process pid, in clock ticks since
// boot, from /proc/PID/stat; ok is false when there is no such process.
func procStart(pid int) (start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStat(b)
}

// parseStat finds field 22, starttime, in the text of /proc/PID/stat.
// Field 2 is the command in parentheses and may hold spaces and ')': the
// fields that follow start after its last ')'. A zombie (state Z or X:
// killed, not yet reaped by its parent) has start 0, which no live
// owner has: it holds nothing any more.
func parseStat(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	const starttime = 22 - 3 // fields 3.. follow the ')'
	if len(f) <= starttime {
		return 0, false
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, true
	}
	n, err := strconv.ParseUint(f[starttime], 10, 64)
	return n, err == nil
}

// bootID returns the first 8 hex digits of the kernel's boot id, or "0".
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "0"
	}
	id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if len(id) < 8 {
		return "0"
	}
	return id[:8]
}

// pidExists reports whether a process pid exists (signal 0 reaches it, or
// it is someone else's).
func pidExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
