package merge

import (
	"regexp"
	"sort"
	"strings"
)

// Input is one input place of a transition and how its file names give
// keys.
type Input struct {
	// Dir is the input folder, a place.
	Dir string
	// Pattern selects the files of Dir that are inputs (unanchored, as
	// regexp.MatchString: anchor it with ^ and $ for a whole name).
	Pattern *regexp.Regexp
	// Key gives the key of a name that Pattern matched, from the indexes
	// of its match (Pattern.FindStringSubmatchIndex). Files of different
	// inputs go together when their keys are equal.
	Key func(name string, match []int) string
}

// GroupKey is the key of tpipe's --inputs form: the first group of the
// pattern (the whole match if it has none).
func GroupKey(name string, match []int) string {
	if len(match) >= 4 && match[2] >= 0 {
		return name[match[2]:match[3]]
	}
	return name[match[0]:match[1]]
}

// ExpandKey returns the key of pmjq 1.0's --invariant: the regexp
// template tmpl ($0, $1, $name, ${name}) expanded with the match.
func ExpandKey(re *regexp.Regexp, tmpl string) func(string, []int) string {
	return func(name string, match []int) string {
		return string(re.ExpandString(nil, tmpl, name, match))
	}
}

// KeyOf returns the key of name in in, and whether Pattern matched it.
func (in *Input) KeyOf(name string) (string, bool) {
	m := in.Pattern.FindStringSubmatchIndex(name)
	if m == nil {
		return "", false
	}
	return in.Key(name, m), true
}

// Set is a complete set: one file name per input, all with the same key.
type Set struct {
	Key   string
	Names []string // Names[i] is in Inputs[i].Dir
}

// ID identifies the set among those of one transition.
func (s Set) ID() string { return s.Key + "\x00" + strings.Join(s.Names, "\x00") }

// Index files names of each input by key. The zero Index is not usable:
// make one with NewIndex.
type Index struct {
	n     int
	byKey map[string][][]string
}

// NewIndex returns an empty index for n inputs.
func NewIndex(n int) *Index {
	return &Index{n: n, byKey: map[string][][]string{}}
}

// Add files name of input i under key.
func (x *Index) Add(i int, name, key string) {
	lists := x.byKey[key]
	if lists == nil {
		lists = make([][]string, x.n)
		x.byKey[key] = lists
	}
	lists[i] = append(lists[i], name)
}

// Sets returns the complete sets, in order of key, and for each key the
// i-th name of every input (names sorted) in the i-th set. A name is in
// at most one set; the names left over have no partner.
func (x *Index) Sets() []Set {
	keys := make([]string, 0, len(x.byKey))
	for k, lists := range x.byKey {
		complete := true
		for _, l := range lists {
			if len(l) == 0 {
				complete = false
				break
			}
		}
		if complete {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var sets []Set
	for _, k := range keys {
		lists := x.byKey[k]
		n := len(lists[0])
		for _, l := range lists {
			sort.Strings(l)
			n = min(n, len(l))
		}
		for j := 0; j < n; j++ {
			s := Set{Key: k, Names: make([]string, x.n)}
			for i, l := range lists {
				s.Names[i] = l[j]
			}
			sets = append(sets, s)
		}
	}
	return sets
}

// Match returns the complete sets that the listings make: names[i] lists
// the files of inputs[i]. Names that the pattern does not match are
// skipped (and never touched).
func Match(inputs []Input, names [][]string) []Set {
	x := NewIndex(len(inputs))
	for i := range inputs {
		for _, name := range names[i] {
			if k, ok := inputs[i].KeyOf(name); ok {
				x.Add(i, name, k)
			}
		}
	}
	return x.Sets()
}
