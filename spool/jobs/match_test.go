package jobs

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// matchModel is match the obvious way: for each key of the first place,
// in order, try every combination of tokens (the cartesian product) and
// keep the first whose keys all agree, taking the first of each place.
func matchModel(lists [][]string, key func(int, string) (string, bool)) []set {
	var sets []set
	seen := map[string]bool{}
	for _, n := range lists[0] {
		k, ok := key(0, n)
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		names := []string{n}
		for i := 1; i < len(lists); i++ {
			found := ""
			for _, m := range lists[i] {
				if mk, ok := key(i, m); ok && mk == k {
					found = m
					break
				}
			}
			if found == "" {
				names = nil
				break
			}
			names = append(names, found)
		}
		if names != nil {
			sets = append(sets, set{key: k, names: names})
		}
	}
	return sets
}

// TestMatchModel: match finds what the model finds, for any listings.
func TestMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		places := rapid.IntRange(1, 4).Draw(t, "places")
		lists := make([][]string, places)
		for i := range lists {
			ns := rapid.SliceOfDistinct(rapid.StringMatching(`[a-d][0-3]?(\.x)?`), rapid.ID).Draw(t, fmt.Sprintf("list%d", i))
			slices.Sort(ns)
			lists[i] = ns
		}
		// The key is the first letter; a name with ".x" is no input.
		re := regexp.MustCompile(`^([a-d])[0-3]?$`)
		key := func(_ int, n string) (string, bool) {
			m := re.FindStringSubmatch(n)
			if m == nil {
				return "", false
			}
			return m[1], true
		}
		got, want := match(lists, key), matchModel(lists, key)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("match %v\nmodel %v", got, want)
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
