package suite

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGrepVsGNU times tpipe's grep and GNU grep (LC_ALL=C) on the
// same file of log lines, each pattern run by one then the other, output
// read from a pipe and dropped: literals (plain, -i, -w, -x, several, an
// alternation, a hundred from a file), anchored and chained patterns, a
// class, a count, -v, and a back-reference. ns/op is the wall time of one
// whole command, process start included (GNU grep is run directly, not
// through bash).
//
// Size: 100 MB by default; TPIPE_BENCH_GREP_SIZE=1G to choose.
// TPIPE_BENCH_GREP_BASE=PATH adds a third tool, "base": an older tpipe
// binary run right after the others on each pattern, for a before and
// after measured under the same load.
func BenchmarkGrepVsGNU(b *testing.B) {
	gnu, err := exec.LookPath("grep")
	if err != nil {
		b.Skip("grep not installed")
	}
	tools := map[string]string{"tpipe": buildTpipe(b), "gnu": gnu}
	order := []string{"tpipe", "gnu"}
	if base := os.Getenv("TPIPE_BENCH_GREP_BASE"); base != "" {
		tools["base"] = base
		order = append(order, "base")
	}
	size := "100M"
	if s := os.Getenv("TPIPE_BENCH_GREP_SIZE"); s != "" {
		size = s
	}
	file := logFile(b, size)
	patterns := grepPatternFile(b)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"literal", []string{"ERROR"}},
		{"literal-rare", []string{"user13 ERROR request 1234"}},
		{"ignore-case", []string{"-i", "error"}},
		{"word", []string{"-w", "ERROR"}},
		{"line", []string{"-x", "nothing"}},
		{"several", []string{"-e", "ERROR", "-e", "WARN"}},
		{"alternation", []string{"-E", "ERROR|WARN"}},
		{"file-100", []string{"-F", "-f", patterns}},
		{"anchored", []string{"^2026-11-21 12:0"}},
		{"chain", []string{"ERROR.*took 1"}},
		{"class", []string{"took [0-9]ms"}},
		{"count", []string{"-c", "INFO"}},
		{"invert", []string{"-v", "zzz"}},
		{"backref-none", []string{`\(host[0-9]\) user\1`}},
		{"backref", []string{`took [0-9]*\([0-9]\)\1ms`}},
	} {
		args := append(c.args[:len(c.args):len(c.args)], file)
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		for _, tool := range order {
			b.Run(c.name+"/"+tool, func(b *testing.B) {
				b.SetBytes(fileSize(b, file))
				for b.Loop() {
					cmd := exec.Command(tools[tool], "grep "+strings.Join(quoted, " "))
					if tool == "gnu" {
						cmd = exec.Command(gnu, args...)
					}
					cmd.Env = append(os.Environ(), "LC_ALL=C")
					// A pipe, not /dev/null: GNU grep stops at the
					// first match when its output is /dev/null.
					cmd.Stdout = io.Discard
					if err := cmd.Run(); err != nil {
						if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
							b.Fatalf("%s %q: %v", tool, args, err)
						}
					}
				}
			})
		}
	}
}

// grepPatternFile returns a file of a hundred fixed strings, request
// numbers of the log (genLogFile) of which some occur, for grep -F -f.
func grepPatternFile(b *testing.B) string {
	name := filepath.Join(os.TempDir(), "tpipe-bench-grep-patterns")
	var text strings.Builder
	for i := range 100 {
		fmt.Fprintf(&text, "request %d took\n", i*7919%1000003)
	}
	if err := os.WriteFile(name, []byte(text.String()), 0o666); err != nil {
		b.Fatal(err)
	}
	return name
}

func fileSize(b *testing.B, name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}
