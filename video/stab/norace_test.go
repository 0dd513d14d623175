//go:build !race

package stab_test

const raceEnabled = false
