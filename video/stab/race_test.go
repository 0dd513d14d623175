//go:build race

package stab_test

// raceEnabled is set when the race detector is on, which makes the
// stabilizer some ten times slower: tests then skip their comparisons.
const raceEnabled = true
