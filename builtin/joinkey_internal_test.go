package builtin

import (
	"bytes"
	"testing"

	"github.com/tpipe/tpipe/internal/posixre"
)

// join's key for a whole-line pattern skips the regexp and gives what the
// regexp gives; any other pattern still goes through it.
func TestJoinKey(t *testing.T) {
	lines := []string{"", "\n", "abc\n", "abc", "a b\tc\n", "\xff\xfe bad utf-8\n", "x\x00y\n"}
	for _, tc := range []struct {
		pat   string
		syn   posixre.Syntax
		whole bool
	}{
		{"^(.*)$", posixre.Extended, true},
		{"(.*)", posixre.Extended, true},
		{"^(.*)", posixre.Extended, true},
		{`^\(.*\)$`, posixre.Basic, true},
		{"^(.+)$", posixre.Extended, false},
		{"^(.*)x$", posixre.Extended, false},
		{"a(.*)", posixre.Extended, false},
		{"^(a*)$", posixre.Extended, false},
		{"((.*))", posixre.Extended, false},
	} {
		re, err := posixre.Compile(tc.pat, tc.syn, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := wholeLine(re); got != tc.whole {
			t.Errorf("%q: wholeLine %v, want %v", tc.pat, got, tc.whole)
		}
		key := joinKey(re)
		for _, l := range lines {
			k, ok := key([]byte(l))
			wk, wok := regexpKey(re, []byte(l))
			if ok != wok || !bytes.Equal(k, wk) {
				t.Errorf("%q on %q: %q %v, the regexp gives %q %v", tc.pat, l, k, ok, wk, wok)
			}
		}
	}
}
