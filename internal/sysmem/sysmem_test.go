package sysmem

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake points the probe at files in a temporary directory.
func fake(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	old := []string{meminfo, cgroupV2, cgroupV1}
	t.Cleanup(func() { meminfo, cgroupV2, cgroupV1 = old[0], old[1], old[2] })
	meminfo = filepath.Join(dir, "meminfo")
	cgroupV2 = filepath.Join(dir, "memory.max")
	cgroupV1 = filepath.Join(dir, "limit_in_bytes")
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const meminfoText = "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"

func TestAvailable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  uint64
		from  string
		ok    bool
	}{
		{"meminfo only", map[string]string{"meminfo": meminfoText}, 20000000 * 1024, "MemAvailable in /proc/meminfo", true},
		{"cgroup v2 without a limit", map[string]string{"meminfo": meminfoText, "memory.max": "max\n"}, 20000000 * 1024, "MemAvailable in /proc/meminfo", true},
		{"cgroup v2 lower", map[string]string{"meminfo": meminfoText, "memory.max": "2147483648\n", "memory.current": "1073741824\n"}, 2 << 30, "memory.max", true},
		{"cgroup v2 higher", map[string]string{"meminfo": meminfoText, "memory.max": "99999999999999\n"}, 20000000 * 1024, "MemAvailable in /proc/meminfo", true},
		{"cgroup v1 no limit", map[string]string{"meminfo": meminfoText, "limit_in_bytes": "9223372036854771712\n"}, 20000000 * 1024, "MemAvailable in /proc/meminfo", true},
		{"cgroup v1 lower", map[string]string{"meminfo": meminfoText, "limit_in_bytes": "1000\n"}, 1000, "limit_in_bytes", true},
		{"cgroup only", map[string]string{"memory.max": "4096\n"}, 4096, "memory.max", true},
		{"nothing readable", nil, 0, "", false},
		{"garbled meminfo", map[string]string{"meminfo": "MemAvailable: lots\n"}, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake(t, tc.files)
			l, ok := Available()
			if ok != tc.ok || l.Bytes != tc.want || (tc.from != "" && filepath.Base(l.From) != tc.from && l.From != tc.from) {
				t.Fatalf("Available() = %+v, %v; want %d from %q, %v", l, ok, tc.want, tc.from, tc.ok)
			}
		})
	}
}

// On the machine running the test, the probe finds something plausible.
func TestAvailableHere(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: not Linux")
	}
	l, ok := Available()
	if !ok || l.Bytes == 0 {
		t.Fatalf("Available() = %+v, %v on a machine with /proc/meminfo", l, ok)
	}
}

// TestAvailableKept: a reading is given again within MaxAge, without a
// look at the files; other files are read at once.
func TestAvailableKept(t *testing.T) {
	fake(t, map[string]string{"meminfo": meminfoText})
	first, ok := Available()
	if !ok {
		t.Fatal("no reading")
	}
	if err := os.WriteFile(meminfo, []byte("MemAvailable: 1 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if again, _ := Available(); again != first {
		t.Errorf("a second look within MaxAge read the file again: %+v, then %+v", first, again)
	}
	fake(t, map[string]string{"meminfo": "MemAvailable: 2 kB\n"})
	if other, _ := Available(); other.Bytes != 2048 {
		t.Errorf("other files gave %+v, want 2048 bytes", other)
	}
}
