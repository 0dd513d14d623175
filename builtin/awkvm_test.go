package builtin_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/builtin"
)

// Programs the builtin's own interpreter takes, each against gawk byte
// for byte and status for status, on input whose fields are numbers,
// words that GoAWK would read as numbers (informed, nanny, 0x1A), and
// gawk's special spellings.
func TestAwkOwnSameAsGawk(t *testing.T) {
	words := "informed 1 x\nnanny 2.5 y\n0x1A -3 z\n+inf 1e3 w\n-nan 007 v\n\n  spaced   10   out  \n"
	for _, tc := range []struct {
		stdin string
		argv  []string
	}{
		{words, []string{"{print $1+0, $2*2, -$3, $1 == 0, ($2 > 2)}"}},
		{words, []string{"{s += $1; t += $2; n++} END {print s, t, t/n}"}},
		{words, []string{"{printf \"%d|%5.2f|%-6s|%s|%e|%g|%i\\n\", $1, $2, $3, $1 + 0, $2, $2, $1}"}},
		{words, []string{"{x = $1; y = x + 1; print x, y, (x < 1), (x \"\" < \"m\")}"}},
		{words, []string{"$2 >= 1 && $3 != \"z\" {print NR \": \" $0}"}},
		{words, []string{"{a[$3] += $2} END {for (k in a) s = s k \"=\" a[k] \";\"; print length(a), length(s)}"}},
		{words, []string{"{a[NR * 3] = $1} END {for (k in a) print k, a[k]}"}},
		{words, []string{"NF {c[NF]++} END {for (k in c) print k, c[k]}"}},
		{words, []string{"{print length($0), length, substr($1, 2), substr($1, 0, 2), substr($1, 2, 3), index($1, \"n\")}"}},
		{words, []string{"{print toupper($1) tolower(\"ABC\") int($2) int(-2.5)}"}},
		{words, []string{"{print ($2 ~ /^[0-9.]+$/) ? \"num\" : \"not\", $1 !~ /n/}"}},
		{words, []string{"NR == 2 {next} {print NR, FNR, NF, $NF, $(NF-1)}"}},
		{words, []string{"{for (i = NF; i > 0; i--) printf \"%s%s\", $i, (i > 1 ? \"-\" : \"\\n\")}"}},
		{words, []string{"{i = 0; while (i < 3) {i++; if (i == 2) continue; s = s i} } END {print s}"}},
		{words, []string{"{for (i = 1; ; i++) if (i > 4) break; print i}"}},
		{words, []string{"NR == 3 {exit} {print} END {print \"end\", NR}"}},
		{words, []string{"NR == 2 {exit 3} END {print NR}"}},
		{words, []string{"BEGIN {OFS = \"-\"; ORS = \"|\\n\"} {print $1, $2} END {print NR}"}},
		{words, []string{"BEGIN {FS = \",\"} {print $1}"}},
		{"a,b,,c\n,\n\n", []string{"-F,", "{print NF, $3; n += NF} END {print n}"}},
		{"a:b\n", []string{"-v", "x=0x10", "-v", "OFS=:", "{print x + 1, x, $1, $2}"}},
		{words, []string{"{delete a; a[1]; a[$1] = 1; if (\"x\" in a) print \"no\"; print length(a), (1 in a)} END {delete a[1]; print length(a)}"}},
		{words, []string{"{print 2^10, 2^0.5, -2^2, 2^-1, 7 % 3, -7 % 3, 1/4, 1e6, 1e16, 123456789, 0.1 + 0.2}"}},
		{words, []string{"{x += $2} x > 1 {print \"big\", x}"}},
		{words, []string{"END {print $0, NF, $1}"}},
		{words, []string{"{print $2 / ($2 - $2)}"}},
		{words, []string{"{print $2 % (NR - 1)}"}},
		{words, []string{"{printf \"%s\", $1} END {printf \"\\n\"}"}},
		{words, []string{"{print sprintf(\"%3d:%-3s|\", NR, $3)}"}},
		{words, []string{"{n = $2; n++; m = -n; print n, m, n m, n - -1}"}},
		{words, []string{"!seen[$3]++"}},
		{"10/Oct/2023:13:55 a\n  x  y \n\n1,2,,3\n", []string{"{n = split($1, d, \"/\"); m = split($0, w); k = split($0, c, \",\"); print n, d[1], d[3], m, w[m], (d[1] > 9), k, c[3] c[4]; for (i in c) printf \"%s;\", c[i]; print \"\"}"}},
		{words, []string{"{print ++i, i++, i, --j, j--}"}},
		{words, []string{"BEGIN {print \"only\"}"}},
		{words, []string{"BEGIN {x = 1; exit; print \"no\"} END {print \"end\", x}"}},
		{"3\n10\n9\n", []string{"$1 > 5"}},
		// gawk's answer for a NaN field depends on whether it was read as a
		// number before: these compare it first.
		{"+nan 9\n-nan 9\n", []string{"{print ($1>9) ($1<9) ($1==9) ($1!=9) ($1>=9) ($1<=9) (9>$1) (9<$1) (9!=$1) ($1>$2) ($2<$1)}"}},
		{"+nan 9\n-nan 9\n", []string{"{x = $1 + 0; print (x>9) (x!=9) (x==x) (9<x)}"}},
		{"a b c\n0\n 00 \n", []string{"{$1 = $1; print ($0 ? \"t\" : \"f\"), ($1 ? \"t\" : \"f\"); $5 = \"e\"; print; print NF; NF = 2; print; $2 = 7; print ($2 < 10), ($2 < \"10\"), $0; sub(/a/, \"A\", $1); print; NF--; print NF, $0; $3 = \"z\"; print; $0 = \"p q\"; print NF, $2}"}},
		{"a b c\n1 2 3\n", []string{"BEGIN {OFS = \",\"} {$1 = $1} 1"}},
		{"x\n", []string{"{$0 = \"0\" \"\"; print ($0 ? \"t\" : \"f\"); $0 = 0; print ($0 ? \"t\" : \"f\"); $0 = \"0\"; print ($0 ? \"t\" : \"f\"), ($1 ? \"t\" : \"f\")}"}},
		// from a second newcomer pass: \r \f \v in the program, sub on a field
		// past NF that does not match, capitals of inf and nan, -2^63 unsigned
		{"+inf\n-nan\na\fb c\n\n", []string{"{s = \"a\\rb c\\fd\\v\\033\"; print split(s, x), NF, length(s); n = gsub(/a/, \"A\", $2); print n, $0 \"|\", NF; printf \"%X|%E|%G|%F|%x|%o|%u\\n\", $1, $1, $1, $1, -9223372036854775808, -9223372036854775808, -9223372036854775808}"}},
		{"a b c\n1 2 3\n", []string{"{$2 = \"\"; print; $(NF + 2) = \"x\"; print NF, $0}"}},
		{"66 \xc3\xa9\n", []string{"{printf \"[%x][%X][%o][%u][%x][%u][%x][%5x][%-5x|][%05x][%.3x][%x][%c][%c][%c][%c][%5c][%c][%c][%+x][% o][%c]\\n\", 255, 255, 8, 42, -1, -1, 1e20, 10, 10, 10, 10, -3.9, 65, \"hello\", 256, \"\", \"z\", 0, $1, 255, 8, $2}"}},
		{"foo baar 12\nbaz qux\n\nno aaa 7 8\n", []string{"{n = gsub(/o/, \"0\"); x = $2; k = sub(/a+/, \"[&|\\\\&|\\\\\\\\&|\\\\q]\", x); a[NR] = $1; gsub(/[0-9]+/, \"<&>\", a[NR]); print n, k, NF, $0, x, a[NR]}"}},
		{"", []string{"BEGIN {printf \"100%|%5%|%z|%ld|%hd|%lld|%Lf|%-%|%.3q|a%5\", 42, 7, 1.5; printf \"|%\"; print \"\"}"}},
		{"1e20\n-3\n", []string{"{printf \"%.3d|%5.2i|%+25d|%-22d|%70s|\\n\", $1, $1, $1, -$1, FILENAME}"}},
		{"10 9\n9 10\nb a\n", []string{"{print ($1 < $2), ($1 \"\" < $2)}"}},
		// C's %a and %A, subnormal numbers and infinities included.
		{"42\n0.1\n1\n0\n-0\n1e300\n5e-324\n2.2250738585072014e-308\n1e-310\n-3.75\n+inf\n-nan\n", []string{"{printf \"%a|%A|%-12a|%+a|% a|%20A|\\n\", $1, $1, $1, $1, $1, $1}"}},
		// Characters, and with -b bytes in any locale.
		{"h\u00e9llo \u30b9\n\xffx\n\n", []string{"{n = split($0, a, \"\"); print n, a[2] a[3], a[n], length(a)}"}},
		{"h\u00e9llo \u30b9\n\xffx\n\n", []string{"-b", "{n = split($0, a, \"\"); print length(), substr($0, 2, 2), index($0, \"l\"), n, a[2] a[3], toupper($0)}"}},
	} {
		if !builtin.AwkOwnInterpreter(tc.argv[len(tc.argv)-1], false) && len(tc.argv) == 1 {
			t.Errorf("awk %q: not taken by the builtin's own interpreter", tc.argv)
		}
		got := runBuiltin(t, "", append([]string{"awk"}, tc.argv...), tc.stdin)
		want := runGNU(t, "", append([]string{"gawk"}, tc.argv...), tc.stdin)
		if got.out != want.out || got.code != want.code {
			t.Errorf("awk %q:\n tpipe: status %d, %q %q\n  gawk: status %d, %q %q", tc.argv, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// awkGen writes random programs in the own interpreter's subset.
type awkGen struct {
	r     *rand.Rand
	depth int
}

func (g *awkGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *awkGen) expr() string {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 3 || g.r.IntN(3) == 0 {
		return g.pick("$1", "$2", "$3", "$NF", "$0", "NR", "NF", "x", "y", "0", "1", "2.5", "-1", "10",
			`"a"`, `"10"`, `""`, `"x y"`, "a[$1]", "a[NR % 3]", "$(NR % 4)", "b[1]", "b[2]", "RSTART", "RLENGTH")
	}
	switch g.r.IntN(9) {
	case 0:
		return "(" + g.expr() + " " + g.pick("+", "-", "*", "<", "<=", "==", "!=", ">", ">=", "&&", "||") + " " + g.expr() + ")"
	case 1:
		return "(" + g.expr() + " " + g.pick("/", "%") + " " + g.pick("2", "3", "-4", "0.5") + ")"
	case 2:
		return "(" + g.expr() + " (" + g.expr() + "))"
	case 3:
		return "(" + g.pick("-", "!", "+") + "(" + g.expr() + "))"
	case 4:
		return "(" + g.expr() + " ? " + g.expr() + " : " + g.expr() + ")"
	case 5:
		return "(" + g.expr() + " " + g.pick("~", "!~") + " " + g.pick("/a/", "/^[0-9]+$/", "/x|y/", `/\./`, "/^$/") + ")"
	case 6:
		return g.pick("length(", "toupper(", "tolower(", "int(") + g.expr() + ")"
	case 7:
		if g.r.IntN(4) == 0 {
			return "match(" + g.expr() + ", " + g.pick("/a/", "/[0-9]+/", "/x|y/", "/^1/") + ")"
		}
		if g.r.IntN(3) == 0 {
			return "split(" + g.expr() + ", b" + g.pick("", `, ","`, `, " "`, `, "x"`, `, "1"`, `, ""`) + ")"
		}
		return "substr(" + g.expr() + ", " + g.expr() + g.pick("", ", "+g.expr()) + ")"
	}
	if g.r.IntN(2) == 0 {
		// index's first argument, a never-set element, becomes "" also
		// for the other side of a comparison gawk has already read (it
		// keeps the element, not its value): not generated.
		return "index((\"\" " + g.expr() + "), " + g.expr() + ")"
	}
	return "sprintf(\"%d|%s|%.2f|%5.1e|%a\", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ")"
}

func (g *awkGen) stmt() string {
	switch g.r.IntN(9) {
	case 0:
		return "print " + g.expr() + ", " + g.expr()
	case 1:
		return "printf \"%s %d %.3g %5x|%c|%o\\n\", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ", " + g.expr() + ", " + g.expr()
	case 2:
		return g.pick("x", "y") + " " + g.pick("=", "+=", "-=", "*=") + " " + g.expr()
	case 3:
		return "a[" + g.expr() + "]" + g.pick("++", " = "+g.expr(), " += 1")
	case 4:
		return "if (" + g.expr() + ") " + g.stmt() + "; else " + g.stmt()
	case 5:
		return "print " + g.expr() + " (" + g.expr() + ")"
	case 6:
		if g.r.IntN(2) == 0 {
			return g.pick("sub", "gsub") + "(" + g.pick("/a/", "/x|y/", "/[0-9]+/", `/\./`, "/^[a-z]/", "/1$/") + ", " +
				g.pick(`"&&"`, `"<\\&>"`, `"\\\\&"`, "x", "NR") + g.pick("", ", x", ", a[$1]", ", $0", ", b[1]") + ")"
		}
		return g.pick("x++", "--y", "n++")
	case 7:
		// a string: gawk 5.2.1 writes NULs for an infinity set in a field
		if g.r.IntN(4) == 0 {
			return "NF = NR % 4" // a number: gawk keeps a string set in NF as that string
		}
		return g.pick("$1", "$2", "$(NR % 4)", "$5") + " = " + g.pick("("+g.expr()+" \"\")", "$1", `"a b"`, "NR % 3")
	}
	return "print"
}

// The property: random programs of the subset on random input give
// gawk's output and status.
func TestAwkOwnRapidAgainstGawk(t *testing.T) {
	pool := []string{"1", "2", "10", "9", "0", "-3", "2.5", "1e3", "007", "abc", "x", "y", "informed", "nan", "0x1A",
		"+inf", "-inf", "a1", ".5", "1e", ""} // not +nan or -nan: gawk compares them by the way it last converted them
	rapid.Check(t, func(rt *rapid.T) {
		g := &awkGen{r: rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 2))}
		var in strings.Builder
		for range g.r.IntN(8) {
			for f := range g.r.IntN(5) {
				if f > 0 {
					in.WriteString(g.pick(" ", "\t", "  "))
				}
				in.WriteString(pool[g.r.IntN(len(pool))])
			}
			in.WriteByte('\n')
		}
		var prog strings.Builder
		for range 1 + g.r.IntN(3) {
			if g.r.IntN(2) == 0 {
				prog.WriteString(g.expr() + " ")
			}
			fmt.Fprintf(&prog, "{ %s; %s }\n", g.stmt(), g.stmt())
		}
		// for-in's order of string keys is gawk's hash's: count and sum.
		prog.WriteString("END { print x, y, n; for (k in a) { c++; s += a[k] }; print c, s, length(a) }")
		src := prog.String()
		if !builtin.AwkOwnInterpreter(src, false) {
			rt.Fatalf("not taken by the builtin's own interpreter:\n%s", src)
		}
		got := runBuiltin(t, "", []string{"awk", "--", src}, in.String())
		want := runGNU(t, "", []string{"gawk", "--", src}, in.String())
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("awk %q on %q:\n tpipe: %d %q %q\n  gawk: %d %q %q", src, in.String(), got.code, got.out, got.err, want.code, want.out, want.err)
		}
	})
}

// FILE operands on the own interpreter: FNR and FILENAME per file, the
// two-file join idiom, a missing file (status 2, no END) and a directory
// (skipped with a warning), as gawk.
func TestAwkOwnFiles(t *testing.T) {
	dir := textFiles(t, "keys", "b\nc\n", "data", "a 1\nb 2\nc 3\nd 4\n")
	t.Chdir(dir)
	for _, argv := range [][]string{
		{"NR == FNR {k[$1]; next} $1 in k", "keys", "data"},
		{"{print FILENAME, FNR, NR, $1} END {print NR}", "keys", "data"},
		{"FNR == 1 {n++} END {print n}", "keys", "-", "data"},
		{"{print} END {print \"end\"}", "keys", "missing", "data"},
		{"{n++} END {print n}", ".", "data"},
		{"END {print NR}", "keys", "missing"},
		{"{n++} END {print n}", "missing", "keys"},
	} {
		if !builtin.AwkOwnInterpreter(argv[0], false) {
			t.Errorf("awk %q: not taken by the builtin's own interpreter", argv)
		}
		got := runBuiltin(t, "", append([]string{"awk"}, argv...), "x y\n")
		want := runGNU(t, "", append([]string{"gawk"}, argv...), "x y\n")
		want.err = strings.ReplaceAll(want.err, "gawk: ", "awk: ")
		if got != want {
			t.Errorf("awk %q:\n tpipe: status %d, %q %q\n  gawk: status %d, %q %q", argv, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// Programs past the own interpreter run on GoAWK, with the fields that
// the text shows read as numbers handed to gawk's reader (awkstrnum.go):
// INFO, Nancy and 0x1A are 0 there too.
func TestAwkGoAWKFieldNumbers(t *testing.T) {
	in := "INFO,5\nNancy,3\n0x1A,2\ninformed,1\n" // an infinity prints as GoAWK prints it
	for _, argv := range [][]string{
		{"-F,", "function f() {} {f(); s += $1; t = t + -$1 * 2} END {print s, t}"},
		{"-F,", "function f() {} {f(); printf \"%d %.1f %x|%s\\n\", $1, $1, $1, $1; print int($1), $1^1, $(1) + 0}"},
		{"-F,", "function f(x) {return x} {print f($2) + $1, sprintf(\"%5.2f\", $1)}"},
	} {
		if builtin.AwkOwnInterpreter(argv[len(argv)-1], false) {
			t.Fatalf("awk %q: meant for GoAWK, taken by the own interpreter", argv)
		}
		got := runBuiltin(t, "", append([]string{"awk"}, argv...), in)
		want := runGNU(t, "", append([]string{"gawk"}, argv...), in)
		if got.out != want.out || got.code != want.code {
			t.Errorf("awk %q:\n tpipe: status %d, %q %q\n  gawk: status %d, %q %q", argv, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// In a UTF-8 locale gawk's letter classes take every letter: [[:alpha:]]
// matches é. Go's regexp (GoAWK's) takes ASCII only, so the rewrite
// writes them as Unicode classes; the same programs against gawk.
func TestAwkUnicodeClasses(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skipf("gawk not installed: %v", err)
	}
	in := "héllo\nÉTÉ wörld\nabc¿?\nx_1 ñ\n"
	for _, prog := range []string{
		"/^[[:alpha:]]+$/", "/[^[:alnum:] ]/", "!/[[:lower:]]/", "$1 ~ /^[[:upper:]]/ {print \"U\", $1}",
		"{gsub(/[[:punct:]]/, \".\"); print}", "{n = gsub(/\\w+/, \"W\"); print n, $0}", "{print match($0, /\\W/)}",
		// and %c of a number, padded by its bytes as gawk pads it
		"BEGIN {printf \"%5c|%-4c|%3c|\\n\", 233, 1000, \"\xc3\xa9\"}",
	} {
		var stdout, stderr bytes.Buffer
		c, err := builtin.New(&builtin.Env{Stderr: &stderr, Environ: []string{"LC_ALL=C.UTF-8"}}, []string{"awk", prog})
		if err != nil {
			t.Fatalf("awk %q: %v", prog, err)
		}
		got := runCmd(t, c, &stdout, &stderr, []string{"awk", prog}, strings.NewReader(in), 0)
		cmd := exec.Command(gawk, prog)
		cmd.Env = []string{"LC_ALL=C.UTF-8"}
		cmd.Stdin = strings.NewReader(in)
		want, _ := cmd.Output()
		if got.out != string(want) {
			t.Errorf("awk %q under C.UTF-8:\n tpipe: %q\n  gawk: %q", prog, got.out, want)
		}
	}
}

// match(s, /re/) sets RSTART and RLENGTH (0 and -1 with no match),
// counting characters in a UTF-8 locale; sub and gsub leave $0 a string.
func TestAwkOwnMatch(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skipf("gawk not installed: %v", err)
	}
	in := "ab 12 cd 345\n\xc3\xa9bb x\nnone\n  0\n"
	prog := `BEGIN {print RSTART, RLENGTH} {print match($0, /[0-9]+/), RSTART, RLENGTH, substr($0, RSTART, RLENGTH); if (match($2, /b+/)) print "b at", RSTART; sub(/[0-9]+/, "&&"); print ($0 ? "true" : "false")}`
	if !builtin.AwkOwnInterpreter(prog, true) {
		t.Fatalf("not taken by the own interpreter: %s", prog)
	}
	for _, loc := range []string{"C", "C.UTF-8"} {
		var stdout, stderr bytes.Buffer
		c, err := builtin.New(&builtin.Env{Stderr: &stderr, Environ: []string{"LC_ALL=" + loc}}, []string{"awk", prog})
		if err != nil {
			t.Fatal(err)
		}
		got := runCmd(t, c, &stdout, &stderr, []string{"awk", prog}, strings.NewReader(in), 0)
		cmd := exec.Command(gawk, prog)
		cmd.Env = []string{"LC_ALL=" + loc}
		cmd.Stdin = strings.NewReader(in)
		want, _ := cmd.Output()
		if got.out != string(want) {
			t.Errorf("under %s:\n tpipe: %q\n  gawk: %q", loc, got.out, want)
		}
	}
}
