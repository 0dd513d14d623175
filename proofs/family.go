package proofs

// Chains returns the kind sequences of every chain of n tasks drawn from
// kinds. With lastCopy the last task is always COPY: it writes only OUT,
// which never blocks, so its kind cannot change whether or where a chain
// deadlocks (and what it writes is a function of what it reads).
func Chains(n int, kinds []Kind, lastCopy bool) [][]Kind {
	free := n
	if lastCopy {
		free--
	}
	var out [][]Kind
	seq := make([]Kind, 0, n)
	var rec func()
	rec = func() {
		if len(seq) == free {
			c := append([]Kind(nil), seq...)
			if lastCopy {
				c = append(c, Copy)
			}
			out = append(out, c)
			return
		}
		for _, k := range kinds {
			seq = append(seq, k)
			rec()
			seq = seq[:len(seq)-1]
		}
	}
	rec()
	return out
}

// CapVectors returns every vector of k capacities from 1 to most.
func CapVectors(k, most int) [][]int {
	var out [][]int
	v := make([]int, k)
	var rec func(i int)
	rec = func(i int) {
		if i == k {
			out = append(out, append([]int(nil), v...))
			return
		}
		for c := 1; c <= most; c++ {
			v[i] = c
			rec(i + 1)
		}
	}
	rec(0)
	return out
}
