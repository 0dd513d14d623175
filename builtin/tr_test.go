package builtin_test

import (
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"pgregory.net/rapid"
)

const trText = "Hello, World!\n\tTabs and  spaces   here\n\nDigits 0123456789\naaabbbccc\nlast line"

func TestTrSameAsGNU(t *testing.T) {
	type tc struct {
		argv  []string
		stdin string
	}
	in := func(stdin string, argv ...string) tc { return tc{argv, stdin} }
	cases := []tc{
		in(trText, "tr", "a-z", "A-Z"),
		in(trText, "tr", "A-Z", "a-z"),
		in(trText, "tr", "[:lower:]", "[:upper:]"),
		in(trText, "tr", "[:upper:]", "[:lower:]"),
		in(trText, "tr", "[:lower:]", "[:lower:]"),
		in(trText, "tr", "a-z", "x"),
		in(trText, "tr", "abc", "xyzw"),
		in(trText, "tr", "lo", "01"),
		in(trText, "tr", "[:digit:]", "#"),
		in(trText, "tr", "[:alpha:]", "*"),
		in(trText, "tr", "[:alnum:]", "-"),
		in(trText, "tr", "[:space:]", "_"),
		in(trText, "tr", "[:punct:]", "."),
		in(trText, "tr", "[:blank:][:cntrl:]", "BC"),
		in(trText, "tr", "[:xdigit:][:graph:]", "x"),
		in(trText, "tr", "[:print:]", "p"),
		in(trText, "tr", "[=a=]", "A"),
		in(trText, "tr", "a-c", "[x*]"),
		in(trText, "tr", "a-e", "x[y*2]z"),
		in(trText, "tr", "a-j", "[x*010]Y"),
		in(trText, "tr", "a-e", "[x*0]"),
		in(trText, "tr", "\\n", " "),
		in(trText, "tr", " \\n", "\\n "),
		in(trText, "tr", "\\t", "T"),
		in(trText, "tr", "\\101-\\132", "\\141-\\172"),
		in(trText, "tr", "\\\\", "x"),
		in(trText, "tr", "a-", "xy"),
		in(trText, "tr", "[a", "x"),
		in(trText, "tr", "a", "-d"),
		in(trText, "tr", "--", "-a", "x"),
		in(trText, "tr", "-t", "a-z", "AB"),
		in(trText, "tr", "-c", "a-z\\n", "_"),
		in(trText, "tr", "-c", "[:alnum:]", "[.*]"),
		// -d, -s, -ds, -cd.
		in(trText, "tr", "-d", "l"),
		in(trText, "tr", "-d", "[:space:]"),
		in(trText, "tr", "-d", "\\n"),
		in(trText, "tr", "-d", "a-z"),
		in(trText, "tr", "-cd", "a-z\\n"),
		in(trText, "tr", "-dc", "[:digit:]"),
		in(trText, "tr", "-s", " "),
		in(trText, "tr", "-s", "a-z"),
		in(trText, "tr", "-s", "\\n"),
		in(trText, "tr", "-s", "[:space:]"),
		in(trText, "tr", "-s", "a-z", "A-Z"),
		in(trText, "tr", "-s", "[:space:]", "\\n"),
		in(trText, "tr", "-s", " ", "_"),
		in(trText, "tr", "-ds", "l", "a-z"),
		in(trText, "tr", "-d", "-s", "\\n", " "),
		in(trText, "tr", "-cs", "[:alpha:]", "\\n"),
		in("\n\n\na\n\n\nb\n\n", "tr", "-s", "\\n"),
		in("aaa\naaa\n", "tr", "-s", "a\\n"),
		// Fixed bugs, found by comparing random SETs with GNU.
		in(trText, "tr", "-t", "\\101x-z-", "a[x*][b*2]\\101"),
		in(trText, "tr", "-t", "\\t[:upper:] ", "[a*]"),
		in(trText, "tr", "-d", "[b*2]"),
		in(trText, "tr", "-s", "[b*2] \\\\"),
		in(trText, "tr", "-c", "Z", "\\n[:lower:]x-z"),
		in(trText, "tr", "-t", "\\t", "[][:upper:]"),
		in(trText, "tr", "-c", "[:punct:]", "[x*]"),
		// Input shapes.
		in("", "tr", "a", "b"),
		in("no newline", "tr", "a-z", "A-Z"),
		in("a\nb\nc", "tr", "\\n", ","),
		in("a b c\n", "tr", " ", "\\n"),
		// Errors (status 1 in GNU, 2 for a tpipe usage error: compared by
		// TestTrMessages).
	}
	for _, c := range cases {
		sameAsGNU(t, "", c.argv, c.stdin)
	}
}

func TestTrMessages(t *testing.T) {
	// GNU tr exits with status 1 on a usage error, tpipe with 2. GNU
	// wraps long messages and adds a line on --help: compare the first line
	// of the message only.
	for _, argv := range [][]string{
		{"tr"},
		{"tr", "abc"},
		{"tr", "-d", "a", "b"},
		{"tr", "-ds", "a"},
		{"tr", "-s"},
		{"tr", "a", "b", "c"},
		{"tr", "a", ""},
		{"tr", "c-a", "x"},
		{"tr", "a-c", "[:upper:]"},
		{"tr", "[:digit:]", "[:upper:]"},
		{"tr", "[:lower:]x", "[:upper:]"},
		{"tr", "a", "[:digit:]"},
		{"tr", "[a*]", "x"},
		{"tr", "a", "[x*][y*]"},
		{"tr", "a", "[x*9z]"},
		{"tr", "[:nope:]", "x"},
		{"tr", "a", "[=b=]"},
		{"tr", "-ds", "a", "[b*]"},
		{"tr", "-c", "[:punct:]", "xy"},
		{"tr", "-t", "A", "A[:upper:]"},
		{"tr", "-s", "-", "A[:upper:]"},
		{"tr", "-x", "a"},
	} {
		want := runGNU(t, "", argv, "")
		got := runBuiltin(t, "", argv, "")
		wantFirst, _, _ := strings.Cut(strings.ReplaceAll(want.err, gnuPath("tr")+": ", "tr: "), "\n")
		if !strings.HasPrefix(got.err, wantFirst) || got.code != 2 || want.code != 1 {
			t.Errorf("%q:\n tpipe: status %d, %q\n   GNU: status %d, %q", argv, got.code, got.err, want.code, want.err)
		}
	}
}

// trModel is tr's definition, one byte at a time, for sets of plain bytes.
func trModel(in string, del, squeeze bool, set1, set2 string) string {
	var out []byte
	last := -1
	for i := 0; i < len(in); i++ {
		c := in[i]
		if del && strings.IndexByte(set1, c) >= 0 {
			continue
		}
		sq := set1
		if !del && set2 != "" {
			if k := strings.LastIndexByte(set1, c); k >= 0 {
				c = set2[min(k, len(set2)-1)]
			}
			sq = set2
		} else if del {
			sq = set2
		}
		if squeeze && strings.IndexByte(sq, c) >= 0 && int(c) == last {
			continue
		}
		out = append(out, c)
		last = int(c)
	}
	return string(out)
}

// Random inputs and sets of plain letters against the model, and a few
// against GNU.
func TestTrProperty(t *testing.T) {
	alphabet := rapid.SampledFrom([]byte("abc \n"))
	setGen := rapid.StringOfN(rapid.SampledFrom([]rune("abc ")), 1, 4, -1)
	gnuRuns := 0
	rapid.Check(t, func(rt *rapid.T) {
		input := string(rapid.SliceOfN(alphabet, 0, 40).Draw(rt, "input"))
		set1 := setGen.Draw(rt, "set1")
		set2 := setGen.Draw(rt, "set2")
		var argv []string
		var want string
		switch mode := rapid.IntRange(0, 4).Draw(rt, "mode"); mode {
		case 0:
			argv, want = []string{"tr", set1, set2}, trModel(input, false, false, set1, set2)
		case 1:
			argv, want = []string{"tr", "-d", set1}, trModel(input, true, false, set1, "")
		case 2:
			argv, want = []string{"tr", "-s", set1}, trModel(input, false, true, set1, "")
		case 3:
			argv, want = []string{"tr", "-s", set1, set2}, trModel(input, false, true, set1, set2)
		case 4:
			argv, want = []string{"tr", "-ds", set1, set2}, trModel(input, true, true, set1, set2)
		}
		got := runBuiltin(t, "", argv, input)
		if got.out != want || got.code != 0 {
			rt.Fatalf("%q on %q: got %q (status %d), model %q", argv, input, got.out, got.code, want)
		}
		if gnuRuns < 20 {
			gnuRuns++
			if g := runGNU(t, "", argv, input); g.out != got.out {
				rt.Fatalf("%q on %q: got %q, GNU %q", argv, input, got.out, g.out)
			}
		}
	})
}

func TestTrEachAllocs(t *testing.T) {
	emit := func([]byte) error { return nil }
	line := []byte("Some Text With  Spaces\n")
	for _, argv := range [][]string{
		{"tr", "a-z", "A-Z"},
		{"tr", "-d", "[:space:]"},
		{"tr", "-s", " "},
		{"tr", " ", "\\n"},
	} {
		c, err := builtin.New(nil, argv)
		if err != nil {
			t.Fatal(err)
		}
		each := c.Rec.Each
		if allocs := testing.AllocsPerRun(100, func() { each(line, emit) }); allocs != 0 {
			t.Errorf("%q: %v allocations per line", argv, allocs)
		}
	}
}

func BenchmarkTrEach(b *testing.B) {
	line := []byte("2024-01-01T10:00:00Z host-17 service[1234]: INFO request served in 12ms path=/api/v1/items\n")
	emit := func([]byte) error { return nil }
	c, err := builtin.New(nil, []string{"tr", "a-z", "A-Z"})
	if err != nil {
		b.Fatal(err)
	}
	each := c.Rec.Each
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		each(line, emit)
	}
}
