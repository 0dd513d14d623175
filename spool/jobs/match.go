package jobs

import (
	"cmp"
	"regexp"
	"slices"
)

// A set is a job ready to be taken: one token name per input place, all
// with one key.
type set struct {
	key   string
	names []string
}

// match finds the complete sets among lists, the ready tokens of each
// input place in sorted order. Every name is keyed once and filed under
// its key; a key that every place has tokens of gives as many sets as its
// scarcest place has tokens, the i-th token of each place going to the
// i-th set. A token is in at most one set; one whose key is not ok is in
// none. Sets come in the order of their keys, and of their tokens within
// a key. The cost is one pass over each list, whatever the number of
// places: no cartesian product is built (pmjq 1.0 built it, and ran out of
// memory on 10,000 files in each of two folders).
func match(lists [][]string, key func(in int, name string) (string, bool)) []set {
	if len(lists) == 0 {
		return nil
	}
	if len(lists) == 1 {
		// One place: every token is a set of its own.
		sets := make([]set, 0, len(lists[0]))
		for _, n := range lists[0] {
			if k, ok := key(0, n); ok {
				sets = append(sets, set{key: k, names: []string{n}})
			}
		}
		byKey := func(a, b set) int { return cmp.Compare(a.key, b.key) }
		if !slices.IsSortedFunc(sets, byKey) {
			slices.SortStableFunc(sets, byKey)
		}
		return sets
	}
	// byKey[k][i] lists the tokens of place i with key k, in order.
	byKey := map[string][][]string{}
	for i, list := range lists {
		for _, n := range list {
			k, ok := key(i, n)
			if !ok {
				continue
			}
			per := byKey[k]
			if per == nil {
				if i > 0 {
					continue // the first place has none: never complete
				}
				per = make([][]string, len(lists))
				byKey[k] = per
			}
			per[i] = append(per[i], n)
		}
	}
	var keys []string
	for k, per := range byKey {
		if !slices.ContainsFunc(per, func(l []string) bool { return len(l) == 0 }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var sets []set
	for _, k := range keys {
		per := byKey[k]
		n := len(per[0])
		for _, l := range per {
			n = min(n, len(l))
		}
		for j := range n {
			s := set{key: k, names: make([]string, len(per))}
			for i, l := range per {
				s.names[i] = l[j]
			}
			sets = append(sets, s)
		}
	}
	return sets
}

// PatternKey returns a Stage.Key for input places whose tokens are the
// names patterns[in] matches (unanchored, as regexp.MatchString: anchor
// with ^ and $ for a whole name), keyed by template expanded with the
// match as regexp.Expand does ($1, $name, ${name}; $0 the whole match).
// tpipe's --inputs form keys by "$1", pmjq 1.0 by its --invariant.
func PatternKey(patterns []*regexp.Regexp, template string) func(in int, name string) (string, bool) {
	return func(in int, name string) (string, bool) {
		re := patterns[in]
		m := re.FindStringSubmatchIndex(name)
		if m == nil {
			return "", false
		}
		return string(re.ExpandString(nil, template, name, m)), true
	}
}
