package pmjq1

import (
	"fmt"
	"strings"
	"testing"
)

// testOwn is a few of tpipe's own options, as the tpipe command gives them.
func testOwn(name string) (int, bool) {
	n, ok := map[string]int{"--workers": 1, "--lease": 1, "--max-load": 2, "--min-load": 2, "--no-sync": 0}[name]
	return n, ok
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args string // split on '|'
		want string // a summary, or "error: ..."
	}{
		{"--quit-when-empty|--input=/in/.*|md5sum|--output=/out/",
			"quit=true in=[/in/.*] cmd=md5sum out=[/out/] errors=[] extra=[]"},
		{"--input|/a/x|--input=/b/y|--invariant=$0|cat {{.Input 0}}|--output|/o/{{.Invariant}}|--stderr=/log/|--error=/e0/|--error=/e1/",
			"quit=false in=[/a/x /b/y] cmd=cat {{.Input 0}} out=[/o/{{.Invariant}}] errors=[/e0/ /e1/] extra=[]"},
		{"--workers=3|--input=/in/|--max-load|2.5|ssh h pmjq|cat|--output=/o/|--lease|10s",
			"quit=false in=[/in/] cmd=cat out=[/o/] errors=[] extra=[[--workers 3] [--max-load 2.5 ssh h pmjq] [--lease 10s]]"},
		{"--no-sync|--input=/in/|cat|--output=/o/", "quit=false in=[/in/] cmd=cat out=[/o/] errors=[] extra=[[--no-sync]]"},
		{"--no-sync=1|--input=/in/|cat|--output=/o/", "error: --no-sync takes no value"},
		{"--input=/in/|--output=/o/|--|-weird", "quit=false in=[/in/] cmd=-weird out=[/o/] errors=[] extra=[]"},
		{"--input=/in/|--output=/o/", "error: no command template"},
		{"--input=/in/|a|b|--output=/o/", "error: one command template"},
		{"--input=/in/|cat", "error: no --output"},
		{"cat|--output=/o/", "error: no --input"},
		{"--input=/a/|--input=/b/|cat|--output=/o/|--error=/e/", "error: 1 --error for 2 --input"},
		{"--input=/a/|cat|--output=/o/|--frob", "error: unknown option --frob"},
		{"--input", "error: --input needs a value"},
		{"--max-load|1", "error: --max-load needs 2 value(s)"},
	} {
		a, err := Parse(strings.Split(tc.args, "|"), testOwn)
		var got string
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = fmt.Sprintf("quit=%v in=%v cmd=%s out=%v errors=%v extra=%v", a.QuitWhenEmpty, a.Inputs, a.Command, a.Outputs, a.Errors, a.Extra)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("Parse(%s):\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

func TestCompile(t *testing.T) {
	a, err := Parse([]string{"--input=/in/(?P<id>...)_(?P<suffix>.*)", "--input=/in2/", "--invariant=$id", "cp {{.Input 0}} x", "--output=/out/", "--error=/e/{{.NamedMatches.id}}.err", "--error=/e2/"}, testOwn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Compile()
	if err != nil {
		t.Fatal(err)
	}
	d := s.NewData("aaa", []string{"aaa_OK.txt", "other"})
	for _, tc := range []struct {
		tg   Target
		want string
	}{
		{s.Outputs[0], "/out/aaa_OK.txt"},
		{s.Errors[0], "/e/aaa.err"},
		{s.Errors[1], "/e2/aaa_OK.txt"},
	} {
		if got, err := tc.tg.path(d); err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.tg.Text, got, err, tc.want)
		}
	}
	if d.NamedMatches["suffix"] != "OK.txt" || d.Invariant != "aaa" {
		t.Errorf("data = %+v", d)
	}
	for _, bad := range [][]string{
		{"--input=/in/(", "cat", "--output=/o/"},
		{"--input=/in/", "cat {{.Input", "--output=/o/"},
		{"--input=/in/", "cat", "--output=/o/{{.Nope"},
		{"--input=/in/", "sort | uniq", "--output=/o/"},
	} {
		a, err := Parse(bad, testOwn)
		if err == nil {
			_, err = a.Compile()
		}
		if _, ok := err.(*UsageError); !ok {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	// An output that expands to an unsafe name fails the job, not the
	// command line.
	a, _ = Parse([]string{"--input=/in/", "cat", "--output=/o/{{.NamedMatches.x}}"}, testOwn)
	s, _ = a.Compile()
	if _, err := s.Outputs[0].path(s.NewData("", []string{"f"})); err == nil {
		t.Error("an empty output name was accepted")
	}
	if _, err := s.Outputs[0].path(&Data{names: nil}); err == nil {
		t.Error("expanded")
	}
	a, _ = Parse([]string{"--input=/in/", "cat {{.Input 3}}", "--output=/o/"}, testOwn)
	s, _ = a.Compile()
	if _, err := expand(s.Command[1], s.NewData("", []string{"f"})); err == nil || !strings.Contains(err.Error(), "there are 1 inputs") {
		t.Errorf("{{.Input 3}} of one input: %v", err)
	}
}
