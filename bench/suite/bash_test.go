package suite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BenchmarkVsBash runs the same pipelines with tpipe and with bash + GNU
// coreutils (LC_ALL=C, pipefail but for yes | head) on one generated file
// of short log lines, interleaved in one run. ns/op is the wall time of one whole pipeline;
// peak-RSS-MiB is the sum of the peak resident sets (VmHWM) of the
// processes of the pipeline: tpipe alone, or bash and its children, sampled
// every 20 ms (more often, the sampler itself competes for the 2 cores).
// (getrusage's maxrss is no use here: Linux carries a forked child's high
// water mark across exec, so every child seems as big as the test binary.)
//
// Sizes: 10 MB and 100 MB by default; TPIPE_BENCH_SIZES=10M,100M,1G to
// choose (the file is generated once into $TMPDIR and reused).
func BenchmarkVsBash(b *testing.B) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip("bash not installed")
	}
	bin := buildTpipe(b)
	sizes := []string{"10M", "100M"}
	if s := os.Getenv("TPIPE_BENCH_SIZES"); s != "" {
		sizes = splitComma(s)
	}
	// pipefail, except where a stage is meant to die of SIGPIPE: under it,
	// bash's yes | head -1 exits 141.
	pipelines := []struct {
		name, line string
		pipefail   bool
	}{
		{"grep-v-wc", "cat %s | grep -v zzz | wc -l", true},
		{"grep-cut-sort-uniq", "cat %s | grep ERROR | cut -d' ' -f4 | sort | uniq -c", true},
		{"yes-head", "yes | head -1", false},
	}
	for _, size := range sizes {
		file := logFile(b, size)
		for _, p := range pipelines {
			line := p.line
			if p.name != "yes-head" {
				line = fmt.Sprintf(p.line, file)
			}
			for _, tool := range []string{"tpipe", "bash"} {
				b.Run(fmt.Sprintf("%s/size=%s/%s", p.name, size, tool), func(b *testing.B) {
					var cmd func() *exec.Cmd
					if tool == "tpipe" {
						cmd = func() *exec.Cmd { return exec.Command(bin, line) }
					} else {
						script := line
						if p.pipefail {
							script = "set -o pipefail; " + line
						}
						cmd = func() *exec.Cmd { return exec.Command("bash", "-c", script) }
					}
					runPeak(b, cmd)
				})
			}
		}
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildTpipe builds cmd/tpipe once per test binary.
func buildTpipe(b *testing.B) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tpipe-bench-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "tpipe")
		out, err := exec.Command("go", "build", "-o", builtBin, "../../cmd/tpipe").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return builtBin
}

// logFile returns a file of about size bytes of log lines (see
// genLogFile), generated once and kept in the temp directory.
func logFile(b *testing.B, size string) string {
	n, err := parseBytes(size)
	if err != nil {
		b.Fatal(err)
	}
	name, err := genLogFile(os.TempDir(), "tpipe-bench-"+size+".log", n)
	if err != nil {
		b.Fatal(err)
	}
	return name
}
