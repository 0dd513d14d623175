package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
	"pgregory.net/rapid"
)

// sortInput has blanks, signs, decimals, case, punctuation and ties.
const sortInput = "b 2\na 10\n  c 1\nB 2\na 10\n-3 x\n-0 y\n0 z\n.5 w\n1.50 v\n" +
	"a\tb c\n\n \nabc 007\nabc 7\nA:b:c\na:B:c\n+5 p\n1e3 q\nx-1\n" +
	"a,1,zz\na,01,yy\nb,,xx\n\xff\x80 hi\nZ 9.99\nz 9.990\n"

func TestSortSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	var cases []filesCase
	for _, args := range []string{
		"", "-r", "-n", "-nr", "-rn", "-u", "-ur", "-s", "-f", "-d", "-i", "-b", "-fu",
		"-n -u", "-n -s", "-b -r",
		"-k1", "-k2", "-k2n", "-k2,2", "-k2,2n", "-k1,1 -k2,2nr", "-k1,1r -k2", "-k2 -r",
		"-k2,2 -u", "-k1,1 -s", "-k1,1 -s -r", "-k1.2", "-k1.2,1.3", "-k2.1,2.1", "-k1.3b",
		"-k1,1.0", "-k2,1", "-k3,3", "-k9", "-k1b,1", "-k1,1b", "-k1.2b,1.3b",
		"-b -k2", "-n -k1,1", "-k1,1 -n", "-r -k1,1", "-k1,1f", "-k1,1d", "-k1,1i",
		"-k1,1fr", "-k1df", "-k 2.2", "-k+1", "-k 1,1 -k 2,2",
		"-t , -k2", "-t , -k2,2", "-t , -k2,2n", "-t , -k3", "-t , -k2.2", "-t , -k2,2.1",
		"-t , -k2.1,3.1", "-t , -k1,2", "-t : -k2,2f", "-t , -k2n -u", "-t a -k2",
		"-t ' ' -k2", "-k1.2,1.1", "-k1,1 -k1,1r",
	} {
		argv := append([]string{"sort"}, sortFields(args)...)
		cases = append(cases, filesCase{argv: argv, stdin: sortInput})
	}
	cases = append(cases,
		filesC("sort", ""),
		filesC("sort", "b\na"),
		filesC("sort", "a"),
		filesC("sort -u", "a\na"),
		filesC("sort -n", "1\n-\n-a\n--1\n-.5\n.\n0.\n-0.0\n00\n1.2.3\n 2\n\t3\n"),
		filesC("sort nonl f2", ""),
		filesC("sort f2 - nonl", "m\nz"),
		filesC("sort -r long", ""),
		filesC("sort -k2 -k1,1 long", ""),
		filesC("sort -u long", ""),
		filesC("sort -n nums", ""),
		filesC("sort empty", ""),
		filesC("sort missing f2", ""),
		filesC("sort f2 missing", ""),
		filesC("sort d", ""),
	)
	for _, args := range []string{
		"-g", "-gr", "-g -s", "-h", "-hr", "-M", "-Mr", "-M -f", "-V", "-Vr", "-V -f", "-V -d", "-V -i",
		"-k2g", "-k2h", "-k2M", "-k2V", "-k1,1V -k2n", "--sort=version", "--sort=h", "--sort=month -r",
		"--numeric-sort --reverse", "--general-numeric-sort", "--human-numeric-sort", "--month-sort",
		"--version-sort", "--key=2,2n --field-separator=.", "--unique", "--stable -k1,1", "--ignore-case",
		"--dictionary-order", "--ignore-nonprinting", "--ignore-leading-blanks -k2", "-S 1M", "-S 100",
		"--buffer-size=10%", "-S 2b", "--parallel=1", "--parallel 3 -n", "-T /tmp", "-z", "-z -r",
	} {
		argv := append([]string{"sort"}, sortFields(args)...)
		cases = append(cases, filesCase{argv: argv, stdin: sortInput + sortKindsInput})
	}
	for _, in := range []string{"a\nb\nc\n", "b\na\n", "a\na\n", "", "1\n10\n9\n", "a\x00b\x00"} {
		for _, args := range []string{"-c", "-C", "-cu", "-Cu", "-n -c", "-r -c", "--check", "--check=quiet", "--check=silent",
			"--check=diagnose-first", "-c -k1,1", "-z -c"} {
			cases = append(cases, filesCase{argv: append([]string{"sort"}, sortFields(args)...), stdin: in})
		}
	}
	cases = append(cases,
		filesC("sort -c f2", ""), filesC("sort -c nums", ""), filesC("sort -C nums", ""), filesC("sort -c -", "b\na\n"),
		filesC("sort -z nonl", ""), filesC("sort -z", "b\x00a\nc\x00\x00z"), filesC("sort -z -k2", "x b\x00y a\n\x00"))
	cases = append(cases, filesCase{argv: []string{"sort", "-t", "\t", "-k2"}, stdin: "a\tz y\nb\ta b\nc\n"},
		filesCase{argv: []string{"sort", "-t", `\0`, "-k2"}, stdin: "a\x00z\nb\x00a\n"})
	filesSameAsGNU(t, dir, cases)
}

// sortFields splits args at spaces, keeping 'quoted' words whole.
func sortFields(args string) []string {
	var out []string
	for args != "" {
		args = strings.TrimLeft(args, " ")
		if strings.HasPrefix(args, "'") {
			end := strings.Index(args[1:], "'") + 1
			out = append(out, args[1:end])
			args = args[end+1:]
			continue
		}
		w, rest, _ := strings.Cut(args, " ")
		if w != "" {
			out = append(out, w)
		}
		args = rest
	}
	return out
}

// sortKindsInput has what -g, -h, -M and -V order: floats in every form
// strtold reads, sizes with suffixes, months and versions.
const sortKindsInput = "1e3 x\n-inf\ninf\nnan\n-nan\n0x10\n0x1.8p1\n1.5e-3\n+7\n -2.5e+1\n0x\n1e\n.e5\n" +
	"1K\n2k\n1M\n-1G\n0K\n.5K\n5.K\n1.5M\n999\n-0\n1Q\n1R\n" +
	"jan\nFEB 2\n  mar\nDecember\nmayo\nxyz\nJUN\n" +
	"1.2.10\n1.2.9\n1.10\na-1.0~rc1\na-1.0\na-1.0.tar.gz\n.hidden\n.\n..\nfile10.txt\nfile9.txt\n~x\n2.0a\n2.0\n"

func TestSortErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("sort missing", ""),
		filesC("sort f2 missing", ""),
		filesC("sort d", ""),
	})
	var cases []filesCase
	for _, args := range []string{
		"-x", "--bogus", "-k", "-t", "-k0", "-k1.0", "-k2,1.0x", "-kx", "-k1,x", "-k1.",
		"-k1,", "-k1.x", "-k,2", "-k-1", "-k1.2.3", "-k1b,2q", "-k1,0", "-tab", "-ta -tb",
		"-nd", "-ni", "-k1nd", "-k1,1ni", "-gn", "-hM", "-Vn", "-dV -n", "-k1,1Mg", "-fdgn", "-c -o x", "-cC", "-c a b",
		"-S x", "-S 1x", "-S 99999999999999999999", "--parallel=0", "--parallel=x", "--sort=x", "--check=x",
		"-o a -o b",
	} {
		cases = append(cases, filesCase{argv: append([]string{"sort"}, strings.Fields(args)...)})
	}
	cases = append(cases, filesCase{argv: []string{"sort", "-t", ""}})
	filesSameUsage(t, cases)
	// GNU has -R (a random order); tpipe's sort does not, and says so.
	if got := runBuiltin(t, "", []string{"sort", "-k1R"}, ""); got.code != 2 || got.err != "sort: ordering option 'R' is not supported: '1R'\n" {
		t.Errorf("sort -k1R: %+v", got)
	}
}

// sortRandomLines returns n lines of a few fields drawn from a small
// alphabet, so that keys tie often.
func sortRandomLines(r *rand.Rand, n int) string {
	var b strings.Builder
	words := []string{"a", "b", "B", "ab", "-1", "2", "10", "1.5", " ", "", "x y", "0", "-0", "zz", ",", ":",
		"\tq", "00.50", ".5", "-.5", "+3", "a-b", "\x01c", "\xe9", "Ab", "a_b",
		"1K", "2M", "-1k", "jan", "Feb", "1.2.10", "v1.2", "-inf", "0x1A", "1e5", ".e5", "a.tar.gz", "123456789012345678901"}
	for range n {
		for f := range r.IntN(4) + 1 {
			if f > 0 {
				b.WriteString([]string{" ", "  ", "\t", ","}[r.IntN(4)])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// With a tiny memory budget, sort spills many compressed runs (more than
// one merge pass) and merges them: the output is GNU's, and no temporary
// file is left.
func TestSortSpill(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	in := sortRandomLines(r, 3000)
	for _, args := range [][]string{
		nil, {"-r"}, {"-u"}, {"-n"}, {"-s", "-k1,1"}, {"-u", "-k1,1"}, {"-k2", "-k1,1nr"}, {"-t", ",", "-k2,2", "-s"},
	} {
		argv := append([]string{"sort"}, args...)
		want := runGNU(t, "", argv, in)
		for _, budget := range []int{300, 1 << 10, 16 << 10} {
			tmp := t.TempDir()
			var stdout, stderr bytes.Buffer
			env := &builtin.Env{Stderr: &stderr, TempDir: tmp, SortMemory: budget}
			got := runWithEnv(t, env, &stdout, &stderr, argv, in)
			if got.out != want.out || got.code != want.code {
				t.Errorf("%q with SortMemory %d: output differs from GNU (%d vs %d bytes)", argv, budget, len(got.out), len(want.out))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("%q with SortMemory %d: %d temporary files left", argv, budget, len(left))
			}
		}
	}
}

// However sort ends, it removes its temporary files: when its reader stops
// during the merge, when it cannot spill, and when the run is cancelled
// while it reads.
func TestSortSpillCleanup(t *testing.T) {
	in := sortRandomLines(rand.New(rand.NewPCG(3, 4)), 3000)
	tmp := t.TempDir()
	env := &builtin.Env{TempDir: tmp, SortMemory: 512}
	out, err := sortChain(context.Background(), t, env, task.ReadFrom(strings.NewReader(in), record.Lines), []string{"sort"}, []string{"head", "-n", "1"})
	want := runGNU(t, "", []string{"sort"}, in).out
	if err != nil || out != want[:strings.IndexByte(want, '\n')+1] {
		t.Errorf("sort | head -n 1 = %q, %v", out, err)
	}
	sortNoFilesLeft(t, tmp)

	env = &builtin.Env{TempDir: tmp + "/missing", SortMemory: 512}
	_, err = sortChain(context.Background(), t, env, task.ReadFrom(strings.NewReader(in), record.Lines), []string{"sort"})
	if err == nil || !strings.Contains(err.Error(), "spill") {
		t.Errorf("sort with a missing TempDir: err = %v", err)
	}

	// A source that writes lines, then blocks until the run is cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	slow := func(ctx context.Context, p *buffer.Ports) error {
		for i := range 2000 {
			if err := p.Out(0).Write(fmt.Appendf(nil, "line %d\n", i*7919%2000)); err != nil {
				return err
			}
		}
		p.Flush()
		<-ctx.Done()
		return ctx.Err()
	}
	env = &builtin.Env{TempDir: tmp, SortMemory: 512}
	if _, err = sortChain(ctx, t, env, slow, []string{"sort"}); err == nil {
		t.Error("cancelled sort: no error")
	}
	sortNoFilesLeft(t, tmp)
}

func sortNoFilesLeft(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d temporary files left in %s", len(left), dir)
	}
}

// sortChain runs src | cmds... in env and returns the output.
func sortChain(ctx context.Context, t *testing.T, env *builtin.Env, src task.Func, cmds ...[]string) (string, error) {
	t.Helper()
	g := &graph.Graph{}
	prev := g.Add("src", 0, 1, src)
	for _, argv := range cmds {
		c, err := builtin.New(env, argv)
		if err != nil {
			t.Fatal(err)
		}
		me := g.Add(c.Name, 1, 1, c.Fn)
		g.Connect(prev, 0, me, 0, 2)
		prev = me
	}
	var out bytes.Buffer
	sink := g.Add("out", 1, 0, task.WriteTo(&out, record.Lines))
	g.Connect(prev, 0, sink, 0, 2)
	_, err := sched.Run(ctx, g, sched.Options{RecordSize: 4096})
	return out.String(), err
}

// The property: on random lines, sort with random keys and options gives
// GNU's output, with the lines in memory or spilled.
func TestSortRapidAgainstGNU(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skip("sort not installed")
	}
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		n := rapid.IntRange(0, 60).Draw(rt, "lines")
		in := sortRandomLines(rand.New(rand.NewPCG(seed, seed)), n)
		if rapid.Bool().Draw(rt, "noFinalNewline") && len(in) > 0 {
			in = in[:len(in)-1]
		}
		argv := []string{"sort"}
		for _, o := range []string{"-n", "-r", "-u", "-s", "-b", "-f", "-d", "-i", "-g", "-h", "-M", "-V"} {
			if rapid.IntRange(0, 4).Draw(rt, o) == 0 {
				argv = append(argv, o)
			}
		}
		if rapid.Bool().Draw(rt, "sep") {
			argv = append(argv, "-t", rapid.SampledFrom([]string{",", " ", ":"}).Draw(rt, "t"))
		}
		for k := range rapid.IntRange(0, 2).Draw(rt, "keys") {
			argv = append(argv, "-k", sortKeyGen().Draw(rt, fmt.Sprint("key", k)))
		}
		budget := rapid.SampledFrom([]int{0, 64, 300}).Draw(rt, "budget")
		want := runGNU(t, "", argv, in)
		var stdout, stderr bytes.Buffer
		env := &builtin.Env{Stderr: &stderr, TempDir: os.TempDir(), SortMemory: budget}
		got := runWithEnv(t, env, &stdout, &stderr, argv, in)
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("%q on %q (budget %d):\n tpipe: %d %q\n   GNU: %d %q", argv, in, budget, got.code, got.out, want.code, want.out)
		}
	})
}

// sortKeyGen draws a key within what sort supports: FIELD[.CHAR][opts]
// [,FIELD[.CHAR][opts]].
func sortKeyGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		opts := func(name string) string {
			s := ""
			for _, o := range []string{"b", "n", "r", "f", "d", "i", "g", "h", "M", "V"} {
				if rapid.IntRange(0, 5).Draw(t, name+o) == 0 {
					s += o
				}
			}
			// Usually one ordering, as users write them; two are an error
			// (compared too, but once is enough).
			if strings.ContainsAny(s, "nghM") && rapid.IntRange(0, 3).Draw(t, name+"one") > 0 {
				s = strings.Map(func(r rune) rune {
					if strings.ContainsRune("diV", r) {
						return -1
					}
					return r
				}, s)
			}
			return s
		}
		k := fmt.Sprint(rapid.IntRange(1, 3).Draw(t, "f1"))
		if rapid.Bool().Draw(t, "c1") {
			k += fmt.Sprint(".", rapid.IntRange(1, 3).Draw(t, "c1n"))
		}
		k += opts("o1")
		if rapid.Bool().Draw(t, "end") {
			k += fmt.Sprint(",", rapid.IntRange(1, 3).Draw(t, "f2"))
			if rapid.Bool().Draw(t, "c2") {
				k += fmt.Sprint(".", rapid.IntRange(0, 3).Draw(t, "c2n"))
			}
			k += opts("o2")
		}
		return k
	})
}

// sortBenchInput is n lines of a few random words.
func sortBenchInput(n int) string {
	r := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "%08x %d word%d\n", r.Uint32(), r.IntN(100000), r.IntN(50))
	}
	return b.String()
}

func BenchmarkSort(b *testing.B) {
	in := sortBenchInput(200000)
	for _, bc := range []struct {
		name   string
		argv   []string
		budget int
	}{
		{"memory", []string{"sort"}, 0},
		{"memory-k2n", []string{"sort", "-k2n"}, 0},
		{"spill-1MiB", []string{"sort"}, 1 << 20},
		{"spill-1MiB-k2n", []string{"sort", "-k2n"}, 1 << 20},
		{"spill-64KiB", []string{"sort"}, 64 << 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				env := &builtin.Env{Stderr: &stderr, TempDir: b.TempDir(), SortMemory: bc.budget}
				runWithEnv(b, env, &stdout, &stderr, bc.argv, in)
			}
		})
	}
	b.Run("gnu", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			runGNU(b, "", []string{"sort"}, in)
		}
	})
}

// A sort whose output a head or tail cuts (Env.Cut, set by the runner for
// sort | head -n N) keeps only those lines; its output is still the first
// (last) N lines of GNU's, ties in input order with -s.
func TestSortCutRapid(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skip("sort not installed")
	}
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		in := sortRandomLines(rand.New(rand.NewPCG(seed, seed)), rapid.IntRange(0, 80).Draw(rt, "lines"))
		argv := []string{"sort"}
		for _, o := range []string{"-n", "-r", "-s", "-b", "-f", "-g", "-V"} {
			if rapid.IntRange(0, 3).Draw(rt, o) == 0 {
				argv = append(argv, o)
			}
		}
		for k := range rapid.IntRange(0, 2).Draw(rt, "keys") {
			argv = append(argv, "-k", sortKeyGen().Draw(rt, fmt.Sprint("key", k)))
		}
		cut := builtin.Cut{N: rapid.IntRange(1, 12).Draw(rt, "n"), Last: rapid.Bool().Draw(rt, "last")}
		want := runGNU(t, "", argv, in)
		lines := strings.SplitAfter(want.out, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if want.code == 0 {
			if cut.Last {
				lines = lines[max(0, len(lines)-cut.N):]
			} else {
				lines = lines[:min(cut.N, len(lines))]
			}
			want.out = strings.Join(lines, "")
		}
		var stdout, stderr bytes.Buffer
		env := &builtin.Env{Stderr: &stderr, Cut: cut}
		got := runWithEnv(t, env, &stdout, &stderr, argv, in)
		if got.out != want.out || got.code != want.code {
			rt.Fatalf("%q cut %+v on %q:\n tpipe: %d %q\n   GNU: %d %q", argv, cut, in, got.code, got.out, want.code, want.out)
		}
	})
}

// CutOf knows the head and tail lines that keep a fixed count, and no
// other.
func TestSortCutOf(t *testing.T) {
	for _, c := range []struct {
		argv string
		cut  builtin.Cut
		ok   bool
	}{
		{"head", builtin.Cut{N: 10}, true},
		{"head -n 3", builtin.Cut{N: 3}, true},
		{"head -n3", builtin.Cut{N: 3}, true},
		{"head -3", builtin.Cut{N: 3}, true},
		{"tail -1", builtin.Cut{N: 1, Last: true}, true},
		{"tail -n 5", builtin.Cut{N: 5, Last: true}, true},
		{"tail", builtin.Cut{N: 10, Last: true}, true},
		{"head -n 0", builtin.Cut{}, false},
		{"head -n -3", builtin.Cut{}, false},
		{"tail -n +3", builtin.Cut{}, false},
		{"head -c 3", builtin.Cut{}, false},
		{"head -n 3 file", builtin.Cut{}, false},
		{"head -q -n 3", builtin.Cut{}, false},
		{"head -n 99999999999999999999", builtin.Cut{}, false},
		{"wc -l", builtin.Cut{}, false},
	} {
		cut, ok := builtin.CutOf(strings.Fields(c.argv))
		if cut != c.cut || ok != c.ok {
			t.Errorf("CutOf(%q) = %+v, %v; want %+v, %v", c.argv, cut, ok, c.cut, c.ok)
		}
	}
}

// Inputs large enough for the radix sort's passes and the two workers
// (16384 lines and more), with many ties and long equal prefixes, give
// GNU's output.
func TestSortLargeSameAsGNU(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skip("sort not installed")
	}
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "prefix-common-%03d %d %s %d.%d\n", r.IntN(50), r.IntN(1000)-500, []string{"jan", "Feb", "x", ""}[i%4], r.IntN(100), r.IntN(100))
	}
	in := b.String()
	for _, args := range []string{"", "-s -k2,2n", "-k2,2n -k1,1r", "-k1,1 -u", "-k4g", "-k3M -s", "-f -k1.8"} {
		argv := append([]string{"sort"}, sortFields(args)...)
		want := runGNU(t, "", argv, in)
		got := runBuiltin(t, "", argv, in)
		if got.out != want.out || got.code != want.code {
			t.Errorf("%q: output differs from GNU (%d vs %d bytes)", argv, len(got.out), len(want.out))
		}
	}
}

// sortRepeatedLines is n lines drawn from distinct lines of a few fields
// (a Zipf-like draw: a few lines make most of the input), as the words of
// a text or the clients of a log are.
func sortRepeatedLines(r *rand.Rand, n, distinct int) string {
	pool := strings.Split(strings.TrimSuffix(sortRandomLines(r, distinct), "\n"), "\n")
	var b strings.Builder
	for range n {
		// The square of a uniform draw favours the first lines.
		u := r.Float64()
		b.WriteString(pool[int(u*u*float64(len(pool)))])
		b.WriteByte('\n')
	}
	return b.String()
}

// Sorts of repetitive input fold copies of a line (sortfold.go): the
// output is GNU's, with the lines in memory or spilled, when the table
// grows, when it is dropped for folding too little, and where folding
// must not happen (-s without -u).
func TestSortFoldSameAsGNU(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	inputs := map[string]string{
		"copies":   sortRepeatedLines(r, 20000, 3000),
		"distinct": sortRepeatedLines(r, 40000, 40000) + sortRepeatedLines(r, 5000, 20),
	}
	for name, in := range inputs {
		for _, args := range [][]string{
			nil, {"-r"}, {"-u"}, {"-n"}, {"-k2,2"}, {"-s", "-k1,1"}, {"-u", "-k1,1"}, {"-f"}, {"-s", "-f"},
		} {
			argv := append([]string{"sort"}, args...)
			want := runGNU(t, "", argv, in)
			// 64 KiB: runs of a few hundred lines, too small to fold;
			// 1 MiB: a few runs, each folding.
			for _, budget := range []int{0, 64 << 10, 1 << 20} {
				var stdout, stderr bytes.Buffer
				env := &builtin.Env{Stderr: &stderr, TempDir: t.TempDir(), SortMemory: budget}
				got := runWithEnv(t, env, &stdout, &stderr, argv, in)
				if got.out != want.out || got.code != want.code {
					t.Errorf("%s: %q with SortMemory %d: output differs from GNU (%d vs %d bytes)", name, argv, budget, len(got.out), len(want.out))
				}
			}
		}
	}
}
