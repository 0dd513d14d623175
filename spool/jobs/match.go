package jobs

// A set is a job ready to be claimed: one token name per input place, all
// with one key.
type set struct {
	key   string
	names []string
}

// match finds the complete sets among lists, the ready tokens of each
// input place in sorted order: for each key that every place has a token
// of, one set made of the first such token of each place. Tokens whose key
// is not ok belong to no set. Sets come in the order of their tokens in
// the first place. The cost is one pass over each list, whatever the
// number of places (no cartesian product is built).
func match(lists [][]string, key func(in int, name string) (string, bool)) []set {
	if len(lists) == 0 {
		return nil
	}
	var sets []set
	if len(lists) == 1 {
		seen := map[string]bool{}
		for _, n := range lists[0] {
			if k, ok := key(0, n); ok && !seen[k] {
				seen[k] = true
				sets = append(sets, set{key: k, names: []string{n}})
			}
		}
		return sets
	}
	// first[i][k] is the first token of place i with key k.
	first := make([]map[string]string, len(lists))
	for i := 1; i < len(lists); i++ {
		first[i] = map[string]string{}
		for _, n := range lists[i] {
			if k, ok := key(i, n); ok {
				if _, dup := first[i][k]; !dup {
					first[i][k] = n
				}
			}
		}
	}
	seen := map[string]bool{}
next:
	for _, n := range lists[0] {
		k, ok := key(0, n)
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		names := []string{n}
		for i := 1; i < len(lists); i++ {
			m, ok := first[i][k]
			if !ok {
				continue next
			}
			names = append(names, m)
		}
		sets = append(sets, set{key: k, names: names})
	}
	return sets
}
