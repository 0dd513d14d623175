// Package side holds what the benchmarks that run tpipe as a command
// beside other tools (bench/video, bench/jobs) share: building the tpipe
// under test and writing the report.
package side

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
