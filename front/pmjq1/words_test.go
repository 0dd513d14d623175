package pmjq1

import (
	"strings"
	"testing"
)

func TestSplitTemplate(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // words joined by |, or "error: ..." text
	}{
		{"md5sum", "md5sum"},
		{"cat {{.Input 0}} {{.Input 1}}", "cat|{{.Input 0}}|{{.Input 1}}"},
		{"cat /in/'{{.Input 0}}'", "cat|/in/{{.Input 0}}"},
		{`cp "{{.Input 0}}" out/{{.NamedMatches.id}}_x.txt`, "cp|{{.Input 0}}|out/{{.NamedMatches.id}}_x.txt"},
		{`grep -v error`, "grep|-v|error"},
		{`python3 -c "import sys; print(1)" {{printf "%s x" .Invariant}}`, `python3|-c|import sys; print(1)|{{printf "%s x" .Invariant}}`},
		{`echo $HOME`, "echo|$HOME"}, // no variables
		{`a\ b 'c d'`, "a b|c d"},
		{"sort | uniq", "error: unquoted '|'"},
		{"cat > x", "error: unquoted '>'"},
		{"cat 'open", "error: "},
		{"cat {{.Input 0", "error: "},
		{"   ", "error: "},
	} {
		words, err := SplitTemplate(tc.text)
		got := strings.Join(words, "|")
		if err != nil {
			got = "error: " + err.Error()
		}
		if strings.HasPrefix(tc.want, "error: ") {
			if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, strings.TrimPrefix(tc.want, "error: ")) {
				t.Errorf("SplitTemplate(%q) = %q, want %s", tc.text, got, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("SplitTemplate(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// FuzzSplitTemplate: any text either fails or gives words whose actions
// are whole (as many {{ as }} in each word that has one).
func FuzzSplitTemplate(f *testing.F) {
	for _, s := range []string{"cat {{.Input 0}}", `a "b {{x}}" 'c'`, "{{", "}}{{ }}", "a\\", "\uE000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitTemplate(s)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatal("no words and no error")
		}
		for _, w := range words {
			if strings.ContainsAny(w, "\uE000\uE001") {
				t.Fatalf("a mark left in %q", w)
			}
		}
	})
}
