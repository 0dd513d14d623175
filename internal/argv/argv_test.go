package argv

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWords(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"md5sum", "md5sum"},
		{`cat "a b" c\ d`, "cat|a b|c d"},
		{`echo $HOME`, "echo|$HOME"}, // no variables
		{"sort | uniq", `error: unquoted '|'`},
		{"cat > x", `error: unquoted '>'`},
		{"a; b", `error: unquoted ';'`},
		{"cat 'open", "error: "},
		{"   ", "error: no command"},
	} {
		words, err := Words(tc.text)
		got := strings.Join(words, "|")
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	paths := []string{"/a/x y", "/b/$2", "c"}
	for _, tc := range []struct{ in, want string }{
		{"$1", "/a/x y"},
		{"$2", "/b/$2"}, // a path is not substituted again
		{"-i$1.ogg", "-i/a/x y.ogg"},
		{"${3}${1}", "c/a/x y"},
		{"$4", "$4"},
		{"$0", "$0"},
		{"$x $", "$x $"},
		{"${", "${"},
		{"${}", "${}"},
		{"${12", "${12"},
	} {
		if got := Substitute([]string{tc.in}, paths)[0]; got != tc.want {
			t.Errorf("Substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzWords: whatever the text, Words returns words or an error, and a
// word it returns, substituted, is one word holding each path whole.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"cat $1 $2", `cp "${1}" 'x y'`, "a\\ b", "x | y", "'"} {
		f.Add(s, "/p/a b", "$1")
	}
	f.Fuzz(func(t *testing.T, text, p1, p2 string) {
		words, err := Words(text)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatal("no words and no error")
		}
		out := Substitute(words, []string{p1, p2})
		if len(out) != len(words) {
			t.Fatalf("%d words became %d", len(words), len(out))
		}
		for i, w := range words {
			if !strings.Contains(w, "$") && out[i] != w {
				t.Fatalf("%q changed to %q with no reference in it", w, out[i])
			}
		}
	})
}
