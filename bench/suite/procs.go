package suite

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// samplePeak watches the process tree under pid every 20 ms until stop is
// closed and returns the sum, over its processes, of the largest VmHWM
// (peak resident set, reset at exec) seen for each, in bytes, and how
// many processes it saw. A process that lives less than a period may be
// missed: the sum is then a lower bound.
func samplePeak(pid int, stop <-chan struct{}) (sum int64, seen int) {
	peaks := map[int]int64{}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range processTree(pid) {
			if hwm := vmHWM(p); hwm > peaks[p] {
				peaks[p] = hwm
			}
		}
		select {
		case <-stop:
			for _, v := range peaks {
				sum += v
			}
			return sum, len(peaks)
		case <-tick.C:
		}
	}
}

// processTree returns pid and its descendants, from /proc.
func processTree(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		var state byte
		var ppid int
		fmt.Sscanf(string(b[i+1:]), " %c %d", &state, &ppid)
		parent[p] = ppid
	}
	tree := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if !slices.Contains(tree, p) && slices.Contains(tree, pp) {
				tree = append(tree, p)
				changed = true
			}
		}
	}
	return tree
}

func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	var kb int64
	fmt.Sscanf(string(b[i+len("VmHWM:"):]), "%d", &kb)
	return kb << 10
}

// genLogFile returns dir/name, a file of at least n bytes of log lines like
// "2026-11-21 12:00:07 host3 user41 ERROR request 81731 took 17ms",
// generating it unless a big enough one is already there.
func genLogFile(dir, name string, n int64) (string, error) {
	name = filepath.Join(dir, name)
	if st, err := os.Stat(name); err == nil && st.Size() >= n {
		return name, nil
	}
	f, err := os.Create(name + ".tmp")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	var written int64
	var line []byte
	for i := 0; written < n; i++ {
		line = line[:0]
		line = fmt.Appendf(line, "2026-11-21 12:%02d:%02d host%d user%d %s request %d took %dms\n",
			(i/60)%60, i%60, i%7, (i*7919)%97, levels[(i*31)%len(levels)], i, (i*13)%250)
		w.Write(line)
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return name, os.Rename(name+".tmp", name)
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
