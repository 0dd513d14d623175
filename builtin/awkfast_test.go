package builtin_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"pgregory.net/rapid"
)

// awkNumbers are fields as gawk reads them: digits, signs, decimals,
// exponents whole and cut, white space, hex, inf and nan spelled alone
// and not, prefixes, overflow, long digit strings.
var awkNumbers = []string{
	"1", "0", "42", "007", "4712294", "123456789012345", "1234567890123456", "9007199254740993",
	"123456789012345678901234567890", "-0", "+5", "-3", "1.5", "0.1", ".5", "5.", "-.5e1", "1e3",
	"1E3x", "1e", "1e+", "1e-400", "1e400", "-1e400", "+inf", "-inf", "+nan", "-nan", "inf", "nan",
	"+INF", "-Nan", "+inf5", "+in", "0x1A", "-0x10", "0X5", " 12 ", "\t7", "12abc", "abc", "+", "-",
	".", "", "- 5", "1,5", "3\r", "0.000001", "1234567.5", "2.5e-7", "99999.99999",
}

// The fast forms (awkfast.go) against gawk: sums of every kind of field,
// fields printed with every separator, lines without fields, a last line
// without its newline, no input at all.
func TestAwkFastSameAsGawk(t *testing.T) {
	var nums strings.Builder
	for _, n := range awkNumbers {
		fmt.Fprintf(&nums, "x|%s|y\n", n)
	}
	text := "  lead  trail  \na\tb  c\n\n \t \nx.y|z[w]\r\n1,2,,4\n;;\nlast no newline"
	for _, tc := range []struct {
		stdin string
		argv  []string
	}{
		{nums.String(), []string{"-F|", "{s += $2} END {print s}"}},
		{nums.String(), []string{"-F", "|", "{ total+=$(2) }; END { print total }"}},
		{nums.String(), []string{"-F|", "{print $2}"}},
		{"", []string{"{s += $1} END {print s}"}},
		{"\n", []string{"{s += $1} END {print s}"}},
		{"0.1\n0.2\n", []string{"{s += $1} END {print s}"}},
		{"1e308\n1e308\n", []string{"{s += $1} END {print s}"}},
		{"1e308\n-1e308\n", []string{"{s += $1} END {print s}"}},
		{"+inf\n-inf\n", []string{"-F|", "{s += $1} END {print s}"}},
		{"1 2 3\n4 5\n6\n", []string{"{s += $3} END {print s}"}},
		{"1 2 3\n4 5\n6\n", []string{"{s += $9} END {print s}"}},
		{text, []string{"{print $1}"}},
		{text, []string{"{print $2, $1}"}},
		{text, []string{"{print $0}"}},
		{text, []string{"{print}"}},
		{text, []string{"{print $3}"}},
		{text, []string{"-F,", "{print $2, $4}"}},
		{text, []string{"-F.", "{print $1}"}},
		{text, []string{"-F[", "{print $2}"}},
		{text, []string{"-F|", "{print $2}"}},
		{text, []string{"-F", `\t`, "{print $2}"}},
		{text, []string{"-F\t", "{print $2}"}},
		{text, []string{"-Ft", "{print $2}"}},
		{text, []string{"-F;", "{print $1, $2, $3}"}},
		{text, []string{"-F", " ", "{print $2}"}},
		{text, []string{"-Fa", "{print $1}"}},
		{text, []string{"{print $NF}"}},
		{text, []string{"{print $(NF), $1}"}},
		{text, []string{"-F,", "{print $NF}"}},
		{text, []string{"-F;", "{print $1, $NF}"}},
		{text, []string{"BEGIN {FS=\",\"} {print $2, $4}"}},
		{text, []string{"BEGIN {FS=\"\\t\"} {print $2}"}},
		{text, []string{"BEGIN {FS=\" \"} {print $2}"}},
		{"a\"b\"c\n", []string{"BEGIN {FS=\"\\\"\"} {print $2}"}},
		{text, []string{"-F,", "BEGIN {FS=\";\"} {print $2}"}},
		{text, []string{"NF"}},
		{text, []string{"-F,", "NF {print $1}"}},
		{text, []string{"END {print NR}"}},
		{text, []string{"{print NR \": \" $0}"}},
		{text, []string{"{print NR, NF, $1 \"|\" $2 \"\\t\\\"\\\\/\"}"}},
		{text, []string{"-F,", "{print NF \":\" $NF}"}},
		{text, []string{"NF {print NR, $1 $2}"}},
		{text, []string{"/a/ {print \"found\", NR}"}},
		{text, []string{"{print \"\"}"}},
		{"", []string{"END {print NR}"}},
		{"1 2 3\n4 5\n6\n \n", []string{"{s += $NF} END {print s}"}},
		{nums.String(), []string{"-F|", "{s += $NF} END {print s}"}},
	} {
		argv := append([]string{"awk"}, tc.argv...)
		if c, err := builtin.New(&builtin.Env{}, argv); err != nil || c.Rec == nil {
			t.Errorf("awk %q: not run in the fast form (%v)", tc.argv, err)
		}
		want := runGNU(t, "", append([]string{"gawk"}, tc.argv...), tc.stdin)
		got := runBuiltin(t, "", argv, tc.stdin)
		if got.out != want.out || got.code != want.code {
			t.Errorf("awk %q on %q:\n tpipe: status %d, %q %q\n  gawk: status %d, %q %q", tc.argv, tc.stdin, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// Programs near the fast shapes that are not of them run on GoAWK.
func TestAwkFastShapes(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		fast bool
	}{
		{[]string{"{s += $10} END {print s}"}, true},
		{[]string{"{s+=$10}END{print s;}"}, true},
		{[]string{"{ print $1, $3 }"}, true},
		{[]string{"{print}"}, true},
		{[]string{"-F,", "{print $2}"}, true},
		{[]string{"{s += $1} END {print t}"}, false},
		{[]string{"{NR += $1} END {print NR}"}, false},
		{[]string{"{s += $1} END {print s + 0}"}, false},
		{[]string{"{s += $NF} END {print s}"}, true},
		{[]string{"{s += $(NF-1)} END {print s}"}, false},
		{[]string{"$9 == 404 {n++} END {print n}"}, true},
		{[]string{"$NF != \"x\" {n += 1} END {print n}"}, true},
		{[]string{"$9 == 404 {n++} END {print m}"}, false},
		{[]string{"$9 == 404 {NR++} END {print NR}"}, false},
		{[]string{"$9 ~ 404 {n++} END {print n}"}, false},
		{[]string{"$9 == 404 {n += 2} END {print n}"}, false},
		{[]string{"$9 == -1 {n++} END {print n}"}, false},
		{[]string{"{c[$1]++} END {for (k in c) print k, c[k]}"}, true},
		{[]string{"{c[$NF] += 1} END {for (k in c) print c[k], k}"}, true},
		{[]string{"{c[$1]++} END {for (k in c) print k, c[j]}"}, false},
		{[]string{"{c[$1]++} END {for (k in d) print k, c[k]}"}, false},
		{[]string{"{c[$1]++} END {for (k in c) print k \" \" c[k]}"}, false},
		{[]string{"{c[$1]++} END {for (NR in c) print NR, c[NR]}"}, false},
		{[]string{"{s += $1.5} END {print s}"}, false},
		{[]string{"NR > 1 {print $2}"}, true},
		{[]string{"NR % 2 == 0"}, true},
		{[]string{"NR % 3"}, true},
		{[]string{"NR % 0"}, false},
		{[]string{"NR % 2 + 1"}, false},
		{[]string{"$9 != 200 {print $7}"}, true},
		{[]string{"$9 == 404"}, true},
		{[]string{"/GET/ {print $7}"}, true},
		{[]string{"!/GET/"}, true},
		{[]string{"$7 ~ /\\.ico$/ {n++} END {print n}"}, true},
		{[]string{"$1 !~ /^1[0-9]\\./ {s += $10} END {print s}"}, true},
		{[]string{"/\\/api\\// {c[$1]++} END {for (k in c) print k, c[k]}"}, true},
		{[]string{"/[\\]]/"}, false},
		{[]string{"/\\t/"}, false},
		{[]string{"$7 ~ \"x\""}, false},
		{[]string{"/a/ && /b/"}, false},
		{[]string{"/a/ {print $1; n++}"}, false},
		{[]string{"{n++} END {print n}"}, true},
		{[]string{"END {print NR}"}, true},
		{[]string{"END {print NR, NF}"}, false},
		{[]string{"NF"}, true},
		{[]string{"NF {print $1}"}, true},
		{[]string{"NF > 2"}, false},
		{[]string{"BEGIN {FS = \",\"} {print $2}"}, true},
		{[]string{"BEGIN {FS = \"\\t\"} NR > 1"}, true},
		{[]string{"BEGIN {FS = \",\"; OFS = \"-\"} {print $2}"}, false},
		{[]string{"BEGIN {FS = \"[,;]\"} {print $2}"}, false},
		{[]string{"{s[$1] += $10} END {for (k in s) print k, s[k]}"}, true},
		{[]string{"{s[$1] += $10 * 2} END {for (k in s) print k, s[k]}"}, false},
		{[]string{"{print $1 $2}"}, true},
		{[]string{"{print NR \": \" $0}"}, true},
		{[]string{"{print $1 \"\\t\" NF, \"x\"}"}, true},
		{[]string{"{print $1 > \"out\"}"}, false},
		{[]string{"{print $1 \"\\x41\"}"}, true}, // GoAWK reads the escape
		{[]string{"{print $1 + 1}"}, false},
		{[]string{"{print NR % 2}"}, false},
		{[]string{"{print $1, $2 > \"/dev/stderr\"}"}, false},
		{[]string{"{print ($1)}"}, false},
		{[]string{"-v", "OFS=,", "{print $1, $2}"}, false},
		{[]string{"-v", "x=1", "{print $1}"}, false},
		{[]string{"-F", "[,;]", "{print $1}"}, false},
		{[]string{"-F", `\`, "{print $1}"}, false},
		{[]string{"{print $1}", "file"}, false}, // fast, on its files (TestAwkFastFiles)
		{[]string{"{print $1}", "x=1", "file"}, false},
	} {
		c, err := builtin.New(&builtin.Env{Environ: []string{"LC_ALL=C"}}, append([]string{"awk"}, tc.argv...))
		if err != nil {
			t.Errorf("awk %q: %v", tc.argv, err)
			continue
		}
		if fast := c.Rec != nil; fast != tc.fast {
			t.Errorf("awk %q: fast form %v, want %v", tc.argv, fast, tc.fast)
		}
	}
}

// The fast forms on FILE operands, against gawk: files in turn, - for
// the input, a directory skipped with a warning, a file that cannot be
// opened ending the run with status 2 and no END.
func TestAwkFastFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"f1": "1 2 3\na b\n", "f2": "4 5\n\n6\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"{print $NF}", "f1", "f2"},
		{"{print $2, $1}", "f2", "-", "f1"},
		{"{s += $2} END {print s}", "f1", "d", "f2"},
		{"{s += $NF} END {print s}", "f1", "nosuch", "f2"},
		{"{print $1}", "f1", "nosuch", "f2"},
		{"-F", " ", "{print $1}", "f2", "f2"},
	} {
		c, err := builtin.New(&builtin.Env{}, append([]string{"awk"}, argv...))
		if err != nil || c.Fn == nil || c.Rec != nil {
			t.Errorf("awk %q: %v", argv, err)
		}
		want := runGNU(t, dir, append([]string{"gawk"}, argv...), "stdin 1\n")
		got := runBuiltin(t, dir, append([]string{"awk"}, argv...), "stdin 1\n")
		if got.out != want.out || got.code != want.code || (got.err == "") != (want.err == "") {
			t.Errorf("awk %q:\n tpipe: status %d, %q %q\n  gawk: status %d, %q %q", argv, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// The property: on random lines of numbers, words and separators, the
// fast sums and prints give gawk's output.
func TestAwkFastRapidAgainstGawk(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		r := rand.New(rand.NewPCG(seed, 1))
		sep := rapid.SampledFrom([]string{"", ",", ":", "|", "."}).Draw(rt, "sep")
		var in strings.Builder
		for range rapid.IntRange(0, 30).Draw(rt, "lines") {
			for f := range r.IntN(5) {
				if f > 0 {
					if sep == "" {
						in.WriteString([]string{" ", "  ", "\t", " \t "}[r.IntN(4)])
					} else {
						in.WriteString(sep)
					}
				}
				if r.IntN(3) == 0 {
					in.WriteString([]string{"a", "x1", "", " ", "-"}[r.IntN(5)])
				} else if r.IntN(2) == 0 {
					fmt.Fprintf(&in, "%d", r.IntN(1<<20)-1000)
				} else {
					fmt.Fprintf(&in, "%.*f", r.IntN(4), (r.Float64()-0.3)*float64(r.IntN(100000)))
				}
			}
			in.WriteByte('\n')
		}
		field := rapid.IntRange(0, 5).Draw(rt, "field")
		ref := fmt.Sprint(max(field, 1))
		if rapid.Bool().Draw(rt, "NF") {
			ref = "NF"
		}
		prog := fmt.Sprintf("{s += $%s} END {print s}", ref)
		if rapid.Bool().Draw(rt, "print") {
			prog = fmt.Sprintf("{print $%d, $%s}", field, ref)
		}
		argv := []string{prog}
		if sep != "" {
			argv = []string{"-F" + sep, prog}
		}
		want := runGNU(t, "", append([]string{"gawk"}, argv...), in.String())
		got := runBuiltin(t, "", append([]string{"awk"}, argv...), in.String())
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("awk %q on %q:\n tpipe: %d %q\n  gawk: %d %q", argv, in.String(), got.code, got.out, want.code, want.out)
		}
	})
}

// The counting form ($N OP CONST {n++} END {print n}) against gawk, on
// random fields that are and are not numbers (spaces around, signs,
// exponents, hex, inf and nan, empty, missing), with every operator and
// number or string constants.
func TestAwkFastCountRapidAgainstGawk(t *testing.T) {
	pool := []string{"404", "404.0", " 404", "+404", "4.04e2", "0x194", "abc", "", "inf", "+inf", "-nan", "nan", "1e",
		"-0", "0", "10", "9", "5.5", ".5", "1e400", "-1e400", "10a", "A"}
	consts := []string{"0", "1", "5.5", "10", "404", "9", `"404"`, `""`, `"abc"`, `"10"`, `"9"`, `"0"`}
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	rapid.Check(t, func(rt *rapid.T) {
		sep := rapid.SampledFrom([]string{"", ","}).Draw(rt, "sep")
		var in strings.Builder
		for range rapid.IntRange(0, 12).Draw(rt, "lines") {
			for f := range rapid.IntRange(0, 4).Draw(rt, "fields") {
				if f > 0 {
					in.WriteString(map[string]string{"": " ", ",": ","}[sep])
				}
				v := rapid.SampledFrom(pool).Draw(rt, "field")
				if sep == "" && (v == "" || strings.Contains(v, " ")) {
					v = "x"
				}
				in.WriteString(v)
			}
			in.WriteByte('\n')
		}
		ref := rapid.SampledFrom([]string{"1", "2", "3", "NF"}).Draw(rt, "ref")
		prog := fmt.Sprintf("$%s %s %s {n++} END {print n}", ref, rapid.SampledFrom(ops).Draw(rt, "op"), rapid.SampledFrom(consts).Draw(rt, "const"))
		argv := []string{prog}
		if sep != "" {
			argv = []string{"-F" + sep, prog}
		}
		got, want := fastAndGawk(t, rt, argv, in.String())
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("awk %q on %q:\n tpipe: %d %q\n  gawk: %d %q", argv, in.String(), got.code, got.out, want.code, want.out)
		}
	})
}

// The group form ({c[$N]++} END {for (k in c) print k, c[k]}, or a sum
// for the count) against gawk, on random lines: the same lines (gawk's
// order is its hash's, so lines are compared sorted), in the order for-in
// takes keys in other programs: integers ascending, then bytes.
func TestAwkFastGroupAgainstGawk(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sep := rapid.SampledFrom([]string{"", ","}).Draw(rt, "sep")
		var in strings.Builder
		var order []string
		seen := map[string]bool{}
		ref := rapid.SampledFrom([]string{"1", "2", "NF"}).Draw(rt, "ref")
		for range rapid.IntRange(0, 20).Draw(rt, "lines") {
			var fields []string
			for range rapid.IntRange(0, 3).Draw(rt, "fields") {
				fields = append(fields, rapid.SampledFrom([]string{"a", "b", "10", "010", "1e1", "x y"[:1], "é", "-3", "9", "1.5"}).Draw(rt, "field"))
			}
			d := map[string]string{"": " ", ",": ","}[sep]
			in.WriteString(strings.Join(fields, d) + "\n")
			key := ""
			switch {
			case ref == "NF" && len(fields) > 0:
				key = fields[len(fields)-1]
			case ref == "NF":
			case ref == "1" && len(fields) > 0:
				key = fields[0]
			case ref == "2" && len(fields) > 1:
				key = fields[1]
			}
			if !seen[key] {
				seen[key] = true
				order = append(order, key)
			}
		}
		prog := fmt.Sprintf("{c[$%s]++} END {for (k in c) print k, c[k]}", ref)
		countFirst := rapid.Bool().Draw(rt, "count first")
		if countFirst {
			prog = fmt.Sprintf("{n[$%s]++} END {for (v in n) print n[v], v}", ref)
		}
		if rapid.Bool().Draw(rt, "sum") {
			prog = strings.Replace(strings.Replace(prog, "c[$"+ref+"]++", "c[$"+ref+"] += $1", 1), "n[$"+ref+"]++", "n[$"+ref+"] += $1", 1)
		}
		argv := []string{prog}
		if sep != "" {
			argv = []string{"-F" + sep, prog}
		}
		got, want := fastAndGawk(t, rt, argv, in.String())
		sorted := func(s string) []string { l := strings.SplitAfter(s, "\n"); slices.Sort(l); return l }
		if !slices.Equal(sorted(got.out), sorted(want.out)) || got.code != want.code {
			rt.Fatalf("awk %q on %q:\n tpipe: %d %q\n  gawk: %d %q", argv, in.String(), got.code, got.out, want.code, want.out)
		}
		var keys []string
		for _, l := range strings.Split(strings.TrimSuffix(got.out, "\n"), "\n") {
			if got.out == "" {
				break
			}
			if countFirst {
				_, k, _ := strings.Cut(l, " ")
				keys = append(keys, k)
			} else {
				keys = append(keys, l[:strings.LastIndexByte(l, ' ')])
			}
		}
		slices.SortFunc(order, func(a, b string) int {
			ai, aErr := strconv.Atoi(a)
			bi, bErr := strconv.Atoi(b)
			aInt, bInt := aErr == nil && strconv.Itoa(ai) == a, bErr == nil && strconv.Itoa(bi) == b
			switch {
			case aInt && bInt:
				return ai - bi
			case aInt:
				return -1
			case bInt:
				return 1
			}
			return strings.Compare(a, b)
		})
		if !slices.Equal(keys, order) && !(len(keys) == 0 && len(order) == 0) {
			rt.Fatalf("awk %q: keys in the order %q, want %q", argv, keys, order)
		}
	})
}

// fastAndGawk runs awk argv on in as the builtin, which must take it in a
// fast form, and as gawk.
func fastAndGawk(t *testing.T, rt *rapid.T, argv []string, in string) (got, want result) {
	if c, err := builtin.New(&builtin.Env{Environ: []string{"LC_ALL=C"}}, append([]string{"awk"}, argv...)); err != nil || c.Rec == nil {
		rt.Fatalf("awk %q: not run in the fast form (%v)", argv, err)
	}
	return runBuiltin(t, "", append([]string{"awk"}, argv...), in), runGNU(t, "", append([]string{"gawk"}, argv...), in)
}

// In a UTF-8 locale a regular expression whose . or [^...] or class would
// take a character where the fast forms take a byte runs on GoAWK.
func TestAwkFastRegexByLocale(t *testing.T) {
	for _, tc := range []struct {
		prog       string
		utf8, cLoc bool
	}{
		{"/ab/", true, true},
		{"/a\\.b/", true, true},
		{"/[0-9]+x/", true, true},
		{"/a.b/", false, true},
		{"/[^a]/", false, true},
		{"/[[:alpha:]]/", false, true},
		{"/é/", false, true},
	} {
		for _, loc := range []struct {
			env  string
			fast bool
		}{{"LC_ALL=C.UTF-8", tc.utf8}, {"LC_ALL=C", tc.cLoc}} {
			c, err := builtin.New(&builtin.Env{Environ: []string{loc.env}}, []string{"awk", tc.prog})
			if err != nil {
				t.Fatalf("awk %q: %v", tc.prog, err)
			}
			if fast := c.Rec != nil; fast != loc.fast {
				t.Errorf("awk %q under %s: fast form %v, want %v", tc.prog, loc.env, fast, loc.fast)
			}
		}
	}
}

// The conditions of the fast forms ($N OP CONST, NR OP N, /RE/, !/RE/,
// $N ~ /RE/, $N !~ /RE/) before each action (none, print, count, sum,
// group) against gawk on random lines.
func TestAwkFastCondRapidAgainstGawk(t *testing.T) {
	words := []string{"a", "ab", "b", "aab", "x.y", "a.b", "10", "9", "404", "/p/", "1.5", "é", "]", "A", "ba"}
	regexes := []string{"a", "^a", "b$", "a|b", "[0-9]+", "x*", "^$", "", `\.`, `a\.b`, `\/p`, "[[:digit:]]", "(ab)+",
		"a{2}", "[^a]", ".", `^[0-9][0-9]\.`, "[]a]", "[a-c]$", `\$`, "B"}
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	rapid.Check(t, func(rt *rapid.T) {
		sep := rapid.SampledFrom([]string{"", ","}).Draw(rt, "sep")
		var in strings.Builder
		for range rapid.IntRange(0, 15).Draw(rt, "lines") {
			for f := range rapid.IntRange(0, 3).Draw(rt, "fields") {
				if f > 0 {
					in.WriteString(map[string]string{"": " ", ",": ","}[sep])
				}
				in.WriteString(rapid.SampledFrom(words).Draw(rt, "word"))
			}
			in.WriteByte('\n')
		}
		ref := rapid.SampledFrom([]string{"1", "2", "NF"}).Draw(rt, "ref")
		var cond string
		switch rapid.IntRange(0, 4).Draw(rt, "cond") {
		case 4:
			cond = "NF"
		case 0:
			cond = fmt.Sprintf("$%s %s %s", ref, rapid.SampledFrom(ops).Draw(rt, "op"),
				rapid.SampledFrom([]string{"9", "10", `"a"`, `"ab"`, "1.5"}).Draw(rt, "const"))
		case 1:
			cond = fmt.Sprintf("NR %s %d", rapid.SampledFrom(ops).Draw(rt, "op"), rapid.IntRange(0, 5).Draw(rt, "nr"))
			if rapid.Bool().Draw(rt, "modulo") {
				cond = fmt.Sprintf("NR %% %d", rapid.IntRange(1, 4).Draw(rt, "mod"))
				if rapid.Bool().Draw(rt, "compared") {
					cond += fmt.Sprintf(" %s %d", rapid.SampledFrom(ops).Draw(rt, "op"), rapid.IntRange(0, 3).Draw(rt, "rem"))
				}
			}
		case 2:
			cond = rapid.SampledFrom([]string{"", "!"}).Draw(rt, "not") + "/" + rapid.SampledFrom(regexes).Draw(rt, "re") + "/"
		default:
			cond = fmt.Sprintf("$%s %s /%s/", ref, rapid.SampledFrom([]string{"~", "!~"}).Draw(rt, "match"), rapid.SampledFrom(regexes).Draw(rt, "re"))
		}
		action := rapid.SampledFrom([]string{"", " {print}", " {print $0}", " {print $2, $1}", " {n++} END {print n}",
			" {print NR \": \" $1, NF}", " {print $NF \"-\" $1}",
			" {s += $1} END {print s}", " {c[$1]++} END {for (k in c) print k, c[k]}"}).Draw(rt, "action")
		argv := []string{cond + action}
		if sep != "" {
			argv = []string{"-F" + sep, cond + action}
		}
		got, want := fastAndGawk(t, rt, argv, in.String())
		if strings.Contains(action, "for (k in c)") {
			// gawk's order is its hash's: compare the lines sorted.
			sorted := func(s string) string { l := strings.SplitAfter(s, "\n"); slices.Sort(l); return strings.Join(l, "") }
			got.out, want.out = sorted(got.out), sorted(want.out)
		}
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("awk %q on %q:\n tpipe: %d %q\n  gawk: %d %q", argv, in.String(), got.code, got.out, want.code, want.out)
		}
	})
}
