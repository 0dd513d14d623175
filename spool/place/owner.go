package place

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner is who holds a claim: a process on a host. Start and Boot tell a
// process from a later one that the kernel gave the same pid.
type Owner struct {
	// Host names the machine (os.Hostname, unless Options.Host says
	// otherwise). It holds no '~' and no '/'.
	Host string
	// Boot is a short id of the host's boot (from
	// /proc/sys/kernel/random/boot_id; "0" where there is none).
	Boot string
	// PID is the process id.
	PID int
	// Start is when the process started, in clock ticks since boot
	// (field 22 of /proc/PID/stat; 0 where there is none).
	Start uint64
}

// String is the owner as it appears in names: HOST.BOOT.PID.START.
func (o Owner) String() string {
	return fmt.Sprintf("%s.%s.%d.%d", o.Host, o.Boot, o.PID, o.Start)
}

// ParseOwner parses the form String makes.
func ParseOwner(s string) (Owner, error) {
	bad := func() (Owner, error) {
		return Owner{}, fmt.Errorf("place: %q is not an owner (HOST.BOOT.PID.START)", s)
	}
	f := strings.Split(s, ".")
	if len(f) < 4 {
		return bad()
	}
	n := len(f)
	pid, err1 := strconv.Atoi(f[n-2])
	start, err2 := strconv.ParseUint(f[n-1], 10, 64)
	o := Owner{Host: strings.Join(f[:n-3], "."), Boot: f[n-3], PID: pid, Start: start}
	if err1 != nil || err2 != nil || pid <= 0 || o.Boot == "" || checkHost(o.Host) != nil {
		return bad()
	}
	return o, nil
}

// checkHost refuses a host name that cannot be part of an owner's name.
func checkHost(h string) error {
	if err := ValidName(h); err != nil {
		return err
	}
	if strings.Contains(h, "~") {
		return &NameError{Name: h, Reason: "holds '~'"}
	}
	return nil
}

// self returns this process as an Owner on host ("" means os.Hostname).
func self(host string) (Owner, error) {
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return Owner{}, fmt.Errorf("place: host name: %w", err)
		}
		host = cleanHost(h)
	}
	if err := checkHost(host); err != nil {
		return Owner{}, fmt.Errorf("place: host: %w", err)
	}
	o := Owner{Host: host, Boot: bootID(), PID: os.Getpid()}
	o.Start, _ = procStart(o.PID)
	return o, nil
}

// cleanHost makes a host name fit in an owner's name.
func cleanHost(h string) string {
	h = strings.Map(func(r rune) rune {
		if r == '/' || r == '~' || r < ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, h)
	h = strings.TrimLeft(h, ".-")
	h = strings.ReplaceAll(h, "..", "_")
	if h == "" {
		h = "localhost"
	}
	return h
}

// sameProcess reports whether o runs on this host as this boot and its
// process is still the one that took the name; known is false when the
// host cannot tell (no /proc), so that a lease must decide.
func sameProcess(o, me Owner) (alive, known bool) {
	if o.Boot != me.Boot {
		return false, true // the host has restarted since
	}
	if start, ok := procStart(o.PID); ok {
		return start == o.Start, true
	}
	if !pidExists(o.PID) {
		return false, true
	}
	return true, false // a process has the pid, and no start time tells if it is o
}
