package builtin_test

import (
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

// A command that writes files of its own says so (Cmd.Effects), so that
// it runs on when its readers have gone, as in a shell; any other is
// stopped then while it waits for input.
func TestEffects(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		effects bool
	}{
		{[]string{"awk", `{print > "f"}`}, true},
		{[]string{"awk", `{printf "%s", $1 >> "f"}`}, true},
		{[]string{"awk", `$1 > 3 {n++} END {print n}`}, false},
		{[]string{"awk", "{print $2}"}, false},
		{[]string{"sed", "-n", "/x/w f"}, true},
		{[]string{"sed", "s/a/b/"}, false},
		{[]string{"tee", "f"}, true},
		{[]string{"tee"}, false},
		{[]string{"sort", "-o", "f"}, true},
		{[]string{"sort"}, false},
		{[]string{"uniq", "-", "f"}, true},
		{[]string{"grep", "x"}, false},
	} {
		cmd, err := builtin.New(&builtin.Env{}, c.argv)
		if err != nil {
			t.Fatalf("%q: %v", c.argv, err)
		}
		if cmd.Effects != c.effects {
			t.Errorf("%q: Effects %v, want %v", c.argv, cmd.Effects, c.effects)
		}
	}
}
