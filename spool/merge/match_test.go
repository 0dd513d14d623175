package merge

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func groupInputs(pattern string, n int) []Input {
	re := regexp.MustCompile(pattern)
	ins := make([]Input, n)
	for i := range ins {
		ins[i] = Input{Dir: fmt.Sprint("d", i), Pattern: re, Key: GroupKey}
	}
	return ins
}

func showSets(sets []Set) string {
	var b []string
	for _, s := range sets {
		b = append(b, s.Key+":"+strings.Join(s.Names, ","))
	}
	return strings.Join(b, " ")
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pattern string
		names   [][]string
		want    string
	}{
		{"pairs by group", `(.*)\.og[gv]$`, [][]string{{"a.ogg", "b.ogg", "c.ogg"}, {"b.ogv", "a.ogv", "x.ogv"}}, "a:a.ogg,a.ogv b:b.ogg,b.ogv"},
		{"no partner", `(.*)\.txt`, [][]string{{"a.txt"}, {"b.txt"}}, ""},
		{"not matched is skipped", `^(\d+)$`, [][]string{{"1", "one"}, {"1", "x1y"}}, "1:1,1"},
		{"several of one key pair in order", `^(.)`, [][]string{{"a2", "a1", "a3"}, {"aY", "aX"}}, "a:a1,aX a:a2,aY"},
		{"one input", `(.*)`, [][]string{{"b", "a"}}, "a:a b:b"},
		{"three inputs", `^(\w+)\.`, [][]string{{"k.1", "j.1"}, {"k.2"}, {"k.3", "j.3"}}, "k:k.1,k.2,k.3"},
		{"no group: the whole match", `^a.`, [][]string{{"ab", "ac"}, {"ab"}}, "ab:ab,ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := showSets(Match(groupInputs(tc.pattern, len(tc.names)), tc.names))
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestExpandKey(t *testing.T) {
	re := regexp.MustCompile(`(?P<id>...)_(?P<suffix>.*)\.txt`)
	in := Input{Pattern: re, Key: ExpandKey(re, "$id")}
	if k, ok := in.KeyOf("aaa_OK.txt"); !ok || k != "aaa" {
		t.Errorf("KeyOf = %q, %v", k, ok)
	}
	if _, ok := in.KeyOf("foobar"); ok {
		t.Error("a name the pattern does not match has a key")
	}
}

// TestMatchModel checks Match against a dumb model that looks for sets
// in the cartesian product of the listings: every set Match returns is
// consistent and uses each name once, and once its sets are taken away
// the product holds no complete set any more.
func TestMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(t, "inputs")
		names := make([][]string, n)
		for i := range names {
			names[i] = rapid.SliceOfNDistinct(rapid.StringMatching(`[abc][xy]?\.[12]`), 0, 6, rapid.ID[string]).Draw(t, fmt.Sprint("names", i))
		}
		ins := groupInputs(`^([abc])x?\.`, n)
		sets := Match(ins, names)
		left := make([]map[string]bool, n)
		for i := range left {
			left[i] = map[string]bool{}
			for _, name := range names[i] {
				left[i][name] = true
			}
		}
		for _, s := range sets {
			for i, name := range s.Names {
				if !left[i][name] {
					t.Fatalf("set %v uses %s of input %d twice or from nowhere", s, name, i)
				}
				delete(left[i], name)
				if k, ok := ins[i].KeyOf(name); !ok || k != s.Key {
					t.Fatalf("set %v: %s has key %q", s, name, k)
				}
			}
		}
		// The model: the cartesian product of what is left.
		var product func(i int, key string) bool
		product = func(i int, key string) bool {
			if i == n {
				return true
			}
			for name := range left[i] {
				k, ok := ins[i].KeyOf(name)
				if ok && (i == 0 || k == key) && product(i+1, k) {
					return true
				}
			}
			return false
		}
		if product(0, "") {
			t.Fatalf("a complete set is left after %s in %v", showSets(sets), left)
		}
		if !slices.IsSortedFunc(sets, func(a, b Set) int { return strings.Compare(a.Key, b.Key) }) {
			t.Fatalf("sets not in key order: %s", showSets(sets))
		}
	})
}

func TestSubstitute(t *testing.T) {
	paths := []string{"/a/x y", "/b/$2", "c"}
	for _, tc := range []struct{ in, want string }{
		{"$1", "/a/x y"},
		{"$2", "/b/$2"}, // a path is not substituted again
		{"-i$1.ogg", "-i/a/x y.ogg"},
		{"${3}${1}", "c/a/x y"},
		{"$4", "$4"},
		{"$0", "$0"},
		{"$x $", "$x $"},
		{"${", "${"},
		{"${}", "${}"},
		{"${12", "${12"},
	} {
		if got := Substitute([]string{tc.in}, paths)[0]; got != tc.want {
			t.Errorf("Substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkMatch10k: 10,000 files in each of two inputs (pmjq's
// bug_cartesianproduct case), matched by name in one pass.
func BenchmarkMatch10k(b *testing.B) {
	names := make([][]string, 2)
	for i := range names {
		for j := range 10000 {
			names[i] = append(names[i], fmt.Sprintf("%06d", j))
		}
	}
	re := regexp.MustCompile(`.*`)
	ins := []Input{{Pattern: re, Key: ExpandKey(re, "$0")}, {Pattern: re, Key: ExpandKey(re, "$0")}}
	b.ReportAllocs()
	for b.Loop() {
		if sets := Match(ins, names); len(sets) != 10000 {
			b.Fatalf("%d sets", len(sets))
		}
	}
}
