package builtin_test

import (
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

// yes runs until its reader stops; it is compared with GNU through head.
func TestYesThroughHead(t *testing.T) {
	for _, args := range [][]string{nil, {"a"}, {"a", "b c"}, {""}, {"--", "-n"}, {"-"}} {
		argv := append([]string{"yes"}, args...)
		got := headRun(t, [][]string{argv, {"head", "-n", "3000"}})
		want := strings.Repeat(strings.Join(append(args[:0:0], yesWords(args)...), " ")+"\n", 3000)
		if got != want {
			t.Errorf("%q | head -n 3000: got %d bytes, want %d", argv, len(got), len(want))
		}
	}
}

func yesWords(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return []string{"y"}
	}
	return args
}

func TestYesErrors(t *testing.T) {
	filesSameUsage(t, []filesCase{filesC("yes -x", ""), filesC("yes --bogus", "")})
	c, err := builtin.New(nil, []string{"yes"})
	if err != nil || c.ReadsInput {
		t.Fatalf("yes: %v, ReadsInput %v", err, c != nil && c.ReadsInput)
	}
}
