package suite

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tpipe/tpipe/bench/corpus"
)

// BenchmarkAwkVsGawk runs everyday awk programs on a 1M-line access log
// (bench/corpus's, about 70 MB), each a whole process reading the log by
// name, with tpipe's awk, GNU awk and mawk (where installed) side by side
// in one run. ns/op is one command's wall time; compare them per program.
//
//	go test ./bench/suite -run '^$' -bench AwkVsGawk -benchtime 5x
func BenchmarkAwkVsGawk(b *testing.B) {
	in, err := corpus.Generate(filepath.Join(os.TempDir(), "tpipe-bench-awk"), 1_000_000, 1)
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(in.Log)
	if err != nil {
		b.Fatal(err)
	}
	progs := []struct{ name, prog string }{
		{"sum-NF", `{s += $NF} END {print s}`},
		{"sum-10", `{s += $10} END {print s}`},
		{"print-1-9", `{print $1, $9}`},
		{"print-3-5", `{print $3, $5}`},
		{"count-404", `$9 == 404 {n++} END {print n}`},
		{"group-1", `{c[$1]++} END {for (k in c) print k, c[k]}`},
		{"filter-print", `$9 != 200 {print $7}`},
		{"regex-print", `/POST/ {print $7}`},
		{"field-regex", `$7 ~ /\.ico$/ {n++} END {print n}`},
		{"group-sum", `{s[$1] += $10} END {for (k in s) print k, s[k]}`},
		{"begin-fs", `BEGIN {FS = "\""} {print $2}`},
		{"nr-modulo", `NR % 2 == 0`},
		{"concat", `{print $1 " " $9}`},
		{"array-nr", `{a[NR] = $7} END {for (k in a) n++; print n}`},
		// Beyond the fast forms: the builtin's own interpreter.
		{"average", `{s += $10; n++} END {print s / n}`},
		{"printf", `{printf "%s %d\n", $1, $10}`},
		{"if-else", `{if ($9 >= 400) bad++; else ok++} END {print bad, ok}`},
		{"kib", `$9 == 200 {b += $10 / 1024} END {printf "%.1f\n", b}`},
		{"status-max", `{n[$9]++; if ($10 > max) max = $10} END {for (k in n) print k, n[k]; print max}`},
		{"substr", `{print substr($4, 2, 11), length($7)}`},
		{"uniq-ip", `!seen[$1]++ {u++} END {print u}`},
		{"sub-sum", `{sub(/GET/, "G"); s += $10} END {print s}`},
		{"gsub-count", `{n += gsub(/\//, "|")} END {print n}`},
		{"split-date", `{split($4, d, ":"); h[d[2]]++} END {for (k in h) print k, h[k]}`},
	}
	type runner struct {
		name string
		cmd  func(prog string) *exec.Cmd
	}
	var runners []runner
	for _, t := range benchTools(b) {
		runners = append(runners, runner{t.name, func(prog string) *exec.Cmd {
			return exec.Command(t.path, "awk '"+prog+"' "+in.Log)
		}})
	}
	for _, awk := range []string{"gawk", "mawk"} {
		if path, err := exec.LookPath(awk); err == nil {
			runners = append(runners, runner{awk, func(prog string) *exec.Cmd { return exec.Command(path, prog, in.Log) }})
		}
	}
	for _, p := range progs {
		for _, r := range runners {
			b.Run(p.name+"/"+r.name, func(b *testing.B) {
				b.SetBytes(fi.Size())
				runPeak(b, func() *exec.Cmd { return r.cmd(p.prog) })
			})
		}
	}
}
