package jobs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// groupKey keys every place's names by the first group of pattern, as
// tpipe's --inputs form does.
func groupKey(pattern string, places int) func(int, string) (string, bool) {
	re := regexp.MustCompile(pattern)
	res := make([]*regexp.Regexp, places)
	for i := range res {
		res[i] = re
	}
	return PatternKey(res, "$1")
}

func showSets(sets []set) string {
	var b []string
	for _, s := range sets {
		b = append(b, s.key+":"+strings.Join(s.names, ","))
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
		{"pairs by group", `(.*)\.og[gv]$`, [][]string{{"a.ogg", "b.ogg", "c.ogg"}, {"a.ogv", "b.ogv", "x.ogv"}}, "a:a.ogg,a.ogv b:b.ogg,b.ogv"},
		{"no partner", `(.*)\.txt`, [][]string{{"a.txt"}, {"b.txt"}}, ""},
		{"not matched is skipped", `^(\d+)$`, [][]string{{"1", "one"}, {"1", "x1y"}}, "1:1,1"},
		{"several of one key pair in order", `^(.)`, [][]string{{"a1", "a2", "a3"}, {"aX", "aY"}}, "a:a1,aX a:a2,aY"},
		{"one place", `(.*)`, [][]string{{"a", "b"}}, "a:a b:b"},
		{"one place, keys out of name order", `^.(.)`, [][]string{{"ab", "ba", "ca"}}, "a:ba a:ca b:ab"},
		{"three places", `^(\w+)\.`, [][]string{{"j.1", "k.1"}, {"k.2"}, {"j.3", "k.3"}}, "k:k.1,k.2,k.3"},
		{"no group: an empty key", `^a.`, [][]string{{"ab", "ac"}, {"ab"}}, ":ab,ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := showSets(match(tc.names, groupKey(tc.pattern, len(tc.names))))
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestPatternKey: pmjq 1.0's --invariant is a regexp template over each
// input's own pattern, named groups included.
func TestPatternKey(t *testing.T) {
	key := PatternKey([]*regexp.Regexp{
		regexp.MustCompile(`(?P<id>...)_(?P<suffix>.*)\.txt`),
		regexp.MustCompile(`(?P<prefix>.*)_(?P<id>...)\.txt`),
	}, "$id")
	for _, tc := range []struct {
		in   int
		name string
		key  string
		ok   bool
	}{
		{0, "aaa_OK.txt", "aaa", true},
		{1, "Foo_aaa.txt", "aaa", true},
		{0, "foobar", "", false},
	} {
		if k, ok := key(tc.in, tc.name); k != tc.key || ok != tc.ok {
			t.Errorf("key(%d, %q) = %q, %v; want %q, %v", tc.in, tc.name, k, ok, tc.key, tc.ok)
		}
	}
}

// TestMatchModel checks match against a dumb model that looks for sets
// in the cartesian product of the listings: every set match returns is
// consistent and uses each name once, and once its sets are taken away
// the product holds no complete set any more.
func TestMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "places")
		lists := make([][]string, n)
		for i := range lists {
			ns := rapid.SliceOfNDistinct(rapid.StringMatching(`[abc][xy]?\.[12]`), 0, 6, rapid.ID[string]).Draw(t, fmt.Sprint("list", i))
			slices.Sort(ns)
			lists[i] = ns
		}
		// The key is the letter; a name with a y is no input.
		re := regexp.MustCompile(`^([abc])x?\.`)
		key := func(_ int, name string) (string, bool) {
			m := re.FindStringSubmatch(name)
			if m == nil {
				return "", false
			}
			return m[1], true
		}
		sets := match(lists, key)
		left := make([]map[string]bool, n)
		for i := range left {
			left[i] = map[string]bool{}
			for _, name := range lists[i] {
				left[i][name] = true
			}
		}
		for _, s := range sets {
			for i, name := range s.names {
				if !left[i][name] {
					t.Fatalf("set %v uses %s of place %d twice or from nowhere", s, name, i)
				}
				delete(left[i], name)
				if k, ok := key(i, name); !ok || k != s.key {
					t.Fatalf("set %v: %s has key %q", s, name, k)
				}
			}
		}
		// The model: the cartesian product of what is left.
		var product func(i int, k string) bool
		product = func(i int, k string) bool {
			if i == n {
				return true
			}
			for name := range left[i] {
				nk, ok := key(i, name)
				if ok && (i == 0 || nk == k) && product(i+1, nk) {
					return true
				}
			}
			return false
		}
		if product(0, "") {
			t.Fatalf("a complete set is left after %s in %v", showSets(sets), left)
		}
		if !slices.IsSortedFunc(sets, func(a, b set) int { return strings.Compare(a.key, b.key) }) {
			t.Fatalf("sets not in key order: %s", showSets(sets))
		}
	})
}

// TestMatchLarge: two places of 10,000 tokens each match in one pass
// each, not 10^8 comparisons.
func TestMatchLarge(t *testing.T) {
	var a, b []string
	for i := range 10000 {
		a = append(a, fmt.Sprintf("%05d.left", i))
		if i%2 == 0 {
			b = append(b, fmt.Sprintf("%05d.right", i))
		}
	}
	key := func(_ int, n string) (string, bool) { return n[:5], true }
	sets := match([][]string{a, b}, key)
	if len(sets) != 5000 || sets[1].key != "00002" || sets[1].names[1] != "00002.right" {
		t.Fatalf("%d sets, second %v", len(sets), sets[1])
	}
}

// BenchmarkMatch10k: 10,000 files in each of two places (pmjq 1.0's
// bug_cartesianproduct case), matched by name in one pass.
func BenchmarkMatch10k(b *testing.B) {
	lists := make([][]string, 2)
	for i := range lists {
		for j := range 10000 {
			lists[i] = append(lists[i], fmt.Sprintf("%06d", j))
		}
	}
	re := regexp.MustCompile(`.*`)
	key := PatternKey([]*regexp.Regexp{re, re}, "$0")
	b.ReportAllocs()
	for b.Loop() {
		if sets := match(lists, key); len(sets) != 10000 {
			b.Fatalf("%d sets", len(sets))
		}
	}
}
