// Package sysmem tells how much memory this process may use: the least of
// the machine's available memory and the limit of the control group it
// runs in. tpipe compares it with a plan's B x S before the run, so a
// request the machine cannot hold is refused with a message instead of
// ending in the runtime's out-of-memory crash.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limit is how much memory a process may use, and what said so.
type Limit struct {
	Bytes uint64
	// From names the source: "MemAvailable" (/proc/meminfo), or the
	// cgroup file whose limit is lower.
	From string
}

// Files read by Available; tests point them elsewhere.
var (
	meminfo  = "/proc/meminfo"
	cgroupV2 = "/sys/fs/cgroup/memory.max"
	cgroupV1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// MaxAge is how long Available keeps using a reading. A plan's check and
// the sort budget read it once per pipeline; tpipe pmjq runs a pipeline
// per job, hundreds a second, and the memory a machine can give does not
// change in a quarter of a second by enough to matter to either.
const MaxAge = 250 * time.Millisecond

// last is Available's latest reading, and the files it read.
var last struct {
	sync.Mutex
	at    time.Time
	files [3]string
	l     Limit
	ok    bool
}

// Available returns the memory this process may use: the machine's
// MemAvailable, lowered to the cgroup's limit when there is a lower one.
// The cgroup's usage is not subtracted: it counts page cache the kernel
// would reclaim, and MemAvailable already allows for what is in use. ok is
// false where neither can be read (not Linux, or /proc not mounted);
// callers then do without a check. A reading less than MaxAge old is
// given again without reading the files. It is safe for concurrent use.
func Available() (l Limit, ok bool) {
	files := [3]string{meminfo, cgroupV2, cgroupV1}
	now := time.Now()
	last.Lock()
	defer last.Unlock()
	if last.files == files && !last.at.IsZero() && now.Sub(last.at) < MaxAge {
		return last.l, last.ok
	}
	l, ok = read()
	last.at, last.files, last.l, last.ok = now, files, l, ok
	return l, ok
}

// read reads what Available returns.
func read() (l Limit, ok bool) {
	if n, found := meminfoField("MemAvailable"); found {
		l, ok = Limit{Bytes: n, From: "MemAvailable in /proc/meminfo"}, true
	}
	for _, path := range []string{cgroupV2, cgroupV1} {
		max, found := readUint(path)
		if !found {
			continue
		}
		if !ok || max < l.Bytes {
			l, ok = Limit{Bytes: max, From: "the cgroup limit in " + path}, true
		}
		break
	}
	return l, ok
}

// Total returns the machine's memory (MemTotal in /proc/meminfo); ok is
// false where it cannot be read.
func Total() (n uint64, ok bool) { return meminfoField("MemTotal") }

// meminfoField reads one "Name:   123 kB" line of /proc/meminfo, in bytes.
func meminfoField(name string) (uint64, bool) {
	data, err := os.ReadFile(meminfo)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || k != name {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}

// readUint reads a file holding one number; "max" (no limit), a missing
// file or a limit so large it means none all count as not found.
func readUint(path string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n >= 1<<62 { // cgroup v1 says "no limit" with a huge number
		return 0, false
	}
	return n, true
}
