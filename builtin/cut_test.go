package builtin_test

import (
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"pgregory.net/rapid"
)

const cutText = "a:b:c:d:e\n1:2\nno delimiter\n\n::\n:lead\ntrail:\nx\ty\tz\nlast:line"

func TestCutSameAsGNU(t *testing.T) {
	dir := textFiles(t,
		"a.txt", "a:1\nb:2\n",
		"b.txt", "c:3\nd")
	type tc struct {
		argv  []string
		stdin string
	}
	in := func(stdin string, argv ...string) tc { return tc{argv, stdin} }
	cases := []tc{
		in(cutText, "cut", "-d:", "-f1"),
		in(cutText, "cut", "-d:", "-f2"),
		in(cutText, "cut", "-d", ":", "-f", "1,3"),
		in(cutText, "cut", "-d:", "-f2-"),
		in(cutText, "cut", "-d:", "-f-2"),
		in(cutText, "cut", "-d:", "-f2-3,5"),
		in(cutText, "cut", "-d:", "-f3,1"),
		in(cutText, "cut", "-d:", "-f1-2,2-3"),
		in(cutText, "cut", "-d:", "-f1 4"),
		in(cutText, "cut", "-d:", "-f9"),
		in(cutText, "cut", "-d:", "-s", "-f2"),
		in(cutText, "cut", "-sd:", "-f1"),
		in(cutText, "cut", "-f2"), // TAB by default
		in(cutText, "cut", "-f1,3"),
		in(cutText, "cut", "-d", " ", "-f2"),
		in(cutText, "cut", "-d", "", "-f1"),
		in(cutText, "cut", "-d:", "-f2", "--complement"),
		in(cutText, "cut", "-d:", "-f1,3", "--output-delimiter=+"),
		in(cutText, "cut", "-d:", "-f1-", "--output-delimiter="),
		in(cutText, "cut", "-d:", "-f2-", "--output-delimiter", "<>"),
		in(cutText, "cut", "--delimiter=:", "--fields=2", "--only-delimited"),
		in(cutText, "cut", "-c1"),
		in(cutText, "cut", "-c2-4"),
		in(cutText, "cut", "-c-3"),
		in(cutText, "cut", "-c3-"),
		in(cutText, "cut", "-c1,3,5"),
		in(cutText, "cut", "-c5,1-2"),
		in(cutText, "cut", "-c100"),
		in(cutText, "cut", "-b2-3"),
		in(cutText, "cut", "-c1-2,3-4", "--output-delimiter=|"),
		in(cutText, "cut", "-c1-3,2-5", "--output-delimiter=|"),
		in(cutText, "cut", "-c2-3", "--complement"),
		in(cutText, "cut", "-c1,3", "--complement", "--output-delimiter=|"),
		in(cutText, "cut", "-c1,3", "--output-delimiter="),
		in(cutText, "cut", "-n", "-c1"),
		in(cutText, "cut", "-c", "1 3"),
		in("", "cut", "-c1"),
		in("", "cut", "-f1"),
		in("abc", "cut", "-c5"),
		in("a:b", "cut", "-d:", "-f2"),
		in("\n\n", "cut", "-d:", "-f2"),
		in("\n\n", "cut", "-s", "-d:", "-f2"),
		in(cutText, "cut", "-f1", "-d:", "-"),
		in("", "cut", "-d:", "-f2", "a.txt", "b.txt"),
		in("in:put\n", "cut", "-d:", "-f1", "a.txt", "-", "b.txt"),
		in("", "cut", "-d:", "-f2", "nope", "a.txt"),
	}
	for _, c := range cases {
		sameAsGNU(t, dir, c.argv, c.stdin)
	}
}

func TestCutMessages(t *testing.T) {
	sameMessages(t, textFiles(t), [][]string{{"cut", "-c1", "nope"}})
	// GNU cut exits with status 1 on a usage error, tpipe with 2; GNU adds
	// a line on --help, and wraps the -s message.
	for _, argv := range [][]string{
		{"cut"},
		{"cut", "-d:"},
		{"cut", "-f1", "-c1"},
		{"cut", "-d::", "-f1"},
		{"cut", "-c1", "-d:"},
		{"cut", "-c1", "-s"},
		{"cut", "-f0"},
		{"cut", "-c0-2"},
		{"cut", "-f3-1"},
		{"cut", "-f-0"},
		{"cut", "-f", "x"},
		{"cut", "-c", "1-x"},
		{"cut", "-f", "-"},
		{"cut", "-f", ","},
		{"cut", "-c", ""},
		{"cut", "-f", "1,,2"},
		{"cut", "-c", "1-2-3"},
		{"cut", "-f", "1-2-3"},
		{"cut", "-c", "99999999999999999999"},
		{"cut", "-f", "99999999999999999999"},
		{"cut", "-x"},
		{"cut", "--nope"},
		{"cut", "-f"},
	} {
		want := runGNU(t, "", argv, "")
		got := runBuiltin(t, "", argv, "")
		wantErr := strings.ReplaceAll(want.err, gnuPath("cut")+": ", "cut: ")
		wantErr = strings.ReplaceAll(wantErr, "\n\t", " ")
		wantFirst, _, _ := strings.Cut(wantErr, "\n")
		if got.err != wantFirst+"\n" || got.code != 2 || want.code != 1 {
			t.Errorf("%q:\n tpipe: status %d, %q\n   GNU: status %d, %q", argv, got.code, got.err, want.code, want.err)
		}
	}
}

// cutModel is cut -f's definition for plain lines: split, pick, join.
func cutModel(input string, delim byte, fields []int, only bool) string {
	var b strings.Builder
	for line := range strings.Lines(input) {
		line = strings.TrimSuffix(line, "\n")
		if strings.IndexByte(line, delim) < 0 {
			if !only {
				b.WriteString(line + "\n")
			}
			continue
		}
		parts := strings.Split(line, string(delim))
		var out []string
		for i := range parts {
			for _, f := range fields {
				if f == i+1 {
					out = append(out, parts[i])
					break
				}
			}
		}
		b.WriteString(strings.Join(out, string(delim)) + "\n")
	}
	return b.String()
}

// Random lines and field lists against the model, and a few against GNU.
func TestCutProperty(t *testing.T) {
	gnuRuns := 0
	rapid.Check(t, func(rt *rapid.T) {
		input := string(rapid.SliceOfN(rapid.SampledFrom([]byte("ab:\n")), 0, 30).Draw(rt, "input"))
		fields := rapid.SliceOfN(rapid.IntRange(1, 5), 1, 4).Draw(rt, "fields")
		only := rapid.Bool().Draw(rt, "only")
		list := make([]string, len(fields))
		for i, f := range fields {
			list[i] = string(rune('0' + f))
		}
		argv := []string{"cut", "-d:", "-f" + strings.Join(list, ",")}
		if only {
			argv = append(argv, "-s")
		}
		got := runBuiltin(t, "", argv, input)
		want := cutModel(input, ':', fields, only)
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

func TestCutEachAllocs(t *testing.T) {
	emit := func([]byte) error { return nil }
	lines := [][]byte{[]byte("a:bb:ccc:dddd\n"), []byte("no delimiter\n"), []byte("last")}
	for _, argv := range [][]string{
		{"cut", "-d:", "-f2"},
		{"cut", "-d:", "-f1,3-", "--output-delimiter=, "},
		{"cut", "-c2-5"},
	} {
		c, err := builtin.New(nil, argv)
		if err != nil {
			t.Fatal(err)
		}
		each := c.Rec.Each
		allocs := testing.AllocsPerRun(100, func() {
			for _, l := range lines {
				each(l, emit)
			}
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per %d lines", argv, allocs, len(lines))
		}
	}
}

func BenchmarkCutEach(b *testing.B) {
	line := []byte("2024-01-01T10:00:00Z host-17 service[1234]: INFO request served in 12ms path=/api/v1/items\n")
	emit := func([]byte) error { return nil }
	for _, argv := range [][]string{{"cut", "-d", " ", "-f3"}, {"cut", "-c1-10"}} {
		b.Run(strings.Join(argv[1:], ""), func(b *testing.B) {
			c, err := builtin.New(nil, argv)
			if err != nil {
				b.Fatal(err)
			}
			each := c.Rec.Each
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				each(line, emit)
			}
		})
	}
}
