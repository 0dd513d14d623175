package builtin_test

import (
	"testing"

	"github.com/tpipe/tpipe/builtin"
)

func TestCopyPrefix(t *testing.T) {
	for _, tc := range []struct {
		argv      []string
		in, out   string
		wantUsage bool
	}{
		{argv: []string{"copy"}, in: "a\n\nb", out: "a\n\nb"},
		{argv: []string{"copy"}, in: "", out: ""},
		{argv: []string{"copy", "x"}, wantUsage: true},
		{argv: []string{"copy", "-x"}, wantUsage: true},
		{argv: []string{"prefix", "HEAD"}, in: "a\nb", out: "HEAD\na\nb"},
		{argv: []string{"prefix", ""}, in: "", out: "\n"},
		{argv: []string{"prefix", "-n"}, in: "a\n", out: "-n\na\n"},
		{argv: []string{"prefix"}, wantUsage: true},
		{argv: []string{"prefix", "a", "b"}, wantUsage: true},
	} {
		got := runBuiltin(t, "", tc.argv, tc.in)
		if tc.wantUsage {
			if got.code != 2 {
				t.Errorf("%q: %+v, want a usage error", tc.argv, got)
			}
			continue
		}
		if got.out != tc.out || got.code != 0 || got.err != "" {
			t.Errorf("%q on %q: %+v, want %q", tc.argv, tc.in, got, tc.out)
		}
	}
}

// COPY and PREFIX are per-record filters (Keep) so they fuse and pass
// records without copying them.
func TestCopyPrefixForms(t *testing.T) {
	for _, argv := range [][]string{{"copy"}, {"prefix", "h"}} {
		c, err := builtin.New(nil, argv)
		if err != nil {
			t.Fatal(err)
		}
		if !c.ReadsInput || c.Rec == nil || c.Rec.Keep == nil {
			t.Errorf("%q: ReadsInput %v, Rec %+v", argv, c.ReadsInput, c.Rec)
		}
	}
}
