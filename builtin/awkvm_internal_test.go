package builtin

import (
	"strings"
	"testing"
)

// FuzzAwkOwnRun compiles any program for the own interpreter and, where
// it compiles and has no loop (which could run for ever), runs it on a
// few lines: the only panic allowed out of a run is gawk's fatal error,
// which the task turns into a message and status 2.
func FuzzAwkOwnRun(f *testing.F) {
	for _, s := range []string{
		`{s += $10; n++} END {print s / n}`, `NR == FNR {k[$1]; next} $1 in k`, `!seen[$1]++`,
		`{printf "%-5s|%5.2f|%d|%*d\n", $1, $2, $3, 4, NR}`, `{print substr($1, 0, 2), index($0, "b"), length}`,
		`{a[NR] = $0} END {for (k in a) print k, a[k]; delete a[2]; print length(a)}`,
		`{print $(NF-1), $NF / (NR - 1), -$2 % 0, 2 ^ -1}`, `BEGIN {FS = ","; OFS = "-"} {print $1, $2; exit 3}`,
		`{x = x $1 ? "a" : "b"; print toupper(x), tolower(sprintf("%s%e", x, $2))}`,
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, utf8 bool) {
		prog := compileAwkVM(src, nil, nil, utf8)
		if prog == nil || strings.Contains(src, "while") || strings.Contains(src, "for") {
			return
		}
		m := newAwkVM(prog)
		m.emit = func([]byte) error { return nil }
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(awkFatal); !ok {
					t.Fatalf("%q: panic %v", src, r)
				}
			}
		}()
		m.execAll(prog.begin)
		for _, line := range []string{"a 1 x\n", "\n", "  10  -2.5e3 0x1A informed\n", "é\xff,b,,c\r\n"} {
			if m.record([]byte(line)) != nil {
				break
			}
		}
		m.execAll(prog.end)
		m.flush(true)
	})
}
