// Package side holds what the benchmarks that run tpipe as a command
// beside other tools (bench/video, bench/jobs, bench/corpus, the spool
// benchmark of bench/suite) share: building the tpipe under test, running
// the cells in rounds of random order, and writing the report.
package side

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Tpipe returns the tpipe to run and how the report names it: bin when
// given, else cmd/tpipe of the module in the current directory built into
// dir (progress says so).
func Tpipe(ctx context.Context, bin, dir string, progress io.Writer) (path, which string, err error) {
	if bin != "" {
		return bin, "tpipe at " + bin, nil
	}
	fmt.Fprintln(progress, "building tpipe")
	path = filepath.Join(dir, "tpipe")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/tpipe/tpipe/cmd/tpipe").CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("go build of cmd/tpipe (run from a checkout, or give -tpipe PATH): %v\n%s", err, out)
	}
	return path, "tpipe built from this checkout", nil
}

// WriteReport writes the report into dir/name and prints it on stdout,
// then the file's path.
func WriteReport(dir, name string, report []byte, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, report, 0o666); err != nil {
		return err
	}
	if _, err := stdout.Write(report); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, path)
	return err
}

// LoadAvg returns the first n of the load averages in /proc/loadavg (1, 5
// and 15 minutes), space-separated, for a report's header; "?" where the
// file cannot be read.
func LoadAvg(n int) string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < n {
		return "?"
	}
	return strings.Join(f[:n], " ")
}

// Rounds calls run once for each of n cells, runs times over: every round
// a fresh random order, so that a machine's drift (other work starting,
// caches warming, the CPU's clock) spreads over every cell instead of
// favouring the ones that run first. It says on progress (if not nil)
// which round it is in and how long the rounds have taken so far. It
// stops at the first error run returns, or when ctx is done; a cell that
// may fail without ending the benchmark handles its error itself and
// returns nil.
func Rounds(ctx context.Context, runs, n int, progress io.Writer, run func(cell int) error) error {
	start := time.Now()
	for round := range runs {
		if progress != nil {
			fmt.Fprintf(progress, "round %d/%d: %d cells (%s)\n", round+1, runs, n, time.Since(start).Round(time.Second))
		}
		for _, i := range rand.Perm(n) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := run(i); err != nil {
				return err
			}
		}
	}
	return nil
}
