package builtin_test

import (
	"slices"
	"strings"
	"testing"
)

// for (k in a) as gawk walks it where gawk's order is not its hash's:
// arrays of integer keys ascending (split's, a[NR], holes and all), a
// snapshot taken when the loop starts (a key deleted meanwhile still
// comes), integer keys compared as numbers, loops nested and recursive.
func TestAwkForInLikeGawk(t *testing.T) {
	in := "x y z\n10 9 8\nw\n"
	for _, prog := range []string{
		`{ n = split($0, f); for (i in f) printf "%s:%s ", i, f[i]; print "" }`,
		`{ a[NR] = $1 } END { for (k in a) print k, a[k] }`,
		`BEGIN { for (i = 30; i > 0; i -= 7) a[i]; for (k in a) printf "%s ", k; print "" }`,
		`BEGIN { a[1]; a[2]; a[3]; for (k in a) { delete a[3]; printf "%s ", k }; print "" }`,
		`BEGIN { a[10]; for (k in a) print (k < 9), k + 1 }`,
		`BEGIN { split("a b c", x); split("p q", y); for (i in x) for (j in y) printf "%s%s ", x[i], y[j]; print "" }`,
		`function f(n, a,  k) { if (n == 0) return; a[n]; for (k in a) { printf "%d:%s ", n, k; f(n-1, a) } } BEGIN { f(3, x); print "" }`,
		`BEGIN { for (k in none) print "never"; print "done" }`,
		`BEGIN { a[""] = 1; for (k in a) print "[" k "]", a[k] }`,
		`{ c[NR % 2]++ } END { for (k in c) print k, c[k] }`,
		`BEGIN { a[1]; a[2]; for (k in a) { if (k == 2) break; print k } }`,
		`BEGIN { a[1]; a[2]; a[3]; for (k in a) { if (k == 2) continue; print k } }`,
	} {
		want := runGNU(t, "", []string{"gawk", prog}, in)
		got := runBuiltin(t, "", []string{"awk", prog}, in)
		if got.out != want.out || got.code != want.code {
			t.Errorf("awk %q:\n tpipe: %d %q %q\n  gawk: %d %q", prog, got.code, got.out, got.err, want.code, want.out)
		}
	}
}

// String keys come in byte order, the same on every run (GoAWK's own
// order is Go's map's, which changes from run to run); integer keys come
// first.
func TestAwkForInStable(t *testing.T) {
	words := strings.Fields("pear fig apple kiwi lime date plum 7 yuzu 12 cherry 01 mango -4 grape")
	prog := `{ for (i = 1; i <= NF; i++) c[$i]++ } END { for (k in c) print k }`
	want := "-4\n7\n12\n01\napple\ncherry\ndate\nfig\ngrape\nkiwi\nlime\nmango\npear\nplum\nyuzu\n"
	for range 10 {
		got := runBuiltin(t, "", []string{"awk", prog}, strings.Join(words, " ")+"\n")
		if got.out != want {
			t.Fatalf("awk %q: %q, want %q", prog, got.out, want)
		}
	}
	// gawk prints the same keys.
	g := runGNU(t, "", []string{"gawk", prog}, strings.Join(words, " ")+"\n")
	gl, wl := strings.Split(g.out, "\n"), strings.Split(want, "\n")
	slices.Sort(gl)
	slices.Sort(wl)
	if !slices.Equal(gl, wl) {
		t.Errorf("gawk's keys %q, want %q", g.out, want)
	}
}
