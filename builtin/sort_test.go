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
		"-nd", "-ni", "-k1nd", "-k1,1ni",
	} {
		cases = append(cases, filesCase{argv: append([]string{"sort"}, strings.Fields(args)...)})
	}
	cases = append(cases, filesCase{argv: []string{"sort", "-t", ""}})
	filesSameUsage(t, cases)
}

// sortRandomLines returns n lines of a few fields drawn from a small
// alphabet, so that keys tie often.
func sortRandomLines(r *rand.Rand, n int) string {
	var b strings.Builder
	words := []string{"a", "b", "B", "ab", "-1", "2", "10", "1.5", " ", "", "x y", "0", "-0", "zz", ",", ":",
		"\tq", "00.50", ".5", "-.5", "+3", "a-b", "\x01c", "\xe9", "Ab", "a_b"}
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
		for _, o := range []string{"-n", "-r", "-u", "-s", "-b", "-f", "-d", "-i"} {
			if rapid.IntRange(0, 3).Draw(rt, o) == 0 {
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
			for _, o := range []string{"b", "n", "r", "f", "d", "i"} {
				if rapid.IntRange(0, 5).Draw(t, name+o) == 0 {
					s += o
				}
			}
			if strings.Contains(s, "n") {
				s = strings.ReplaceAll(strings.ReplaceAll(s, "d", ""), "i", "")
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
