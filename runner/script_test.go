package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/internal/sysmem"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/shell"
)

// session runs one script with a Config and records what a user sees.
type session struct {
	cfg    runner.Config
	stdin  string
	script string
}

func (s session) run(t *testing.T) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	cfg := s.cfg
	cfg.Stdin, cfg.Stdout, cfg.Stderr = strings.NewReader(s.stdin), &out, &errb
	r := runner.New(cfg)
	defer r.Close()
	status := r.RunScript(context.Background(), s.script)
	return outcome{out.String(), errb.String(), status}
}

// Scripts as a user types them: what they print, on which stream, and
// their status. Table rows: the script, stdin, the expected stdout,
// stderr and status.
func TestScripts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("b\na\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hasPaste := exec.Command("paste", "--version").Run() == nil
	for _, tc := range []struct {
		name, script, stdin string
		out, err            string
		status              int
		needs               bool // skip unless paste is on PATH
	}{
		{name: "chain", script: "seq 5 | grep -v 3 | wc -l", out: "4\n"},
		{name: "stdin", script: "sort", stdin: "b\na\n", out: "a\nb\n"},
		{name: "file relative to Dir", script: "sort < in.txt", out: "a\nb\nc\n"},
		{name: "redirect out then in", script: "seq 3 > o.txt; cat o.txt", out: "1\n2\n3\n"},
		{name: "stderr redirect", script: "cat nope 2> e.txt; cat e.txt", out: "cat: nope: No such file or directory\n"},
		{name: "missing input file", script: "cat < nope | wc -l", out: "0\n", err: "tpipe: nope: No such file or directory\n", status: 1},
		{name: "unknown command", script: "sortt", err: "tpipe: sortt: command not found (did you mean sort?)\n", status: 127},
		{name: "pipefail", script: "grep x | cat", stdin: "a\n", status: 1},
		{name: "usage error", script: "seq 1; head -n x", out: "1\n", err: "head: invalid number of lines: 'x'\n", status: 1},
		{name: "usage error on the command's stderr", script: "seq 2 | head -n x 2> e.txt | wc -l; cat e.txt", out: "0\nhead: invalid number of lines: 'x'\n"},
		{name: "syntax error", script: "seq 3 | | wc", err: "tpipe: 1:9: syntax error: missing command after `|`\nseq 3 | | wc\n        ^\n", status: 2},

		// Named edges: graphs of several pipelines.
		{name: "tee and cat", script: "seq 4 | tee @a @b > /dev/null\ncat @a @b | wc -l", out: "8\n"},
		{name: "merge", script: "seq 3 > @x; seq 3 > @y; merge @x @y | sort | uniq -c", out: "      2 1\n      2 2\n      2 3\n"},
		{name: "implicit tee", script: "seq 3 > @a\nwc -l < @a > w.txt\ngrep 2 @a > g.txt\ncat w.txt g.txt", out: "3\n2\n"},
		{name: "quoted at is a file", script: "cat '@a'", err: "cat: @a: No such file or directory\n", status: 1},
		{name: "two writers", script: "seq 1 > @a\nseq 2 > @a\ncat @a", status: 2,
			err: "tpipe: 2:9: @a already has a writer at 1:9; a named edge has exactly one (merge several with merge)\nseq 2 > @a\n        ^\n"},
		{name: "no writer", script: "cat @a", status: 2,
			err: "tpipe: 1:5: @a is read but nothing writes it (write it with '> @a' or 'tee @a')\ncat @a\n    ^\n"},
		{name: "no reader", script: "seq 1 > @a", status: 2,
			err: "tpipe: 1:9: @a is written but never read (read it with '< @a' or 'cat @a')\nseq 1 > @a\n        ^\n"},
		{name: "cycle", script: "cat @a | tee @a", status: 2,
			err: "tpipe: 1:5: @a is read here and written downstream at 1:14: a cycle\ncat @a | tee @a\n    ^\n"},
		{name: "stderr to an edge", script: "seq 1 2> @a; cat @a", status: 2,
			err: "tpipe: 1:7: standard error cannot go to a named edge (@a); records travel on standard output\nseq 1 2> @a; cat @a\n      ^\n"},
		{name: "usage error with edges fails first", script: "seq 1; seq 2 > @a; head -n x @a", status: 2, err: "tpipe: head: invalid number of lines: 'x'\n"},
		{name: "external reads an edge", script: "seq 3 > @a; seq 4 6 > @b; paste @a @b", out: "1\t4\n2\t5\n3\t6\n", needs: true},

		// Fixed bugs: a command that cannot start while it names edges
		// left them unconnected, and the run failed with an internal
		// "graph: invalid" error and status 1, not the shell's message.
		{name: "unknown command reads an edge", script: "seq 100000 > @a\nnosuchprog @a | wc -l", out: "0\n",
			err: "tpipe: nosuchprog: command not found\n", status: 127},
		{name: "unknown command writes edges", script: "seq 100000 | nosuchprog @a @b > /dev/null\ncat @a @b | wc -l", out: "0\n",
			err: "tpipe: nosuchprog: command not found\n", status: 127},
		{name: "unknown command between edges", script: "seq 3 > @a\nnosuchprog @a > @b\ncat @b", err: "tpipe: nosuchprog: command not found\n", status: 127},
		{name: "missing input file with an edge", script: "seq 100000 | tee @a > /dev/null\ncat @a < nope | wc -l", out: "0\n",
			err: "tpipe: nope: No such file or directory\n", status: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs && !hasPaste {
				t.Skip("paste is not on PATH")
			}
			sub := t.TempDir()
			copyFile(t, filepath.Join(dir, "in.txt"), filepath.Join(sub, "in.txt"))
			got := session{cfg: runner.Config{Dir: sub}, stdin: tc.stdin, script: tc.script}.run(t)
			if got.out != tc.out || got.errText != tc.err || got.status != tc.status {
				t.Errorf("%q:\n got  out %q err %q status %d\n want out %q err %q status %d",
					tc.script, got.out, got.errText, got.status, tc.out, tc.err, tc.status)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Errors a setting would avoid end with the setting and a value for it,
// in the words of whoever set the Config.
func TestAdvice(t *testing.T) {
	run := func(cfg runner.Config, advise func(string, string) string, script string) string {
		var errb bytes.Buffer
		cfg.Stdout, cfg.Stderr = new(bytes.Buffer), &errb
		r := runner.New(cfg)
		defer r.Close()
		r.Advise = advise
		r.RunScript(context.Background(), script)
		return errb.String()
	}
	// B x S past what the machine has; the value proposed depends on the
	// machine, the words do not.
	huge := runner.Config{Buffers: 1 << 30, RecordSize: 1 << 20}
	if got, want := run(huge, nil, "echo hi"), "; try --buffers "; !strings.Contains(got, want) {
		t.Errorf("flags: %q, want %q in it", got, want)
	}
	shellAdvice := func(s, v string) string { return "try: set " + s + " " + v }
	if got, want := run(huge, shellAdvice, "echo hi"), "; try: set buffers "; !strings.Contains(got, want) {
		t.Errorf("shell: %q, want %q in it", got, want)
	}
	// A line longer than S is no error, so there is nothing to advise.
	long := "grep x < " + writeTemp(t, strings.Repeat("y", 100)+"\n")
	if got := run(runner.Config{RecordSize: 16}, nil, long); got != "" {
		t.Errorf("a long line: %q", got)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// The settings table: every setting reads back what it was set to, its
// default is what the zero Config means, and a bad value is one error that
// names the setting, the value and what it takes.
func TestSettingsTable(t *testing.T) {
	values := map[string][]string{
		"policy":      {"ros", "serial", "auto"},
		"buffers":     {"1", "12", "bound"},
		"cap":         {"3", "auto", "default"},
		"record-size": {"64K", "1M", "1000"},
		"sort-memory": {"8M", "512K", "auto"},
		"replicas":    {"1", "4", "auto"},
		"fallback":    {"off", "on"},
		"stats":       {"on", "off"},
		"progress":    {"on", "off", "auto"},
		"spool":       {"spool-dir", "none"},
		"segment":     {"64K", "16M"},
		"fsync":       {"off", "on"},
		"compress":    {"s2", "zstd", "none"},
	}
	bad := map[string]string{
		"policy":      `policy x: unknown policy (known: auto, concurrent, ros, fused, serial, spool)`,
		"buffers":     "buffers 0: want a number of at least 1, or bound",
		"cap":         "cap 0: want a capacity of at least 1, auto, or default",
		"record-size": "record-size 0: want a size from 1 to 2147483647 bytes (2G less one), such as 65536, 64K or 4M",
		"sort-memory": "sort-memory 0: want a positive size such as 65536, 64K or 4M, or auto",
		"replicas":    "replicas 0: want a number of at least 1 (1: never), or auto",
		"fallback":    "fallback 0: want on or off",
		"stats":       "stats 0: want on or off",
		"progress":    "progress 0: want on, off or auto",
		"spool":       "spool : want a directory, or none",
		"segment":     "segment 0: want a positive size such as 65536, 64K or 4M",
		"fsync":       "fsync 0: want on or off",
		"compress":    "compress 0: want none, s2 or zstd",
	}
	for _, s := range runner.Settings {
		vs, ok := values[s.Name]
		if !ok {
			t.Errorf("setting %s is not tested", s.Name)
			continue
		}
		var c runner.Config
		if got := s.Get(&c); got != s.Default() {
			t.Errorf("%s: zero Config gives %q, default %q", s.Name, got, s.Default())
		}
		for _, v := range vs {
			if err := s.Set(&c, v); err != nil {
				t.Errorf("%s %s: %v", s.Name, v, err)
			}
			if got := s.Get(&c); got != v {
				t.Errorf("%s %s reads back as %q", s.Name, v, got)
			}
		}
		before := runner.SettingsLine(&c)
		bv := "0"
		switch s.Name {
		case "policy":
			bv = "x"
		case "spool":
			bv = ""
		}
		if s.Name == "record-size" {
			// Fixed bug: a record size past what a buffer indexes (2G)
			// was taken, and failed inside the run.
			if err := s.Set(&c, "2G"); err == nil {
				t.Errorf("record-size 2G taken")
			}
		}
		err := s.Set(&c, bv)
		var se *runner.SettingError
		if !errors.As(err, &se) || err.Error() != bad[s.Name] {
			t.Errorf("%s %s: error %v, want %q", s.Name, bv, err, bad[s.Name])
		}
		if runner.SettingsLine(&c) != before {
			t.Errorf("%s: a refused value changed the Config", s.Name)
		}
		if found, ok := runner.LookupSetting(s.Name); !ok || found != s {
			t.Errorf("LookupSetting(%s) = %v, %v", s.Name, found, ok)
		}
		if s.Help == "" || s.Values == "" || s.DefaultHelp() == "" {
			t.Errorf("%s: help, values or default text missing", s.Name)
		}
	}
	if _, ok := runner.LookupSetting("nope"); ok {
		t.Error("LookupSetting found a setting that does not exist")
	}
	c := runner.Config{Policy: sched.ROS, Buffers: 3, Stats: true}
	if got, want := runner.SettingsLine(&c), "policy ros, buffers 3, cap default, record-size 256K, sort-memory auto, replicas auto, fallback on, stats on, progress auto, spool none, segment 4M, fsync on, compress none"; got != want {
		t.Errorf("SettingsLine = %q, want %q", got, want)
	}
}

// --explain and --dot: the plan of every graph, and the settings, without
// running anything or touching an output file.
func TestExplainAndDot(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var w, errb bytes.Buffer
	r := runner.New(runner.Config{Policy: sched.ROS, Stderr: &errb})
	defer r.Close()
	script := "seq 10 | tee @a > " + out + "\nwc -l < @a\nseq 2 | cat"
	if st := r.Explain(context.Background(), script, &w); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--explain created %s", out)
	}
	for _, want := range []string{
		"settings: policy ros, buffers bound,",
		"graph 1 (lines 1, 2):", "graph 2 (line 3):",
		"policy ros: Record Oriented Scheduling",
		"  F1   seq -> tee, cap 1",
		"bound: ",
	} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("explain lacks %q:\n%s", want, w.String())
		}
	}
	w.Reset()
	if st := r.Dot(context.Background(), "seq 3 | wc -l", &w); st != 0 || !strings.HasPrefix(w.String(), "digraph") {
		t.Errorf("dot: status %d\n%s", st, w.String())
	}
	if st := r.Explain(context.Background(), "cat @nowhere", &w); st != runner.StatusUsage {
		t.Errorf("explain of a broken edge: status %d", st)
	}
}

// The library forms: one pipeline from a syntax tree, built and then run.
func TestBuildAndRunPipeline(t *testing.T) {
	s, err := shell.Parse("seq 3 | grep -v 2", shell.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	r := runner.New(runner.Config{Stdout: &out, Stderr: &errb, Stats: true})
	defer r.Close()
	if st := r.RunPipeline(context.Background(), s.Pipelines[0]); st != 0 || out.String() != "1\n3\n" {
		t.Fatalf("status %d, out %q, err %q", st, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "task") || !strings.Contains(errb.String(), "queue") {
		t.Errorf("Stats on prints no table: %q", errb.String())
	}
	job, err := r.Build(context.Background(), s.Pipelines[0])
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if job.Plan.Graph != job.Graph || job.Plan.Buffers != job.Plan.Bound || len(job.Graph.Tasks) != 3 {
		t.Errorf("job: %+v", job.Plan)
	}
	st, err := job.Plan.Run(context.Background())
	if err != nil || st.Policy != sched.Auto {
		t.Fatalf("run: %v, %+v", err, st)
	}
	var js bytes.Buffer
	if err := runner.WriteStatsJSON(&js, []*sched.Stats{st}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc["policy"] != "auto" || len(doc["pipelines"].([]any)) != 1 {
		t.Errorf("stats json: %v %s", err, js.String())
	}
	s, _ = shell.Parse("cat @a", shell.Options{})
	if _, err := r.Build(context.Background(), s.Pipelines[0]); err == nil {
		t.Error("Build of a pipeline with an edge nothing writes: no error")
	}
}

// SetConfig changes later pipelines and keeps stdio.
func TestSetConfig(t *testing.T) {
	var out bytes.Buffer
	r := runner.New(runner.Config{Stdout: &out})
	defer r.Close()
	c := r.Config()
	if err := runner.Settings[0].Set(&c, "serial"); err != nil {
		t.Fatal(err)
	}
	c.Stdout = nil
	r.SetConfig(c)
	if r.Config().Policy != sched.Serial || r.Config().Stdout != &out {
		t.Fatalf("config %+v", r.Config())
	}
	if st := r.RunScript(context.Background(), "seq 2"); st != 0 || out.String() != "1\n2\n" {
		t.Fatalf("status %d, out %q", st, out.String())
	}
}

// A very long pipeline runs: buffers are allocated as used, so its bound
// (four buffers a queue) costs only what the records need. 5,000 stages
// keep the race detector (at most 8,128 live goroutines) in the test; the
// note of issue 13 quotes 30,000 stages by hand.
func TestVeryLongPipeline(t *testing.T) {
	script := "seq 10 | " + strings.Repeat("cat | ", 5000) + "wc -l"
	got := session{cfg: runner.Config{RecordSize: 4 << 10}, script: script}.run(t)
	if got != (outcome{"10\n", "", 0}) {
		t.Fatalf("got %+v", got)
	}
}

// A size past what a setting can take says so, with the largest that
// fits, rather than asking for "a positive size" (issue 31's 1T).
func TestSettingTooLarge(t *testing.T) {
	set := func(name, v string) string {
		for _, s := range runner.Settings {
			if s.Name == name {
				var c runner.Config
				if err := s.Set(&c, v); err != nil {
					return err.Error()
				}
				return ""
			}
		}
		t.Fatalf("no setting %s", name)
		return ""
	}
	if got, want := set("record-size", "1T"), "record-size 1T: too large: the largest that fits is 2147483647 (2G less one)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	avail, ok := sysmem.Available()
	if !ok {
		t.Skip("the memory available cannot be read here")
	}
	most := regexp.MustCompile(`^sort-memory (\S+): too large: the largest that fits is (\d+)([MG]) \(the memory available here, from .+\)$`)
	for _, v := range []string{"8E", "99999999999999T"} {
		got := set("sort-memory", v)
		m := most.FindStringSubmatch(got)
		if m == nil || m[1] != v {
			t.Errorf("sort-memory %s: %q, want too large with the largest that fits", v, got)
			continue
		}
		n, _ := strconv.ParseUint(m[2], 10, 64)
		if m[3] == "G" {
			n <<= 10
		}
		if n<<20 > avail.Bytes+(512<<20) || n<<20 < avail.Bytes/2 {
			t.Errorf("sort-memory %s: the largest that fits %s%s, available %d bytes", v, m[2], m[3], avail.Bytes)
		}
	}
	// A number of bytes is judged where a task spills (memory.txtar).
	for _, v := range []string{"64M", "1T", "7E"} {
		if got := set("sort-memory", v); got != "" {
			t.Errorf("sort-memory %s: %s", v, got)
		}
	}
}
