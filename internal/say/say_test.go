package say

import (
	"slices"
	"testing"
)

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

func TestFill(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"   ", 10, nil},
		{"a b c", 10, []string{"a b c"}},
		{"a b c", 3, []string{"a b", "c"}},
		{"ab cd", 5, []string{"ab cd"}},
		{"ab cd", 4, []string{"ab", "cd"}},
		{"a\n\tb  c", 80, []string{"a b c"}},
		// A word wider than the width stands alone, uncut.
		{"a longword b", 4, []string{"a", "longword", "b"}},
		// Columns are runes, not bytes.
		{"été été", 7, []string{"été été"}},
	} {
		got := Wrap(tc.in, tc.width)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
