package say

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "jobs"}, {1, "job"}, {2, "jobs"}, {-1, "jobs"}} {
		if got := Plural(tc.n, "job"); got != tc.want {
			t.Errorf("Plural(%d, job) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"a":            "a",
		"a\nb":         "a b",
		"a\n\nb\n":     "a  b ",
		"tab\tstays\n": "tab\tstays ",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
