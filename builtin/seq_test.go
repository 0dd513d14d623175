package builtin_test

import (
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

func TestSeqSameAsGNU(t *testing.T) {
	var cases []filesCase
	for _, args := range []string{
		"3", "0", "-2", "1 1", "2 4", "4 2", "1 2 8", "5 -2 0", "-3 -1", "-1 -1 -5",
		"10 -3 1", "1 3 2", "-5 3 5", "0 0", "-0 1", "-0 -1 -2", "-1 -0", "+1 2",
		"1. 3", ".5 2", "-.5 0", "-0.5 1", "1.0 3", "1.50 2", "1 2.55", "0 0.1 1",
		"0 0.25 1", "1 0.5 2.25", "-1 0.3 1", "1 -0.3 0", "-0.0 1", "0.1 0.1 0.5",
		"1e1 11", "1E1 11", "1e+1 12", "1.5e1 16", "1.25e1 13", "0.1e1 2", "1e-1 1 2",
		"1 1e-1 1.2", "1e2 1e2", "1e1000 1",
		"9223372036854775806 9223372036854775809",
		"-9223372036854775809 -9223372036854775807",
		"9223372036854775800 3 9223372036854775807",
		"1 0.000000001 1.000000003",
		// Counting by one carries digits in place (seqCount).
		"8 11", "95 1005", "99999 100001", "0 1", "-2 3", "9223372036854775805 9223372036854775807",
	} {
		cases = append(cases, filesC("seq "+args, ""))
	}
	cases = append(cases, filesCase{argv: []string{"seq", " 1", "2"}})
	// Left out: GNU computes in long double, so "seq 0.000000000000000000001
	// 1" also prints 1.000000000000000000000 (1e-21 + 1 rounds to 1);
	// tpipe's arithmetic is exact and stops before it.
	filesSameAsGNU(t, "", cases)
}

// -w, -s and -f, against GNU seq.
func TestSeqOptionsSameAsGNU(t *testing.T) {
	var cases []filesCase
	for _, args := range []string{
		"-w 10", "-w -5 2 5", "-w 1 3 10", "-w 0 1.5", "-w 0.5 2 10", "-w 9 11", "-w -1 1",
		"-w 1 -1 -10", "-w 001 3", "-w -0 2", "-w 1.0 1.5 4", "-w 5 -1 1", "-w +3 5",
		"-s, 3", "-s, 0", "-s : 1 0", "-s : 1 1", "--separator=-- 2 5", "-w -s/ 8 11",
		"-f %05.1f 3", "-f x%gy 0.1 0.1 0.3", "-f %e 2", "-f %g%% 3", "-f %-6.2fX 2",
		"-f %+g -1 1", "-f %G 1e6 1e6", "-f %.3E 2", "--format=%.2f 1 0.5 2", "-s, -f %.1f 3",
		"--equal-width 8 10", "-ws, 9 10",
	} {
		cases = append(cases, filesC("seq "+args, ""))
	}
	cases = append(cases, filesCase{argv: []string{"seq", "-s", "", "3"}}, filesCase{argv: []string{"seq", "-s", ", ", "3"}},
		filesCase{argv: []string{"seq", "-s", "\n\n", "2"}})
	filesSameAsGNU(t, "", cases)
	for _, f := range []string{"%d", "%a", "%g %g", "no conversion", "%'f", "", "%-1.2.3f", "%2..2f"} {
		if _, err := builtin.New(nil, []string{"seq", "-f", f, "3"}); !isUnsupported(err) {
			t.Errorf("seq -f %q: %v, want an *UnsupportedError", f, err)
		}
	}
}

func isUnsupported(err error) bool {
	_, ok := err.(*builtin.UnsupportedError)
	return ok
}

func TestSeqErrors(t *testing.T) {
	filesSameUsage(t, []filesCase{
		filesC("seq", ""),
		filesC("seq x", ""),
		filesC("seq 1 x", ""),
		filesC("seq 1 0 3", ""),
		filesC("seq 1 -0 3", ""),
		filesC("seq 1 0.0 3", ""),
		filesC("seq 1 2 3 4", ""),
		filesC("seq 1.2.3 4", ""),
		filesC("seq 1_0 4", ""),
		filesC("seq 1e 4", ""),
		filesC("seq nan", ""),
		filesC("seq 1 -x", ""),
		filesC("seq -x", ""),
		filesC("seq 1 -- 2", ""),
		filesC("seq -w -f %g 3", ""),
	})
	filesSameUsage(t, []filesCase{{argv: []string{"seq", "1 ", "2"}}, {argv: []string{"seq", "", "2"}}})
}

func TestSeqReadsNoInput(t *testing.T) {
	c, err := builtin.New(nil, []string{"seq", "3"})
	if err != nil || c.ReadsInput {
		t.Fatalf("seq 3: %v, ReadsInput %v", err, c != nil && c.ReadsInput)
	}
}

// seq 1 inf (counting without end) and hexadecimal operands are GNU seq's:
// the builtin refuses them, so that the system's seq runs.
func TestSeqLeavesInfAndHexToGNU(t *testing.T) {
	for _, args := range [][]string{{"1", "inf"}, {"-inf", "1", "-inf"}, {"1", "INFINITY"}, {"0x10", "0x12"}, {"1", "+Inf", "0"}} {
		_, err := builtin.New(nil, append([]string{"seq"}, args...))
		if _, ok := err.(*builtin.UnsupportedError); !ok {
			t.Errorf("seq %q: %v, want an *UnsupportedError", args, err)
		}
	}
}
